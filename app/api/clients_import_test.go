package api_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/app/api"
	"github.com/switchboardhq/switchboard/app/api/client"
	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/clients"
	"github.com/switchboardhq/switchboard/app/secrets"
)

const testGateway = "http://127.0.0.1:7391/mcp"

// testBinary is the switchboard binary the clients are told to launch. It
// is absolute on every OS, as Claude Desktop's entry must be.
var testBinary = func() string {
	if runtime.GOOS == "windows" {
		return `C:\Program Files\Switchboard\switchboard.exe`
	}
	return "/opt/switchboard/bin/switchboard"
}()

// clientsEnv is a testEnv whose client configs live in a temporary home,
// with a file-backed secret store.
type clientsEnv struct {
	*testEnv
	home    string // the user's home, where client configs live
	secrets *secrets.Store
}

func newClientsEnv(t *testing.T) *clientsEnv {
	t.Helper()
	return newClientsEnvWith(t)
}

// newClientsEnvWith is newClientsEnv with more changes to the options.
func newClientsEnvWith(t *testing.T, edit ...func(*api.Options)) *clientsEnv {
	t.Helper()
	home := t.TempDir()
	store, err := secrets.Open(t.Context(), secrets.Options{Dir: t.TempDir(), NoKeychain: true})
	if err != nil {
		t.Fatal(err)
	}
	ed, err := clients.New(clients.Options{BackupDir: t.TempDir(), GatewayURL: testGateway})
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, func(o *api.Options) {
		o.Clients = api.ClientsOptions{Editor: ed, Env: clients.Env{GOOS: runtime.GOOS, Home: home},
			GatewayURL: testGateway, BinaryPath: testBinary}
		o.Secrets = store
		for _, e := range edit {
			e(o)
		}
	})
	return &clientsEnv{testEnv: e, home: home, secrets: store}
}

