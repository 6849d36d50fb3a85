package e2e

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/config"
	"github.com/switchboardhq/switchboard/app/daemon"
	"github.com/switchboardhq/switchboard/app/internal/testutil"
	"github.com/switchboardhq/switchboard/supervisor/testmcp"
)

// isolateClientEnv keeps the variables that move client config files away
// from $HOME out of the daemons this test starts, so that every client file
// is under the daemon's temporary home.
func isolateClientEnv(t *testing.T) {
	for _, k := range []string{"XDG_CONFIG_HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "COPILOT_HOME", "VIBE_HOME", "KIMI_CODE_HOME", "APPDATA", "LOCALAPPDATA"} {
		t.Setenv(k, "")
	}
}

// clientFile is the part of an mcpServers file these tests read.
type clientFile struct {
	MCPServers map[string]struct {
		Command string            `json:"command"`
		Args    []string          `json:"args"`
		Env     map[string]string `json:"env"`
		URL     string            `json:"url"`
		Headers map[string]string `json:"headers"`
	} `json:"mcpServers"`
}

func readClientFile(t *testing.T, path string) (clientFile, map[string]json.RawMessage) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f clientFile
	var all map[string]json.RawMessage
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatalf("%s: %v\n%s", path, err, data)
	}
	json.Unmarshal(data, &all)
	return f, all
}

