package wire

import "time"

// Settings are the daemon's settings the dashboard changes
// (GET and PUT /api/v1/settings); they live in config.json.
type Settings struct {
	Retention Retention `json:"retention"`
	// SessionTimeout closes an MCP client session that sent no request for
	// this long. GET answers the timeout in force; a PUT with 0 restores
	// the default, and one without it leaves it as it is.
	SessionTimeout *Duration `json:"sessionTimeout,omitempty"`
	// StartAtLogin tells whether Switchboard starts when the user logs in;
	// absent when this daemon cannot manage that entry.
	StartAtLogin *bool `json:"startAtLogin,omitempty"`
	// RedactValues tells whether credentials found inside call arguments,
	// responses and server logs are replaced before they are stored in
	// the history. GET always answers it; a PUT without it leaves it as it
	// is.
	RedactValues *bool `json:"redactValues,omitempty"`
	// ToolSearch tells whether /mcp is served in search mode: a client
	// sees two tools, search_tools and call_tool, instead of every tool.
	// It applies to the MCP sessions opened after the change. GET always
	// answers it; a PUT without it leaves it as it is.
	ToolSearch *bool `json:"toolSearch,omitempty"`
	// AskTimeout is how long a call that waits for the user's yes waits
	// before it is denied (1s to 1h). GET answers the timeout in force; a
	// PUT with 0 restores the default (2m), and one without it leaves it
	// as it is.
	AskTimeout *Duration `json:"askTimeout,omitempty"`
}

// Retention is how much call history is kept. GET answers the bounds in
// force (defaults filled in); a PUT with 0 restores a default, and one
// without a bound (or without retention) leaves it as it is. A PUT naming
// a field the settings do not have is refused.
type Retention struct {
	MaxAge   Duration `json:"maxAge"`
	MaxBytes int64    `json:"maxBytes"`
}

// TokenView is one token that may call the daemon, without its secret
// (GET /api/v1/tokens).
type TokenView struct {
	ID string `json:"id"`
	// Label is "cli" or the id of the MCP client the token was issued to.
	Label string `json:"label"`
	// Scope is "admin" (the API and MCP) or "client" (MCP only).
	Scope string `json:"scope"`
	// Profile is the profile a client's token is bound to (it reaches
	// /mcp/p/<profile> only); absent when it is not.
	Profile string `json:"profile,omitempty"`
	// MaxTier is the tier cap of a client's token ("read" or "write");
	// absent when it has none.
	MaxTier string    `json:"maxTier,omitempty"`
	Created time.Time `json:"created"`
	// LastUsed is when the daemon last accepted the token since it started;
	// absent when it has not.
	LastUsed *time.Time `json:"lastUsed,omitempty"`
}

// LoginCodeTTL is how long a login code may wait to be used.
const LoginCodeTTL = 2 * time.Minute

// LoginCodeRequest is the optional body of POST /api/v1/login-codes.
type LoginCodeRequest struct {
	// Keep makes the session the code opens a "keep me signed in" one: it
	// lasts longer and survives a restart of the daemon.
	Keep bool `json:"keep,omitempty"`
}

// LoginCode is the answer of POST /api/v1/login-codes.
type LoginCode struct {
	Code    string    `json:"code"`
	URL     string    `json:"url"` // http://HOST/login?code=CODE
	Expires time.Time `json:"expires"`
	Keep    bool      `json:"keep,omitempty"`
}
