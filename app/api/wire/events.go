package wire

import (
	"encoding/json"
	"time"
)

// The types of the events on GET /api/v1/events (Event.Type), and the type
// of their Data.
const (
	TypeCall      = "call"       // a call was recorded (Call)
	TypeCallStart = "call-start" // a call is on its way to a server (CallStartEvent)
	TypeLog       = "log"        // a server wrote a line (LogEvent)
	TypeState     = "state"      // a server's lifecycle changed (StateEvent)
	TypeSample    = "sample"     // a resource sample of a server (SampleEvent)
	TypeInstall   = "install"    // install progress (InstallEvent)
	TypeConfig    = "config"     // the server list or a server's settings changed
	TypeDropped   = "dropped"    // history records were dropped (DroppedEvent)
	TypeApproval  = "approval"   // a tool was held until approved, or approved (ApprovalEvent)

	// TypeCallProgress: a call on its way reported progress (CallProgressEvent).
	TypeCallProgress = "call-progress"
	// TypeTools: a server's tools were listed, the first time or again (ToolsEvent).
	TypeTools = "tools"
	// TypeAuth: a remote server's sign-in state changed (AuthEvent).
	TypeAuth = "auth"
	// TypeAsk: a call waits for the user's yes, or no longer does
	// (AskEvent).
	TypeAsk = "ask"

	// TypeReset is sent first when the events after the client's
	// Last-Event-ID are no longer kept: it must refetch its snapshots. It
	// has no id and its data is {}.
	TypeReset = "reset"
)

// An Event is one server-sent event of GET /api/v1/events: its id (the
// SSE id; 0 for TypeReset), its type (the SSE event name) and its JSON
// data.
type Event struct {
	ID   uint64
	Type string
	Data json.RawMessage
}

// LogEvent is the data of a TypeLog event.
type LogEvent struct {
	Server string    `json:"server"`
	Time   time.Time `json:"time"`
	PID    int       `json:"pid"`
	Stream string    `json:"stream"`
	Text   string    `json:"text"`
}

// SampleEvent is the data of a TypeSample event.
type SampleEvent struct {
	Server     string    `json:"server"`
	Time       time.Time `json:"time"`
	CPUPercent float64   `json:"cpuPercent"`
	RSSBytes   uint64    `json:"rssBytes"`
	Processes  int       `json:"processes"`
}

// CallStartEvent is the data of a TypeCallStart event; the call's TypeCall
// event follows when it ends.
type CallStartEvent struct {
	Start       time.Time `json:"start"`
	Server      string    `json:"server"`
	Endpoint    string    `json:"endpoint"` // "" for the aggregated /mcp
	Method      string    `json:"method"`
	Name        string    `json:"name"`
	ClientLabel string    `json:"clientLabel"`
	ClientName  string    `json:"clientName"`
	Session     string    `json:"session"`
	Tool        string    `json:"tool,omitempty"` // as the server calls it (see Call.Tool)
}

// CallProgressEvent is the data of a TypeCallProgress event: a progress
// notification of a call on its way (sent when its client asked for
// progress), named as its CallStartEvent is (server, name, start).
type CallProgressEvent struct {
	Start    time.Time `json:"start"`
	Server   string    `json:"server"`
	Name     string    `json:"name"`
	Session  string    `json:"session"`
	Progress float64   `json:"progress"`
	Total    float64   `json:"total,omitempty"` // 0: unknown
	Message  string    `json:"message,omitempty"`
}

// ToolsEvent is the data of a TypeTools event: the server's view has its
// newly listed tools.
type ToolsEvent struct {
	Server string `json:"server"`
}

// AuthEvent is the data of a TypeAuth event: where a remote server's
// sign-in stands now (State is one of the Auth constants); the sign-in link
// is in the server's view.
type AuthEvent struct {
	Server string `json:"server"`
	State  string `json:"state"`
	Reason string `json:"reason,omitempty"`
	Scope  string `json:"scope,omitempty"`
	Error  string `json:"error,omitempty"`
}

// StateEvent is the data of a TypeState event: something that happened to
// a server's processes.
type StateEvent struct {
	Time   time.Time `json:"time"`
	Server string    `json:"server"`
	// Kind is what happened: starting, ready, stopping, stopped, crashed,
	// backoff, failing, state, log or usage.
	Kind    string        `json:"kind"`
	PID     int           `json:"pid,omitempty"`
	State   string        `json:"state,omitempty"`
	Exit    string        `json:"exit,omitempty"`
	Message string        `json:"message,omitempty"`
	Stream  string        `json:"stream,omitempty"`
	Delay   time.Duration `json:"delay,omitempty"`
	Usage   *Usage        `json:"usage,omitempty"`
}

// DroppedEvent is the data of a TypeDropped event.
type DroppedEvent struct {
	Count uint64 `json:"count"`
}

// ApprovalEvent is the data of a TypeApproval event: a tool of a server was
// held from clients because it is new or changed since the user approved
// the server's tools, or held tools were approved.
type ApprovalEvent struct {
	Server string `json:"server"`
	// Tool is "" for an approval of many tools at once (a server's first
	// list, a trusted server's changes).
	Tool string `json:"tool"`
	// State is ApprovalHeld or ApprovalApproved.
	State string `json:"state"`
	// Change is one of the Change* constants (HeldTool.Change).
	Change string `json:"change"`
	// Message says it in words (for a held tool, the error its calls get).
	Message string `json:"message"`
}

// States of an ApprovalEvent.
const (
	ApprovalHeld     = "held"
	ApprovalApproved = "approved"
)