// TestClientsEndToEnd connects Claude Desktop and Cursor through the
// daemon, then launches each entry the way that client does: Claude
// Desktop spawns the entry's command (the stdio bridge) and speaks MCP on
// its stdin and stdout; Cursor posts to the entry's URL with its header.
// Both list and call the tools of a server the daemon runs. Revoking
// Cursor's token then locks Cursor out, and only Cursor.
func TestClientsEndToEnd(t *testing.T) {
	isolateClientEnv(t)
	home := filepath.Join(t.TempDir(), "home")
	writeConfig(t, home, "alpha")
	d := startDaemon(t, home)
	d.waitRunning(t, "alpha")
	ctx := t.Context()

	// Claude Desktop: through the CLI, as a user would.
	code, out, errOut := cli(t, home, "clients", "connect", "claude-desktop")
	if code != exitOK || !strings.Contains(out, "claude-desktop: connected") {
		t.Fatalf("connect claude-desktop: %d\n%s%s", code, out, errOut)
	}
	desktopFile := filepath.Join(d.userHome, ".config", "Claude", "claude_desktop_config.json")
	f, _ := readClientFile(t, desktopFile)
	entry, ok := f.MCPServers["switchboard"]
	// The data directory is not the default one: the entry names it, so
	// that the bridge finds this daemon rather than starting another.
	if !ok || entry.Command != binary || !slices.Equal(entry.Args, []string{"connect", "--home", home}) ||
		!strings.HasPrefix(entry.Env["SWITCHBOARD_TOKEN"], "sb_") {
		t.Fatalf("Claude Desktop's entry: %+v", f.MCPServers)
	}
	// Claude Desktop starts the command with the user's environment plus
	// the entry's env; the user's environment does not name Switchboard's
	// data directory.
	cmd := exec.Command(entry.Command, entry.Args...)
	cmd.Env = slices.DeleteFunc(testEnvWithHome(home, d.userHome), func(kv string) bool {
		return strings.HasPrefix(kv, daemon.HomeEnv+"=")
	})
	for k, v := range entry.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	bridgeErr := &testutil.SyncBuffer{}
	cmd.Stderr = bridgeErr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "claude-ai", Version: "0.9"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("speaking MCP to the bridge: %v\nbridge stderr:\n%s", err, bridgeErr)
	}
	if names := testutil.ToolNames(t, cs); !slices.Contains(names, "alpha__echo") {
		t.Errorf("tools through the bridge: %v", names)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": "from claude"}})
	if err != nil || res.IsError {
		t.Errorf("call through the bridge: %v %+v", err, res)
	}
	if err := cs.Close(); err != nil {
		t.Logf("closing the bridge: %v (stderr: %s)", err, bridgeErr)
	}
	if cmd.ProcessState == nil {
		t.Error("the bridge process was not waited for")
	}
	if info, err := daemon.ReadInfo(filepath.Join(d.userHome, ".local", "share", "switchboard")); err == nil {
		t.Errorf("the bridge started a second daemon in the default data directory: %+v", info)
	}

	// Cursor: through the API (plan, then apply with its hash).
	change := wire.ClientChange{Action: "connect"}
	plan, err := d.client.PlanClient(ctx, "cursor", change)
	if err != nil {
		t.Fatal(err)
	}
	change.Hash = plan.Hash
	if _, err := d.client.ApplyClient(ctx, "cursor", change); err != nil {
		t.Fatal(err)
	}
	cf, _ := readClientFile(t, filepath.Join(d.userHome, ".cursor", "mcp.json"))
	ce := cf.MCPServers["switchboard"]
	if ce.URL != d.info.Address+"/mcp" || !strings.HasPrefix(ce.Headers["Authorization"], "Bearer sb_") {
		t.Fatalf("Cursor's entry: %+v", ce)
	}
	headers := headerTransport(ce.Headers)
	cursor, err := mcp.NewClient(&mcp.Implementation{Name: "cursor-vscode", Version: "1.0"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ce.URL, HTTPClient: &http.Client{Transport: headers}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if names := testutil.ToolNames(t, cursor); !slices.Contains(names, "alpha__echo") {
		t.Errorf("tools through Cursor's URL: %v", names)
	}
	cursor.Close()

	// History names each client by its own token.
	testutil.Eventually(t, 10*time.Second, "the bridge's call in the history", func() bool {
		page, err := d.client.History(ctx, url.Values{"client": {"claude-desktop"}, "tool": {"alpha__echo"}})
		return err == nil && len(page.Calls) == 1 && page.Calls[0].ClientLabel == "claude-desktop"
	})

	// Tokens: listed without secrets; Cursor's revoked; Cursor gets 401.
	code, out, _ = cli(t, home, "tokens")
	for _, label := range []string{"cli", "claude-desktop", "cursor"} {
		if code != exitOK || !strings.Contains(out, label) {
			t.Errorf("tokens lacks %s: %d\n%s", label, code, out)
		}
	}
	if strings.Contains(out, "sb_") {
		t.Errorf("tokens shows a secret:\n%s", out)
	}
	if code, _, errOut := cli(t, home, "tokens", "revoke", "cli"); code != exitError || !strings.Contains(errOut, "refusing") {
		t.Errorf("revoking cli: %d %s", code, errOut)
	}
	code, out, errOut = cli(t, home, "tokens", "revoke", "cursor")
	if code != exitOK || !strings.Contains(out, "revoked 1 token") {
		t.Fatalf("revoke cursor: %d %s%s", code, out, errOut)
	}
	for name, hdr := range map[string]map[string]string{
		"cursor":         ce.Headers,
		"claude-desktop": {"Authorization": "Bearer " + entry.Env["SWITCHBOARD_TOKEN"]},
	} {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ce.URL, strings.NewReader(
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		want := http.StatusOK
		if name == "cursor" {
			want = http.StatusUnauthorized
		}
		if resp.StatusCode != want {
			t.Errorf("%s after revoking cursor: %d, want %d", name, resp.StatusCode, want)
		}
	}
	// The list tells the truth: Cursor is not connected but needs
	// connecting again, which gives it a new token that works.
	clientRow := func(out, id string) string {
		for l := range strings.Lines(out) {
			if strings.HasPrefix(l, id+" ") {
				return l
			}
		}
		return ""
	}
	code, out, errOut = cli(t, home, "clients")
	if row := clientRow(out, "cursor"); code != exitOK || !strings.Contains(row, "token revoked: reconnect") ||
		!strings.Contains(out, "warning: cursor: its Switchboard entry \"switchboard\" carries a token that was revoked") ||
		!strings.Contains(clientRow(out, "claude-desktop"), "connected") {
		t.Errorf("clients after revoking cursor's token: %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = cli(t, home, "clients", "connect", "cursor")
	if code != exitOK || !strings.Contains(out, "cursor: connected") {
		t.Errorf("connecting cursor again: %d\n%s%s", code, out, errOut)
	}
	code, out, _ = cli(t, home, "clients")
	if row := clientRow(out, "cursor"); code != exitOK || !strings.Contains(row, " connected ") || strings.Contains(out, "warning: cursor") {
		t.Errorf("clients after connecting cursor again:\n%s", out)
	}
	cf, _ = readClientFile(t, filepath.Join(d.userHome, ".cursor", "mcp.json"))
	if again := cf.MCPServers["switchboard"].Headers; again["Authorization"] == ce.Headers["Authorization"] {
		t.Errorf("connecting cursor again kept the revoked token")
	} else {
		cursor, err := mcp.NewClient(&mcp.Implementation{Name: "cursor-vscode", Version: "1.0"}, nil).
			Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ce.URL, HTTPClient: &http.Client{Transport: headerTransport(again)}}, nil)
		if err != nil {
			t.Errorf("Cursor with its new token: %v", err)
		} else {
			cursor.Close()
		}
	}

	// Disconnect removes the file connect created, and says the token
	// still works; --revoke revokes it.
	code, out, errOut = cli(t, home, "clients", "disconnect", "claude-desktop")
	if code != exitOK || !strings.Contains(out, "removed "+desktopFile) || !strings.Contains(out, "token is still valid") ||
		!strings.Contains(out, "switchboard tokens revoke claude-desktop") {
		t.Errorf("disconnect claude-desktop: %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(desktopFile); !os.IsNotExist(err) {
		t.Errorf("the file connect created is still there after disconnect: %v", err)
	}
	code, out, errOut = cli(t, home, "clients", "disconnect", "--revoke", "claude-desktop")
	if code != exitOK || !strings.Contains(out, "revoked its token") {
		t.Errorf("disconnect --revoke claude-desktop: %d\n%s%s", code, out, errOut)
	}
	if code, out, _ := cli(t, home, "tokens"); code != exitOK || strings.Contains(out, "claude-desktop") {
		t.Errorf("claude-desktop's token is still listed:\n%s", out)
	}

	// A user's own "switchboard" entry is a conflict until --replace; a
	// read-only file is refused until --force.
	windsurf := filepath.Join(d.userHome, ".codeium", "windsurf", "mcp_config.json")
	os.MkdirAll(filepath.Dir(windsurf), 0o700)
	mine := "{\n  \"mcpServers\": {\n    \"switchboard\": {\"serverUrl\": \"https://mine.example.com/mcp\"}\n  }\n}\n"
	if err := os.WriteFile(windsurf, []byte(mine), 0o444); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = cli(t, home, "clients", "connect", "windsurf")
	if code != exitError || !strings.Contains(errOut, "read-only") || !strings.Contains(errOut, "--force") {
		t.Errorf("connect to a read-only file: %d %s", code, errOut)
	}
	code, out, errOut = cli(t, home, "clients", "connect", "--force", "windsurf")
	if code != exitError || !strings.Contains(errOut, "did not write") || !strings.Contains(errOut, "--replace") {
		t.Errorf("connect over a user's switchboard entry: %d\n%s%s", code, out, errOut)
	}
	if got, _ := os.ReadFile(windsurf); string(got) != mine {
		t.Errorf("a refused connect changed the file:\n%s", got)
	}
	code, out, errOut = cli(t, home, "clients", "connect", "--force", "--replace", "windsurf")
	if code != exitOK || !strings.Contains(out, "windsurf: connected") {
		t.Errorf("connect --force --replace: %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = cli(t, home, "clients", "disconnect", "--force", "--revoke", "windsurf")
	if got, _ := os.ReadFile(windsurf); code != exitOK || string(got) != mine {
		t.Errorf("disconnect did not give back the user's file: %d\n%s%s\n%s", code, out, errOut, got)
	}
	if fi, _ := os.Stat(windsurf); fi.Mode().Perm() != 0o444 {
		t.Errorf("mode after forced writes: %v", fi.Mode().Perm())
	}
}

// headerTransport adds a client entry's headers to every request.
type headerTransport map[string]string

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestImportFromClaudeDesktop imports a realistic Claude Desktop config
// with three servers (one with a token in its env) through the CLI: three
// supervised servers run, the token is in the secret store and reaches the
// server's process but not config.json, and Claude Desktop's file holds
// only Switchboard's entry besides its own settings. Importing the same
// servers from Cursor adds nothing.
func TestImportFromClaudeDesktop(t *testing.T) {
	isolateClientEnv(t)
	home := filepath.Join(t.TempDir(), "home")
	writeConfig(t, home)
	d := startDaemon(t, home)
	ctx := t.Context()

	const secret = "ghp_R3alLookingT0kenValue0123456789abcd"
	server := func(name string, extra map[string]string) map[string]any {
		env := map[string]string{}
		for _, kv := range testmcp.Env(testmcp.Options{Name: name}) {
			k, v, _ := strings.Cut(kv, "=")
			env[k] = v
		}
		for k, v := range extra {
			env[k] = v
		}
		return map[string]any{"command": "/bin/sh", "args": []string{"-c", `sleep 600 & "$0"`, os.Args[0]}, "env": env}
	}
	servers := map[string]any{
		"github":     server("github", map[string]string{"GITHUB_TOKEN": secret, "GITHUB_TOOLSETS": "repos,issues"}),
		"filesystem": server("filesystem", map[string]string{"ROOT": "/home/zoë/Documents"}),
		"memory":     server("memory", nil),
	}
	desktop := map[string]any{
		"mcpServers":     servers,
		"globalShortcut": "Ctrl+Space",
		"preferences":    map[string]any{"menuBarEnabled": false, "quickEntryShortcut": "off"},
	}
	data, _ := json.MarshalIndent(desktop, "", "  ")
	desktopFile := filepath.Join(d.userHome, ".config", "Claude", "claude_desktop_config.json")
	os.MkdirAll(filepath.Dir(desktopFile), 0o700)
	if err := os.WriteFile(desktopFile, data, 0o644); err != nil {
		t.Fatal(err)
	}

	code, out, errOut := cli(t, home, "clients", "import", "claude-desktop", "--replace", "--dry-run")
	if code != exitOK || strings.Count(out, ": added as ") != 3 ||
		!strings.Contains(out, "secrets to the secret store: GITHUB_TOKEN") || !strings.Contains(out, "dry run") {
		t.Fatalf("import --dry-run: %d\n%s%s", code, out, errOut)
	}
	if strings.Contains(out, secret) {
		t.Errorf("the dry run shows the secret:\n%s", out)
	}
	if got, _ := os.ReadFile(desktopFile); string(got) != string(data) {
		t.Fatal("a dry run wrote Claude Desktop's file")
	}

	code, out, errOut = cli(t, home, "clients", "import", "claude-desktop", "--replace")
	if code != exitOK || !strings.Contains(out, "3 server(s) added to Switchboard, 0 already there; wrote "+desktopFile) {
		t.Fatalf("import: %d\n%s%s", code, out, errOut)
	}
	list := d.waitRunning(t, "filesystem", "github", "memory")
	var names []string
	for _, s := range list {
		names = append(names, s.Name)
		if len(s.Processes) != 1 {
			t.Errorf("%s has %d processes", s.Name, len(s.Processes))
		}
	}
	if !slices.Equal(names, []string{"filesystem", "github", "memory"}) {
		t.Errorf("servers: %v", names)
	}

	// The secret: in the store, in the process, not in config.json.
	raw, _ := os.ReadFile(filepath.Join(home, "config.json"))
	if strings.Contains(string(raw), secret) {
		t.Errorf("config.json holds the secret:\n%s", raw)
	}
	var cfg config.Config
	if err := json.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	if gh := cfg.Servers["github"]; !slices.Equal(gh.SecretEnv, []string{"GITHUB_TOKEN"}) || gh.Env["GITHUB_TOOLSETS"] != "repos,issues" {
		t.Errorf("github in config.json: %+v", gh)
	}
	if store, err := os.ReadFile(filepath.Join(home, "secrets.json")); err == nil && !strings.Contains(string(store), secret) {
		t.Errorf("the file secret store lacks the token")
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "check", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: d.info.Address + "/mcp/github", HTTPClient: &http.Client{Transport: bearerTransport(d.client.Token)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "env", Arguments: map[string]any{"name": "GITHUB_TOKEN"}})
	cs.Close()
	if err != nil || res.IsError || len(res.Content) == 0 || res.Content[0].(*mcp.TextContent).Text != secret {
		t.Errorf("GITHUB_TOKEN in the github server's process: %v %+v", err, res)
	}

	// Claude Desktop's file: only Switchboard's entry, its own keys kept.
	f, all := readClientFile(t, desktopFile)
	if len(f.MCPServers) != 1 || f.MCPServers["switchboard"].Command != binary {
		t.Errorf("Claude Desktop's servers after import: %+v", f.MCPServers)
	}
	if string(all["globalShortcut"]) != `"Ctrl+Space"` || !strings.Contains(string(all["preferences"]), `"quickEntryShortcut": "off"`) {
		t.Errorf("Claude Desktop's own settings lost:\n%s", all)
	}
	if fi, _ := os.Stat(desktopFile); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644 kept", fi.Mode().Perm())
	}
	bs, err := d.client.Backups(ctx, "claude-desktop", "")
	if err != nil || len(bs) != 1 {
		t.Fatalf("backups: %+v %v", bs, err)
	}

	// The same servers in Cursor merge into the ones Switchboard runs.
	cursorFile := filepath.Join(d.userHome, ".cursor", "mcp.json")
	os.MkdirAll(filepath.Dir(cursorFile), 0o700)
	data, _ = json.MarshalIndent(map[string]any{"mcpServers": servers}, "", "  ")
	os.WriteFile(cursorFile, data, 0o600)
	code, out, errOut = cli(t, home, "clients", "import", "cursor")
	if code != exitOK || strings.Count(out, "= ") != 3 || !strings.Contains(out, "nothing to change") {
		t.Errorf("import from cursor: %d\n%s%s", code, out, errOut)
	}
	if list, _ := d.client.Servers(ctx); len(list) != 3 {
		t.Errorf("%d servers after importing the same ones from Cursor, want 3", len(list))
	}

	// And Claude Desktop's file comes back from its backup.
	code, out, errOut = cli(t, home, "clients", "backups", "claude-desktop")
	if code != exitOK || !strings.Contains(out, bs[0].Name) {
		t.Errorf("backups: %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = cli(t, home, "clients", "restore", "claude-desktop", bs[0].Name)
	if code != exitOK || !strings.Contains(out, "restored") || strings.Contains(out, secret) {
		t.Errorf("restore: %d\n%s%s", code, out, errOut)
	}
	if got, _ := os.ReadFile(desktopFile); string(got) != string(mustMarshal(desktop)) {
		t.Errorf("restored file:\n%s", got)
	}
}

func mustMarshal(v any) []byte {
	b, _ := json.MarshalIndent(v, "", "  ")
	return b
}
