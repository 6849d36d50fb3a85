package wire

import (
	"encoding/json"
	"time"
)

// An Ask is a call of a destructive tool waiting for the user's yes
// (GET /api/v1/asks, and the data of an "ask" event): its client could not
// be asked, so the user answers on the dashboard, from the tray or with
// `switchboard asks allow|deny ID` (POST /api/v1/asks/{id}).
type Ask struct {
	ID       string `json:"id"`
	Server   string `json:"server"`
	Tool     string `json:"tool"`               // the tool's own name on its server
	Endpoint string `json:"endpoint,omitempty"` // "" for /mcp, "p/<profile>", or the server of /mcp/<server>
	Client   string `json:"client,omitempty"`   // the label of the calling client's token
	Tier     string `json:"tier"`
	// Arguments are redacted as the history redacts a call's.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Asked     time.Time       `json:"asked"`
	// Deadline is when the ask times out, which denies the call.
	Deadline time.Time `json:"deadline"`
}

// AskAnswer is the body of POST /api/v1/asks/{id}.
type AskAnswer struct {
	Allow bool `json:"allow"`
}

// AskDecision is how an ask ended (POST /api/v1/asks/{id}'s answer, and in
// an "ask" event once it is decided).
type AskDecision struct {
	ID      string `json:"id"`
	Allowed bool   `json:"allowed"`
	// By is who decided: "dashboard", "tray", "cli", or "timeout" (nobody
	// answered in time), "cancelled" (the client went away).
	By string    `json:"by"`
	At time.Time `json:"at"`
}

// AskEvent is the data of an "ask" event: an ask was put before the user
// (State "pending", Ask set) or ended (State "decided", Ask and Decision
// set).
type AskEvent struct {
	State    string       `json:"state"`
	Ask      Ask          `json:"ask"`
	Decision *AskDecision `json:"decision,omitempty"`
}

// Who decided on a call that had to be asked for (Call.DecidedBy,
// AskDecision.By).
const (
	DecidedByElicitation   = "elicitation"
	DecidedByInputRequired = "input_required"
	DecidedByDashboard     = "dashboard"
	DecidedByTray          = "tray"
	DecidedByCLI           = "cli"
	DecidedByTimeout       = "timeout"
)

// The states of an AskEvent.
const (
	AskPending = "pending"
	AskDecided = "decided"
)

// AskSetting is the body and answer of PUT
// /api/v1/servers/{name}/ask-before-destructive and
// /api/v1/profiles/{name}/ask-before-destructive.
type AskSetting struct {
	Enabled bool `json:"enabled"`
}
