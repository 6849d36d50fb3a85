package clients

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// noEnv is an environment without variables.
func noEnv(string) (string, bool) { return "", false }

// importEnv is the environment of TestGoldenImport: some of the variables
// the remote cases refer to are set, others (VAULT_MCP_TOKEN,
// LINEAR_TOKEN_FOR_CODEX, DOCS_MCP_URL) are not.
func importEnv(name string) (string, bool) {
	v, ok := map[string]string{
		"LINEAR_API_KEY":        "lin_api_0123456789",
		"GITHUB_PAT":            "github_pat_11ABCDEF",
		"SUPABASE_ACCESS_TOKEN": "sbp_0123456789abcdef",
		"FIGMA_OAUTH_TOKEN":     "figd_0123456789",
		"TEAM_MCP_KEY":          "team-key-42",
		"AUTH_HEADER":           "Bearer from-the-daemon-env", // the entry's env wins
	}[name]
	return v, ok
}

// TestGoldenImport reads every testdata/<client>/remote/original, a file
// with remote entries as users of the client keep them, and compares what
// import makes of it (the servers taken over, the entries left and why)
// with testdata/<client>/remote/imports.json.
func TestGoldenImport(t *testing.T) {
	dirs, err := filepath.Glob("testdata/*/remote")
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) < 10 {
		t.Fatalf("%d remote cases, want one per client with remote entries", len(dirs))
	}
	for _, dir := range dirs {
		id := filepath.Base(filepath.Dir(dir))
		t.Run(id, func(t *testing.T) {
			c := mustClient(t, id)
			env := testEnv(t)
			original, err := os.ReadFile(filepath.Join(dir, "original"))
			if err != nil {
				t.Fatal(err)
			}
			writeConfig(t, c, env, original)
			entries, err := Read(c, env)
			if err != nil {
				t.Fatal(err)
			}
			imports, skipped := EntriesToImport(c, entries, testURL, importEnv)
			// The library says what is missing in its own terms; the
			// API names the command line's flags (skipMessage).
			for _, sk := range skipped {
				if strings.Contains(sk.Reason, "--") || strings.Contains(sk.Reason, "switchboard install") {
					t.Errorf("skip reason of %s names the command line: %s", sk.Name, sk.Reason)
				}
			}
			if len(imports)+len(skipped) != len(entries) {
				t.Errorf("%d imported + %d skipped of %d entries", len(imports), len(skipped), len(entries))
			}
			remotes := 0
			for _, ie := range imports {
				if ie.Remote() {
					remotes++
					if ie.Command != "" || len(ie.Env) > 0 {
						t.Errorf("remote %s has a command or env: %+v", ie.Name, ie)
					}
				}
			}
			if remotes == 0 {
				t.Errorf("no remote server imported from %s", dir)
			}
			// The golden file leaves out what an entry does not have.
			type goldenEntry struct {
				Name      string
				Command   string   `json:",omitempty"`
				Args      []string `json:",omitempty"`
				Cwd       string   `json:",omitempty"`
				Env       []EnvVar `json:",omitempty"`
				URL       string   `json:",omitempty"`
				Transport string   `json:",omitempty"`
				Headers   []EnvVar `json:",omitempty"`
				Disabled  bool     `json:",omitempty"`
			}
			view := []goldenEntry{}
			for _, ie := range imports {
				view = append(view, goldenEntry(ie))
			}
			got, err := json.MarshalIndent(struct {
				Imports []goldenEntry
				Skipped []SkippedEntry
			}{view, skipped}, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join(dir, "imports.json"), append(got, '\n'))
		})
	}
}

func TestExpandRefs(t *testing.T) {
	for _, tc := range []struct {
		in, want, err string
		refs          []string
	}{
		{in: "Bearer ${LINEAR_API_KEY}", want: "Bearer lin_api_0123456789", refs: []string{"LINEAR_API_KEY"}},
		{in: "${env:GITHUB_PAT}", want: "github_pat_11ABCDEF", refs: []string{"GITHUB_PAT"}},
		{in: "${UNSET:-https://x.example/mcp}", want: "https://x.example/mcp", refs: []string{"UNSET"}},
		{in: "${TEAM_MCP_KEY:-fallback}", want: "team-key-42", refs: []string{"TEAM_MCP_KEY"}},
		{in: "plain $NOT_A_REF value", want: "plain $NOT_A_REF value"},
		{in: "Bearer ${UNSET}", err: "refers to $UNSET, which is not set in Switchboard's environment: set it and import again"},
		{in: "Bearer ${input:token}", err: "asks the client to prompt for ${input:token}, which Switchboard cannot do: " +
			"add the server by hand and give the value there"},
		{in: "${}", err: "has an empty reference ${}"},
	} {
		got, refs, err := expandRefs(tc.in, importEnv)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("expandRefs(%q) error = %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want || !cmp.Equal(refs, tc.refs) {
			t.Errorf("expandRefs(%q) = %q, %v, %v; want %q, %v", tc.in, got, refs, err, tc.want, tc.refs)
		}
	}
}

