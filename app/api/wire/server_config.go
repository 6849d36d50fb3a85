package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// ServerConfig is a server's entry in config.json, as the API shows and
// takes it (GET, POST and PUT /api/v1/servers). Its JSON is the file's:
// known keys in a fixed order, then the keys this contract does not name
// (Unknown), so that an entry written by a newer Switchboard or by hand
// goes through the API unchanged.
//
// For slices and maps, nil and empty mean the same and are written the same
// way (omitted).
type ServerConfig struct {
	// Command is the program to run. A local server needs it; a remote
	// one has URL instead (and takes no Args, Env, SecretEnv, Cwd or
	// Pool).
	Command string `json:"command,omitempty"`
	// URL is a remote server's MCP endpoint: https://, or http:// to a
	// loopback address.
	URL string `json:"url,omitempty"`
	// Transport is "" or "auto" (streamable HTTP, falling back to
	// HTTP+SSE), "streamable-http" or "sse".
	Transport string `json:"transport,omitempty"`
	// Headers are sent with every request to a remote server.
	Headers map[string]string `json:"headers,omitempty"`
	// SecretHeaders maps a header of a remote server to the name of the
	// secret, in the secret store, that is its value.
	SecretHeaders map[string]string `json:"secretHeaders,omitempty"`
	// OAuth is how a remote server's sign-in identifies Switchboard; nil:
	// dynamic registration.
	OAuth *OAuth `json:"oauth,omitempty"`
	// Args are the command-line arguments, not including the program name.
	Args []string `json:"args,omitempty"`
	// Env holds extra environment variables for the process.
	Env map[string]string `json:"env,omitempty"`
	// Cwd is the working directory of the process; empty means the
	// daemon's choice.
	Cwd string `json:"cwd,omitempty"`
	// Enabled says whether the server is run at all. Nil (the key is
	// absent) means enabled; use IsEnabled rather than reading it.
	Enabled *bool `json:"enabled,omitempty"`
	// Pool says how many processes of this server run and who shares them.
	Pool Pool `json:"pool,omitzero"`
	// Timeout limits one request to the server; zero means the daemon's
	// default.
	Timeout Duration `json:"timeout,omitzero"`
	// DisabledTools names tools of this server hidden from clients.
	DisabledTools []string `json:"disabledTools,omitempty"`
	// Tiers override the tiers of tools ("read", "write" or
	// "destructive"), by the server's own tool names.
	Tiers map[string]string `json:"tiers,omitempty"`
	// HoldChangedTools false approves the server's new and changed tools
	// instead of holding them until the user does; nil (absent) means true.
	HoldChangedTools *bool `json:"holdChangedTools,omitempty"`
	// AskBeforeDestructive makes a call of one of the server's
	// destructive tools wait for the user's yes.
	AskBeforeDestructive bool `json:"askBeforeDestructive,omitempty"`
	// Alias, when set, replaces the server's name as the prefix of its
	// tools and prompts on the aggregated endpoint.
	Alias string `json:"alias,omitempty"`
	// SecretEnv names environment variables whose values live in the
	// secret store, not in config.json.
	SecretEnv []string `json:"secretEnv,omitempty"`
	// Roots are the directories the server is told about when it asks for
	// roots outside of a client's call.
	Roots []string `json:"roots,omitempty"`
	// Install says where the server came from when Switchboard installed
	// it from the catalog; nil for a server configured by hand.
	Install *Install `json:"install,omitempty"`
	// Sandbox is the entry's "sandbox" as config.json has it: false, true,
	// or {"read": [...], "write": [...], "network": bool}; absent when the
	// entry has none (see ServerView.Sandbox for the policy in force).
	Sandbox json.RawMessage `json:"sandbox,omitempty"`

	// Unknown holds the entry's other keys, with their JSON values.
	Unknown map[string]json.RawMessage `json:"-"`
}

// OAuth is a remote server's OAuth client for its sign-in. It holds no
// secret: ClientSecret is the name of the secret, in the secret store
// under the server's name, that is the client's secret.
type OAuth struct {
	// ClientID is a client registered with the authorization server
	// beforehand.
	ClientID string `json:"clientId,omitempty"`
	// ClientSecret names the secret holding that client's secret (never
	// the secret); empty for a public client.
	ClientSecret string `json:"clientSecret,omitempty"`
	// Scopes are asked for at every sign-in.
	Scopes []string `json:"scopes,omitempty"`
	// ClientMetadataURL is the https URL of a Client ID Metadata Document
	// used as the client id where the authorization server supports them.
	ClientMetadataURL string `json:"clientMetadataUrl,omitempty"`
}

// IsEnabled reports whether the server should run: true unless Enabled is
// set to false.
func (s ServerConfig) IsEnabled() bool { return s.Enabled == nil || *s.Enabled }

// MarshalJSON writes the known keys, then Unknown's sorted by key.
// A local server's command is written even when empty, as config.json has
// it; a remote server (with a URL) has none.
func (s ServerConfig) MarshalJSON() ([]byte, error) {
	type known ServerConfig // without these methods
	data, err := json.Marshal(known(s))
	if err == nil && s.Command == "" && s.URL == "" {
		head, rest := `{"command":""`, data[1:] // rest: the other keys and the '}'
		if len(rest) > 1 {
			head += ","
		}
		data = append([]byte(head), rest...)
	}
	return appendUnknown(data, err)(s.Unknown)
}

