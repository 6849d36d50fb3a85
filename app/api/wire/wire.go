// Package wire is the JSON contract of the daemon's local API: the request
// and response bodies of every route and the data of every event on
// /api/v1/events. The server (app/api) converts its internal types into
// these at its edge, and the Go client (app/api/client) and the dashboard
// (mirrored in TypeScript) read them, so a change inside the daemon does not
// change what goes over the wire.
//
// It imports nothing of the app, only the standard library. Every endpoint
// answers one of these types, a list of them, or an ErrorResponse; there is
// no envelope.
package wire

import "time"

// Quit is the daemon's answer to POST /api/v1/quit: it is stopping every
// server and will exit.
type Quit struct {
	// PID is the process id of the daemon that is quitting.
	PID int `json:"pid"`
}

// Status is the daemon's answer to GET /api/v1/status.
type Status struct {
	// Version is the daemon's build version.
	Version string `json:"version"`
	// PID is the daemon's process id.
	PID int `json:"pid"`
	// Home is the data directory.
	Home string `json:"home"`
	// ConfigFile is the absolute path of config.json.
	ConfigFile string `json:"configFile"`
	// ConfigProblem is why the config file on disk is not the one in force
	// (a bad hand edit, with file:line:column and field), or "".
	ConfigProblem string `json:"configProblem,omitempty"`
	// Listen is the address the request came in on (host:port).
	Listen string `json:"listen"`
	// Started is when the daemon started.
	Started time.Time `json:"started"`
	// Servers counts the servers in the config, disabled ones included.
	Servers int `json:"servers"`
	// Running counts the servers with at least one ready process.
	Running int `json:"running"`
}

// The states of a server (ServerView.State): the supervisor's pool states,
// and StateDisabled.
const (
	StateStopped  = "stopped"  // no process, none wanted
	StateStarting = "starting" // a process is spawning or handshaking, none ready yet
	StateRunning  = "running"  // at least one process is ready
	StateBackoff  = "backoff"  // a process crashed; the next start waits
	StateFailing  = "failing"  // crashed too often; stays down until started again
	StateStopping = "stopping" // the processes are shutting down
	// StateDisabled is the State of a server whose config says
	// "enabled": false.
	StateDisabled = "disabled"
)

// StateFailed is not a State the daemon reports: it is what the clients
// (dashboard, tray, CLI) show for a server down after a failure; see
// ServerView.ShownState.
const StateFailed = "failed"

// ShownState is the state a client shows: StateFailed for a server down
// after a failure (failing, or stopped with its last error and no
// process), else State. A server the user stopped has no last error
// (stopping clears it), so it shows as stopped.
func (v ServerView) ShownState() string {
	if v.State == StateFailing || v.State == StateStopped && v.LastError != "" && len(v.Processes) == 0 {
		return StateFailed
	}
	return v.State
}

// DefaultActionTimeout is how long the daemon waits, unless told otherwise,
// for a start, stop or restart to finish before it answers 504: a little
// more than the supervisor's start timeout (2 minutes).
const DefaultActionTimeout = 2*time.Minute + 15*time.Second

