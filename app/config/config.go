// Package config reads, validates, migrates and writes Switchboard's own
// configuration file, config.json in the data directory, and holds the live
// configuration for the daemon (see [Store]).
//
// The file looks like this:
//
//	{
//	  "version": 1,
//	  "listen": "127.0.0.1:7391",
//	  "servers": {
//	    "fs": {
//	      "command": "npx",
//	      "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"],
//	      "env": {"DEBUG": "1"},
//	      "cwd": "/tmp",
//	      "enabled": true,
//	      "pool": {"mode": "shared", "min": 0, "max": 2, "idleTimeout": "10m"},
//	      "timeout": "2m",
//	      "disabledTools": ["write_file"],
//	      "tiers": {"move_file": "write"},
//	      "holdChangedTools": true,
//	      "roots": ["/home/me/projects"]
//	    },
//	    "linear": {
//	      "url": "https://mcp.linear.app/mcp",
//	      "headers": {"X-Team": "a"},
//	      "secretHeaders": {"Authorization": "linear-token"},
//	      "oauth": {"clientId": "abc", "clientSecret": "linear-client-secret"},
//	      "transport": "auto"
//	    }
//	  },
//	  "sessionTimeout": "30m",
//	  "toolSearch": true,
//	  "profiles": {
//	    "coding": {"servers": ["fs"], "tools": {"fs": ["read_file"]}, "maxTier": "read"}
//	  }
//	}
//
// A server entry has the same command/args/env/cwd shape as an entry of
// Claude Desktop's "mcpServers", so users can paste theirs. A file without a
// "version" is version 0: a Claude Desktop file, migrated on load (see
// [Load]).
//
// Keys this package does not know, at the top level, inside a server,
// inside a pool and inside a profile, are kept through [Parse] and [Config.Save], so that a user's
// notes or a newer Switchboard's settings survive. Known keys are written
// first in a fixed order, then unknown keys sorted by name.
package config

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"

	"github.com/switchboardhq/switchboard/app/tiers"
)

const (
	// CurrentVersion is the version of the file layout this package writes.
	// Files with a lower version are migrated on load; files with a higher
	// version are refused.
	CurrentVersion = 1

	// DefaultListen is the address the daemon listens on when the file
	// does not say.
	DefaultListen = "127.0.0.1:7391"

	// FileName is the name of the config file inside the data directory.
	FileName = "config.json"
)

// A Config is the content of config.json.
//
// The zero value is not a valid configuration (it has no version and no
// listen address); start from [Default] or [Parse]. Configs returned by this
// package are never shared: each caller gets its own deep copy, so changing
// one does not change the daemon's configuration; use [Store.Update] for that.
type Config struct {
	// Version is the file layout version. After Parse or Load it is always
	// CurrentVersion.
	Version int `json:"version"`

	// Listen is the host:port the daemon's HTTP endpoint listens on. The
	// host is always a loopback name or address. After Parse or Load it is
	// never empty: a missing or empty "listen" becomes DefaultListen.
	Listen string `json:"listen"`

	// Servers maps a server name to how to run it. Names become tool
	// prefixes, so they are short (see Validate). After Parse or Load the
	// map is non-nil; nil and empty mean the same: no servers.
	Servers map[string]Server `json:"servers"`

	// History bounds the call history; the zero value means the defaults
	// (30 days, 1 GiB).
	History History `json:"history,omitzero"`

	// SessionTimeout closes an MCP client session that sent no request for
	// this long (and gives back the processes leased to it); zero means the
	// default (30 minutes).
	SessionTimeout Duration `json:"sessionTimeout,omitzero"`

	// Profiles maps a profile name to a set of servers (and tools) served
	// on /mcp/p/<name>; see Profile. Nil and empty mean the same: no
	// profiles.
	Profiles map[string]Profile `json:"profiles,omitempty"`

	// ToolSearch serves the aggregated endpoint (/mcp) in search mode: a
	// client sees two tools, search_tools and call_tool, instead of every
	// server's tools (for clients that cope badly with many tools).
	ToolSearch bool `json:"toolSearch,omitempty"`

	// AskTimeout is how long a call that waits for the user's yes (see
	// Server.AskBeforeDestructive) waits before it is denied; zero means
	// the default (2 minutes). Between MinAskTimeout and MaxAskTimeout.
	AskTimeout Duration `json:"askTimeout,omitzero"`

	// SandboxDefault says whether servers added by hand run confined:
	// SandboxConfined or SandboxOff ("" is off). See Server.IsConfined.
	SandboxDefault string `json:"sandboxDefault,omitempty"`

	// extra holds top-level keys this package does not know, verbatim
	// (compacted), so that they survive a save.
	extra map[string]json.RawMessage
}

