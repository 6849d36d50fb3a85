package record

import "time"

// EventKind names what an Event reports. Its values are what the
// history's events table keeps in its kind column.
type EventKind string

// The kinds of the supervisor's events, with the supervisor's strings: the
// daemon converts each supervisor event to an Event of the same kind.
const (
	EventStarting EventKind = "starting" // a process was spawned
	EventReady    EventKind = "ready"    // its initialize handshake succeeded
	EventStopping EventKind = "stopping" // a stop was requested
	EventStopped  EventKind = "stopped"  // it exited after a stop request
	EventCrashed  EventKind = "crashed"  // it exited unexpectedly, or failed to start
	EventBackoff  EventKind = "backoff"  // the next start waits for Event.Delay
	EventFailing  EventKind = "failing"  // the server's pool entered the failing state
	EventState    EventKind = "state"    // the server's state changed (Event.State)
	EventLog      EventKind = "log"      // a line the process wrote to stderr (or junk on stdout)
	EventUsage    EventKind = "usage"    // a resource sample of the server's process trees (Event.Usage)
)

// An Event is something that happened to a server: a lifecycle event,
// a log line or a resource sample. Most come from the supervisor (the
// daemon converts them, the one place where supervisor events enter the
// app); the daemon adds kinds of its own (a config change, an install, a
// tool held or approved). The history stores them, and the live feed
// publishes the lifecycle events as they are (its "state" events), so
// the JSON is the supervisor event's, field for field.
type Event struct {
	Time   time.Time `json:"time"`
	Server string    `json:"server"`
	Kind   EventKind `json:"kind"`
	PID    int       `json:"pid,omitempty"`
	// State is the server's state after the event (EventState,
	// EventFailing): stopped, starting, running, backoff, failing or
	// stopping.
	State string `json:"state,omitempty"`
	// Exit describes how the process ended (EventStopped, EventCrashed).
	Exit string `json:"exit,omitempty"`
	// Message is a log line (EventLog), an error (EventCrashed), or what
	// happened, in words (the daemon's kinds).
	Message string `json:"message,omitempty"`
	// Stream is "stderr", or "stdout" for non-protocol text on stdout, or
	// the supervisor's report of lines it dropped (EventLog).
	Stream string `json:"stream,omitempty"`
	// Delay is how long the next start waits (EventBackoff).
	Delay time.Duration `json:"delay,omitempty"`
	// Usage is set for EventUsage.
	Usage *Usage `json:"usage,omitempty"`
}

// Usage is a resource sample of all processes of a server, each counted
// with its whole process tree.
type Usage struct {
	CPUPercent float64 `json:"cpuPercent"` // 100 = one core busy
	RSSBytes   uint64  `json:"rssBytes"`
	Processes  int     `json:"processes"` // OS processes, descendants included
}
