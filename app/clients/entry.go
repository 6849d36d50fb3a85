package clients

import (
	"fmt"
	"path/filepath"
	"strings"
)

// obj is an ordered object: what Switchboard writes, in the order it is
// written. Values are string, bool, []string or obj.
type obj []member

type member struct {
	key string
	val any
}

// Change is what a Plan does to a client's file: Connect, Disconnect or
// Replace.
type Change interface{ isChange() }

// Connect writes the entry named "switchboard" (and one entry
// "switchboard-<server>" per name in PerServer), replacing earlier ones, and
// removes per-server entries Switchboard wrote before that are no longer in
// PerServer.
type Connect struct {
	// URL is the gateway's MCP endpoint, e.g. http://127.0.0.1:7391/mcp;
	// per-server entries use URL + "/" + server.
	URL string
	// Token is the bearer token issued for this client. Empty leaves the
	// Authorization header (or SWITCHBOARD_TOKEN) out.
	Token string
	// BinaryPath is the absolute path of the switchboard binary, for
	// clients that need the stdio bridge (Claude Desktop).
	BinaryPath string
	// PerServer names servers that get their own entry.
	PerServer []string
	// Profile, when set, points the "switchboard" entry at the profile's
	// endpoint, URL + "/p/" + Profile (the bridge: `connect --profile
	// Profile`), instead of the aggregated one. It does not go with
	// PerServer: a token bound to a profile reaches no other endpoint.
	Profile string
	// Home is the data directory of the daemon, written into the bridge's
	// command (`connect --home DIR`) so that the bridge finds this daemon
	// and not the one of the default data directory. Empty (the default
	// directory) leaves it out.
	Home string
	// TakeOver replaces entries of Switchboard's names that Switchboard
	// did not write (see Plan.Conflicts).
	TakeOver bool
	// Force changes a read-only file or a file in a read-only folder.
	Force bool
}

// Disconnect removes every entry Switchboard wrote ("switchboard" and
// "switchboard-<server>" entries it can prove it wrote; see Plan.Kept), and
// what connect added with them: when nothing else changed the file since,
// the file becomes what it was before connect, byte for byte (or is
// removed, when connect created it). Removing from a file that has none
// changes nothing.
type Disconnect struct {
	// Force changes a read-only file or a file in a read-only folder.
	Force bool
}

// Replace removes the named entries (servers imported into Switchboard) and
// connects the client.
type Replace struct {
	Remove  []string
	Connect Connect
}

func (Connect) isChange()    {}
func (Disconnect) isChange() {}
func (Replace) isChange()    {}

// entryValue is the entry Switchboard writes for client c to reach url.
// server is "" for the entry that reaches every server.
func entryValue(c Client, cn Connect, server string) obj {
	url := strings.TrimSuffix(cn.URL, "/")
	switch {
	case server != "":
		url += "/" + server
	case cn.Profile != "":
		url += "/p/" + cn.Profile
	}
	headers := obj{}
	if cn.Token != "" {
		headers = obj{{"Authorization", "Bearer " + cn.Token}}
	}
	withHeaders := func(o obj, key string) obj {
		if len(headers) > 0 {
			o = append(o, member{key, headers})
		}
		return o
	}
	switch c.Remote {
	case Bridge:
		o := obj{}
		if c.StdioType != "" {
			o = append(o, member{"type", c.StdioType})
		}
		args := []string{"connect"}
		if cn.Home != "" {
			args = append(args, "--home", cn.Home)
		}
		if server != "" {
			args = append(args, server)
		} else if cn.Profile != "" {
			args = append(args, "--profile", cn.Profile)
		}
		o = append(o, member{"command", cn.BinaryPath}, member{"args", args})
		if cn.Token != "" {
			o = append(o, member{"env", obj{{TokenEnv, cn.Token}}})
		}
		return o
	case URLHeaders:
		return withHeaders(obj{{"url", url}}, "headers")
	case TypeHTTP:
		return withHeaders(obj{{"type", "http"}, {"url", url}}, "headers")
	case ServerURL:
		return withHeaders(obj{{"serverUrl", url}}, "headers")
	case HTTPURL:
		return withHeaders(obj{{"httpUrl", url}}, "headers")
	case StreamableHTTP:
		return withHeaders(obj{{"type", "streamableHttp"}, {"url", url}}, "headers")
	case CodexHTTP:
		return withHeaders(obj{{"url", url}}, "http_headers")
	case OpenCodeRemote:
		// "enabled" is written although true is OpenCode's default: an
		// organization's remote config (.well-known/opencode) may turn a
		// same-named server off, and the user's file wins over it.
		o := withHeaders(obj{{"type", "remote"}, {"url", url}}, "headers")
		return append(o, member{"enabled", true})
	case CopilotHTTP:
		o := withHeaders(obj{{"type", "http"}, {"url", url}}, "headers")
		return append(o, member{"tools", []string{"*"}})
	case TypeStreamableHTTP:
		return withHeaders(obj{{"type", "streamable-http"}, {"url", url}}, "headers")
	case GooseHTTP:
		o := obj{{"enabled", true}, {"type", "streamable_http"}, {"name", entryNameOf(server)},
			{"description", "Switchboard's MCP gateway"}, {"uri", url}}
		return withHeaders(o, "headers")
	case VibeHTTP:
		return withHeaders(obj{{"transport", "streamable-http"}, {"url", url}}, "headers")
	case DeepLink:
		return withHeaders(obj{{"name", entryNameOf(server)}, {"type", "streamableHttp"}, {"baseUrl", url}}, "headers")
	case ContinueHTTP:
		o := obj{{"type", "streamable-http"}, {"url", url}}
		if len(headers) > 0 {
			o = append(o, member{"requestOptions", obj{{"headers", headers}}})
		}
		return o
	}
	panic(fmt.Sprintf("clients: unknown remote style %d", c.Remote))
}

