package clients

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Transports of an imported remote server, as config.json spells them
// (config.TransportAuto, TransportStreamableHTTP, TransportSSE).
const (
	TransportAuto           = "auto"
	TransportStreamableHTTP = "streamable-http"
	TransportSSE            = "sse"
)

// An ImportEntry is a server of a client that Switchboard can take over:
// a stdio server (Command, Args, Cwd, Env) or a remote one (URL,
// Transport, Headers).
type ImportEntry struct {
	Name    string
	Command string
	Args    []string
	Cwd     string
	Env     []EnvVar // sorted by name
	// URL is a remote server's endpoint, with the client's ${VAR}
	// references resolved; Command is then empty.
	URL string
	// Transport is TransportAuto, TransportStreamableHTTP or TransportSSE
	// for a remote server: what the client's entry says, or what the
	// client does with an entry that does not say.
	Transport string
	// Headers are a remote server's headers, sorted by name, with their
	// references resolved; Secret as for Env.
	Headers []EnvVar
	// Disabled: the client's file turns the server off; Switchboard adds
	// it turned off too (config "enabled": false), for the user to turn
	// on.
	Disabled bool
}

// Remote reports whether the entry is a remote server.
func (ie ImportEntry) Remote() bool { return ie.URL != "" }

// EnvVar is one environment variable (or header) of an imported server.
// Secret is set when the name or the value looks like it holds a
// credential (IsSecret); the caller moves such values to the secret store.
type EnvVar struct {
	Name   string
	Value  string
	Secret bool
}

// A SkippedEntry is an entry of a client's file that import cannot take
// over, and why. ByHand, when set, says how the server can still be added
// by hand as a remote server: the caller words that in its own terms (the
// API names the command line's `switchboard install --url` and its flags).
type SkippedEntry struct {
	Name   string
	Reason string
	ByHand ByHand `json:",omitempty"`
}

// ByHand is what a remote server added by hand needs that the client's
// entry could not give.
type ByHand string

// What a skipped remote server needs when it is added by hand.
const (
	// ByHandSecretHeader: a header whose value is a secret.
	ByHandSecretHeader ByHand = "secret-header"
	// ByHandBearerToken: the Authorization header, "Bearer " and a token,
	// as a secret.
	ByHandBearerToken ByHand = "bearer-token"
	// ByHandValue: a value the client would have asked for or read.
	ByHandValue ByHand = "value"
)

// byHandError is a reason to skip an entry whose server can still be
// added by hand.
type byHandError struct {
	msg string
	how ByHand
}

func (e *byHandError) Error() string { return e.msg }

func byHandf(how ByHand, format string, args ...any) error {
	return &byHandError{msg: fmt.Sprintf(format, args...), how: how}
}

// LookupEnv finds an environment variable, as os.LookupEnv does.
type LookupEnv func(name string) (string, bool)

// EntriesToImport sorts client c's entries into those Switchboard can take
// over, in order, and those it cannot, with why: Switchboard's own entries,
// remote entries of a transport Switchboard does not speak, and remote
// entries whose URL or headers refer to environment variables that are not
// set. References (${VAR}, ${VAR:-default}, ${env:VAR}, and Codex's
// bearer_token_env_var and env_http_headers) are resolved with lookupEnv
// at import time: Switchboard's config holds values, not references, so
// the value imported is the one the client would have used now. An
// `npx mcp-remote URL` stdio entry is imported as the remote server it
// reaches (see fromMCPRemote). gatewayURL may be empty.
func EntriesToImport(c Client, entries []Entry, gatewayURL string, lookupEnv LookupEnv) ([]ImportEntry, []SkippedEntry) {
	var out []ImportEntry
	var skipped []SkippedEntry
	for _, e := range entries {
		if IsSwitchboard(e, gatewayURL) {
			skipped = append(skipped, SkippedEntry{Name: e.Name, Reason: "it is Switchboard's own entry"})
			continue
		}
		ie, err := importEntry(c, e, lookupEnv)
		if err != nil {
			sk := SkippedEntry{Name: e.Name, Reason: err.Error()}
			if bh, ok := errors.AsType[*byHandError](err); ok {
				sk.ByHand = bh.how
			}
			skipped = append(skipped, sk)
			continue
		}
		out = append(out, ie)
	}
	return out, skipped
}