func (e *clientsEnv) write(t *testing.T, id, content string) string {
	t.Helper()
	c, _ := clients.Lookup(id)
	path, err := c.Path(clients.Env{GOOS: runtime.GOOS, Home: e.home})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func statusOf(err error) int {
	if ae, ok := errors.AsType[*client.APIError](err); ok {
		return ae.Status
	}
	return 0
}

// A Claude Desktop file as users have them: servers (one identical to
// Switchboard's "fs", one whose name "fs" another server holds, one with a
// token), a remote server (Claude Desktop does not read it, but import
// takes it), and keys of the app's own.
const claudeDesktop = `{
  "mcpServers": {
    "filesystem": {"command": "npx", "args": ["-y", "server-filesystem", "/tmp"]},
    "fs": {"command": "npx", "args": ["-y", "server-filesystem", "/home/zoë"]},
    "github": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-github"],
      "env": {"GITHUB_TOKEN": "ghp_s3cretvalue0123456789", "LOG_LEVEL": "info"}
    },
    "remote": {"url": "https://mcp.example.com/mcp"}
  },
  "globalShortcut": "Ctrl+Space",
  "preferences": {"menuBarEnabled": false}
}
`

func TestImportClient(t *testing.T) {
	e := newClientsEnv(t)
	path := e.write(t, "claude-desktop", claudeDesktop)
	ctx := t.Context()

	resp := e.request(t, http.MethodPost, "/api/v1/clients/claude-desktop/import/plan", `{"replace": true}`, nil)
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("plan: %d %s", resp.StatusCode, body)
	}
	if strings.Contains(string(body), "ghp_s3cretvalue") {
		t.Errorf("the plan shows the secret:\n%s", body)
	}
	var plan wire.ImportPlan
	if err := json.Unmarshal(body, &plan); err != nil {
		t.Fatal(err)
	}
	type row struct{ Entry, Name, Action string }
	var rows []row
	for _, s := range plan.Servers {
		rows = append(rows, row{s.Entry, s.Name, s.Action})
	}
	want := []row{{"filesystem", "fs", wire.ImportExists}, {"fs", "fs-2", wire.ImportAdd}, {"github", "github", wire.ImportAdd},
		{"remote", "remote", wire.ImportAdd}}
	if d := cmp.Diff(want, rows); d != "" {
		t.Fatalf("planned servers (-want +got):\n%s", d)
	}
	gh := plan.Servers[2].Server
	if !slices.Equal(gh.SecretEnv, []string{"GITHUB_TOKEN"}) || gh.Env["LOG_LEVEL"] != "info" || len(gh.Env) != 1 || gh.Pool.Min != 1 {
		t.Errorf("github as planned: %+v", gh)
	}
	if !plan.Servers[1].Renamed || plan.Servers[2].Renamed {
		t.Errorf("renamed flags: %+v", plan.Servers)
	}
	if len(plan.Skipped) != 0 {
		t.Errorf("skipped: %+v", plan.Skipped)
	}
	if r := plan.Servers[3].Server; r.URL != "https://mcp.example.com/mcp" || r.Transport != "auto" || r.Command != "" || !r.Pool.IsZero() {
		t.Errorf("remote as planned: %+v", r)
	}
	if !plan.Changed || !strings.Contains(plan.Diff, `-    "github": {`) || !strings.Contains(plan.Diff, `+    "switchboard": {`) ||
		!strings.Contains(plan.Diff, `-    "remote": {"url": "https://mcp.example.com/mcp"}`) {
		t.Errorf("diff:\n%s", plan.Diff)
	}
	if got, _ := os.ReadFile(path); string(got) != claudeDesktop {
		t.Fatal("planning wrote the client's file")
	}
	if _, ok := e.cfg.Current().Servers["github"]; ok {
		t.Fatal("planning changed the config")
	}

	// Apply needs the plan's hash.
	if _, err := e.client.ApplyImport(ctx, "claude-desktop", "", wire.ImportRequest{Replace: true}); statusOf(err) != http.StatusBadRequest {
		t.Errorf("apply without a hash: %v", err)
	}
	if _, err := e.client.ApplyImport(ctx, "claude-desktop", "", wire.ImportRequest{Replace: true, Hash: "abc"}); statusOf(err) != http.StatusConflict {
		t.Errorf("apply with a wrong hash: %v", err)
	}
	// The hash covers the choice: a plan without replace is another plan.
	if _, err := e.client.ApplyImport(ctx, "claude-desktop", "", wire.ImportRequest{Hash: plan.Hash}); statusOf(err) != http.StatusConflict {
		t.Errorf("apply of another request with this hash: %v", err)
	}

	res, err := e.client.ApplyImport(ctx, "claude-desktop", "", wire.ImportRequest{Replace: true, Hash: plan.Hash})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Client.Connected || len(res.Servers) != 4 {
		t.Errorf("result: %+v", res)
	}
	cfg := e.cfg.Current()
	for _, name := range []string{"fs", "fs-2", "github", "remote"} {
		if _, ok := cfg.Servers[name]; !ok {
			t.Errorf("config lacks %q: %v", name, cfg.Servers)
		}
	}
	if len(cfg.Servers) != 5 { // fs, off, fs-2, github, remote
		t.Errorf("config servers: %v", cfg.Servers)
	}
	if data, _ := json.Marshal(cfg); strings.Contains(string(data), "ghp_s3cretvalue") {
		t.Errorf("the secret is in the config:\n%s", data)
	}
	if v, err := e.secrets.Get("github", "GITHUB_TOKEN"); err != nil || v != "ghp_s3cretvalue0123456789" {
		t.Errorf("secret store: %q, %v", v, err)
	}
	if _, err := e.sup.Status("github"); err != nil {
		t.Errorf("the imported server is not supervised: %v", err)
	}
	var file map[string]json.RawMessage
	data, _ := os.ReadFile(path)
	if err := json.Unmarshal(data, &file); err != nil {
		t.Fatal(err)
	}
	var servers map[string]json.RawMessage
	json.Unmarshal(file["mcpServers"], &servers)
	var names []string
	for n := range servers {
		names = append(names, n)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"switchboard"}) || string(file["globalShortcut"]) != `"Ctrl+Space"` || file["preferences"] == nil {
		t.Errorf("client file after import:\n%s", data)
	}

	// The same servers from another client merge: nothing is added.
	e.write(t, "cursor", `{"mcpServers": {
  "gh": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "env": {"LOG_LEVEL": "info", "GITHUB_TOKEN": "ghp_s3cretvalue0123456789"}},
  "files": {"command": "npx", "args": ["-y", "server-filesystem", "/home/zoë"]}
}}`)
	p2, err := e.client.PlanImport(ctx, "cursor", "", wire.ImportRequest{})
	if err != nil {
		t.Fatal(err)
	}
	rows = nil
	for _, s := range p2.Servers {
		rows = append(rows, row{s.Entry, s.Name, s.Action})
	}
	if d := cmp.Diff([]row{{"gh", "github", wire.ImportExists}, {"files", "fs-2", wire.ImportExists}}, rows); d != "" {
		t.Errorf("second client (-want +got):\n%s", d)
	}
	if p2.Diff != "" || p2.Changed {
		t.Errorf("an import without replace plans a file change:\n%s", p2.Diff)
	}
	if _, err := e.client.ApplyImport(ctx, "cursor", "", wire.ImportRequest{Hash: p2.Hash}); err != nil {
		t.Fatal(err)
	}
	if n := len(e.cfg.Current().Servers); n != 5 {
		t.Errorf("%d servers after importing the same ones again, want 5", n)
	}
}