// UnmarshalJSON reads the known keys and keeps the others in Unknown. JSON
// null leaves s unchanged.
func (s *ServerConfig) UnmarshalJSON(data []byte) error {
	type known ServerConfig
	if isNull(data) {
		return nil
	}
	k := known(*s)
	if err := json.Unmarshal(data, &k); err != nil {
		return err
	}
	unknown, err := unknownKeys(data, reflect.TypeFor[known]())
	if err != nil {
		return err
	}
	*s = ServerConfig(k)
	s.Unknown = unknown
	return nil
}

// Pool modes. The empty mode means PoolShared.
const (
	PoolShared  = "shared"  // one set of processes serves every client session
	PoolSession = "session" // each client session gets its own process
)

// A Pool says how many processes of a server run and how they are shared.
// The zero Pool means: shared, with the daemon's default limits.
type Pool struct {
	// Mode is "" (the same as PoolShared), PoolShared or PoolSession.
	Mode string `json:"mode,omitempty"`
	// Min is the number of processes kept running even when idle.
	Min int `json:"min,omitempty"`
	// Max caps the number of processes; 0 means the daemon's default.
	Max int `json:"max,omitempty"`
	// IdleTimeout is how long a process above Min may stay idle before it
	// is stopped; 0 means the daemon's default.
	IdleTimeout Duration `json:"idleTimeout,omitzero"`

	// Unknown holds the pool's other keys, with their JSON values.
	Unknown map[string]json.RawMessage `json:"-"`
}

// IsZero reports whether p is the zero Pool (all defaults, no unknown
// keys); a zero Pool is omitted.
func (p Pool) IsZero() bool {
	return p.Mode == "" && p.Min == 0 && p.Max == 0 && p.IdleTimeout.Duration == 0 && len(p.Unknown) == 0
}

// MarshalJSON writes the known keys, then Unknown's sorted by key.
func (p Pool) MarshalJSON() ([]byte, error) {
	type known Pool
	return appendUnknown(json.Marshal(known(p)))(p.Unknown)
}

// UnmarshalJSON reads the known keys and keeps the others in Unknown. JSON
// null leaves p unchanged.
func (p *Pool) UnmarshalJSON(data []byte) error {
	type known Pool
	if isNull(data) {
		return nil
	}
	k := known(*p)
	if err := json.Unmarshal(data, &k); err != nil {
		return err
	}
	unknown, err := unknownKeys(data, reflect.TypeFor[known]())
	if err != nil {
		return err
	}
	*p = Pool(k)
	p.Unknown = unknown
	return nil
}

// Install records the catalog entry a server was installed from.
type Install struct {
	// Entry is the catalog (registry) name.
	Entry string `json:"entry"`
	// Version is the installed version.
	Version string `json:"version"`
	// Type is the package's registry type: npm, pypi, oci, mcpb or command.
	Type string `json:"type,omitempty"`
}

// A Duration is a time.Duration written as a Go duration string: "90s",
// "10m", "1h30m", "500ms", in the shortest form time.ParseDuration reads
// back (10 minutes is "10m", not "10m0s"). The zero Duration means "not
// set; use the default" wherever a field has one.
type Duration struct{ time.Duration }

// String returns d as it is written, e.g. "10m".
func (d Duration) String() string {
	s := d.Duration.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}

// MarshalJSON writes d as a JSON string such as "10m".
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalJSON reads a JSON string accepted by time.ParseDuration. JSON
// null leaves d unchanged; anything else is an error.
func (d *Duration) UnmarshalJSON(data []byte) error {
	if string(data) == "null" {
		return nil
	}
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("invalid duration %s: expected %s", snippet(data), durationWant)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("invalid duration %q: expected %s", s, durationWant)
	}
	d.Duration = v
	return nil
}

const durationWant = `a duration string like "90s" or "10m"`

// snippet is the start of raw JSON, for an error message.
func snippet(raw []byte) string {
	const limit = 40
	raw = bytes.TrimSpace(raw)
	if utf8.RuneCount(raw) <= limit {
		return string(raw)
	}
	return string([]rune(string(raw))[:limit]) + "…"
}

func isNull(data []byte) bool { return string(bytes.TrimSpace(data)) == "null" }

// appendUnknown returns a function that adds the members of unknown, sorted
// by key, at the end of the JSON object obj (as json.Marshal returned it,
// with its error).
func appendUnknown(obj []byte, err error) func(unknown map[string]json.RawMessage) ([]byte, error) {
	return func(unknown map[string]json.RawMessage) ([]byte, error) {
		if err != nil || len(unknown) == 0 {
			return obj, err
		}
		b := obj[:len(obj)-1] // without its '}'
		for _, k := range slices.Sorted(maps.Keys(unknown)) {
			if b[len(b)-1] != '{' {
				b = append(b, ',')
			}
			key, err := json.Marshal(k)
			if err != nil {
				return nil, err
			}
			b = append(append(b, key...), ':')
			b = append(b, unknown[k]...)
		}
		return append(b, '}'), nil
	}
}

// unknownKeys returns the members of the JSON object data whose keys are not
// the JSON names of struct type t's fields; nil when there are none.
func unknownKeys(data []byte, t reflect.Type) (map[string]json.RawMessage, error) {
	var all map[string]json.RawMessage
	if err := json.Unmarshal(data, &all); err != nil {
		return nil, err
	}
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name != "" && name != "-" {
			delete(all, name)
		}
	}
	if len(all) == 0 {
		return nil, nil
	}
	return all, nil
}