func TestFromMCPRemote(t *testing.T) {
	for _, tc := range []struct {
		name    string
		command string
		args    []string
		want    *remote // nil: not converted
	}{
		{"plain", "npx", []string{"-y", "mcp-remote", "https://a.example/mcp"},
			&remote{url: "https://a.example/mcp", transport: TransportAuto, headers: map[string]string{}}},
		{"pinned, http-only", "npx", []string{"mcp-remote@0.1.29", "https://a.example/mcp", "--transport", "http-only"},
			&remote{url: "https://a.example/mcp", transport: TransportStreamableHTTP, headers: map[string]string{}}},
		{"windows npx.cmd, headers, port", `C:\Program Files\nodejs\npx.cmd`,
			[]string{"--yes", "mcp-remote", "https://a.example/sse", "9696", "--header", "Authorization: Bearer ${T}", "--header", "X-A:b:c", "--transport", "sse-only"},
			&remote{url: "https://a.example/sse", transport: TransportSSE, headers: map[string]string{"Authorization": "Bearer ${T}", "X-A": "b:c"}}},
		{"installed globally", "/usr/local/bin/mcp-remote", []string{"https://a.example/mcp", "--debug", "--host", "127.0.0.1"},
			&remote{url: "https://a.example/mcp", transport: TransportAuto, headers: map[string]string{}}},
		{"another package", "npx", []string{"-y", "mcp-remote-fork", "https://a.example/mcp"}, nil},
		{"an unknown flag", "npx", []string{"-y", "mcp-remote", "https://a.example/mcp", "--static-oauth-client-info", "@f.json"}, nil},
		{"no URL", "npx", []string{"-y", "mcp-remote"}, nil},
		{"a header without a colon", "npx", []string{"mcp-remote", "https://a.example/mcp", "--header", "Authorization"}, nil},
		{"an unknown transport", "npx", []string{"mcp-remote", "https://a.example/mcp", "--transport", "ws"}, nil},
		{"not npx", "node", []string{"mcp-remote", "https://a.example/mcp"}, nil},
	} {
		got, ok := fromMCPRemote(Entry{Name: "x", Command: tc.command, Args: tc.args})
		switch {
		case tc.want == nil && ok:
			t.Errorf("%s: converted to %+v, want left as a stdio server", tc.name, got)
		case tc.want != nil && !ok:
			t.Errorf("%s: not converted", tc.name)
		case tc.want != nil && !cmp.Equal(*tc.want, got, cmp.AllowUnexported(remote{})):
			t.Errorf("%s: (-want +got):\n%s", tc.name, cmp.Diff(*tc.want, got, cmp.AllowUnexported(remote{})))
		}
	}
}

func TestMergeImportsRemote(t *testing.T) {
	linear := ImportEntry{Name: "linear", URL: "https://mcp.linear.app/mcp", Transport: TransportStreamableHTTP,
		Headers: []EnvVar{{"authorization", "Bearer lin_1", true}}}
	existing := []Existing{{Name: "lin", URL: "https://mcp.linear.app/mcp", Transport: TransportStreamableHTTP,
		Headers: map[string]string{"Authorization": "Bearer lin_1"}}}
	otherKey := linear
	otherKey.Headers = []EnvVar{{"Authorization", "Bearer lin_2", true}}
	sse := linear
	sse.Transport = TransportSSE
	auto := ImportEntry{Name: "notion", URL: "https://mcp.notion.com/mcp", Transport: TransportAuto}
	got := MergeImports([]ImportEntry{linear, otherKey, sse, auto},
		append(existing, Existing{Name: "n", URL: "https://mcp.notion.com/mcp"}))
	want := []Merged{
		{Entry: linear, Name: "lin", Same: "lin"}, // header names are not case sensitive
		{Entry: otherKey, Name: "linear"},
		{Entry: sse, Name: "linear-2"},
		{Entry: auto, Name: "n", Same: "n"}, // no transport is auto
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("MergeImports (-want +got):\n%s", d)
	}
}

// The fields only import reads do not change an entry's fingerprint: an
// ownership record written before they existed still names the entry.
func TestFingerprintWithoutImportFields(t *testing.T) {
	plain := Entry{Name: "switchboard", URL: testURL, Headers: map[string]string{"Authorization": "Bearer " + testToken}}
	read := plain
	read.Type, read.URLKey, read.EnvHeaders, read.BearerTokenEnv = "http", "url", map[string]string{"X": "Y"}, "T"
	if fingerprint(read) != fingerprint(plain) {
		t.Error("the import fields change the fingerprint")
	}
	// What the version before import read them computed for this entry
	// (the hash of {"Name":"","Command":"",…,"Headers":{…}}).
	if got, want := fingerprint(plain), "6c0d88919e3803ebd7cbce0bdde52b0e"; got != want {
		t.Errorf("fingerprint %s, want %s as earlier versions recorded it", got, want)
	}
}

