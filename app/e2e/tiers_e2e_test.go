package e2e

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/internal/testutil"
)

// setServerKey sets key of server name in home's config.json to value, as
// a user editing the file would.
func setServerKey(t *testing.T, home, name, key string, value any) {
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
	cfg["servers"].(map[string]any)[name].(map[string]any)[key] = value
	setConfigKey(t, home, "servers", cfg["servers"])
}

// TestTokenTierCapEndToEnd: `clients connect cursor --max-tier read` caps
// Cursor's token; through its entry Cursor is listed only the read tools
// (the test server's tools have no annotations, so they are destructive
// by the spec's defaults, but for the config's overrides: alpha's echo is
// read, env write), its call of a write tool is refused naming the tool,
// its tier and the cap, and the history has both calls with their tiers.
// The API's server view shows every tool's tier.
func TestTokenTierCapEndToEnd(t *testing.T) {
	isolateClientEnv(t)
	home := filepath.Join(t.TempDir(), "home")
	writeConfig(t, home, "alpha", "beta")
	setServerKey(t, home, "alpha", "tiers", map[string]string{"echo": "read", "env": "write"})
	d := startDaemon(t, home)
	d.waitRunning(t, "alpha", "beta")
	ctx := t.Context()

	cursorFile := filepath.Join(d.userHome, ".cursor", "mcp.json")
	if err := os.MkdirAll(filepath.Dir(cursorFile), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cursorFile, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := cli(t, home, "clients", "connect", "cursor", "--max-tier", "read")
	if code != exitOK || !strings.Contains(out, "cursor: connected") || !strings.Contains(out, "sees read tools only") {
		t.Fatalf("clients connect cursor --max-tier read: %d\n%s%s", code, out, errOut)
	}
	if code, _, errOut := cli(t, home, "clients", "connect", "cursor", "--max-tier", "admin"); code == exitOK || !strings.Contains(errOut, `unknown tier "admin"`) {
		t.Errorf("--max-tier admin: exit %d, %s", code, errOut)
	}
	if v := clientView(t, d, "cursor"); v.MaxTier != "read" {
		t.Errorf("the API's view of cursor: maxTier %q, want read", v.MaxTier)
	}
	cf, _ := readClientFile(t, cursorFile)
	entry := cf.MCPServers["switchboard"]
	if entry.URL != d.info.Address+"/mcp" {
		t.Fatalf("Cursor's entry: %+v", cf.MCPServers)
	}

	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		cursor, err := mcp.NewClient(&mcp.Implementation{Name: "cursor-vscode", Version: "1.0"}, nil).
			Connect(ctx, &mcp.StreamableClientTransport{Endpoint: entry.URL, HTTPClient: &http.Client{Transport: headerTransport(entry.Headers)}},
				&mcp.ClientSessionOptions{ProtocolVersion: era})
		if err != nil {
			t.Fatal(err)
		}
		if names := testutil.ToolNames(t, cursor); !slices.Equal(names, []string{"alpha__echo"}) {
			t.Errorf("%s: tools for a read-capped token: %v, want exactly alpha__echo", era, names)
		}
		if res, err := cursor.CallTool(ctx, &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": "read me"}}); err != nil || res.IsError {
			t.Errorf("%s: alpha__echo within the cap: %v %+v", era, err, res)
		}
		_, err = cursor.CallTool(ctx, &mcp.CallToolParams{Name: "alpha__env", Arguments: map[string]any{"name": "HOME"}})
		if err == nil || !strings.Contains(err.Error(), `tool "alpha__env"`) || !strings.Contains(err.Error(), "a write tool") ||
			!strings.Contains(err.Error(), "capped at read tools") {
			t.Errorf("%s: alpha__env above the cap: %v; want it refused naming the tool, its tier and the cap", era, err)
		}
		if _, err := cursor.CallTool(ctx, &mcp.CallToolParams{Name: "beta__pid"}); err == nil || !strings.Contains(err.Error(), "a destructive tool") {
			t.Errorf("%s: beta__pid (no annotations) above the cap: %v", era, err)
		}
		cursor.Close()
	}

	var calls []wire.Call
	testutil.Eventually(t, 10*time.Second, "the served and refused calls in the history with their tiers", func() bool {
		page, err := d.client.History(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		calls = page.Calls
		served := slices.ContainsFunc(calls, func(c wire.Call) bool {
			return c.Name == "alpha__echo" && c.Tier == "read" && c.Outcome == wire.OutcomeOK && c.ClientLabel == "cursor"
		})
		refused := slices.ContainsFunc(calls, func(c wire.Call) bool {
			return c.Name == "alpha__env" && c.Tier == "write" && c.Server == "alpha" && c.Outcome != wire.OutcomeOK
		})
		return served && refused
	})

	v, err := d.client.Server(ctx, "alpha")
	if err != nil {
		t.Fatal(err)
	}
	tiersOf := map[string]string{}
	for _, tool := range v.Tools {
		tiersOf[tool.Name] = tool.Tier
	}
	if tiersOf["echo"] != "read" || tiersOf["env"] != "write" || tiersOf["crash"] != "destructive" {
		t.Errorf("GET /api/v1/servers/alpha tools' tiers = %v; want echo read, env write, crash destructive", tiersOf)
	}
	if v.Config.Tiers["env"] != "write" {
		t.Errorf("the server's config as the API shows it: tiers %v", v.Config.Tiers)
	}
}
