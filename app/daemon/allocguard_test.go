package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app/internal/testutil"
	"github.com/switchboardhq/switchboard/app/tokens"
	"github.com/switchboardhq/switchboard/supervisor/testmcp"
)

// maxDaemonEchoCallAllocation is issue 33's limit on the bytes the whole
// daemon (its HTTP stack, limits, token check, the gateway, history and
// journal) allocates per echo tools/call on /mcp/<server>: the guard
// below fails past it. Measured when it was set: 8.7 KiB per call
// without -race (9.5 under it, 9.7 under Wine), after the fast call's one
// context (supervisor.Lease.DoCancel), the history's reused row values and
// the plain Content-Type's check; 10.6 to 10.8 KiB when it was 13 KiB, and
// 13.2 KiB when the guard was first set at 16 KiB. Raise it only with a
// reason written here.
const maxDaemonEchoCallAllocation = 11 << 10

// maxDaemonEchoCallObjects is the limit on the objects allocated per echo
// call, steadier than the bytes. Measured when it was set: 110 without
// -race, 127 under it, 126 under Wine, after the changes named above
// (131 before them, which this fails); 136 to 139 when it was
// 147, after quick leases (supervisor) and the shared-column INSERT's bare
// parameters (history); 159 to 162 before the token file's watch, the
// scanned JSON-RPC check and the list of open requests (issue 33).
const maxDaemonEchoCallObjects = 122

// raceObjectAllowance and windowsObjectAllowance are the allowances above
// in objects (Windows, under Wine, measured 16 objects and 1 KiB above
// Linux when the limits were last set; 36 objects above when they were
// 147 and 36, 180 objects before issue 33's second round).
const (
	raceObjectAllowance    = 24
	windowsObjectAllowance = 24
)

// raceAllocationAllowance is added to the limit under -race (as make test
// runs): the race detector's sync.Pool drops a quarter of what is put
// back, so pooled buffers are allocated again (the gateway's guard
// allows the same).
const raceAllocationAllowance = 4 << 10

// windowsAllocationAllowance is added to the limit on Windows (the Wine
// lane): the daemon measured 9.7 KiB (126 objects) per call there when
// the limits were last set, against 8.7 KiB (110) on Linux; 16.9 KiB (180)
// against 13.1 KiB before the config watcher's events (fsnotify's on
// Windows, woken by every journal and history write in the data
// directory) ended in the watcher's own goroutine
// (app/config/dirwatch_other.go).
const windowsAllocationAllowance = 4 << 10

// guardDaemonEnv makes this test binary run the daemon (Run, as `serve`
// does) on the data directory it names, until SIGTERM.
const guardDaemonEnv = "SWITCHBOARD_TEST_GUARD_DAEMON"

