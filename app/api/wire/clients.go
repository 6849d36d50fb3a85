package wire

import "time"

// ClientView is one MCP client (GET /api/v1/clients).
type ClientView struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Path      string `json:"path,omitempty"`
	Installed bool   `json:"installed"` // its config file or folder exists
	Connected bool   `json:"connected"` // it has Switchboard's entry, with a token in force
	// TokenRevoked: it has Switchboard's entry, but the token the entry
	// carries is revoked (or unknown to this Switchboard), so every request
	// it makes is refused (401) and Connected is false: connecting it again
	// writes a new token. Warning says so.
	TokenRevoked bool `json:"tokenRevoked,omitempty"`
	// Servers are the entries of its config; the values of env variables
	// and headers whose names look secret are masked.
	Servers []ClientEntry `json:"servers"`
	Error   string        `json:"error,omitempty"` // the file could not be read
	// NeedsWorkspace: the client's file is in a workspace folder
	// (vscode-workspace), and none was given (?workspace=DIR).
	NeedsWorkspace bool `json:"needsWorkspace,omitempty"`
	// Profile is the profile the client's token is bound to: it reaches
	// /mcp/p/<profile> only. Empty: the client reaches /mcp.
	Profile string `json:"profile,omitempty"`
	// MaxTier is the tier cap of the client's token ("read" or "write"):
	// the tools above it are neither listed to it nor callable. Empty:
	// no cap.
	MaxTier string `json:"maxTier,omitempty"`
	// Tools is how many tools the client's endpoint (/mcp, or its
	// profile's) lists now; absent when the client is not connected.
	Tools *int `json:"tools,omitempty"`
	// ToolLimit is how many tools the client takes; 0 when not known.
	ToolLimit int `json:"toolLimit,omitempty"`
	// ToolLimitSource says where ToolLimit comes from.
	ToolLimitSource string `json:"toolLimitSource,omitempty"`
	// Warning says what is wrong with what the client sees: more tools
	// than its limit, or a profile that is not in config.json.
	Warning string `json:"warning,omitempty"`
	// Caveat is what the user must know although the client's file holds
	// Switchboard's entry (Gemini CLI starts no MCP server in a folder it
	// does not trust); "" for none.
	Caveat string `json:"caveat,omitempty"`
	// Offer: the client keeps no file Switchboard may edit (Cherry
	// Studio); connecting it offers an install link the user confirms in
	// the app (POST /api/v1/clients/{id}/offer), so it is never shown as
	// connected.
	Offer bool `json:"offer,omitempty"`
	// Offered: an install link was offered (the client has a token of
	// its own); whether the user confirmed it in the app, Switchboard
	// cannot tell: "offered, confirm in Cherry Studio".
	Offered bool `json:"offered,omitempty"`
}

// ClientOfferRequest is the body of POST /api/v1/clients/{id}/offer.
type ClientOfferRequest struct {
	// Profile points the offered entry at the profile's endpoint.
	Profile string `json:"profile,omitempty"`
	// Open asks the daemon to open the link on its desktop (the
	// dashboard does; the CLI opens it itself).
	Open bool `json:"open,omitempty"`
}

// ClientOffer is the answer to POST /api/v1/clients/{id}/offer: the link
// that installs Switchboard's entry in a client that keeps no editable
// file (Cherry Studio). Nothing is connected until the user confirms it
// in the app; the client's token is issued already.
type ClientOffer struct {
	Client string `json:"client"`
	// Link is the client's install deep link, with the token in it: hand
	// it only to the app (open it), never to a log.
	Link string `json:"link"`
	// Entry is the entry the link installs, as JSON, the token masked.
	Entry string `json:"entry"`
	// Note says what happens next ("offered, confirm in Cherry Studio").
	Note string `json:"note"`
	// Opened: asked to (Open), the daemon handed the link to the system,
	// which opens the app; OpenError says why it could not.
	Opened    bool   `json:"opened,omitempty"`
	OpenError string `json:"openError,omitempty"`
}