// A Server says how to run one local MCP stdio server, or how to reach a
// remote one: an entry with URL instead of Command is a remote server
// (streamable HTTP or the legacy HTTP+SSE transport), which takes no
// Args, Env, SecretEnv, Cwd or Pool.
//
// For slices and maps, nil and empty mean the same and are written the same
// way (omitted).
type Server struct {
	// Command is the program to run, looked up in PATH when it has no
	// directory part. A local server needs it; a remote one has URL instead.
	Command string `json:"command,omitempty"`

	// URL is a remote server's MCP endpoint: https://, or http:// to a
	// loopback address (127.0.0.0/8, ::1, localhost). Empty for a local
	// server.
	URL string `json:"url,omitempty"`

	// Headers are sent with every request to a remote server, as they are.
	Headers map[string]string `json:"headers,omitempty"`

	// SecretHeaders maps a header sent to a remote server to the name of
	// a secret, in the secret store under this server's name, that is its
	// value (an "Authorization" header, say), so that it is not in this
	// file.
	SecretHeaders map[string]string `json:"secretHeaders,omitempty"`

	// OAuth is how a remote server's sign-in identifies Switchboard (a
	// pre-registered client, scopes, a client metadata document); nil:
	// dynamic registration. See OAuth.
	OAuth *OAuth `json:"oauth,omitempty"`

	// Transport is how a remote server is reached: "" or TransportAuto
	// (streamable HTTP, falling back to HTTP+SSE when the server refuses
	// it), TransportStreamableHTTP or TransportSSE.
	Transport string `json:"transport,omitempty"`

	// Args are the command-line arguments, not including the program name.
	Args []string `json:"args,omitempty"`

	// Env holds extra environment variables for the process, added to the
	// daemon's own environment.
	Env map[string]string `json:"env,omitempty"`

	// Cwd is the working directory of the process; empty means the
	// daemon's choice.
	Cwd string `json:"cwd,omitempty"`

	// Enabled says whether the server is run at all. Nil (the key is
	// absent) means enabled; use IsEnabled rather than reading it.
	Enabled *bool `json:"enabled,omitempty"`

	// Pool says how many processes of this server run and who shares them.
	// The zero Pool means the defaults (shared, daemon-chosen limits).
	Pool Pool `json:"pool,omitzero"`

	// Timeout limits one request to the server; zero means the daemon's
	// default.
	Timeout Duration `json:"timeout,omitzero"`

	// DisabledTools names tools of this server that are hidden from
	// clients.
	DisabledTools []string `json:"disabledTools,omitempty"`

	// Tiers override the tiers of this server's tools, by the server's
	// own tool names: a tool whose annotations are wrong or missing (the
	// spec's defaults make an unannotated tool destructive) is given the
	// tier the user knows it has. See app/tiers.
	Tiers map[string]tiers.Tier `json:"tiers,omitempty"`

	// HoldChangedTools says whether a tool this server lists that is new,
	// or whose description or input schema changed since the user
	// approved it, is held from clients until approved (see
	// app/approvals). Nil (the key is absent) means true; false is for a
	// server the user trusts. Use IsHoldingChangedTools.
	HoldChangedTools *bool `json:"holdChangedTools,omitempty"`

	// AskBeforeDestructive makes a call of one of this server's
	// destructive tools wait for the user's yes (asked in the client when
	// it can answer, else on the dashboard and in the tray; see the
	// gateway's asks.go). Off by default.
	AskBeforeDestructive bool `json:"askBeforeDestructive,omitempty"`

	// Alias, when set, replaces the server's name as the prefix of its
	// tools and prompts on the aggregated endpoint (alias__tool), to keep
	// names short. It follows the rules of a server name.
	Alias string `json:"alias,omitempty"`

	// SecretEnv names environment variables whose values live in the secret
	// store (the OS keychain or a 0600 file) under this server's name, not
	// in this file. The daemon adds them to the environment at start.
	SecretEnv []string `json:"secretEnv,omitempty"`

	// Roots are the directories (absolute paths or file:// URIs) the
	// server is told about when it asks for roots outside of a client's
	// call (server-filesystem does at start); without them it gets an
	// empty list.
	Roots []string `json:"roots,omitempty"`

	// Install says where the server came from when Switchboard installed
	// it from the catalog; nil for a server configured by hand.
	Install *Install `json:"install,omitempty"`

	// Sandbox adds to the confinement policy the daemon derives, or (false)
	// turns it off for this server; nil: see IsConfined.
	Sandbox *Sandbox `json:"sandbox,omitempty"`

	// extra holds keys this package does not know, verbatim (compacted).
	extra map[string]json.RawMessage
}

