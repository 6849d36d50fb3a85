package supervisor

import (
	"time"

	"github.com/switchboardhq/switchboard/supervisor/confine"
)

// State is a pool's state as a user sees it.
type State string

const (
	StateStopped  State = "stopped"  // no process, none wanted (stopped by the user, or lazy and idle)
	StateStarting State = "starting" // a process is spawning or handshaking, none ready yet
	StateRunning  State = "running"  // at least one process is ready
	StateBackoff  State = "backoff"  // a process crashed; the next start waits for the backoff delay
	StateFailing  State = "failing"  // crashed too often in a window; stays down until started again or the cool-down ends
	StateStopping State = "stopping" // the pool is shutting its processes down
)

// EventKind names what an Event reports.
type EventKind string

const (
	EventStarting EventKind = "starting" // a process was spawned
	EventReady    EventKind = "ready"    // its initialize handshake succeeded
	EventStopping EventKind = "stopping" // a stop was requested
	EventStopped  EventKind = "stopped"  // it exited after a stop request
	EventCrashed  EventKind = "crashed"  // it exited unexpectedly, or failed to start
	EventBackoff  EventKind = "backoff"  // the next start waits for Event.Delay
	EventFailing  EventKind = "failing"  // the pool entered StateFailing
	EventState    EventKind = "state"    // the pool's State changed
	EventLog      EventKind = "log"      // a line the process wrote to stderr (or junk on stdout)
	EventUsage    EventKind = "usage"    // a resource sample of the server's process trees
)

// An Event is something that happened to a server, published to every
// subscriber in the order it happened.
type Event struct {
	Time   time.Time `json:"time"`
	Server string    `json:"server"`
	Kind   EventKind `json:"kind"`
	PID    int       `json:"pid,omitempty"`
	// State is the pool's state after the event (EventState, EventFailing).
	State State `json:"state,omitempty"`
	// Exit describes how the process ended (EventStopped, EventCrashed).
	Exit string `json:"exit,omitempty"`
	// Message is a log line (EventLog) or an error (EventCrashed).
	Message string `json:"message,omitempty"`
	// Stream is "stderr", or "stdout" for non-protocol text on stdout, or
	// StreamDropped for the report of lines dropped by the rate limit (EventLog).
	Stream string `json:"stream,omitempty"`
	// Delay is how long the next start waits (EventBackoff).
	Delay time.Duration `json:"delay,omitempty"`
	// Usage is set for EventUsage.
	Usage *Usage `json:"usage,omitempty"`
}

// Usage is a resource sample of all processes of a server, each counted with
// its whole process tree.
type Usage struct {
	CPUPercent float64 `json:"cpuPercent"` // 100 = one core busy
	RSSBytes   uint64  `json:"rssBytes"`
	Processes  int     `json:"processes"` // OS processes, descendants included
}

// LogLine is one line a server wrote.
type LogLine struct {
	Time   time.Time `json:"time"`
	PID    int       `json:"pid"`
	Stream string    `json:"stream"`
	Text   string    `json:"text"`
}

// PoolStatus is a snapshot of one pool.
type PoolStatus struct {
	Name string `json:"name"`
	Mode Mode   `json:"mode"`
	// URL is a remote server's endpoint (without query); "" for a local one.
	URL       string          `json:"url,omitempty"`
	Min       int             `json:"min"`
	Max       int             `json:"max"`
	State     State           `json:"state"`
	Processes []ProcessStatus `json:"processes"`
	// Waiting counts Acquire calls waiting for a process.
	Waiting int `json:"waiting"`
	// Restarts counts unexpected exits since the pool was created.
	Restarts  int    `json:"restarts"`
	LastError string `json:"lastError,omitempty"`
	// NonProtocolLines counts the lines its processes wrote on stdout that
	// were not JSON-RPC messages (banners, console output), kept as logs.
	NonProtocolLines int64 `json:"nonProtocolLines,omitempty"`
	// Usage is the latest sample, nil before the first.
	Usage *Usage `json:"usage,omitempty"`
	// Logs are the most recent lines of all processes, oldest first.
	Logs []LogLine `json:"logs,omitempty"`
	// Confine is the policy its processes run under; nil: unconfined.
	Confine *confine.Policy `json:"confine,omitempty"`
	// Confinement is whether the policy was in force in the last process
	// started, and why not; nil before one started (or without a policy).
	Confinement *confine.Status `json:"confinement,omitempty"`
}

// ProcessStatus is a snapshot of one OS process of a pool.
type ProcessStatus struct {
	PID      int       `json:"pid"`
	State    string    `json:"state"` // starting, ready, stopping
	Started  time.Time `json:"started"`
	InFlight int       `json:"inFlight"`
	Leased   bool      `json:"leased"`
	Server   string    `json:"serverInfo,omitempty"` // name/version from initialize
	Protocol string    `json:"protocol,omitempty"`   // negotiated protocol version
	// Transport is how a remote server's connection was made
	// (streamable-http, sse); "" for a process.
	Transport string `json:"transport,omitempty"`
	Usage     *Usage `json:"usage,omitempty"`
	// Confinement is what the launcher reported for this process.
	Confinement *confine.Status `json:"confinement,omitempty"`
}
