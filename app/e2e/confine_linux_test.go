package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/app/internal/testutil"
	"github.com/switchboardhq/switchboard/supervisor/confine"
)

// TestUnconfinedWhenLandlockIsMissing: a kernel without Landlock (simulated
// by SWITCHBOARD_LANDLOCK_ABI=0 in the daemon's environment) runs the server
// unconfined and says so in the API, the CLI and the log.
func TestUnconfinedWhenLandlockIsMissing(t *testing.T) {
	t.Setenv(confine.ABIEnv, "0")
	home := filepath.Join(t.TempDir(), "home")
	writeHostileConfig(t, home, t.TempDir())
	d := startDaemon(t, home)
	cs := mcpSession(t, d, "/mcp")
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "hostile__echo", Arguments: map[string]any{"text": "x"}}); err != nil {
		t.Fatal(err)
	}
	v, err := d.client.Server(t.Context(), "hostile")
	if err != nil {
		t.Fatal(err)
	}
	if sb := v.Sandbox; !sb.Confined || sb.Enforced || !strings.Contains(sb.Reason, "Landlock is not available") {
		t.Fatalf("sandbox view = %+v; want confined by config, not enforced, with the reason", sb)
	}
	code, out, _ := cli(t, home, "servers", "hostile")
	if code != 0 || !strings.Contains(out, "sandbox:  NOT IN FORCE: not confined: Landlock is not available") {
		t.Fatalf("servers hostile (exit %d):\n%s", code, out)
	}
	testutil.Eventually(t, 10*time.Second, "the log says it", func() bool {
		return strings.Contains(d.out.String(), `level=WARN msg="server confinement" server=hostile`) &&
			strings.Contains(d.out.String(), "not confined: Landlock is not available")
	})
}

// TestConfinedNodeServer runs a real npm server, the reference
// server-everything from the gateway's Node harness, confined through a
// real daemon: node, its modules (granted with sandbox.read) and its temp
// dir are enough for it to list and answer, under Landlock.
func TestConfinedNodeServer(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node not found: install Node.js 20 (the CI installs it): %v", err)
	}
	// Absolute, as config.json's sandbox paths must be; resolved, as
	// Landlock grants what the path names.
	modules, err := filepath.Abs(filepath.Join(tsHarness, "node_modules"))
	if err == nil {
		modules, err = filepath.EvalSymlinks(modules)
	}
	if err != nil {
		t.Fatalf("the gateway's Node harness is not installed: run `make node-deps`: %v", err)
	}
	entry := filepath.Join(modules, "@modelcontextprotocol", "server-everything", "dist", "index.js")
	if _, err := os.Stat(entry); err != nil {
		t.Fatalf("server-everything is not in the harness (run `make node-deps`): %v", err)
	}
	home := filepath.Join(t.TempDir(), "home")
	cfg := map[string]any{"version": 1, "listen": "127.0.0.1:0", "servers": map[string]any{
		"everything": map[string]any{"command": node, "args": []string{entry, "stdio"},
			"sandbox": map[string]any{"read": []string{modules}}},
	}}
	data, _ := json.Marshal(cfg)
	writeFile(t, filepath.Join(home, "config.json"), string(data))
	d := startDaemon(t, home)
	d.waitRunning(t, "everything")
	cs := mcpSession(t, d, "/mcp")
	testutil.Eventually(t, 30*time.Second, "the confined server-everything's tools on /mcp", func() bool {
		tools, err := cs.ListTools(t.Context(), nil)
		return err == nil && len(tools.Tools) > 0
	})
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "everything__echo", Arguments: map[string]any{"message": "confined"}})
	if err != nil || res.IsError {
		t.Fatalf("echo: %v %+v", err, res)
	}
	v, err := d.client.Server(t.Context(), "everything")
	if err != nil {
		t.Fatal(err)
	}
	if !v.Sandbox.Enforced || v.Sandbox.Network {
		t.Fatalf("sandbox view = %+v; want enforced without network", v.Sandbox)
	}
}
