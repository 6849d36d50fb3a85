package e2e

import (
	"encoding/json"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/app/internal/testutil"
	"github.com/switchboardhq/switchboard/supervisor/confine"
	"github.com/switchboardhq/switchboard/supervisor/testmcp"
)

// writeHostileConfig configures one server, "hostile": this test binary as
// the test MCP server with its hostile tools, confined ("sandbox": true)
// and granted the folder granted (an absolute path in its arguments, as
// server-filesystem's directories are).
func writeHostileConfig(t *testing.T, home, granted string) {
	writeHostileConfigNet(t, home, granted, false)
}

// writeHostileConfigNet is writeHostileConfig, with a second server
// "hostilenet" (the same, with "sandbox": {"network": true}) when withNet.
func writeHostileConfigNet(t *testing.T, home, granted string, withNet bool) {
	t.Helper()
	env := map[string]string{}
	for _, kv := range testmcp.Env(testmcp.Options{Hostile: true}) {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	env["GORACE"] = "atexit_sleep_ms=0"
	servers := map[string]any{
		"hostile": map[string]any{"command": os.Args[0], "args": []string{granted}, "env": env, "sandbox": true},
	}
	if withNet {
		servers["hostilenet"] = map[string]any{"command": os.Args[0], "env": env, "sandbox": map[string]any{"network": true}}
	}
	cfg := map[string]any{"version": 1, "listen": "127.0.0.1:0", "servers": servers}
	data, _ := json.MarshalIndent(cfg, "", "  ")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "config.json"), data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestConfinedServerThroughTheDaemon runs the hostile test server under the
// daemon's default policy, against a temp HOME with the secrets a
// compromised package goes for, and tries each through the gateway.
func TestConfinedServerThroughTheDaemon(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	granted := filepath.Join(t.TempDir(), "granted")
	writeFile(t, filepath.Join(granted, "hello.txt"), "hello from the granted folder")
	writeHostileConfigNet(t, home, granted, true)
	d := startDaemon(t, home)
	secrets := map[string]string{
		"~/.ssh/id_ed25519":             filepath.Join(d.userHome, ".ssh", "id_ed25519"),
		"~/.aws/credentials":            filepath.Join(d.userHome, ".aws", "credentials"),
		"another server's data":         filepath.Join(home, "servers", "other", "data", "notes.json"),
		"Switchboard's tokens.json":     filepath.Join(home, "tokens.json"),
		"Switchboard's config.json":     filepath.Join(home, "config.json"),
		"a file in the user's home dir": filepath.Join(d.userHome, "notes.txt"),
	}
	for name, path := range secrets {
		if _, err := os.Stat(path); err != nil {
			writeFile(t, path, "fake secret: "+name)
		}
	}
	daemonURL, err := url.Parse(d.info.Address)
	if err != nil {
		t.Fatal(err)
	}
	other, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()

	cs := mcpSession(t, d, "/mcp")
	callTool := func(tool string, args map[string]any) (string, bool) {
		server, tool, ok := strings.Cut(tool, "__")
		if !ok {
			server, tool = "hostile", server
		}
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: server + "__" + tool, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		var out strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				out.WriteString(tc.Text)
			}
		}
		return out.String(), !res.IsError
	}
	refused := func(tool string, args map[string]any) func(t *testing.T) {
		return func(t *testing.T) {
			out, ok := callTool(tool, args)
			// Landlock answers EACCES, the socket filter EPERM.
			if ok || !strings.Contains(out, "permission denied") && !strings.Contains(out, "operation not permitted") {
				t.Fatalf("%s %v = %q (ok %v); want permission denied or operation not permitted", tool, args, out, ok)
			}
		}
	}
	allowed := func(tool string, args map[string]any, want string) func(t *testing.T) {
		return func(t *testing.T) {
			out, ok := callTool(tool, args)
			if !ok || !strings.Contains(out, want) {
				t.Fatalf("%s %v = %q (ok %v); want it allowed with %q", tool, args, out, ok, want)
			}
		}
	}
	for name, path := range secrets {
		t.Run("read "+name+" refused", refused("read_file", map[string]any{"path": path}))
	}
	t.Run("write in the user's home refused", refused("write_file", map[string]any{"path": filepath.Join(d.userHome, ".bashrc"), "content": "x"}))
	t.Run("write Switchboard's config refused", refused("write_file", map[string]any{"path": filepath.Join(home, "config.json"), "content": "{}"}))
	t.Run("write /tmp refused", refused("write_file", map[string]any{"path": filepath.Join(os.TempDir(), "sb-e2e-planted"), "content": "x"}))
	t.Run("connect to Switchboard's port refused", refused("connect", map[string]any{"addr": daemonURL.Host}))
	t.Run("connect to another loopback port refused", refused("connect", map[string]any{"addr": other.Addr().String()}))
	t.Run("with network: connect to Switchboard's port refused", refused("hostilenet__connect", map[string]any{"addr": daemonURL.Host}))
	t.Run("with network: read ~/.ssh/id_ed25519 refused", refused("hostilenet__read_file", map[string]any{"path": secrets["~/.ssh/id_ed25519"]}))
	t.Run("with network: connect to another loopback port allowed", allowed("hostilenet__connect", map[string]any{"addr": other.Addr().String()}, "ok"))
	t.Run("read granted folder allowed", allowed("read_file", map[string]any{"path": filepath.Join(granted, "hello.txt")}, "hello from the granted folder"))
	t.Run("write granted folder allowed", allowed("write_file", map[string]any{"path": filepath.Join(granted, "out.txt"), "content": "x"}, "ok"))
	t.Run("write own TMPDIR allowed", allowed("write_file", map[string]any{"path": filepath.Join(home, "sandbox", "hostile", "tmp", "scratch"), "content": "x"}, "ok"))
	t.Run("udp send refused", refused("udp_send", map[string]any{"addr": udp.LocalAddr().String()}))

	v, err := d.client.Server(t.Context(), "hostile")
	if err != nil {
		t.Fatal(err)
	}
	sb := v.Sandbox
	if !sb.Confined || !sb.Enforced || !strings.HasPrefix(sb.Mechanism, "landlock ABI ") || sb.Network || len(sb.Missing) > 0 {
		t.Fatalf("sandbox view = %+v; want confined and enforced by landlock in full, without network", sb)
	}
	if len(v.Processes) != 1 || v.Processes[0].Confinement == nil || !v.Processes[0].Confinement.Enforced {
		t.Fatalf("processes = %+v; want one, confined", v.Processes)
	}
	code, out, _ := cli(t, home, "servers", "hostile")
	if code != 0 || !strings.Contains(out, "sandbox:  confined by landlock ABI") || !strings.Contains(out, granted) ||
		!strings.Contains(out, "network:  no") {
		t.Fatalf("servers hostile (exit %d):\n%s", code, out)
	}
}

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