// ClientEntry is one server entry of a client's config file. Its keys are
// capitalised, unlike the rest of the API, and nothing is omitted (absent
// lists and maps are null): that is how the API has always written them.
type ClientEntry struct {
	Name    string            `json:"Name"`
	Command string            `json:"Command"`
	Args    []string          `json:"Args"`
	Env     map[string]string `json:"Env"`
	Cwd     string            `json:"Cwd"`
	URL     string            `json:"URL"`
	Headers map[string]string `json:"Headers"`
	// Type is the entry's "type" as the client spells it ("http", "sse",
	// "stdio", …), when it has one.
	Type string `json:"Type,omitempty"`
	// URLKey is the key that held URL ("url", "serverUrl", "httpUrl").
	URLKey string `json:"URLKey,omitempty"`
	// EnvHeaders (Codex's env_http_headers) maps a header to the
	// environment variable holding its value.
	EnvHeaders map[string]string `json:"EnvHeaders,omitempty"`
	// BearerTokenEnv (Codex's bearer_token_env_var) names the environment
	// variable holding the bearer token.
	BearerTokenEnv string `json:"BearerTokenEnv,omitempty"`
	// Disabled: the client's file turns the server off; import adds it
	// turned off too.
	Disabled bool `json:"Disabled,omitempty"`
}

// ClientChange is the body of POST /api/v1/clients/{id}/plan and /apply.
type ClientChange struct {
	// Action is "connect" or "disconnect".
	Action string `json:"action"`
	// Servers, on connect, get an entry of their own (/mcp/<server>).
	Servers []string `json:"servers,omitempty"`
	// Hash, on apply, is the Hash of the plan the user saw: the file must
	// still be what it was then, or changed only by Switchboard itself.
	Hash string `json:"hash,omitempty"`
	// Replace, on connect, replaces entries named "switchboard" or
	// "switchboard-<server>" that Switchboard did not write (the plan's
	// Conflicts); without it apply refuses to touch them.
	Replace bool `json:"replace,omitempty"`
	// Force changes a read-only file, or a file in a read-only folder.
	Force bool `json:"force,omitempty"`
	// Revoke, on disconnect, also revokes the client's token.
	Revoke bool `json:"revoke,omitempty"`
	// Profile, on connect, points the client at the profile's endpoint
	// (/mcp/p/<profile>) and, on apply, binds its token to the profile;
	// empty points it at /mcp and unbinds its token.
	Profile string `json:"profile,omitempty"`
	// MaxTier, on connect, caps (on apply) the tiers of the tools the
	// client's token sees: "read" or "write" ("destructive" caps
	// nothing); empty lifts its cap.
	MaxTier string `json:"maxTier,omitempty"`
}

// ClientPlan is a change to a client's file, shown before it is made.
type ClientPlan struct {
	Client  string `json:"client"`
	Path    string `json:"path"`
	Hash    string `json:"hash"`    // of the file as it is now; send it back to apply
	Diff    string `json:"diff"`    // unified diff, with the token masked
	Changed bool   `json:"changed"` // false: applying changes nothing
	// Remove: applying deletes the file (connect created it).
	Remove bool `json:"remove,omitempty"`
	// Conflicts are entries of Switchboard's names that Switchboard did
	// not write: apply refuses to replace them unless Replace is set.
	Conflicts []Conflict `json:"conflicts,omitempty"`
	// Kept are entries of Switchboard's names that Switchboard did not
	// write: they stay as they are.
	Kept []string `json:"kept,omitempty"`
	// Notes say what the change leaves as it is, and why.
	Notes []string `json:"notes,omitempty"`
	// Rebind: applying binds the client's token to another profile (or
	// unbinds it), even when the file does not change.
	Rebind bool `json:"rebind,omitempty"`
	// Tools, on connect, is how many tools the endpoint the plan points
	// the client at (/mcp, or the profile's) lists now; absent when not
	// known. ToolLimit is how many the client takes (0: not known), and
	// ToolWarning says, before anything is written, that it is over.
	Tools           *int   `json:"tools,omitempty"`
	ToolLimit       int    `json:"toolLimit,omitempty"`
	ToolLimitSource string `json:"toolLimitSource,omitempty"`
	ToolWarning     string `json:"toolWarning,omitempty"`
	// Caveat, on connect, is what the user must know although the file
	// will hold the entry (ClientView.Caveat).
	Caveat string `json:"caveat,omitempty"`
	// Offer, on connect: the client keeps no file Switchboard may edit
	// (Cherry Studio); nothing is planned, and connecting it is POST
	// .../offer, an install link the user confirms in the app. Notes say
	// so.
	Offer bool `json:"offer,omitempty"`
}