// FuzzEntriesToImport reads a client's file (any client, any bytes) and
// checks what import makes of it: every entry is imported or skipped,
// once; a remote server has a known transport, no command, and no
// reference left in its headers; a stdio server has no URL.
func FuzzEntriesToImport(f *testing.F) {
	f.Add([]byte(`{"mcpServers":{"a":{"type":"http","url":"https://a.example/mcp","headers":{"Authorization":"Bearer ${T}"}}}}`), uint8(0))
	f.Add([]byte(`{"mcpServers":{"r":{"command":"npx","args":["-y","mcp-remote@1","https://a.example/sse","--header","K:${V:-d}","--transport","sse-only"],"env":{"V":"v"}}}}`), uint8(1))
	f.Add([]byte(`{"mcpServers":{"g":{"httpUrl":"https://g.example/mcp"},"s":{"url":"https://s.example/sse","headers":{"X":"${env:}"}}}}`), uint8(2))
	f.Add([]byte("[mcp_servers.f]\nurl = \"https://f.example/mcp\"\nbearer_token_env_var = \"T\"\nenv_http_headers = { X = \"U\" }\n"), uint8(3))
	f.Add([]byte("mcpServers:\n  - name: d\n    type: streamable-http\n    url: https://d.example/mcp\n    requestOptions:\n      headers:\n        A: ${{ secrets.A }}\n"), uint8(4))
	ids := []string{"claude-code", "claude-desktop", "gemini-cli", "codex", "continue", "vscode", "cline", "windsurf"}
	f.Fuzz(func(t *testing.T, data []byte, which uint8) {
		if len(data) > 64<<10 {
			return
		}
		c := mustLookup(t, ids[int(which)%len(ids)])
		env := Env{GOOS: "linux", Home: t.TempDir(), Workspace: t.TempDir()}
		writeConfig(t, c, env, data)
		entries, err := Read(c, env)
		if err != nil {
			return
		}
		lookup := func(name string) (string, bool) { return "v-" + name, len(name)%2 == 0 }
		imports, skipped := EntriesToImport(c, entries, testURL, lookup)
		seen := map[string]int{}
		for _, ie := range imports {
			seen[ie.Name]++
			if ie.Remote() {
				if ie.Command != "" || !slices.Contains([]string{TransportAuto, TransportStreamableHTTP, TransportSSE}, ie.Transport) {
					t.Errorf("remote %q: command %q, transport %q", ie.Name, ie.Command, ie.Transport)
				}
				for _, h := range ie.Headers {
					if refPattern.MatchString(h.Value) && !refPattern.MatchString(rawHeader(entries, ie.Name, h.Name)) {
						t.Errorf("remote %q header %s: a reference appeared: %q", ie.Name, h.Name, h.Value)
					}
				}
			} else if ie.Command == "" {
				t.Errorf("%q imported with neither a command nor a URL", ie.Name)
			}
		}
		for _, s := range skipped {
			seen[s.Name]++
			if s.Reason == "" {
				t.Errorf("%q skipped without a reason", s.Name)
			}
		}
		for _, e := range entries {
			seen[e.Name]--
		}
		for name, n := range seen {
			if n != 0 {
				t.Errorf("entry %q imported or skipped %+d times too many", name, n)
			}
		}
	})
}

// rawHeader is the header as the file spells it, for the fuzz check: a
// value that resolved to text holding "${…}" came from such text.
func rawHeader(entries []Entry, name, header string) string {
	var all strings.Builder
	for _, e := range entries {
		if e.Name == name {
			for _, v := range e.Headers {
				all.WriteString(v)
			}
			for _, a := range e.Args {
				all.WriteString(a)
			}
			for _, v := range e.Env {
				all.WriteString(v)
			}
		}
	}
	return all.String()
}

// OpenCode's {env:VAR} is resolved as the other clients' ${VAR} are, and
// {file:path} is refused with why.
func TestOpenCodeRefs(t *testing.T) {
	c := mustClient(t, "opencode")
	entries := []Entry{
		{Name: "a", Type: "remote", URL: "https://a.example.com/{env:TEAM_NAME}/mcp", Headers: map[string]string{"X-Key": "{env:TEAM_MCP_KEY}"}},
		{Name: "b", Type: "remote", URL: "https://b.example.com/mcp", Headers: map[string]string{"Authorization": "Bearer {file:~/.secrets/b}"}},
	}
	lookup := func(name string) (string, bool) {
		if name == "TEAM_NAME" {
			return "platform", true
		}
		return importEnv(name)
	}
	imports, skipped := EntriesToImport(c, entries, testURL, lookup)
	if len(imports) != 1 || imports[0].URL != "https://a.example.com/platform/mcp" ||
		len(imports[0].Headers) != 1 || imports[0].Headers[0].Value != "team-key-42" {
		t.Errorf("imports %+v", imports)
	}
	if len(skipped) != 1 || skipped[0].Name != "b" || !strings.Contains(skipped[0].Reason, "{file:~/.secrets/b}") {
		t.Errorf("skipped %+v", skipped)
	}
}