func importEntry(c Client, e Entry, lookupEnv LookupEnv) (ImportEntry, error) {
	ie, err := importEnabled(c, e, lookupEnv)
	ie.Disabled = e.Disabled
	return ie, err
}

// gooseBuiltin are the types of Goose's extensions that are part of Goose
// rather than MCP servers it runs or reaches.
var gooseBuiltin = []string{"builtin", "platform", "frontend", "inline_python"}

func importEnabled(c Client, e Entry, lookupEnv LookupEnv) (ImportEntry, error) {
	if c.ID == "goose" && slices.Contains(gooseBuiltin, e.Type) {
		return ImportEntry{}, fmt.Errorf("it is one of Goose's own extensions (type %s), not an MCP server", e.Type)
	}
	if e.Command != "" {
		if r, ok := fromMCPRemote(e); ok {
			return remoteEntry(e.Name, r, envThenProcess(e.Env, lookupEnv))
		}
		ie := ImportEntry{Name: e.Name, Command: e.Command, Args: slices.Clone(e.Args), Cwd: e.Cwd}
		for k, v := range e.Env {
			ie.Env = append(ie.Env, EnvVar{Name: k, Value: v, Secret: IsSecret(k, v)})
		}
		sort.Slice(ie.Env, func(i, j int) bool { return ie.Env[i].Name < ie.Env[j].Name })
		return ie, nil
	}
	if e.URL == "" {
		return ImportEntry{}, fmt.Errorf("it has neither a command nor a URL")
	}
	transport, err := remoteTransport(c, e)
	if err != nil {
		return ImportEntry{}, err
	}
	r := remote{url: e.URL, transport: transport, headers: maps.Clone(e.Headers)}
	if r.headers == nil {
		r.headers = map[string]string{}
	}
	if c.ID == "opencode" {
		if err := openCodeRefs(&r); err != nil {
			return ImportEntry{}, err
		}
	}
	// Codex reads these from its own environment when it starts.
	for _, h := range slices.Sorted(maps.Keys(e.EnvHeaders)) {
		v, ok := lookupEnv(e.EnvHeaders[h])
		if !ok {
			return ImportEntry{}, byHandf(ByHandSecretHeader, "header %s takes its value from $%s (env_http_headers), which is not set in Switchboard's environment; "+
				"set it and import again, or add the server by hand with the header as a secret", h, e.EnvHeaders[h])
		}
		r.headers[h] = v
		r.secretVars = append(r.secretVars, h)
	}
	if e.BearerTokenEnv != "" {
		v, ok := lookupEnv(e.BearerTokenEnv)
		if !ok {
			return ImportEntry{}, byHandf(ByHandBearerToken, "it needs its bearer token from $%s (bearer_token_env_var), which is not set in Switchboard's environment; "+
				"set it and import again, or add the server by hand with the token as a secret Authorization header", e.BearerTokenEnv)
		}
		r.headers["Authorization"] = "Bearer " + v
	}
	return remoteEntry(e.Name, r, lookupEnv)
}

// A remote is what an entry says of a remote server, before references
// are resolved.
type remote struct {
	url, transport string
	headers        map[string]string
	// secretVars are headers whose values came from a variable that
	// holds a credential whatever its name (Codex's env_http_headers).
	secretVars []string
}

