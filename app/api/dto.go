package api

import (
	"time"

	"github.com/switchboardhq/switchboard/app/config"
	"github.com/switchboardhq/switchboard/app/gateway"
	"github.com/switchboardhq/switchboard/supervisor"
)

// The types in this file are the API's wire contract, shared by the server,
// the Go Client and (mirrored in TypeScript) the dashboard. Every endpoint
// returns one of them, a list of them, or an ErrorResponse; there is no
// envelope.

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

// StateDisabled is the State of a server whose config says "enabled": false.
// The other states are those of supervisor.State.
const StateDisabled = "disabled"

// ServerView is one configured server: its config entry and what the
// supervisor knows about it.
type ServerView struct {
	Name string `json:"name"`
	// Config is the server's entry in config.json, unknown keys included.
	Config config.Server `json:"config"`
	// Enabled is Config.IsEnabled().
	Enabled bool `json:"enabled"`
	// State is StateDisabled, or a supervisor.State ("stopped", "starting",
	// "running", "backoff", "failing", "stopping"). A server the supervisor
	// does not run (yet) is "stopped".
	State string `json:"state"`
	// Mode is the pool mode, "shared" or "session".
	Mode string `json:"mode"`
	// Processes are the server's OS processes; empty, never null.
	Processes []supervisor.ProcessStatus `json:"processes"`
	// Restarts counts unexpected exits since the server was added.
	Restarts int `json:"restarts"`
	// LastError is the last crash or start failure, if any.
	LastError string `json:"lastError,omitempty"`
	// NonProtocolLines counts lines the server wrote on stdout that were
	// not MCP messages (banners, console output); they are in its logs.
	NonProtocolLines int64 `json:"nonProtocolLines,omitempty"`
	// Usage is the latest resource sample, absent before the first.
	Usage *supervisor.Usage `json:"usage,omitempty"`
	// RecentLogs are the server's last RecentLogLines lines, oldest first;
	// empty, never null.
	RecentLogs []supervisor.LogLine `json:"recentLogs"`
	// Tools are what the server listed last, disabled ones marked; empty
	// before the first listing.
	Tools []gateway.ToolInfo `json:"tools"`
}

// RecentLogLines is how many log lines a ServerView carries.
const RecentLogLines = 20

// AddServerRequest is the body of POST /api/v1/servers.
type AddServerRequest struct {
	Name   string        `json:"name"`
	Server config.Server `json:"server"`
}

// ErrorResponse is the body of every error answer (status 400 and up).
type ErrorResponse struct {
	Error string `json:"error"`
}