// A change between plan and apply, to the client's file or to
// Switchboard's servers, stops the import; nothing is half done.
func TestImportConflicts(t *testing.T) {
	e := newClientsEnv(t)
	path := e.write(t, "claude-desktop", claudeDesktop)
	ctx := t.Context()
	req := wire.ImportRequest{Servers: []string{"github"}, Replace: true}

	plan, err := e.client.PlanImport(ctx, "claude-desktop", "", req)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(claudeDesktop, "Ctrl+Space", "Ctrl+K", 1)
	os.WriteFile(path, []byte(edited), 0o600)
	req.Hash = plan.Hash
	if _, err := e.client.ApplyImport(ctx, "claude-desktop", "", req); statusOf(err) != http.StatusConflict {
		t.Errorf("apply after the file changed: %v", err)
	}

	plan, _ = e.client.PlanImport(ctx, "claude-desktop", "", wire.ImportRequest{Servers: []string{"github"}, Replace: true})
	if _, err := e.client.AddServer(ctx, "github", wire.ServerConfig{Command: "other"}); err != nil {
		t.Fatal(err)
	}
	req.Hash = plan.Hash
	if _, err := e.client.ApplyImport(ctx, "claude-desktop", "", req); statusOf(err) != http.StatusConflict {
		t.Errorf("apply after a server took the name: %v", err)
	}
	if got, _ := os.ReadFile(path); string(got) != edited {
		t.Error("a refused import wrote the client's file")
	}
	if keys, _ := e.secrets.Keys("github"); len(keys) != 0 {
		t.Errorf("a refused import left secrets: %v", keys)
	}
	if e.cfg.Current().Servers["github"].Command != "other" {
		t.Error("a refused import changed the config")
	}

	// A config update that fails takes the stored secrets back.
	e.cfg.mu.Lock()
	e.cfg.updateErr = errors.New("disk full")
	e.cfg.mu.Unlock()
	plan, err = e.client.PlanImport(ctx, "claude-desktop", "", wire.ImportRequest{Servers: []string{"github"}})
	if err != nil || plan.Servers[0].Name != "github-2" {
		t.Fatalf("plan: %+v %v", plan, err)
	}
	_, err = e.client.ApplyImport(ctx, "claude-desktop", "", wire.ImportRequest{Servers: []string{"github"}, Hash: plan.Hash})
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("apply with a failing config update: %v", err)
	}
	if keys, _ := e.secrets.Keys("github-2"); len(keys) != 0 {
		t.Errorf("secrets left after a failed update: %v", keys)
	}
}

func TestImportBadRequests(t *testing.T) {
	e := newClientsEnv(t)
	e.write(t, "claude-desktop", claudeDesktop)
	e.write(t, "zed", "{ \"context_servers\": { \"a\": [ }")
	e.write(t, "claude-code", `{"mcpServers": {
  "vault": {"type": "http", "url": "https://vault.example.com/mcp", "headers": {"Authorization": "Bearer ${SB_TEST_UNSET_TOKEN}"}},
  "plain": {"type": "http", "url": "http://mcp.example.com/mcp"}
}}`)
	tests := []struct {
		name, path, body string
		status           int
		want             string
	}{
		{"unknown client", "/api/v1/clients/notepad/import/plan", `{}`, http.StatusNotFound, `unknown client "notepad"`},
		{"unknown server", "/api/v1/clients/claude-desktop/import/plan", `{"servers": ["nope"]}`, http.StatusBadRequest, `has no server "nope"`},
		{"remote server with an unset variable", "/api/v1/clients/claude-code/import/plan", `{"servers": ["vault"]}`, http.StatusBadRequest,
			`cannot import "vault" of Claude Code: header Authorization refers to $SB_TEST_UNSET_TOKEN, which is not set in Switchboard's environment`},
		{"remote server to another machine over http", "/api/v1/clients/claude-code/import/plan", `{"servers": ["plain"]}`, http.StatusBadRequest,
			`cannot import "plain" of Claude Code: url: invalid URL "http://mcp.example.com/mcp": http:// is only for this machine`},
		{"bad body", "/api/v1/clients/claude-desktop/import/plan", `{"servers": "github"}`, http.StatusBadRequest, "expected an array"},
		{"broken file", "/api/v1/clients/zed/import/plan", `{}`, http.StatusUnprocessableEntity, "settings.json:1:"},
		{"relative workspace", "/api/v1/clients/vscode-workspace/import/plan?workspace=proj", `{}`, http.StatusBadRequest, "must be an absolute path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := e.request(t, http.MethodPost, tt.path, tt.body, nil)
			var er wire.ErrorResponse
			json.NewDecoder(resp.Body).Decode(&er)
			if resp.StatusCode != tt.status || !strings.Contains(er.Error, tt.want) {
				t.Errorf("%d %q, want %d with %q", resp.StatusCode, er.Error, tt.status, tt.want)
			}
		})
	}
}