// A Conflict is an entry of one of Switchboard's names that Switchboard did
// not write.
type Conflict struct {
	Name string `json:"name"`
	// What the entry runs or points at.
	Target string `json:"target"`
}

// ClientApplied is the answer of POST /api/v1/clients/{id}/apply: the
// client as it is now, and what became of its token on disconnect.
type ClientApplied struct {
	ClientView
	// Revoked counts the client's tokens revoked (disconnect with Revoke).
	Revoked int `json:"revoked,omitempty"`
	// TokenValid: after a disconnect without Revoke, the client's token
	// still works.
	TokenValid bool `json:"tokenValid,omitempty"`
	// TokenLabel is the label to revoke it with (DELETE /api/v1/tokens/{label}).
	TokenLabel string `json:"tokenLabel,omitempty"`
}

// ImportRequest is the body of POST /api/v1/clients/{id}/import/plan and
// /import/apply.
type ImportRequest struct {
	// Servers names the entries of the client's file to import; empty
	// means every entry Switchboard can run.
	Servers []string `json:"servers,omitempty"`
	// Replace also rewrites the client's file: the imported entries are
	// removed and Switchboard's entry is written in their place.
	Replace bool `json:"replace,omitempty"`
	// Hash, on apply, is the Hash of the plan the user saw.
	Hash string `json:"hash,omitempty"`
}

// Import actions of an ImportedServer.
const (
	// ImportAdd: the server is added to Switchboard's config.
	ImportAdd = "add"
	// ImportExists: Switchboard already has the same server, named Name;
	// nothing is added.
	ImportExists = "exists"
)

// ImportedServer is one entry of a client's file and what importing it
// does.
type ImportedServer struct {
	// Entry is the entry's name in the client's file.
	Entry string `json:"entry"`
	// Name is the server's name in Switchboard's config.
	Name string `json:"name"`
	// Action is ImportAdd or ImportExists.
	Action string `json:"action"`
	// Renamed is set when the server is added under another name than
	// Entry.
	Renamed bool `json:"renamed,omitempty"`
	// Server is the config entry added (for ImportExists: the one the
	// client's entry amounts to).
	Server ServerConfig `json:"server"`
}

// SkippedEntry is an entry of a client's file that import leaves alone.
type SkippedEntry struct {
	Entry  string `json:"entry"`
	Reason string `json:"reason"`
}

// ImportPlan is what an import would do, shown before it is done.
type ImportPlan struct {
	Client string `json:"client"`
	Path   string `json:"path"`
	// Hash covers the client's file and the servers listed: send it back
	// to apply exactly this.
	Hash    string `json:"hash"`
	Replace bool   `json:"replace"`
	// Diff is the change to the client's file (with Replace), with tokens
	// and secret values masked; "" without Replace.
	Diff string `json:"diff"`
	// Changed tells whether applying writes the client's file.
	Changed bool             `json:"changed"`
	Servers []ImportedServer `json:"servers"`
	Skipped []SkippedEntry   `json:"skipped"`
}

// ImportResult is the answer of a successful import.
type ImportResult struct {
	Servers []ImportedServer `json:"servers"`
	// Client is the client as it is now (connected when Replace).
	Client ClientView `json:"client"`
}

// BackupView is one backup of a client's file.
type BackupView struct {
	// Name names it for POST .../restore/plan and /apply.
	Name string    `json:"name"`
	Time time.Time `json:"time"`
	// Size is the backup's size in bytes; 0 when Absent.
	Size int64 `json:"size"`
	// Path is the client's file the backup is of.
	Path string `json:"path"`
	// Absent: there was no file; restoring removes it.
	Absent bool `json:"absent,omitempty"`
}

// RestoreRequest is the body of POST /api/v1/clients/{id}/restore/plan and
// /restore/apply.
type RestoreRequest struct {
	// Backup is a BackupView's Name.
	Backup string `json:"backup"`
	// Hash, on apply, is the Hash of the plan the user saw.
	Hash string `json:"hash,omitempty"`
}