// ServerView is one configured server: its config entry and what the
// supervisor knows about it.
type ServerView struct {
	Name string `json:"name"`
	// Config is the server's entry in config.json, unknown keys included.
	Config ServerConfig `json:"config"`
	// Enabled is whether the config runs the server at all.
	Enabled bool `json:"enabled"`
	// State is one of the State constants. A server the supervisor does
	// not run (yet) is StateStopped.
	State string `json:"state"`
	// Mode is the pool mode, "shared" or "session".
	Mode string `json:"mode"`
	// Processes are the server's OS processes; empty, never null.
	Processes []ProcessStatus `json:"processes"`
	// Restarts counts unexpected exits since the server was added.
	Restarts int `json:"restarts"`
	// LastError is the last crash or start failure, if any.
	LastError string `json:"lastError,omitempty"`
	// NonProtocolLines counts lines the server wrote on stdout that were
	// not MCP messages (banners, console output); they are in its logs.
	NonProtocolLines int64 `json:"nonProtocolLines,omitempty"`
	// Usage is the latest resource sample, absent before the first.
	Usage *Usage `json:"usage,omitempty"`
	// RecentLogs are the server's last lines, oldest first; empty, never
	// null.
	RecentLogs []LogLine `json:"recentLogs"`
	// Tools are what the server listed last, disabled ones marked; empty
	// before the first listing.
	Tools []ToolInfo `json:"tools"`
	// Listed says Tools come from a listing (of this run, or kept from an
	// earlier one); false before the server's first, when an empty Tools
	// means "not known yet", not "none". A TypeTools event says when a
	// listing arrives.
	Listed bool `json:"listed"`
	// Sandbox is what the server may touch and whether that is in force.
	Sandbox Sandbox `json:"sandbox"`
	// Auth is a remote server's sign-in (OAuth) state; absent for a
	// server that has not asked for a sign-in.
	Auth *AuthStatus `json:"auth,omitempty"`
}

// Sandbox is a server's confinement as it runs.
type Sandbox struct {
	// Confined says the config runs the server confined.
	Confined bool `json:"confined"`
	// Read, Write and Network are the policy (Confined only): paths it may
	// read, paths it may also write, and whether it may use TCP.
	Read    []string `json:"read,omitempty"`
	Write   []string `json:"write,omitempty"`
	Network bool     `json:"network"`
	// DenyPorts are TCP ports it may not connect to even with network
	// (Switchboard's own).
	DenyPorts []uint16 `json:"denyPorts,omitempty"`
	// Enforced says the policy is in force in the server's last process.
	Enforced bool `json:"enforced"`
	// Mechanism names what enforces it ("landlock ABI 7", on macOS
	// "seatbelt via sandbox-exec").
	Mechanism string `json:"mechanism,omitempty"`
	// Reason says why the server runs unconfined (not Enforced).
	Reason string `json:"reason,omitempty"`
	// Missing lists what the kernel cannot enforce of the policy.
	Missing []string `json:"missing,omitempty"`
}

// AuthStatus is where a remote server's sign-in stands.
type AuthStatus struct {
	State  string `json:"state"`            // one of the Auth constants
	Reason string `json:"reason,omitempty"` // why it needs a sign-in: first use, token rejected, refresh refused, scope needed, signed out
	Scope  string `json:"scope,omitempty"`  // with reason scope needed: the scope asked for
	Error  string `json:"error,omitempty"`  // why the last sign-in failed
	// SignInURL is the link of the sign-in in progress (the API answers
	// admin tokens only).
	SignInURL string    `json:"signInUrl,omitempty"`
	Since     time.Time `json:"since"`
}

// The states of AuthStatus.State.
const (
	AuthNeedsSignIn = "needs sign-in"
	AuthSigningIn   = "signing in"
	AuthSignedIn    = "signed in"
)

// LoginResult answers POST /api/v1/servers/{name}/login: the sign-in has
// started; it goes on in the daemon until the browser comes back or it
// times out (watch the server's Auth).
type LoginResult struct {
	Server        string     `json:"server"`
	SignInURL     string     `json:"signInUrl,omitempty"`
	BrowserOpened bool       `json:"browserOpened"`
	Auth          AuthStatus `json:"auth"`
}

// LogoutResult answers POST /api/v1/servers/{name}/logout: the tokens are
// deleted; Revoked says the authorization server accepted their revocation.
type LogoutResult struct {
	Server      string     `json:"server"`
	Revoked     bool       `json:"revoked"`
	RevokeError string     `json:"revokeError,omitempty"`
	Auth        AuthStatus `json:"auth"`
}

