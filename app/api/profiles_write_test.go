package api_test

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/app/api"
	"github.com/switchboardhq/switchboard/app/config"
	"github.com/switchboardhq/switchboard/app/tokens"
)

// reachingTools lists fs's and git's tools, and counts a profile's tools
// as the gateway does: in search mode it lists two and reaches the rest.
type reachingTools struct {
	fakeTools
	cfg func() *config.Config
}

func (r reachingTools) counts(profile string) (listed, reached int, ok bool) {
	p, ok := r.cfg().Profiles[profile]
	if !ok {
		return 0, 0, false
	}
	for _, s := range p.Servers {
		if lim, ok := p.Tools[s]; ok {
			reached += len(lim)
		} else {
			reached += len(r.fakeTools[s])
		}
	}
	if p.ToolSearch {
		return 2, reached, true
	}
	return reached, reached, true
}

func (r reachingTools) ToolCount(profile string) (int, bool) {
	n, _, ok := r.counts(profile)
	return n, ok
}

func (r reachingTools) ReachableToolCount(profile string) (int, bool) {
	_, n, ok := r.counts(profile)
	return n, ok
}

// newProfilesEnv is an API over a real config.json with servers fs (three
// tools listed), git (two) and off (disabled), and profile "coding" (fs,
// with a key of a newer Switchboard in it) whose token "cursor" is bound.
func newProfilesEnv(t *testing.T) (*testEnv, string) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, config.FileName)
	if err := os.WriteFile(path, []byte(`{
  "version": 1,
  "listen": "127.0.0.1:7391",
  "servers": {
    "fs": {"command": "npx", "args": ["-y", "server-filesystem", "/tmp"]},
    "git": {"command": "uvx", "args": ["mcp-server-git"]},
    "off": {"command": "uvx", "args": ["mcp-server-time"], "enabled": false}
  },
  "profiles": {"coding": {"servers": ["fs"], "color": "blue"}}
}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	store, err := config.NewStore(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	tools := fakeTools{
		"fs":  {{Name: "read_file"}, {Name: "write_file"}, {Name: "list_directory"}},
		"git": {{Name: "git_log"}, {Name: "git_diff"}},
	}
	e := newEnv(t, func(o *api.Options) {
		o.Config = storeConfig{store} // settings_test.go: the store on a real file
		o.Tools = reachingTools{fakeTools: tools, cfg: store.Current}
	})
	if _, err := e.tokens.EnsureClient("cursor"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.tokens.Bind("cursor", "coding"); err != nil {
		t.Fatal(err)
	}
	return e, path
}

// TestProfileRoutes drives POST, PUT and DELETE /api/v1/profiles from each
// state (the profile absent, present, given invalid input, in use by a
// connected client): the status, the error naming the field, and what
// config.json holds afterwards (unchanged after every refusal).
func TestProfileRoutes(t *testing.T) {
	type want struct {
		status int
		body   string // in the answer
		file   string // in config.json afterwards ("" with a refusal: the file is unchanged)
	}
	tests := []struct {
		name, method, path, body string
		unbound                  bool // cursor's token is unbound first
		want
	}{
		// POST: created (with every field), already there, invalid.
		{"create", "POST", "/api/v1/profiles", `{"name": "review", "servers": ["fs", "git"], "tools": {"git": ["git_log"]}, "toolSearch": true, "maxTier": "read"}`,
			false, want{201, `"name":"review","endpoint":"/mcp/p/review","servers":["fs","git"],"tools":{"git":["git_log"]},"toolSearch":true,"maxTier":"read","toolCount":2,"reachableTools":4`,
				`"review": {"servers": ["fs", "git"], "tools": {"git": ["git_log"]}, "toolSearch": true, "maxTier": "read"}`}},
		{"create existing", "POST", "/api/v1/profiles", `{"name": "coding", "servers": ["git"]}`,
			false, want{409, `profile \"coding\" already exists; change it with PUT /api/v1/profiles/coding`, ""}},
		{"create without a name", "POST", "/api/v1/profiles", `{"servers": ["fs"]}`, false, want{400, `invalid profile: name: missing`, ""}},
		{"create with a bad name", "POST", "/api/v1/profiles", `{"name": "a b", "servers": ["fs"]}`, false, want{400, `invalid profile: name: invalid profile name \"a b\"`, ""}},
		{"create without servers", "POST", "/api/v1/profiles", `{"name": "x", "servers": []}`, false, want{400, `invalid profile: servers: missing: a profile needs at least one server`, ""}},
		{"create with an unknown server", "POST", "/api/v1/profiles", `{"name": "x", "servers": ["fs", "gti"]}`,
			false, want{400, `invalid profile: servers[1]: unknown server \"gti\": the servers are fs, git, off`, ""}},
		{"create with a server twice", "POST", "/api/v1/profiles", `{"name": "x", "servers": ["fs", "fs"]}`, false, want{400, `invalid profile: servers[1]: server \"fs\" is listed twice`, ""}},
		{"create with tools of another server", "POST", "/api/v1/profiles", `{"name": "x", "servers": ["fs"], "tools": {"git": ["git_log"]}}`,
			false, want{400, `invalid profile: tools.git: server \"git\" is not one of the profile's servers`, ""}},
		{"create with an empty tool list", "POST", "/api/v1/profiles", `{"name": "x", "servers": ["fs"], "tools": {"fs": []}}`, false, want{400, `invalid profile: tools.fs: empty tool list`, ""}},
		{"create with a tool the server does not offer", "POST", "/api/v1/profiles", `{"name": "x", "servers": ["fs"], "tools": {"fs": ["read_file", "rm_rf"]}}`,
			false, want{400, `invalid profile: tools.fs[1]: server \"fs\" offers no tool \"rm_rf\"; it offers read_file, write_file, list_directory`, ""}},
		{"create with a bad tier", "POST", "/api/v1/profiles", `{"name": "x", "servers": ["fs"], "maxTier": "root"}`, false, want{400, `invalid profile: maxTier: `, ""}},
		{"create with an unknown field", "POST", "/api/v1/profiles", `{"name": "x", "server": ["fs"]}`, false, want{400, `invalid request body: unknown field \"server\"`, ""}},
		{"create with bad JSON", "POST", "/api/v1/profiles", `{"name": "x", "servers": "fs"}`, false, want{400, `invalid request body: servers: expected an array`, ""}},

		// PUT: replaced (its unknown key kept, its client still bound), absent, invalid, renamed.
		{"replace the profile in use", "PUT", "/api/v1/profiles/coding", `{"servers": ["fs", "git"], "tools": {"fs": ["read_file"]}}`,
			false, want{200, `"name":"coding","endpoint":"/mcp/p/coding","servers":["fs","git"],"tools":{"fs":["read_file"]},"toolCount":3,"reachableTools":3,"clients":["cursor"]`,
				`"coding": {"servers": ["fs", "git"], "tools": {"fs": ["read_file"]}, "color": "blue"}`}},
		{"replace with its own name", "PUT", "/api/v1/profiles/coding", `{"name": "coding", "servers": ["git"], "toolSearch": true}`,
			false, want{200, `"servers":["git"],"toolSearch":true,"toolCount":2,"reachableTools":2,"clients":["cursor"]`, `"coding": {"servers": ["git"], "toolSearch": true, "color": "blue"}`}},
		{"replace an absent profile", "PUT", "/api/v1/profiles/nope", `{"servers": ["fs"]}`, false, want{404, `unknown profile \"nope\": the profiles are coding`, ""}},
		{"replace with an unknown server", "PUT", "/api/v1/profiles/coding", `{"servers": ["nosuch"]}`, false, want{400, `invalid profile: servers[0]: unknown server \"nosuch\"`, ""}},
		{"replace with no servers", "PUT", "/api/v1/profiles/coding", `{}`, false, want{400, `invalid profile: servers: missing`, ""}},
		{"rename", "PUT", "/api/v1/profiles/coding", `{"name": "code", "servers": ["fs"]}`, false, want{400, `invalid profile: name: \"code\" is not \"coding\": a profile cannot be renamed`, ""}},

		// DELETE: in use by a connected client, absent, then one nobody uses.
		{"delete the profile in use", "DELETE", "/api/v1/profiles/coding", "",
			false, want{409, `profile \"coding\" is in use by cursor: connect it to /mcp or another profile first (Clients page, or switchboard clients connect cursor --profile NAME), then delete it`, ""}},
		{"delete an absent profile", "DELETE", "/api/v1/profiles/nope", "", false, want{404, `unknown profile \"nope\": the profiles are coding`, ""}},
		{"delete a profile no client uses", "DELETE", "/api/v1/profiles/coding", "", true, want{204, "", "-"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, path := newProfilesEnv(t)
			if tt.unbound {
				if _, err := e.tokens.Bind("cursor", ""); err != nil {
					t.Fatal(err)
				}
			}
			before, _ := os.ReadFile(path)
			resp := e.request(t, tt.method, tt.path, tt.body, nil)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.status || !strings.Contains(string(body), tt.want.body) {
				t.Errorf("%s %s %s: %d %s\nwant %d with %s", tt.method, tt.path, tt.body, resp.StatusCode, body, tt.status, tt.want.body)
			}
			after, _ := os.ReadFile(path)
			if tt.file == "" {
				if string(after) != string(before) {
					t.Errorf("a refused request changed config.json:\n%s", after)
				}
				return
			}
			if tt.method == "DELETE" {
				if strings.Contains(string(after), "profiles") {
					t.Errorf("config.json after the delete:\n%s", after)
				}
				if list, err := e.client.Profiles(t.Context()); err != nil || len(list) != 0 {
					t.Errorf("profiles after the delete: %+v %v", list, err)
				}
				return
			}
			if !strings.Contains(compactJSON(t, after), compactJSON(t, []byte("{"+tt.file+"}"))[1:]) {
				t.Errorf("config.json after %s %s:\n%s\nwant it to hold %s", tt.method, tt.path, after, tt.file)
			}
			if _, err := config.Load(path); err != nil {
				t.Errorf("config.json after the change does not load: %v", err)
			}
			// The profile the client is bound to stays bound.
			if toks := e.tokens.List(); !slices.ContainsFunc(toks, func(tk tokens.Token) bool { return tk.Label == "cursor" && tk.Profile == "coding" }) {
				t.Errorf("cursor's token after the change: %+v", toks)
			}
		})
	}
}

// compactJSON returns data (a JSON object) compacted, with its
// whitespace out, for comparing a fragment of it.
func compactJSON(t *testing.T, data []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("%v: %s", err, data)
	}
	out, _ := json.Marshal(v)
	return strings.TrimSuffix(string(out), "}")
}
