package wire

import (
	"encoding/json"
	"time"
)

// Call outcomes (Call.Outcome) a client tells apart; the others are kinds
// of failure.
const OutcomeOK = "ok"

// Call is one recorded call (GET /api/v1/history/{id}, and the data of a
// TypeCall event).
type Call struct {
	ID            int64         `json:"id"`
	Start         time.Time     `json:"start"`
	Duration      time.Duration `json:"duration"` // nanoseconds, stored to the microsecond
	ClientLabel   string        `json:"clientLabel"`
	ClientName    string        `json:"clientName"`
	ClientVersion string        `json:"clientVersion"`
	Session       string        `json:"session"`
	Endpoint      string        `json:"endpoint"`
	Server        string        `json:"server"`
	Method        string        `json:"method"`
	Name          string        `json:"name"`
	// Arguments are redacted and capped; a page of calls leaves them out.
	Arguments    json.RawMessage `json:"arguments,omitempty"`
	Outcome      string          `json:"outcome"`
	Error        string          `json:"error,omitempty"`
	ResponseSize int             `json:"responseSize"`
	// ResponsePreview is the start of the response: cut JSON text, not
	// necessarily valid JSON. A page of calls leaves it out.
	ResponsePreview string `json:"responsePreview,omitempty"`
	PID             int    `json:"pid,omitempty"`
	// Tier is a tool call's tool's tier when it was made: "read",
	// "write" or "destructive"; absent for other methods and older calls.
	Tier string `json:"tier,omitempty"`
	// Tool is the tool (prompt, resource URI) as its server calls it,
	// whichever endpoint the call came through; Name is what the client
	// called it (alpha__echo on /mcp, echo on /mcp/alpha). Unknown says
	// which part of the name the gateway did not know: UnknownServer,
	// UnknownTool, or absent.
	Tool    string `json:"tool,omitempty"`
	Unknown string `json:"unknown,omitempty"`
	// DecidedBy, DecisionAllowed and DecidedAt are the user's answer when
	// the call had to be asked for (a destructive tool's call on a server
	// or profile that asks first): who decided ("elicitation",
	// "input_required", "dashboard", "tray", "cli" or "timeout"), whether
	// the call was allowed, and when. Absent when it was not asked for.
	DecidedBy       string     `json:"decidedBy,omitempty"`
	DecisionAllowed bool       `json:"decisionAllowed,omitempty"`
	DecidedAt       *time.Time `json:"decidedAt,omitempty"`
}

// Values of Call.Unknown.
const (
	UnknownServer = "server" // no configured server goes by the name (or its prefix)
	UnknownTool   = "tool"   // the server is known, but offers no such tool there
)

// A CallPage is one page of calls, newest first (GET /api/v1/history).
type CallPage struct {
	Calls []Call `json:"calls"`
	// Next is the cursor of the following (older) page; "" on the last page.
	Next string `json:"next,omitempty"`
}

// A Stat summarises the calls of one server, or one tool of a server, over
// a window (GET /api/v1/stats?by=server or by=tool).
type Stat struct {
	Server    string        `json:"server"`
	Tool      string        `json:"tool,omitempty"` // set when grouped by tool
	Count     int64         `json:"count"`
	Errors    int64         `json:"errors"`    // calls whose outcome is not ok
	ErrorRate float64       `json:"errorRate"` // Errors / Count, 0..1
	P50       time.Duration `json:"p50"`       // nearest-rank percentiles of the duration
	P95       time.Duration `json:"p95"`
}

// TimeStat counts the calls that started in one bucket of a timeline
// (GET /api/v1/stats?by=time).
type TimeStat struct {
	Time   time.Time     `json:"time"` // the bucket's start
	Count  int64         `json:"count"`
	Errors int64         `json:"errors"`
	P50    time.Duration `json:"p50"` // 0 for an empty bucket
	P95    time.Duration `json:"p95"`
}

// Sample is a resource point of a server (GET /api/v1/usage): a raw sample
// (Span 0), or the merge of the samples of one bucket of Span.
type Sample struct {
	Time       time.Time     `json:"time"` // the sample's time, or its bucket's start
	Server     string        `json:"server"`
	CPUPercent float64       `json:"cpuPercent"` // average over the bucket
	RSSBytes   uint64        `json:"rssBytes"`   // maximum over the bucket
	Processes  int           `json:"processes"`  // maximum over the bucket
	Span       time.Duration `json:"span,omitempty"`
}

// LifecycleEvent is one recorded lifecycle event of a server
// (GET /api/v1/lifecycle): a start, an exit, a crash, a config change, an
// install, a client's config written.
type LifecycleEvent struct {
	ID      int64     `json:"id"`
	Time    time.Time `json:"time"`
	Server  string    `json:"server"`
	Kind    string    `json:"kind"`
	PID     int       `json:"pid,omitempty"`
	Exit    string    `json:"exit,omitempty"`
	Message string    `json:"message,omitempty"`
	State   string    `json:"state,omitempty"`
}

// Client is who made the call as the CLI and the dashboard show it: the
// token's label and the client's own name, "cli · cursor"; one of them
// when the other is empty or the same; "" when neither is known.
func (c Call) Client() string {
	switch {
	case c.ClientLabel == "" || c.ClientLabel == c.ClientName:
		return c.ClientName
	case c.ClientName == "":
		return c.ClientLabel
	}
	return c.ClientLabel + " · " + c.ClientName
}

// ServerShown and ToolShown are the call's server and tool as the CLI
// and the dashboard show them: marked "(unknown)" when the gateway did
// not know it; ToolShown is the method for a call without a name.
func (c Call) ServerShown() string {
	if c.Unknown == UnknownServer && c.Server != "" {
		return c.Server + " (unknown)"
	}
	return c.Server
}

func (c Call) ToolShown() string {
	tool := c.Tool
	if tool == "" {
		tool = c.Name // a call recorded by an older daemon, as the API read it
	}
	if tool == "" {
		return ""
	}
	if c.Unknown == UnknownTool || c.Unknown == UnknownServer && c.Server == "" {
		return tool + " (unknown)"
	}
	return tool
}
