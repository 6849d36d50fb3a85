package e2e

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/switchboardhq/switchboard/app/api/client"
	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/daemon"
	"github.com/switchboardhq/switchboard/app/internal/testutil"
	"github.com/switchboardhq/switchboard/app/tokens"
	"github.com/switchboardhq/switchboard/supervisor"
	"github.com/switchboardhq/switchboard/supervisor/testmcp"
)

// binary is the switchboard executable built once for the tests that run
// the real thing.
var binary string

func TestMain(m *testing.M) {
	if os.Getenv(conformanceClientEnv) == "1" {
		// The conformance suite runs this binary as its client (see
		// conformance_auth_e2e_test.go): no tests, no build.
		os.Exit(conformanceClientMain(os.Args[1:]))
	}
	testmcp.RunIfRequested()
	supervisor.RunReaperIfRequested()
	dir, err := os.MkdirTemp("", "switchboard-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "switchboard")
	build := exec.Command("go", "build", "-o", binary, "github.com/switchboardhq/switchboard")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building switchboard: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

// testEnv is an environment whose HOME and data directory are temporary,
// so no test touches the real ones.
func testEnv(t *testing.T, home string) []string {
	return testEnvWithHome(home, t.TempDir())
}

func testEnvWithHome(home, userHome string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k == "HOME" || k == daemon.HomeEnv || k == "XDG_DATA_HOME" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+userHome, daemon.HomeEnv+"="+home, "GORACE=atexit_sleep_ms=0")
}

// writeConfig writes a config.json with servers that run this test binary
// as the test MCP server under sh, the way npx runs node: sh leads the
// process group, the MCP server is its child, and a background sleep is
// another grandchild.
func writeConfig(t testing.TB, home string, names ...string) {
	t.Helper()
	servers := map[string]any{}
	env := map[string]string{}
	for _, kv := range testmcp.Env(testmcp.Options{}) {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	for _, n := range names {
		servers[n] = map[string]any{
			"command": "/bin/sh",
			"args":    []string{"-c", `sleep 600 & "$0"`, os.Args[0]},
			"env":     env,
			"pool":    map[string]any{"min": 1},
		}
	}
	data, _ := json.MarshalIndent(map[string]any{"version": 1, "listen": "127.0.0.1:0", "servers": servers}, "", "  ")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "config.json"), data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// daemonProc is a `switchboard serve` started by a test.
type daemonProc struct {
	cmd      *exec.Cmd
	out      *testutil.SyncBuffer
	done     chan struct{}
	info     daemon.Info
	client   *client.Client
	userHome string // the daemon's $HOME, where client configs live
}

// startDaemon runs `switchboard serve` for home, with serveFlags, and
// waits until it serves.
func startDaemon(t testing.TB, home string, serveFlags ...string) *daemonProc {
	t.Helper()
	d, _ := launchDaemon(t, home, serveFlags...)
	testutil.Eventually(t, 30*time.Second, "daemon.json", func() bool {
		info, err := daemon.ReadInfo(home)
		if err == nil && info.PID == d.cmd.Process.Pid {
			d.info = info
			return true
		}
		return false
	})
	d.client = &client.Client{BaseURL: d.info.Address, Token: cliToken(t, home)}
	return d
}

// launchDaemon starts `switchboard serve` for home, with serveFlags, and
// returns when the process started, without waiting for it to serve. The
// daemon is killed when the test ends, and its output logged if it failed.
func launchDaemon(t testing.TB, home string, serveFlags ...string) (d *daemonProc, started time.Time) {
	t.Helper()
	d = &daemonProc{out: &testutil.SyncBuffer{}, done: make(chan struct{}), userHome: t.TempDir()}
	d.cmd = exec.Command(binary, append([]string{"serve", "--log-level", "debug"}, serveFlags...)...)
	d.cmd.Env = testEnvWithHome(home, d.userHome)
	d.cmd.Stdout, d.cmd.Stderr = d.out, d.out
	started = time.Now()
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { d.cmd.Wait(); close(d.done) }()
	t.Cleanup(func() {
		d.cmd.Process.Kill()
		<-d.done
		if t.Failed() {
			t.Logf("daemon output:\n%s", d.out.String())
		}
	})
	return d, started
}

// cliToken is the secret of the cli token for home's daemon.
func cliToken(t testing.TB, home string) string {
	t.Helper()
	store, err := tokens.Open(filepath.Join(home, daemon.TokensFile))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := store.Ensure("cli")
	if err != nil {
		t.Fatal(err)
	}
	return tok.Secret
}

// waitRunning waits until every named server has a ready process.
func (d *daemonProc) waitRunning(t *testing.T, names ...string) []wire.ServerView {
	t.Helper()
	var list []wire.ServerView
	testutil.Eventually(t, 60*time.Second, "servers running", func() bool {
		var err error
		list, err = d.client.Servers(t.Context())
		if err != nil {
			return false
		}
		running := 0
		for _, s := range list {
			if s.State == wire.StateRunning {
				running++
			}
		}
		return running == len(names)
	})
	return list
}

// TestOneDaemonPerHome: a second daemon for the same data directory says
// where the first runs and exits; a taken port is a clear error.
func TestOneDaemonPerHome(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	writeConfig(t, home)
	first := startDaemon(t, home)

	second := exec.Command(binary, "serve")
	second.Env = testEnv(t, home)
	out, err := second.CombinedOutput()
	want := fmt.Sprintf("switchboard is already running for %s (pid %d, %s)", home, first.info.PID, first.info.Address)
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), want) {
		t.Errorf("second daemon: %v\n%s\nwant it to say %q", err, out, want)
	}

	other := filepath.Join(t.TempDir(), "other")
	taken := strings.TrimPrefix(first.info.Address, "http://")
	third := exec.Command(binary, "serve", "--listen", taken)
	third.Env = testEnv(t, other)
	out, err = third.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 ||
		!strings.Contains(string(out), "cannot listen on "+taken+": the address is in use") {
		t.Errorf("daemon on a taken port: %v\n%s", err, out)
	}
	// A first run has no config.json: the error says how to make one, and
	// how to pass another address through make run.
	for _, want := range []string{"create " + filepath.Join(other, "config.json") + ` with {"version": 1, "listen": "127.0.0.1:7392"}`,
		"make run LISTEN=127.0.0.1:7392"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("daemon on a taken port, no config.json yet: %s\nwant it to say %q", out, want)
		}
	}
}