// ProcessStatus is one OS process of a server.
type ProcessStatus struct {
	PID      int       `json:"pid"`
	State    string    `json:"state"` // starting, ready, stopping
	Started  time.Time `json:"started"`
	InFlight int       `json:"inFlight"`
	Leased   bool      `json:"leased"`
	Server   string    `json:"serverInfo,omitempty"` // name/version from initialize
	Protocol string    `json:"protocol,omitempty"`   // negotiated protocol version
	// Transport is how a remote server's connection was made
	// (streamable-http or sse); "" for a process (whose PID is then set).
	Transport string `json:"transport,omitempty"`
	Usage     *Usage `json:"usage,omitempty"`
	// Confinement is what the confining launcher reported for this
	// process; absent for an unconfined server.
	Confinement *Confinement `json:"confinement,omitempty"`
}

// Confinement says whether a process runs under its sandbox policy.
type Confinement struct {
	Enforced  bool     `json:"enforced"`
	Mechanism string   `json:"mechanism,omitempty"`
	Reason    string   `json:"reason,omitempty"`
	Missing   []string `json:"missing,omitempty"`
}

// Usage is a resource sample of a server's (or a process's) process tree.
type Usage struct {
	CPUPercent float64 `json:"cpuPercent"` // 100 = one core busy
	RSSBytes   uint64  `json:"rssBytes"`
	Processes  int     `json:"processes"` // OS processes, descendants included
}

// LogLine is a line a server wrote on stderr (or non-MCP output on
// stdout).
type LogLine struct {
	Time   time.Time `json:"time"`
	PID    int       `json:"pid"`
	Stream string    `json:"stream"`
	Text   string    `json:"text"`
}

// ToolInfo is a tool a server listed.
type ToolInfo struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	// Disabled is true for a tool the server's config hides from clients.
	Disabled bool `json:"disabled,omitempty"`
	// Held is true for a tool held from clients until the user approves
	// it: new, or changed since approved (see HeldTool).
	Held bool `json:"held,omitempty"`
	// Tier is what the tool may do: "read", "write" or "destructive";
	// the config's override (ServerConfig.Tiers), else what its
	// annotations say, with the MCP spec's defaults (an unannotated tool
	// is destructive).
	Tier string `json:"tier"`
}

// AddServerRequest is the body of POST /api/v1/servers.
type AddServerRequest struct {
	Name   string       `json:"name"`
	Server ServerConfig `json:"server"`
}

// AddRemoteRequest is the body of POST /api/v1/remotes: a remote server
// added by hand. Nothing is downloaded: the entry is written to
// config.json and the secret headers' values to the secret store.
type AddRemoteRequest struct {
	Name string `json:"name"`
	// URL is the server's MCP endpoint: https://, or http:// to a
	// loopback address.
	URL string `json:"url"`
	// Headers are sent with every request and kept in config.json.
	Headers map[string]string `json:"headers,omitempty"`
	// SecretHeaders map a header to its value (an Authorization header,
	// an API key): the values go to the secret store under the server's
	// name, and config.json names only the secrets.
	SecretHeaders map[string]string `json:"secretHeaders,omitempty"`
	// Transport is "" or "auto", "streamable-http" or "sse".
	Transport string `json:"transport,omitempty"`
	// Enabled false adds the server without connecting to it (the entry's
	// "enabled": false); nil means enabled.
	Enabled *bool `json:"enabled,omitempty"`
	// OAuth is the OAuth client its sign-in uses instead of dynamic
	// registration (config.json's "oauth").
	OAuth *AddRemoteOAuth `json:"oauth,omitempty"`
}

// AddRemoteOAuth is config.json's "oauth" of a remote added through POST
// /api/v1/remotes, except that ClientSecret is the secret itself: it goes
// to the secret store (as OAuthClientSecretName), and config.json names it.
type AddRemoteOAuth struct {
	ClientID          string   `json:"clientId,omitempty"`
	ClientSecret      string   `json:"clientSecret,omitempty"`
	Scopes            []string `json:"scopes,omitempty"`
	ClientMetadataURL string   `json:"clientMetadataUrl,omitempty"`
}

// OAuthClientSecretName is the name, in the secret store under the
// server's name, of a remote's OAuth client secret given through POST
// /api/v1/remotes.
const OAuthClientSecretName = "oauth.clientSecret"

// ErrorResponse is the body of every error answer (status 400 and up).
type ErrorResponse struct {
	Error string `json:"error"`
}
