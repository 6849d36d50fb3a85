package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/internal/testutil"
)

// setProfiles writes profiles into home's config.json (the way a user
// edits it by hand).
func setProfiles(t *testing.T, home string, profiles map[string]any) {
	t.Helper()
	setConfigKey(t, home, "profiles", profiles)
}

// setConfigKey sets the top-level key of home's config.json to value, as a
// user editing the file by hand would; the file is replaced in one step, so
// a running daemon never reads half of it.
func setConfigKey(t *testing.T, home, key string, value any) {
	t.Helper()
	path := filepath.Join(home, "config.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	cfg[key] = value
	data, _ = json.MarshalIndent(cfg, "", "  ")
	if err := os.WriteFile(path+".tmp", data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		t.Fatal(err)
	}
}

// postMCP posts an initialize request to path with the given
// Authorization header and returns the status and body.
func postMCP(t *testing.T, url, authorization string) (int, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", authorization)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func clientView(t *testing.T, d *daemonProc, id string) wire.ClientView {
	t.Helper()
	list, err := d.client.Clients(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range list {
		if v.ID == id {
			return v
		}
	}
	t.Fatalf("no client %s in %+v", id, list)
	return wire.ClientView{}
}

// TestProfilesEndToEnd: `clients connect cursor --profile coding` writes
// the profile's endpoint into Cursor's file and binds Cursor's token to
// it; through that entry Cursor sees only the profile's tools (updated
// live when config.json changes) and is refused on /mcp; connected to /mcp
// instead it sees more tools than Cursor takes, and the API says so.
func TestProfilesEndToEnd(t *testing.T) {
	isolateClientEnv(t)
	home := filepath.Join(t.TempDir(), "home")
	writeConfig(t, home, "alpha", "beta")
	setProfiles(t, home, map[string]any{
		"coding": map[string]any{"servers": []string{"alpha", "not-installed"}, "tools": map[string]any{"alpha": []string{"echo", "sleep"}}},
	})
	d := startDaemon(t, home)
	d.waitRunning(t, "alpha", "beta")
	ctx := t.Context()

	// The profile names a server that is not installed: said as such.
	code, out, errOut := cli(t, home, "profiles")
	if code != exitOK || !strings.Contains(out, "alpha (not installed or disabled: not-installed)") {
		t.Errorf("profiles: %d\n%s%s", code, out, errOut)
	}

	// The user's Cursor file has entries and settings of its own.
	cursorFile := filepath.Join(d.userHome, ".cursor", "mcp.json")
	userFile := "{\n  \"mcpServers\": {\n    \"mine\": {\"command\": \"npx\", \"args\": [\"-y\", \"my-server\"]},\n" +
		"    \"remote\": {\"url\": \"https://example.com/mcp\"}\n  },\n  \"otherSetting\": true\n}\n"
	if err := os.MkdirAll(filepath.Dir(cursorFile), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cursorFile, []byte(userFile), 0o600); err != nil {
		t.Fatal(err)
	}

	code, out, errOut = cli(t, home, "clients", "connect", "cursor", "--profile", "coding")
	if code != exitOK || !strings.Contains(out, "cursor: connected") || !strings.Contains(out, "bound to profile coding") {
		t.Fatalf("clients connect cursor --profile coding: %d\n%s%s", code, out, errOut)
	}
	cf, all := readClientFile(t, cursorFile)
	entry := cf.MCPServers["switchboard"]
	if cf.MCPServers["mine"].Command != "npx" || cf.MCPServers["remote"].URL != "https://example.com/mcp" || string(all["otherSetting"]) != "true" {
		t.Errorf("the user's own entries changed: %s", readFile(t, cursorFile))
	}
	if entry.URL != d.info.Address+"/mcp/p/coding" || !strings.HasPrefix(entry.Headers["Authorization"], "Bearer sb_") {
		t.Fatalf("Cursor's entry: %+v", cf.MCPServers)
	}

	// Cursor, as it would: the entry's URL with the entry's header.
	cursor, err := mcp.NewClient(&mcp.Implementation{Name: "cursor-vscode", Version: "1.0"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: entry.URL, HTTPClient: &http.Client{Transport: headerTransport(entry.Headers)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cursor.Close()
	if names := testutil.ToolNames(t, cursor); !slices.Equal(names, []string{"alpha__echo", "alpha__sleep"}) {
		t.Errorf("tools on the profile: %v, want exactly alpha__echo and alpha__sleep", names)
	}
	res, err := cursor.CallTool(ctx, &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": "via profile"}})
	if err != nil || res.IsError {
		t.Errorf("call on the profile: %v %+v", err, res)
	}
	if res, err := cursor.CallTool(ctx, &mcp.CallToolParams{Name: "beta__echo", Arguments: map[string]any{"text": "x"}}); err == nil && !res.IsError {
		t.Errorf("a tool outside the profile was called: %+v", res)
	}

	// The same token elsewhere: refused, naming the profile.
	for _, path := range []string{"/mcp", "/mcp/alpha", "/sse"} {
		status, body := postMCP(t, d.info.Address+path, entry.Headers["Authorization"])
		if status != http.StatusForbidden || !strings.Contains(body, `bound to profile \"coding\"`) {
			t.Errorf("Cursor's token on %s: %d %s", path, status, body)
		}
	}
	// A token without a profile reaches the profile's endpoint; an unknown
	// profile is a 404 naming it.
	if status, body := postMCP(t, d.info.Address+"/mcp/p/coding", "Bearer "+d.client.Token); status != http.StatusOK {
		t.Errorf("unbound token on /mcp/p/coding: %d %s", status, body)
	}
	if status, body := postMCP(t, d.info.Address+"/mcp/p/nope", "Bearer "+d.client.Token); status != http.StatusNotFound || !strings.Contains(body, `unknown profile \"nope\"`) {
		t.Errorf("unknown profile: %d %s", status, body)
	}

	v := clientView(t, d, "cursor")
	if v.Profile != "coding" || v.Tools == nil || *v.Tools != 2 || v.ToolLimit != 40 || v.Warning != "" {
		t.Errorf("Cursor's view on the profile: %+v", v)
	}

	// Claude Desktop launches the bridge, which reaches the profile too.
	code, out, errOut = cli(t, home, "clients", "connect", "claude-desktop", "--profile", "coding")
	if code != exitOK || !strings.Contains(out, "bound to profile coding") {
		t.Fatalf("clients connect claude-desktop --profile coding: %d\n%s%s", code, out, errOut)
	}
	df, _ := readClientFile(t, filepath.Join(d.userHome, ".config", "Claude", "claude_desktop_config.json"))
	bridgeEntry := df.MCPServers["switchboard"]
	if !slices.Equal(bridgeEntry.Args, []string{"connect", "--home", home, "--profile", "coding"}) {
		t.Fatalf("Claude Desktop's entry: %+v", bridgeEntry)
	}
	cmd := exec.Command(bridgeEntry.Command, bridgeEntry.Args...)
	cmd.Env = testEnvWithHome(home, d.userHome)
	for k, val := range bridgeEntry.Env {
		cmd.Env = append(cmd.Env, k+"="+val)
	}
	bridgeErr := &testutil.SyncBuffer{}
	cmd.Stderr = bridgeErr
	desktop, err := mcp.NewClient(&mcp.Implementation{Name: "claude-ai", Version: "0.9"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("speaking MCP to the bridge: %v\nbridge stderr:\n%s", err, bridgeErr)
	}
	if names := testutil.ToolNames(t, desktop); !slices.Equal(names, []string{"alpha__echo", "alpha__sleep"}) {
		t.Errorf("tools through the bridge: %v", names)
	}
	desktop.Close()

	// Its token revoked, Claude Desktop still names the profile: the list
	// and its hint keep it, and following the hint binds the new token to
	// it again (not /mcp, every server's tools).
	if code, out, errOut := cli(t, home, "tokens", "revoke", "claude-desktop"); code != exitOK {
		t.Fatalf("tokens revoke claude-desktop: %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = cli(t, home, "clients")
	var row string
	for l := range strings.Lines(out) {
		if strings.HasPrefix(l, "claude-desktop ") {
			row = l
		}
	}
	if code != exitOK || !strings.Contains(row, "token revoked: reconnect") || !strings.Contains(row, " coding ") ||
		!strings.Contains(out, "(clients connect claude-desktop --profile coding)") {
		t.Errorf("clients after revoking claude-desktop's token: %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = cli(t, home, "clients", "connect", "claude-desktop", "--profile", "coding")
	if code != exitOK || !strings.Contains(out, "claude-desktop: connected") || !strings.Contains(out, "bound to profile coding") {
		t.Errorf("connecting claude-desktop again as the hint says: %d\n%s%s", code, out, errOut)
	}
	if v := clientView(t, d, "claude-desktop"); !v.Connected || v.Profile != "coding" {
		t.Errorf("Claude Desktop's view after connecting again: %+v", v)
	}

	// Live: the profile gains beta (every tool of it); the open session
	// sees the new list.
	setProfiles(t, home, map[string]any{
		"coding": map[string]any{"servers": []string{"alpha", "beta"}, "tools": map[string]any{"alpha": []string{"echo", "sleep"}}},
	})
	var names []string
	testutil.Eventually(t, 15*time.Second, "beta's tools on the profile", func() bool {
		names = testutil.ToolNames(t, cursor)
		return slices.Contains(names, "beta__echo") && slices.Contains(names, "alpha__echo") && !slices.Contains(names, "alpha__crash")
	})
	// The tools are registered one by one: the count settles once all are.
	var profiles []wire.ProfileView
	testutil.Eventually(t, 15*time.Second, "the profile's tool count", func() bool {
		var err error
		profiles, err = d.client.Profiles(ctx)
		names = testutil.ToolNames(t, cursor)
		return err == nil && len(profiles) == 1 && profiles[0].ToolCount != nil && *profiles[0].ToolCount == len(names)
	})
	if !slices.Equal(profiles[0].Clients, []string{"cursor", "claude-desktop"}) || !slices.Equal(profiles[0].Servers, []string{"alpha", "beta"}) {
		t.Errorf("profiles: %+v", profiles)
	}

	// Back to /mcp: every tool of both servers, more than Cursor's 40.
	code, out, errOut = cli(t, home, "clients", "connect", "cursor")
	if code != exitOK || !strings.Contains(out, "no longer bound to a profile") || !strings.Contains(out, "warning:") {
		t.Fatalf("clients connect cursor: %d\n%s%s", code, out, errOut)
	}
	v = clientView(t, d, "cursor")
	if v.Profile != "" || v.Tools == nil || *v.Tools <= 40 || !strings.Contains(v.Warning, "more than the 40") {
		t.Errorf("Cursor's view on /mcp: %+v", v)
	}
	if status, body := postMCP(t, d.info.Address+"/mcp", entry.Headers["Authorization"]); status != http.StatusOK {
		t.Errorf("Cursor's unbound token on /mcp: %d %s", status, body)
	}
	code, out, _ = cli(t, home, "clients")
	if code != exitOK || !strings.Contains(out, "PROFILE") || !strings.Contains(out, "/40 (!)") || !strings.Contains(out, "warning: cursor:") {
		t.Errorf("clients:\n%s", out)
	}

	// Disconnected: the file is the user's again, byte for byte, and the
	// backup made before the first change holds it too.
	code, out, errOut = cli(t, home, "clients", "disconnect", "cursor")
	if code != exitOK || !strings.Contains(out, "cursor: disconnected") {
		t.Fatalf("clients disconnect cursor: %d\n%s%s", code, out, errOut)
	}
	if got := readFile(t, cursorFile); got != userFile {
		t.Errorf("Cursor's file after disconnecting:\n%s\nwant the user's:\n%s", got, userFile)
	}
	bs, err := d.client.Backups(ctx, "cursor", "")
	if err != nil || len(bs) != 1 || bs[0].Absent || bs[0].Path != cursorFile || bs[0].Size != int64(len(userFile)) {
		t.Fatalf("Cursor's backups: %+v %v", bs, err)
	}
	if got := readFile(t, filepath.Join(home, "backups", "cursor", bs[0].Name)); got != userFile {
		t.Errorf("Cursor's backup:\n%s\nwant the user's file:\n%s", got, userFile)
	}
}

// TestProfilesMadeFromTheCommandLine: a profile created with `profiles
// create` is served at once on /mcp/p/NAME by the running daemon; a client
// connected to it sees its tools, and an edit (`profiles edit`) reaches the
// client's open session (tools/list_changed, then the new list) without a
// restart; `profiles delete` is refused while the client is bound to it
// and goes through once the client is connected elsewhere; config.json
// holds each change.
func TestProfilesMadeFromTheCommandLine(t *testing.T) {
	isolateClientEnv(t)
	home := filepath.Join(t.TempDir(), "home")
	writeConfig(t, home, "alpha", "beta")
	d := startDaemon(t, home)
	d.waitRunning(t, "alpha", "beta")
	ctx := t.Context()

	code, out, errOut := cli(t, home, "profiles", "create", "review", "--server", "alpha", "--tool", "alpha:echo,sleep")
	if code != exitOK || !strings.Contains(out, "created profile review on /mcp/p/review") || !strings.Contains(out, "servers alpha") {
		t.Fatalf("profiles create: %d\n%s%s", code, out, errOut)
	}
	if code, _, errOut := cli(t, home, "profiles", "create", "review", "--server", "beta"); code != exitError || !strings.Contains(errOut, `profile "review" already exists`) {
		t.Errorf("creating it again: %d %s", code, errOut)
	}
	if code, _, errOut := cli(t, home, "profiles", "create", "typo", "--server", "alpah"); code != exitError || !strings.Contains(errOut, `servers[0]: unknown server "alpah": the servers are alpha, beta`) {
		t.Errorf("a profile of an unknown server: %d %s", code, errOut)
	}
	if cfg := readFile(t, filepath.Join(home, "config.json")); !strings.Contains(cfg, `"review": {`) || strings.Contains(cfg, "typo") {
		t.Errorf("config.json after create:\n%s", cfg)
	}

	code, out, errOut = cli(t, home, "clients", "connect", "cursor", "--profile", "review")
	if code != exitOK || !strings.Contains(out, "bound to profile review") {
		t.Fatalf("clients connect cursor --profile review: %d\n%s%s", code, out, errOut)
	}
	cf, _ := readClientFile(t, filepath.Join(d.userHome, ".cursor", "mcp.json"))
	entry := cf.MCPServers["switchboard"]
	changed := make(chan struct{}, 8)
	cursor, err := mcp.NewClient(&mcp.Implementation{Name: "cursor-vscode", Version: "1.0"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	}).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: entry.URL, HTTPClient: &http.Client{Transport: headerTransport(entry.Headers)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cursor.Close()
	if names := testutil.ToolNames(t, cursor); !slices.Equal(names, []string{"alpha__echo", "alpha__sleep"}) {
		t.Fatalf("Cursor on the new profile sees %v", names)
	}

	code, out, errOut = cli(t, home, "profiles", "edit", "review", "--server", "alpha,beta", "--tool", "beta:echo", "--search")
	if code != exitOK || !strings.Contains(out, "changed profile review on /mcp/p/review: search · ") || !strings.Contains(out, "tools behind 2") ||
		!strings.Contains(out, "clients bound to it (they see the change at once): cursor") {
		t.Fatalf("profiles edit: %d\n%s%s", code, out, errOut)
	}
	select {
	case <-changed:
	case <-time.After(20 * time.Second):
		t.Fatal("Cursor's open session was not told that the profile's tools changed")
	}
	testutil.Eventually(t, 20*time.Second, "Cursor's session to list the profile in search mode", func() bool {
		names := testutil.ToolNames(t, cursor)
		return slices.Equal(names, []string{"call_tool", "search_tools"})
	})
	code, out, _ = cli(t, home, "profiles")
	if code != exitOK || !strings.Contains(out, "2 (search, ") || !strings.Contains(out, "cursor") {
		t.Errorf("profiles after the edit:\n%s", out)
	}
	if cfg := readFile(t, filepath.Join(home, "config.json")); !strings.Contains(cfg, `"toolSearch": true`) || !strings.Contains(cfg, `"beta": [`) {
		t.Errorf("config.json after the edit:\n%s", cfg)
	}

	// Back to alpha alone: beta's tool limit goes with beta.
	code, out, errOut = cli(t, home, "profiles", "edit", "review", "--server", "alpha", "--search=false")
	if code != exitOK || !strings.Contains(out, "changed profile review on /mcp/p/review: ") || strings.Contains(out, "search") {
		t.Fatalf("profiles edit back to alpha: %d\n%s%s", code, out, errOut)
	}
	if cfg := readFile(t, filepath.Join(home, "config.json")); strings.Contains(cfg, `"beta": [`) || strings.Contains(cfg, `"toolSearch": true`) {
		t.Errorf("config.json after the second edit:\n%s", cfg)
	}

	code, _, errOut = cli(t, home, "profiles", "delete", "review")
	if code != exitError || !strings.Contains(errOut, `profile "review" is in use by cursor`) {
		t.Errorf("deleting the profile Cursor uses: %d %s", code, errOut)
	}
	if code, out, errOut := cli(t, home, "clients", "connect", "cursor"); code != exitOK {
		t.Fatalf("clients connect cursor (to /mcp): %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = cli(t, home, "profiles", "delete", "review")
	if code != exitOK || !strings.Contains(out, "deleted profile review") {
		t.Fatalf("profiles delete: %d\n%s%s", code, out, errOut)
	}
	if cfg := readFile(t, filepath.Join(home, "config.json")); strings.Contains(cfg, "review") {
		t.Errorf("config.json after delete:\n%s", cfg)
	}
	if status, body := postMCP(t, d.info.Address+"/mcp/p/review", "Bearer "+d.client.Token); status != http.StatusNotFound {
		t.Errorf("the deleted profile's endpoint: %d %s", status, body)
	}
}