// History is how much call history the daemon keeps.
type History struct {
	// MaxAge is how long records are kept; 0 means the default (30 days).
	MaxAge Duration `json:"maxAge,omitzero"`
	// MaxBytes bounds the database's size; 0 means the default (1 GiB).
	MaxBytes int64 `json:"maxBytes,omitempty"`
	// KeepSecretValues turns value redaction off: credentials found inside
	// arguments, responses and log lines (sk-…, ghp_…, JWTs, PEM keys) are
	// stored as they are. False, the default, replaces them. Fields named
	// like secrets (token, apiKey, ...) are redacted either way.
	KeepSecretValues bool `json:"keepSecretValues,omitempty"`
}

// Install records the catalog entry a server was installed from, for
// updates and uninstall.
type Install struct {
	// Entry is the catalog (registry) name, such as
	// "io.github.modelcontextprotocol/server-filesystem".
	Entry string `json:"entry"`
	// Version is the installed version.
	Version string `json:"version"`
	// Type is the package's registry type: npm, pypi, oci, mcpb or
	// command; "remote" for an entry's hosted endpoint.
	Type string `json:"type,omitempty"`
}

// Remote transports (Server.Transport).
const (
	TransportAuto           = "auto"
	TransportStreamableHTTP = "streamable-http"
	TransportSSE            = "sse"
)

// IsRemote reports whether the entry is a remote server (it has a URL).
func (s Server) IsRemote() bool { return s.URL != "" }

// IsEnabled reports whether the server should run: true unless Enabled is
// set to false.
func (s Server) IsEnabled() bool { return s.Enabled == nil || *s.Enabled }

// UnknownKeys returns a copy of the entry's keys this package does not
// know, with their JSON values (compacted); nil when there are none. The
// API shows them as they are.
func (s Server) UnknownKeys() map[string]json.RawMessage { return cloneExtra(s.extra) }

// IsHoldingChangedTools reports whether new and changed tools of the
// server are held until approved: true unless HoldChangedTools is false.
func (s Server) IsHoldingChangedTools() bool { return s.HoldChangedTools == nil || *s.HoldChangedTools }

// Pool modes. The empty mode means PoolShared.
const (
	// PoolShared: one set of processes serves every client session.
	PoolShared = "shared"
	// PoolSession: each client session gets its own process.
	PoolSession = "session"
)

// A Pool says how many processes of a server run and how they are shared.
// The zero Pool means: shared, with the daemon's default limits.
type Pool struct {
	// Mode is "" (the same as "shared"), "shared" or "session".
	Mode string `json:"mode,omitempty"`

	// Min is the number of processes kept running even when idle.
	Min int `json:"min,omitempty"`

	// Max caps the number of processes; 0 means the daemon's default.
	// When set, Min <= Max <= 64.
	Max int `json:"max,omitempty"`

	// IdleTimeout is how long a process above Min may stay idle before it
	// is stopped; 0 means the daemon's default.
	IdleTimeout Duration `json:"idleTimeout,omitzero"`

	// extra holds keys this package does not know, verbatim (compacted).
	extra map[string]json.RawMessage
}