// remoteEntry resolves the references in r's URL and headers and marks
// the secret headers.
func remoteEntry(name string, r remote, lookupEnv LookupEnv) (ImportEntry, error) {
	u, refs, err := expandRefs(r.url, lookupEnv)
	if err != nil {
		return ImportEntry{}, fmt.Errorf("its URL %w", err)
	}
	if _, err := url.Parse(u); err != nil {
		return ImportEntry{}, fmt.Errorf("its URL is not a URL: %w", err)
	}
	// A URL with a credential in it (?api_key=…) stays out of history and
	// logs only if config.json holds a reference, which it cannot: say so.
	for _, ref := range refs {
		if LooksSecret(ref) {
			return ImportEntry{}, byHandf(ByHandSecretHeader, "its URL holds a secret ($%s); Switchboard keeps secrets only in headers: "+
				"add the server by hand with the secret in a header", ref)
		}
	}
	ie := ImportEntry{Name: name, URL: u, Transport: r.transport}
	for _, h := range slices.Sorted(maps.Keys(r.headers)) {
		v, refs, err := expandRefs(r.headers[h], lookupEnv)
		if err != nil {
			return ImportEntry{}, fmt.Errorf("header %s %w", h, err)
		}
		secret := IsSecret(h, v) || slices.Contains(r.secretVars, h) || slices.ContainsFunc(refs, LooksSecret)
		ie.Headers = append(ie.Headers, EnvVar{Name: h, Value: v, Secret: secret})
	}
	return ie, nil
}

// refPattern matches a client's reference to a variable: ${VAR},
// ${VAR:-default} (Claude Code), ${env:VAR} (Cursor, Windsurf, VS Code)
// and ${input:id} (VS Code's prompt, which Switchboard cannot answer).
var refPattern = regexp.MustCompile(`\$\{([^}]*)\}`)

// expandRefs replaces the references in s with the variables' values
// (a default when the variable is not set) and returns the variables it
// read. The error, starting with a verb, names the first reference it
// cannot resolve.
func expandRefs(s string, lookupEnv LookupEnv) (string, []string, error) {
	var refs []string
	var problem error
	out := refPattern.ReplaceAllStringFunc(s, func(m string) string {
		ref := m[2 : len(m)-1]
		if problem != nil {
			return m
		}
		if id, ok := strings.CutPrefix(ref, "input:"); ok {
			problem = byHandf(ByHandValue, "asks the client to prompt for ${input:%s}, which Switchboard cannot do: "+
				"add the server by hand and give the value there", id)
			return m
		}
		ref = strings.TrimPrefix(ref, "env:")
		name, def, hasDefault := strings.Cut(ref, ":-")
		if name == "" {
			problem = fmt.Errorf("has an empty reference %s", m)
			return m
		}
		refs = append(refs, name)
		if v, ok := lookupEnv(name); ok {
			return v
		}
		if hasDefault {
			return def
		}
		problem = fmt.Errorf("refers to $%s, which is not set in Switchboard's environment: set it and import again", name)
		return m
	})
	return out, refs, problem
}

// openCodeRef matches OpenCode's substitutions (opencode.ai/docs/config,
// "Variables"): {env:VAR} and {file:path}, written without a $.
var openCodeRef = regexp.MustCompile(`\$?\{(env|file):([^}]*)\}`)

// openCodeRefs rewrites r's {env:VAR} references as ${VAR}, which
// remoteEntry resolves, and refuses {file:path}: Switchboard does not read
// files a client's entry names.
func openCodeRefs(r *remote) error {
	var problem error
	rewrite := func(s string) string {
		return openCodeRef.ReplaceAllStringFunc(s, func(m string) string {
			sub := openCodeRef.FindStringSubmatch(m)
			if sub[1] == "file" {
				if problem == nil {
					problem = byHandf(ByHandValue, "it takes a value from a file ({file:%s}), which Switchboard does not read: "+
						"add the server by hand and give the value there", sub[2])
				}
				return m
			}
			return "${" + sub[2] + "}"
		})
	}
	r.url = rewrite(r.url)
	for k, v := range r.headers {
		r.headers[k] = rewrite(v)
	}
	return problem
}

// envThenProcess looks a variable up in an entry's env first, then in the
// process's: what mcp-remote sees when the client starts it.
func envThenProcess(env map[string]string, lookupEnv LookupEnv) LookupEnv {
	return func(name string) (string, bool) {
		if v, ok := env[name]; ok {
			return v, true
		}
		return lookupEnv(name)
	}
}