// VS Code's workspace file is reached with ?workspace=, which must be an
// absolute path of an existing folder.
func TestWorkspaceParameter(t *testing.T) {
	e := newClientsEnv(t)
	ctx := t.Context()
	ws := t.TempDir()
	notDir := filepath.Join(ws, "file")
	os.WriteFile(notDir, nil, 0o600)
	for _, bad := range []struct{ ws, want string }{
		{"relative/dir", "must be an absolute path"},
		{filepath.Join(ws, "missing"), "no such folder"},
		{notDir, "not a folder"},
	} {
		_, err := e.client.ClientsIn(ctx, bad.ws)
		if statusOf(err) != http.StatusBadRequest || !strings.Contains(err.Error(), bad.want) || !strings.Contains(err.Error(), bad.ws) {
			t.Errorf("workspace %q: %v, want 400 with %q", bad.ws, err, bad.want)
		}
	}

	list, err := e.client.ClientsIn(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(ws, ".vscode", "mcp.json")
	i := slices.IndexFunc(list, func(v wire.ClientView) bool { return v.ID == "vscode-workspace" })
	if i < 0 || list[i].Path != file || list[i].Error != "" {
		t.Fatalf("vscode-workspace in %s: %+v", ws, list[i])
	}
	plain, _ := e.client.Clients(ctx)
	if i := slices.IndexFunc(plain, func(v wire.ClientView) bool { return v.ID == "vscode-workspace" }); !plain[i].NeedsWorkspace || plain[i].Error != "" {
		t.Errorf("vscode-workspace without a workspace: %+v; want needsWorkspace and no error (no file is not a file that cannot be read)", plain[i])
	}

	change := wire.ClientChange{Action: "connect"}
	p, err := e.client.PlanClientIn(ctx, "vscode-workspace", ws, change)
	if err != nil || p.Path != file || !strings.Contains(p.Diff, `"type": "http"`) {
		t.Fatalf("plan: %+v %v", p, err)
	}
	change.Hash = p.Hash
	v, err := e.client.ApplyClientIn(ctx, "vscode-workspace", ws, change)
	if err != nil || !v.Connected || v.Path != file {
		t.Fatalf("apply: %+v %v", v, err)
	}
	if data, err := os.ReadFile(file); err != nil || !strings.Contains(string(data), testGateway) {
		t.Errorf("%s: %v\n%s", file, err, data)
	}
}

// Backups are listed, and restoring one is a plan (the diff back) and an
// apply with its hash.
func TestBackupsAndRestore(t *testing.T) {
	e := newClientsEnv(t)
	ctx := t.Context()
	original := "{\n  // mine\n  \"mcpServers\": {\"a\": {\"command\": \"x\"}},\n  \"theme\": \"dark\",\n}\n"
	path := e.write(t, "zed", strings.ReplaceAll(original, "mcpServers", "context_servers"))
	original = strings.ReplaceAll(original, "mcpServers", "context_servers")

	if bs, err := e.client.Backups(ctx, "zed", ""); err != nil || len(bs) != 0 {
		t.Fatalf("backups before any change: %+v %v", bs, err)
	}
	change := wire.ClientChange{Action: "connect"}
	p, _ := e.client.PlanClient(ctx, "zed", change)
	change.Hash = p.Hash
	if _, err := e.client.ApplyClient(ctx, "zed", change); err != nil {
		t.Fatal(err)
	}
	bs, err := e.client.Backups(ctx, "zed", "")
	if err != nil || len(bs) != 1 || bs[0].Size != int64(len(original)) || bs[0].Path != path || bs[0].Absent || bs[0].Time.IsZero() {
		t.Fatalf("backups: %+v %v", bs, err)
	}

	if _, err := e.client.PlanRestore(ctx, "zed", "", wire.RestoreRequest{Backup: "nope"}); statusOf(err) != http.StatusNotFound ||
		!strings.Contains(err.Error(), bs[0].Name) {
		t.Errorf("unknown backup: %v", err)
	}
	if _, err := e.client.PlanRestore(ctx, "zed", "", wire.RestoreRequest{}); statusOf(err) != http.StatusBadRequest {
		t.Errorf("no backup named: %v", err)
	}
	rp, err := e.client.PlanRestore(ctx, "zed", "", wire.RestoreRequest{Backup: bs[0].Name})
	if err != nil || !rp.Changed || !strings.Contains(rp.Diff, `+  "context_servers": {"a": {"command": "x"}},`) ||
		!strings.Contains(rp.Diff, `"switchboard": {"url"`) || strings.Contains(rp.Diff, "Bearer sb_") {
		t.Fatalf("restore plan: %+v %v", rp, err)
	}
	if got, _ := os.ReadFile(path); string(got) == original {
		t.Fatal("planning a restore restored")
	}
	if _, err := e.client.ApplyRestore(ctx, "zed", "", wire.RestoreRequest{Backup: bs[0].Name}); statusOf(err) != http.StatusBadRequest {
		t.Errorf("restore without a hash: %v", err)
	}
	if _, err := e.client.ApplyRestore(ctx, "zed", "", wire.RestoreRequest{Backup: bs[0].Name, Hash: "0"}); statusOf(err) != http.StatusConflict {
		t.Errorf("restore with a stale hash: %v", err)
	}
	v, err := e.client.ApplyRestore(ctx, "zed", "", wire.RestoreRequest{Backup: bs[0].Name, Hash: rp.Hash})
	if err != nil || v.Connected {
		t.Fatalf("restore: %+v %v", v, err)
	}
	if got, _ := os.ReadFile(path); string(got) != original {
		t.Errorf("restored file:\n%s\nwant:\n%s", got, original)
	}
}

// TestClientsMaskSecrets: GET /api/v1/clients shows no secret of a client's
// entries, whether a header's name has hyphens (X-Api-Key,
// x-goog-api-key, Ocp-Apim-Subscription-Key) or a credential sits under a
// harmless name.
func TestClientsMaskSecrets(t *testing.T) {
	e := newClientsEnv(t)
	e.write(t, "cursor", `{"mcpServers": {
  "remote": {"url": "https://x.example/mcp", "headers": {"X-Api-Key": "k1", "x-goog-api-key": "k2",
    "Ocp-Apim-Subscription-Key": "k3", "Accept": "application/json", "X-Extra": "Bearer abcdef123456"}},
  "local": {"command": "npx", "env": {"GITHUB_TOKEN": "t1", "OPTIONS": "ghp_16C7e42F292c6912E7710c838347Ae178B4a", "LOG_LEVEL": "info"}}
}}`)
	views, err := e.client.Clients(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(views)
	for _, secret := range []string{"k1", "k2", "k3", "t1", "ghp_", "abcdef123456"} {
		if strings.Contains(string(data), `"`+secret) {
			t.Errorf("GET /api/v1/clients shows %q:\n%s", secret, data)
		}
	}
	for _, kept := range []string{`"application/json"`, `"info"`} {
		if !strings.Contains(string(data), kept) {
			t.Errorf("GET /api/v1/clients lost %s:\n%s", kept, data)
		}
	}
}

// Remote entries come over as remote servers: their secret headers go to
// the secret store under the server's name, the others stay in the
// entry, references are resolved from the daemon's environment, and an
// `npx mcp-remote` bridge becomes the remote server it reaches.
func TestImportRemote(t *testing.T) {
	t.Setenv("SB_TEST_LINEAR_KEY", "lin_api_s3cret0123456789")
	e := newClientsEnv(t)
	ctx := t.Context()
	e.write(t, "claude-code", `{
  "numStartups": 3,
  "mcpServers": {
    "linear": {"type": "http", "url": "https://mcp.linear.app/mcp",
      "headers": {"Authorization": "Bearer ${SB_TEST_LINEAR_KEY}", "X-Team": "platform"}},
    "sentry": {"type": "sse", "url": "https://mcp.sentry.dev/sse"},
    "switchboard": {"type": "http", "url": "`+testGateway+`"}
  }
}`)
	plan, err := e.client.PlanImport(ctx, "claude-code", "", wire.ImportRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]wire.SkippedEntry{{Entry: "switchboard", Reason: "it is Switchboard's own entry"}}, plan.Skipped); d != "" {
		t.Errorf("skipped (-want +got):\n%s", d)
	}
	res, err := e.client.ApplyImport(ctx, "claude-code", "", wire.ImportRequest{Hash: plan.Hash})
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := json.Marshal(res)
	planned, _ := json.Marshal(plan)
	for what, b := range map[string][]byte{"plan": planned, "result": answer} {
		if strings.Contains(string(b), "lin_api_s3cret") {
			t.Errorf("the %s shows the header's secret:\n%s", what, b)
		}
	}
	cfg := e.cfg.Current()
	want := map[string]wire.ServerConfig{
		"linear": {URL: "https://mcp.linear.app/mcp", Transport: "streamable-http",
			Headers: map[string]string{"X-Team": "platform"}, SecretHeaders: map[string]string{"Authorization": "Authorization"}},
		"sentry": {URL: "https://mcp.sentry.dev/sse", Transport: "sse"},
	}
	for name, w := range want {
		sc, ok := cfg.Servers[name]
		if !ok {
			t.Errorf("config lacks %q", name)
			continue
		}
		got, _ := json.Marshal(wireServer(t, sc))
		wantJSON, _ := json.Marshal(w)
		if string(got) != string(wantJSON) {
			t.Errorf("%s in config:\n got  %s\n want %s", name, got, wantJSON)
		}
	}
	if data, _ := json.Marshal(cfg); strings.Contains(string(data), "lin_api_s3cret") {
		t.Errorf("the header's secret is in the config:\n%s", data)
	}
	if v, err := e.secrets.Get("linear", "Authorization"); err != nil || v != "Bearer lin_api_s3cret0123456789" {
		t.Errorf("secret store: %q, %v", v, err)
	}

	// The same server from another client (header names in another case)
	// is recognized, its secret read back from the store; an mcp-remote
	// bridge of Claude Desktop becomes a remote server.
	e.write(t, "claude-desktop", `{"mcpServers": {
  "lin": {"command": "npx", "args": ["-y", "mcp-remote@0.1.29", "https://mcp.linear.app/mcp", "--transport", "http-only",
    "--header", "authorization:${AUTH}", "--header", "x-team: platform"], "env": {"AUTH": "Bearer lin_api_s3cret0123456789"}},
  "stripe": {"command": "npx", "args": ["-y", "mcp-remote", "https://mcp.stripe.com", "--header", "Authorization:Bearer rk_live_s3cret"]}
}}`)
	replacing, err := e.client.PlanImport(ctx, "claude-desktop", "", wire.ImportRequest{Replace: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(replacing.Diff, `-  "stripe"`) || strings.Contains(replacing.Diff, "rk_live_s3cret") || strings.Contains(replacing.Diff, "lin_api_s3cret") {
		t.Errorf("the diff of replacing the mcp-remote entries shows a secret, or not the entries:\n%s", replacing.Diff)
	}
	p2, err := e.client.PlanImport(ctx, "claude-desktop", "", wire.ImportRequest{})
	if err != nil {
		t.Fatal(err)
	}
	type row struct{ Entry, Name, Action string }
	var rows []row
	for _, s := range p2.Servers {
		rows = append(rows, row{s.Entry, s.Name, s.Action})
	}
	if d := cmp.Diff([]row{{"lin", "linear", wire.ImportExists}, {"stripe", "stripe", wire.ImportAdd}}, rows); d != "" {
		t.Errorf("mcp-remote entries (-want +got):\n%s", d)
	}
	if _, err := e.client.ApplyImport(ctx, "claude-desktop", "", wire.ImportRequest{Hash: p2.Hash}); err != nil {
		t.Fatal(err)
	}
	stripe := e.cfg.Current().Servers["stripe"]
	if stripe.URL != "https://mcp.stripe.com" || stripe.Command != "" || stripe.SecretHeaders["Authorization"] != "Authorization" {
		t.Errorf("stripe in config: %+v", stripe)
	}
	if v, _ := e.secrets.Get("stripe", "Authorization"); v != "Bearer rk_live_s3cret" {
		t.Errorf("stripe's secret: %q", v)
	}
}