// IsZero reports whether p is the zero Pool (all defaults, no unknown keys).
// A zero Pool is omitted from the file.
func (p Pool) IsZero() bool {
	return p.Mode == "" && p.Min == 0 && p.Max == 0 && p.IdleTimeout.Duration == 0 && len(p.extra) == 0
}

// UnknownKeys returns a copy of the pool's keys this package does not
// know, with their JSON values (compacted); nil when there are none.
func (p Pool) UnknownKeys() map[string]json.RawMessage { return cloneExtra(p.extra) }

// Default returns the configuration used when there is no config file:
// CurrentVersion, DefaultListen and no servers.
func Default() *Config {
	return &Config{
		Version: CurrentVersion,
		Listen:  DefaultListen,
		Servers: map[string]Server{},
	}
}

// Clone returns a deep copy of c, unknown keys included. Clone of nil is nil.
func (c *Config) Clone() *Config {
	if c == nil {
		return nil
	}
	out := &Config{
		Version: c.Version,
		Listen:  c.Listen,
		History: c.History,
		extra:   cloneExtra(c.extra),

		SessionTimeout: c.SessionTimeout,
		Profiles:       cloneProfiles(c.Profiles),
		ToolSearch:     c.ToolSearch,
		AskTimeout:     c.AskTimeout,
		SandboxDefault: c.SandboxDefault,
	}
	if c.Servers != nil {
		out.Servers = make(map[string]Server, len(c.Servers))
		for name, s := range c.Servers {
			out.Servers[name] = s.clone()
		}
	}
	return out
}

func (s Server) clone() Server {
	out := s
	out.Args = slices.Clone(s.Args)
	out.Env = maps.Clone(s.Env)
	out.Headers = maps.Clone(s.Headers)
	out.SecretHeaders = maps.Clone(s.SecretHeaders)
	out.OAuth = s.OAuth.clone()
	if s.Enabled != nil {
		v := *s.Enabled
		out.Enabled = &v
	}
	if s.HoldChangedTools != nil {
		v := *s.HoldChangedTools
		out.HoldChangedTools = &v
	}
	out.Pool.extra = cloneExtra(s.Pool.extra)
	out.DisabledTools = slices.Clone(s.DisabledTools)
	out.Tiers = maps.Clone(s.Tiers)
	out.SecretEnv = slices.Clone(s.SecretEnv)
	out.Sandbox = s.Sandbox.clone()
	out.Roots = slices.Clone(s.Roots)
	if s.Install != nil {
		in := *s.Install
		out.Install = &in
	}
	out.extra = cloneExtra(s.extra)
	return out
}

func cloneExtra(m map[string]json.RawMessage) map[string]json.RawMessage {
	if m == nil {
		return nil
	}
	out := make(map[string]json.RawMessage, len(m))
	for k, v := range m {
		out[k] = bytes.Clone(v)
	}
	return out
}

// DiffServers compares the servers of two configurations and returns the
// sorted names that are only in new (added), in both but different
// (changed), and only in old (removed). Two servers are the same when they
// would be written identically, unknown keys included; nil and empty slices
// and maps are the same. A nil Config has no servers. It is meant for
// logging and for deciding which servers to restart.
func DiffServers(old, new *Config) (added, changed, removed []string) {
	var oldServers, newServers map[string]Server
	if old != nil {
		oldServers = old.Servers
	}
	if new != nil {
		newServers = new.Servers
	}
	for name, ns := range newServers {
		prev, ok := oldServers[name]
		switch {
		case !ok:
			added = append(added, name)
		case !bytes.Equal(prev.appendJSON(nil), ns.appendJSON(nil)):
			changed = append(changed, name)
		}
	}
	for name := range oldServers {
		if _, ok := newServers[name]; !ok {
			removed = append(removed, name)
		}
	}
	slices.Sort(added)
	slices.Sort(changed)
	slices.Sort(removed)
	return added, changed, removed
}
