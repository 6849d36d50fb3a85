// Package record defines what the history records: each call, as the
// gateway produces it (Call), and what happens to the servers (Event), as
// the daemon converts it from the supervisor's events or makes it itself.
// It has no dependencies, so the history needs nothing of the gateway (and
// so nothing of HTTP) and nothing of the supervisor.
package record

import (
	"encoding/json"
	"time"
)

// Outcomes of a Call.
const (
	OutcomeOK          = "ok"
	OutcomeToolError   = "tool_error"     // the tool ran and reported an error
	OutcomeProtocol    = "protocol_error" // a JSON-RPC error
	OutcomeTimeout     = "timeout"
	OutcomeCancelled   = "cancelled"
	OutcomeUnavailable = "server_unavailable" // down, failing, crashed, could not start
	OutcomeInterrupted = "interrupted"        // in flight when the daemon died (found at the next start)
)

// Values of Call.Unknown.
const (
	UnknownServer = "server" // no configured server goes by the name (or its prefix)
	UnknownTool   = "tool"   // the server is known but offers no such tool (or prompt) there
)

// Call is one request a client made through the gateway.
type Call struct {
	Start         time.Time     `json:"start"`
	Duration      time.Duration `json:"duration"`
	ClientLabel   string        `json:"clientLabel"` // the token's label
	ClientName    string        `json:"clientName"`  // from initialize or _meta clientInfo
	ClientVersion string        `json:"clientVersion"`
	Session       string        `json:"session"`
	Endpoint      string        `json:"endpoint"` // "" for /mcp, else the server of /mcp/<server>
	Server        string        `json:"server"`
	Method        string        `json:"method"`
	Name          string        `json:"name"` // tool or prompt as the client named it, or the resource URI
	// Tool is the tool (prompt, resource URI) as its server calls it,
	// whichever endpoint the call came through: "echo" for alpha__echo on
	// /mcp and for echo on /mcp/alpha. Server and Tool are the one way a
	// call is named wherever it is shown.
	Tool string `json:"tool,omitempty"`
	// Unknown says which part of the name the gateway did not know:
	// UnknownServer, UnknownTool, or "" when both were known.
	Unknown string `json:"unknown,omitempty"`
	// Tier is a tool call's tool's tier (see app/tiers): "read", "write"
	// or "destructive"; "" for other methods and unknown tools.
	Tier string `json:"tier,omitempty"`
	// Decision is the user's answer when the call had to be asked for (a
	// destructive tool's, see gateway's asks); nil when it was not.
	Decision     *Decision       `json:"decision,omitempty"`
	Arguments    json.RawMessage `json:"arguments,omitempty"`
	Outcome      string          `json:"outcome"`
	Error        string          `json:"error,omitempty"`
	ResponseSize int             `json:"responseSize"`
	Response     json.RawMessage `json:"-"` // the result, for the recorder to preview and cap
	PID          int             `json:"pid,omitempty"`
	// Journal is the call's id in the call journal, noted when it started
	// (0: not noted); the history ends it there once the call is stored.
	Journal uint64 `json:"-"`
}

// Who decides on a call that has to be asked for (Decision.By).
const (
	DecidedByElicitation   = "elicitation"    // the client, by form elicitation (session era)
	DecidedByInputRequired = "input_required" // the client, through an input-required round (2026-07-28 era)
	DecidedByDashboard     = "dashboard"      // the user, on the dashboard's pending asks
	DecidedByTray          = "tray"           // the user, from the tray's menu
	DecidedByCLI           = "cli"            // the user, with switchboard asks allow|deny
	DecidedByTimeout       = "timeout"        // nobody answered in time: denied
)

// A Decision is the answer to a call that had to be asked for.
type Decision struct {
	By      string    `json:"by"`
	Allowed bool      `json:"allowed"`
	At      time.Time `json:"at"`
}
