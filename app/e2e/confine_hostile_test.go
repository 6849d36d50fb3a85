//go:build linux || darwin

package e2e

import (
	"encoding/json"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/supervisor/testmcp"
)

// confineMechanism is how the sandbox view names what confines a server
// here: Landlock on Linux, Seatbelt on macOS (where this test runs only in
// the release workflow's macOS job: it has never run on a Mac here).
func confineMechanism() string {
	if runtime.GOOS == "darwin" {
		return "seatbelt"
	}
	return "landlock ABI "
}

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
			// Landlock answers EACCES, the socket filter EPERM, as
			// Seatbelt does everything.
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
	if !sb.Confined || !sb.Enforced || !strings.HasPrefix(sb.Mechanism, confineMechanism()) || sb.Network || len(sb.Missing) > 0 {
		t.Fatalf("sandbox view = %+v; want confined and enforced by %s in full, without network", sb, confineMechanism())
	}
	if len(v.Processes) != 1 || v.Processes[0].Confinement == nil || !v.Processes[0].Confinement.Enforced {
		t.Fatalf("processes = %+v; want one, confined", v.Processes)
	}
	code, out, _ := cli(t, home, "servers", "hostile")
	if code != 0 || !strings.Contains(out, "sandbox:  confined by "+confineMechanism()) || !strings.Contains(out, granted) ||
		!strings.Contains(out, "network:  no") {
		t.Fatalf("servers hostile (exit %d):\n%s", code, out)
	}
}