// TestMCPEndpointThroughTheDaemon: the daemon serves /mcp and /mcp/<server>
// behind the same Host, Origin and token checks as its API.
func TestMCPEndpointThroughTheDaemon(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	writeConfig(t, home, "alpha")
	d := startDaemon(t, home)

	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	for _, tt := range []struct {
		name, host, origin, token string
		want                      int
	}{
		{"no token", "", "", "", http.StatusUnauthorized},
		{"wrong token", "", "", "sb_wrong", http.StatusUnauthorized},
		{"foreign Host", "evil.example:80", "", d.client.Token, http.StatusForbidden},
		{"foreign Origin", "", "https://evil.example", d.client.Token, http.StatusForbidden},
		{"good", "", "", d.client.Token, http.StatusOK},
	} {
		req, _ := http.NewRequest(http.MethodPost, d.info.Address+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if tt.host != "" {
			req.Host = tt.host
		}
		if tt.origin != "" {
			req.Header.Set("Origin", tt.origin)
		}
		if tt.token != "" {
			req.Header.Set("Authorization", "Bearer "+tt.token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("%s: status %d, want %d", tt.name, resp.StatusCode, tt.want)
		}
		if tt.want == http.StatusUnauthorized && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("%s: no WWW-Authenticate: Bearer", tt.name)
		}
	}

	for _, path := range []string{"/mcp", "/mcp/alpha"} {
		transport := &mcp.StreamableClientTransport{Endpoint: d.info.Address + path,
			HTTPClient: &http.Client{Transport: bearerTransport(d.client.Token)}}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "cursor", Version: "1"}, nil).Connect(t.Context(), transport, nil)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		name := "alpha__echo"
		if path != "/mcp" {
			name = "echo"
		}
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{"text": "hi"}})
		if err != nil || res.IsError {
			t.Errorf("%s: call %s: %v %+v", path, name, err, res)
		}
		cs.Close()
	}

	// Both calls are in the history, with who made them, named the same
	// way: server alpha, tool echo (the name each client used kept).
	var page wire.CallPage
	testutil.Eventually(t, 10*time.Second, "the calls in the history", func() bool {
		var err error
		page, err = d.client.History(t.Context(), url.Values{"server": {"alpha"}, "tool": {"echo"}})
		return err == nil && len(page.Calls) == 2
	})
	for i, name := range []string{"echo", "alpha__echo"} { // newest first
		if c := page.Calls[i]; c.Name != name || c.Tool != "echo" || c.Server != "alpha" || c.Unknown != "" {
			t.Errorf("recorded call %d: name %q, server %q, tool %q, unknown %q; want %s, alpha, echo", i, c.Name, c.Server, c.Tool, c.Unknown, name)
		}
	}
	if p, err := d.client.History(t.Context(), url.Values{"tool": {"alpha__echo"}}); err != nil || len(p.Calls) != 1 || p.Calls[0].Endpoint != "" {
		t.Errorf("history of the name alpha__echo: %+v (%v); want the /mcp call alone", p.Calls, err)
	}
	c := page.Calls[1]
	if c.ClientName != "cursor" || c.ClientLabel != "cli" || c.Outcome != "ok" || c.Method != "tools/call" || c.Duration <= 0 || c.PID == 0 {
		t.Errorf("recorded call: %+v", c)
	}
	full, err := d.client.Call(t.Context(), c.ID)
	if err != nil || !strings.Contains(string(full.Arguments), `"text":"hi"`) || !strings.Contains(full.ResponsePreview, "hi") {
		t.Errorf("recorded call %+v (%v): want its arguments and a preview of the result", full, err)
	}
	code, out, _ := cli(t, home, "history", "--server", "alpha")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != exitOK || len(lines) != 3 || !strings.HasPrefix(lines[0], "TIME") {
		t.Fatalf("switchboard history:\n%s", out)
	}
	for _, line := range lines[1:] { // both calls, the same way: cli · cursor  alpha  tools/call  echo  ok
		if f := strings.Fields(line); len(f) < 8 || f[1] != "cli" || f[2] != "·" || f[3] != "cursor" || f[4] != "alpha" ||
			f[5] != "tools/call" || f[6] != "echo" || f[7] != "ok" || !regexp.MustCompile(`^\d\d:\d\d:\d\d$`).MatchString(f[0]) {
			t.Errorf("switchboard history line %q: want today's clock, cli · cursor, alpha, tools/call, echo, ok", line)
		}
	}
}

type bearerTransport string

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// mcpSession connects a go-sdk client to the daemon's endpoint path.
func mcpSession(t *testing.T, d *daemonProc, path string) *mcp.ClientSession {
	t.Helper()
	return mcpSessionAs(t, d, path, "crash-test", "")
}

// mcpSessionAs connects a go-sdk client named client to the daemon's
// endpoint path, speaking protocol version era ("": the client's default).
func mcpSessionAs(t *testing.T, d *daemonProc, path, client, era string) *mcp.ClientSession {
	t.Helper()
	transport := &mcp.StreamableClientTransport{Endpoint: d.info.Address + path,
		HTTPClient: &http.Client{Transport: bearerTransport(d.client.Token)}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: client, Version: "7"}, nil).Connect(t.Context(), transport,
		&mcp.ClientSessionOptions{ProtocolVersion: era})
	if err != nil {
		t.Fatalf("connecting to %s (%s): %v", path, cmp.Or(era, "default protocol"), err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}