// entryNameOf is the name of the entry for server ("" for the one that
// reaches every server), for the clients whose entries repeat their name.
func entryNameOf(server string) string {
	if server == "" {
		return EntryName
	}
	return EntryName + "-" + server
}

func validateConnect(c Client, cn Connect) error {
	if c.Remote == Bridge {
		if cn.BinaryPath == "" || !(filepath.IsAbs(cn.BinaryPath) || isWindowsAbs(cn.BinaryPath)) {
			return fmt.Errorf("%s needs the absolute path of the switchboard binary, got %q", c.Name, cn.BinaryPath)
		}
	} else if !strings.HasPrefix(cn.URL, "http://") && !strings.HasPrefix(cn.URL, "https://") {
		return fmt.Errorf("%s needs the gateway's http(s) URL, got %q", c.Name, cn.URL)
	}
	for _, s := range cn.PerServer {
		if s == "" || strings.ContainsAny(s, "/\\ \t\r\n\"'") {
			return fmt.Errorf("server name %q cannot be part of an entry name or URL", s)
		}
	}
	if cn.Profile != "" {
		if strings.ContainsAny(cn.Profile, "/\\ \t\r\n\"'?#%") {
			return fmt.Errorf("profile name %q cannot be part of a URL", cn.Profile)
		}
		if len(cn.PerServer) > 0 {
			return fmt.Errorf("a client connected to profile %q cannot also have entries of its own servers (%s): its token reaches the profile's endpoint only",
				cn.Profile, strings.Join(cn.PerServer, ", "))
		}
	}
	return nil
}

func isWindowsAbs(p string) bool {
	return len(p) >= 3 && p[1] == ':' && (p[2] == '\\' || p[2] == '/')
}

// entryFromMap reads an entry from a decoded JSON/TOML/YAML value,
// accepting every client's spelling.
func entryFromMap(name string, m map[string]any) Entry {
	e := Entry{Name: name}
	switch cmd := m["command"].(type) {
	case string:
		e.Command = cmd
	case map[string]any: // Zed's older {"command": {"path", "args", "env"}}
		e.Command, _ = cmd["path"].(string)
		e.Args = stringList(cmd["args"])
		e.Env = stringMap(cmd["env"])
	case []any: // a command given as a list
		l := stringList(cmd)
		if len(l) > 0 {
			e.Command, e.Args = l[0], l[1:]
		}
	}
	if cmd, ok := m["cmd"].(string); ok && e.Command == "" { // Goose's stdio extensions
		e.Command = cmd
	}
	if a := stringList(m["args"]); a != nil {
		e.Args = a
	}
	if env := stringMap(m["env"]); env != nil {
		e.Env = env
	}
	if env := stringMap(m["environment"]); env != nil { // OpenCode's local servers
		e.Env = env
	}
	if env := stringMap(m["envs"]); env != nil { // Goose's extensions
		e.Env = env
	}
	e.Cwd, _ = m["cwd"].(string)
	for _, k := range []string{"url", "serverUrl", "httpUrl", "baseUrl", "uri"} {
		if u, ok := m[k].(string); ok && u != "" {
			e.URL, e.URLKey = u, k
			break
		}
	}
	e.Type, _ = m["type"].(string)
	if t, ok := m["transport"].(string); ok && e.Type == "" { // Mistral Vibe
		e.Type = t
	}
	// Turned off in the client: "disabled": true (Cline, Claude Code's
	// kin, droid, Vibe), or "enabled": false (OpenCode, Goose, Kimi).
	if d, ok := m["disabled"].(bool); ok && d {
		e.Disabled = true
	}
	if en, ok := m["enabled"].(bool); ok && !en {
		e.Disabled = true
	}
	e.Headers = stringMap(m["headers"])
	e.EnvHeaders = stringMap(m["env_http_headers"])
	e.BearerTokenEnv, _ = m["bearer_token_env_var"].(string)
	if v, ok := m["bearerTokenEnvVar"].(string); ok && e.BearerTokenEnv == "" { // Kimi Code CLI
		e.BearerTokenEnv = v
	}
	if h := stringMap(m["http_headers"]); h != nil {
		e.Headers = h
	}
	if auth, ok := m["auth"].(map[string]any); ok && e.Headers == nil { // Vibe's [auth] (type "static")
		e.Headers = stringMap(auth["headers"])
	}
	if ro, ok := m["requestOptions"].(map[string]any); ok {
		if h := stringMap(ro["headers"]); h != nil {
			e.Headers = h
		}
	}
	return e
}

func stringList(v any) []string {
	l, ok := v.([]any)
	if !ok {
		return nil
	}
	out := make([]string, 0, len(l))
	for _, x := range l {
		out = append(out, fmt.Sprint(x))
	}
	return out
}

func stringMap(v any) map[string]string {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, x := range m {
		if s, ok := x.(string); ok {
			out[k] = s
		} else {
			out[k] = fmt.Sprint(x)
		}
	}
	return out
}