// remoteTransport is the transport of a client's remote entry: what its
// "type" says, else what the client does with a URL of that key.
func remoteTransport(c Client, e Entry) (string, error) {
	switch strings.ToLower(strings.NewReplacer("-", "", "_", "").Replace(e.Type)) {
	case "sse":
		return TransportSSE, nil
	case "streamablehttp":
		return TransportStreamableHTTP, nil
	case "http":
		if c.ID == "vscode" || c.ID == "vscode-workspace" || c.ID == "vscode-insiders" {
			// VS Code's "http" tries streamable HTTP, then falls back
			// to SSE: what auto does.
			return TransportAuto, nil
		}
		// Claude Code's (and Cursor's) "http" is streamable HTTP.
		return TransportStreamableHTTP, nil
	case "", "remote":
	default:
		return "", fmt.Errorf("its transport %q is not one Switchboard speaks (streamable HTTP or SSE)", e.Type)
	}
	switch {
	case e.URLKey == "httpUrl":
		return TransportStreamableHTTP, nil // Gemini CLI
	case (c.ID == "gemini-cli" || c.ID == "qwen-code") && e.URLKey == "url":
		return TransportSSE, nil // Gemini CLI (and Qwen Code): "url" is the SSE endpoint
	case c.ID == "codex":
		// Codex speaks streamable HTTP only (codex-rs's mcp client).
		return TransportStreamableHTTP, nil
	case c.ID == "cline" || c.ID == "roo-code":
		// Cline's schema reads a url entry without a type as SSE, the
		// only remote transport of its first releases (from Cline's
		// settings schema; the reference does not cover it). Roo Code,
		// a fork of Cline, kept that reading.
		return TransportSSE, nil
	}
	// Cursor, Windsurf, Zed, LM Studio: the client tries streamable HTTP
	// and falls back to SSE.
	return TransportAuto, nil
}

// fromMCPRemote reads a stdio entry that runs mcp-remote (the npm
// package that bridges a stdio client to a remote server):
//
//	npx [-y] mcp-remote[@VERSION] URL [PORT] [--header K:V]... [--transport T]
//	    [--allow-http] [--debug] [--silent] [--host H] [--auth-timeout S]
//
// PORT, --host and --auth-timeout are its OAuth callback's, which
// Switchboard does not need. ok is false for anything else (another
// package, a flag not listed): such an entry is imported as the stdio
// server it is, which keeps working.
func fromMCPRemote(e Entry) (r remote, ok bool) {
	args := e.Args
	base := strings.ToLower(filepath.Base(strings.ReplaceAll(e.Command, `\`, "/")))
	base = strings.TrimSuffix(strings.TrimSuffix(base, ".cmd"), ".exe")
	switch base {
	case "mcp-remote":
	case "npx", "bunx", "pnpx":
		for len(args) > 0 && slices.Contains([]string{"-y", "--yes", "-q", "--quiet"}, args[0]) {
			args = args[1:]
		}
		if len(args) == 0 || (args[0] != "mcp-remote" && !strings.HasPrefix(args[0], "mcp-remote@")) {
			return remote{}, false
		}
		args = args[1:]
	default:
		return remote{}, false
	}
	r = remote{transport: TransportAuto, headers: map[string]string{}}
	for i := 0; i < len(args); i++ {
		a := args[i]
		next := func() (string, bool) {
			if i+1 >= len(args) {
				return "", false
			}
			i++
			return args[i], true
		}
		switch a {
		case "--header":
			h, ok := next()
			k, v, found := strings.Cut(h, ":")
			if !ok || !found || strings.TrimSpace(k) == "" {
				return remote{}, false
			}
			r.headers[strings.TrimSpace(k)] = strings.TrimSpace(v)
		case "--transport":
			t, _ := next()
			switch t {
			case "http-only":
				r.transport = TransportStreamableHTTP
			case "sse-only":
				r.transport = TransportSSE
			case "http-first", "sse-first":
				r.transport = TransportAuto
			default:
				return remote{}, false
			}
		case "--host", "--auth-timeout":
			if _, ok := next(); !ok {
				return remote{}, false
			}
		case "--allow-http", "--debug", "--silent":
		default:
			switch {
			case r.url == "" && (strings.HasPrefix(a, "https://") || strings.HasPrefix(a, "http://")):
				r.url = a
			case r.url != "" && isPort(a):
			default:
				return remote{}, false
			}
		}
	}
	return r, r.url != ""
}

func isPort(s string) bool {
	if s == "" || len(s) > 5 {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