// runGuardDaemonIfRequested runs the daemon and exits, when this binary
// was started as one (TestMain calls it).
func runGuardDaemonIfRequested() {
	home := os.Getenv(guardDaemonEnv)
	if home == "" {
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	// As serve logs by default: Info, text (here into nothing).
	log := slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}))
	err := Run(ctx, Options{Home: home, Version: "guard", Logger: log, RuntimeStats: true,
		Ready: func(Info) { fmt.Println("ready") }})
	if err != nil {
		fmt.Fprintln(os.Stderr, "daemon:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// guardCalls is how many calls the guard measures, after guardWarmup.
const (
	guardWarmup = 300
	guardCalls  = 1500
)

// TestDaemonEchoCallAllocations is the CI guard on what the whole daemon
// allocates per tools/call: the real daemon (Run, as `switchboard serve`
// runs it, history and journal on) in a process of its own, so that its
// counters (RuntimeStatsPath) hold nothing of the client's; one pooled
// process of the test MCP server behind /mcp/echo; a raw HTTP client on
// one session, with a bearer token, as an MCP client calls.
func TestDaemonEchoCallAllocations(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, kv := range testmcp.Env(testmcp.Options{}) {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	env["GORACE"] = "atexit_sleep_ms=0"
	cfg, _ := json.Marshal(map[string]any{"version": 1, "listen": "127.0.0.1:0", "servers": map[string]any{
		"echo": map[string]any{"command": os.Args[0], "env": env, "pool": map[string]any{"min": 1, "max": 1}}}})
	if err := os.WriteFile(filepath.Join(home, ConfigFile), cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), guardDaemonEnv+"="+home, "HOME="+t.TempDir(), HomeEnv+"="+home, "GORACE=atexit_sleep_ms=0")
	var out testutil.SyncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("daemon output:\n%s", out.String())
		}
	})
	var info Info
	testutil.Eventually(t, 60*time.Second, "daemon.json", func() bool {
		i, err := ReadInfo(home)
		info = i
		return err == nil && i.PID == cmd.Process.Pid
	})
	store, err := tokens.Open(filepath.Join(home, TokensFile))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := store.Ensure("guard")
	if err != nil {
		t.Fatal(err)
	}
	c := &guardClient{http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4, DisableCompression: true}},
		url: info.Address + "/mcp/echo", token: tok.Secret}
	t.Cleanup(c.http.CloseIdleConnections)
	testutil.Eventually(t, 60*time.Second, "a session on /mcp/echo", func() bool { return c.open() == nil })

	id := 10
	calls := func(n int) {
		t.Helper()
		for range n {
			id++
			reply, err := c.post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"guard-hello"}}}`, id))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(reply, []byte(`"id":`+strconv.Itoa(id))) || !bytes.Contains(reply, []byte("guard-hello")) || bytes.Contains(reply, []byte(`"isError":true`)) {
				t.Fatalf("call %d: reply %.300s", id, reply)
			}
		}
	}
	calls(guardWarmup)
	before := c.stats(t, info.Address)
	calls(guardCalls)
	after := c.stats(t, info.Address)

	limit, why := maxDaemonEchoCallAllocation, "maxDaemonEchoCallAllocation (issue 33)"
	if raceBuild {
		limit += raceAllocationAllowance
		why += " + raceAllocationAllowance (-race)"
	}
	if runtime.GOOS == "windows" {
		limit += windowsAllocationAllowance
		why += " + windowsAllocationAllowance"
	}
	objectLimit := maxDaemonEchoCallObjects
	if raceBuild {
		objectLimit += raceObjectAllowance
	}
	if runtime.GOOS == "windows" {
		objectLimit += windowsObjectAllowance
	}
	perCall := float64(after.AllocBytes-before.AllocBytes) / guardCalls
	objectsPerCall := float64(after.AllocObjects-before.AllocObjects) / guardCalls
	t.Logf("the daemon allocated %.1f KiB (%.0f objects) per echo call over %d calls; limit %.1f KiB, %d objects",
		perCall/1024, objectsPerCall, guardCalls, float64(limit)/1024, objectLimit)
	if objectsPerCall > float64(objectLimit) {
		t.Errorf("the daemon allocates %.0f objects per echo call, more than the %d of maxDaemonEchoCallObjects (with its allowances); profile it: "+
			"SWITCHBOARD_BENCH_PROFILE=/tmp/p SWITCHBOARD_BENCH_ROWS=echo-c1 SWITCHBOARD_BENCH_TARGETS=serve make bench-serve, then "+
			"go tool pprof -sample_index=alloc_objects -top /tmp/p/serve-allocs.pprof", objectsPerCall, objectLimit)
	}
	if perCall > float64(limit) {
		t.Errorf("the daemon allocates %.1f KiB per echo call, more than the %.1f KiB of %s; profile it: "+
			"SWITCHBOARD_BENCH_PROFILE=/tmp/p SWITCHBOARD_BENCH_ROWS=echo-c1 SWITCHBOARD_BENCH_TARGETS=serve make bench-serve, then "+
			"go tool pprof -sample_index=alloc_space -top /tmp/p/serve-allocs.pprof", perCall/1024, float64(limit)/1024, why)
	}
}

// guardClient is a raw MCP client of one session: pre-built JSON bodies,
// replies read whole.
type guardClient struct {
	http    *http.Client
	url     string
	token   string
	session string
}

func (c *guardClient) do(method, url, body string) (*http.Response, []byte, error) {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	req.Header = http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"},
		"Mcp-Protocol-Version": {"2025-11-25"}, "Authorization": {"Bearer " + c.token}}
	if c.session != "" {
		req.Header["Mcp-Session-Id"] = []string{c.session}
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp, data, err
}

// open initializes the session, and lists the tools (the gateway lists
// the server first).
func (c *guardClient) open() error {
	c.session = ""
	resp, body, err := c.do(http.MethodPost, c.url, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"guard","version":"1"}}}`)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Mcp-Session-Id") == "" {
		return fmt.Errorf("initialize: status %d: %.300s", resp.StatusCode, body)
	}
	c.session = resp.Header.Get("Mcp-Session-Id")
	if resp, body, err = c.do(http.MethodPost, c.url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil {
		return err
	} else if resp.StatusCode != http.StatusAccepted {
		return fmt.Errorf("notifications/initialized: status %d: %.300s", resp.StatusCode, body)
	}
	reply, err := c.post(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`)
	if err != nil {
		return err
	}
	if !bytes.Contains(reply, []byte(`"name":"echo"`)) {
		return fmt.Errorf("tools/list without echo: %.300s", reply)
	}
	return nil
}

// post sends a request on the session and returns the reply's body.
func (c *guardClient) post(body string) ([]byte, error) {
	resp, reply, err := c.do(http.MethodPost, c.url, body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("status %d: %.300s", resp.StatusCode, reply)
	}
	return reply, nil
}

// stats reads the daemon's RuntimeStatsPath.
func (c *guardClient) stats(t *testing.T, base string) RuntimeStats {
	t.Helper()
	resp, body, err := c.do(http.MethodGet, base+RuntimeStatsPath, "")
	if err != nil {
		t.Fatal(err)
	}
	var st RuntimeStats
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &st) != nil || st.AllocBytes == 0 {
		t.Fatalf("%s: status %d: %.300s", RuntimeStatsPath, resp.StatusCode, body)
	}
	return st
}
