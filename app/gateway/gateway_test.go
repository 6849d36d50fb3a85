package gateway_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/switchboardhq/switchboard/app/gateway"
	"github.com/switchboardhq/switchboard/app/internal/testutil"
	"github.com/switchboardhq/switchboard/app/record"
	"github.com/switchboardhq/switchboard/supervisor"
	"github.com/switchboardhq/switchboard/supervisor/confine"
	"github.com/switchboardhq/switchboard/supervisor/testmcp"
)

func TestMain(m *testing.M) {
	testmcp.RunIfRequested()
	supervisor.RunReaperIfRequested()
	confine.RunIfRequested() // the confining launcher (confined_node_linux_test.go)
	runBenchGatewayIfRequested()
	goleak.VerifyTestMain(m,
		// The go-sdk's streamable handler closes idle sessions from a timer.
		goleak.IgnoreAnyFunction("github.com/modelcontextprotocol/go-sdk/mcp.(*StreamableHTTPHandler).ServeHTTP.func1"))
}

type recorder struct {
	mu       sync.Mutex
	calls    []record.Call
	started  []record.Call
	progress []watchedProgress
}

type watchedProgress struct {
	call record.Call
	gateway.CallProgress
}

// CallProgress makes the test recorder a gateway.CallWatcher.
func (r *recorder) CallProgress(c record.Call, p gateway.CallProgress) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.progress = append(r.progress, watchedProgress{c, p})
}

func (r *recorder) allProgress() []watchedProgress {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.progress)
}

// CallStarted makes the test recorder a gateway.CallWatcher.
func (r *recorder) CallStarted(c record.Call) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.started = append(r.started, c)
}

func (r *recorder) allStarted() []record.Call {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.started)
}

func (r *recorder) RecordCall(c record.Call) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, c)
}

func (r *recorder) all() []record.Call {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

type fixture struct {
	sup *supervisor.Supervisor
	gw  *gateway.Gateway
	url string
	rec *recorder
}

func testEnv(o testmcp.Options) map[string]string {
	env := map[string]string{"GORACE": "atexit_sleep_ms=0"}
	for _, kv := range testmcp.Env(o) {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	return env
}

// newFixture runs a gateway in front of a real supervisor running the test
// MCP server under each name (see newSpecFixture for other servers).
func newFixture(t *testing.T, servers ...gateway.ServerConfig) *fixture {
	t.Helper()
	var specs []supervisor.Spec
	for _, s := range servers {
		specs = append(specs, supervisor.Spec{Name: s.Name, Command: os.Args[0],
			Env: testEnv(testmcp.Options{Name: s.Name}), Pool: supervisor.PoolSpec{Mode: s.Mode, Max: 2}})
	}
	return newSpecFixture(t, "", specs, servers...)
}

// connect opens a client session on path in the given protocol era.
func (f *fixture) connect(t *testing.T, path, version string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, opts)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: f.url + path},
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect %s (%s): %v", path, version, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// waitTools waits until path lists want (the gateway lists servers in the
// background after Sync).
func (f *fixture) waitTools(t *testing.T, cs *mcp.ClientSession, want ...string) []*mcp.Tool {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := cs.ListTools(t.Context(), nil)
		if err == nil {
			var names []string
			for _, tool := range res.Tools {
				names = append(names, tool.Name)
			}
			ok := true
			for _, w := range want {
				ok = ok && slices.Contains(names, w)
			}
			if ok {
				return res.Tools
			}
			if time.Now().After(deadline) {
				t.Fatalf("tools %v lack %v", names, want)
			}
		} else if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// text is the text of res; "" for a nil res, so that a test reporting a
// failed call with text(res) reports the call's error instead of panicking.
func text(res *mcp.CallToolResult) string {
	if res == nil {
		return ""
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

var eras = []string{"2025-11-25", "2025-03-26", "2026-07-28"}

func TestAggregatedAndPerServerEndpoints(t *testing.T) {
	f := newFixture(t, gateway.ServerConfig{Name: "alpha"}, gateway.ServerConfig{Name: "beta", DisabledTools: []string{"crash"}})
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			agg := f.connect(t, "/mcp", era, nil)
			tools := f.waitTools(t, agg, "alpha__echo", "beta__echo", "alpha__crash")
			for _, tool := range tools {
				if tool.Name == "beta__crash" {
					t.Error("disabled tool beta/crash is listed on /mcp")
				}
			}
			res, err := agg.CallTool(t.Context(), &mcp.CallToolParams{Name: "beta__echo", Arguments: map[string]any{"text": "via " + era}})
			if err != nil || text(res) != "via "+era {
				t.Fatalf("call beta__echo: %v %v", res, err)
			}
			res, err = agg.CallTool(t.Context(), &mcp.CallToolParams{Name: "beta__crash"})
			if err == nil && !res.IsError {
				t.Error("a disabled tool was called")
			}

			one := f.connect(t, "/mcp/alpha", era, nil)
			f.waitTools(t, one, "echo", "sleep")
			res, err = one.CallTool(t.Context(), &mcp.CallToolParams{Name: "env", Arguments: map[string]any{"name": "SWITCHBOARD_TESTMCP_NAME"}})
			if err != nil || text(res) != "alpha" {
				t.Fatalf("/mcp/alpha reached %q (%v), want the alpha server", text(res), err)
			}
			if init := agg.InitializeResult(); init == nil || init.ServerInfo == nil || init.ServerInfo.Name != "switchboard" {
				t.Errorf("server info = %+v, want Switchboard's", init)
			} else if init.ProtocolVersion != era {
				t.Errorf("negotiated %s, want %s", init.ProtocolVersion, era)
			}
		})
	}

	resp, err := http.Get(f.url + "/mcp/nosuch")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown server endpoint: %d, want 404", resp.StatusCode)
	}
}

// TestPerServerFidelity compares what /mcp/<server> says with what the
// server says over stdio directly.
func TestPerServerFidelity(t *testing.T) {
	f := newFixture(t, gateway.ServerConfig{Name: "alpha"})
	cmd := exec.Command(os.Args[0])
	for k, v := range testEnv(testmcp.Options{Name: "alpha"}) {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Env = append(os.Environ(), cmd.Env...)
	// The same era on both sides: the 2026-07-28 era adds per-hop fields
	// (resultType, the server's info in _meta) that are the gateway's own.
	direct, err := mcp.NewClient(&mcp.Implementation{Name: "direct"}, nil).Connect(t.Context(), &mcp.CommandTransport{Command: cmd},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	via := f.connect(t, "/mcp/alpha", "2025-11-25", nil)
	f.waitTools(t, via, "echo")

	asJSON := func(v any) any {
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var out any
		json.Unmarshal(data, &out)
		return out
	}
	want, err := direct.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := via.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(asJSON(want.Tools), asJSON(got.Tools)); diff != "" {
		t.Errorf("tools/list differs (-direct +gateway):\n%s", diff)
	}
	args := map[string]any{"text": "same"}
	wantRes, err := direct.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	gotRes, err := via.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(asJSON(wantRes), asJSON(gotRes)); diff != "" {
		t.Errorf("tools/call result differs (-direct +gateway):\n%s", diff)
	}
}

func TestProgressReachesTheCaller(t *testing.T) {
	f := newFixture(t, gateway.ServerConfig{Name: "alpha"})
	opts, progress := countProgress("my-token")
	cs := f.connect(t, "/mcp", "2025-11-25", opts)
	f.waitTools(t, cs, "alpha__sleep")
	params := &mcp.CallToolParams{Name: "alpha__sleep", Arguments: map[string]any{"ms": 450}}
	params.SetProgressToken("my-token")
	if _, err := cs.CallTool(t.Context(), params); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 5*time.Second, "several progress notifications with the caller's token", func() bool {
		return progress.Load() >= 2
	})
}

// countProgress returns client options that count the progress
// notifications carrying token, and that count.
func countProgress(token string) (*mcp.ClientOptions, *atomic.Int64) {
	var n atomic.Int64
	return &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			if req.Params.ProgressToken == token {
				n.Add(1)
			}
		},
	}, &n
}

func TestCancellationAndCrashAreReportedPromptly(t *testing.T) {
	f := newFixture(t, gateway.ServerConfig{Name: "alpha"})
	cs := f.connect(t, "/mcp", "2025-11-25", nil)
	f.waitTools(t, cs, "alpha__hang")

	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "alpha__hang"}); err == nil {
		t.Fatal("hang returned")
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("cancelled call returned after %s", took)
	}

	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__crash", Arguments: map[string]any{"code": 9, "stderr": "kaboom"}})
	if err != nil {
		t.Fatalf("crash: protocol error %v, want a tool error result", err)
	}
	if !res.IsError || !strings.Contains(text(res), `"alpha"`) || !strings.Contains(text(res), "exit status 9") || !strings.Contains(text(res), "kaboom") {
		t.Errorf("crash result = %q (isError %v), want the server, exit status and stderr", text(res), res.IsError)
	}
	res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": "back"}})
	if err != nil || text(res) != "back" {
		t.Errorf("after the crash: %q %v", text(res), err)
	}

	var outcomes []string
	for _, c := range f.rec.all() {
		if c.Method == "tools/call" {
			outcomes = append(outcomes, c.Name+":"+c.Outcome)
			if c.ClientLabel != "test-client" || c.ClientName != "test-client" || c.Server != "alpha" {
				t.Errorf("recorded call lacks who and where: %+v", c)
			}
		}
	}
	for _, want := range []string{"alpha__crash:server_unavailable", "alpha__echo:ok"} {
		if !slices.Contains(outcomes, want) {
			t.Errorf("recorded outcomes %v lack %s", outcomes, want)
		}
	}
}

func TestSessionModeLeasesAProcessPerClientSession(t *testing.T) {
	f := newFixture(t, gateway.ServerConfig{Name: "sess", Mode: supervisor.ModeSession})
	pidOf := func(cs *mcp.ClientSession) string {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "pid"})
		if err != nil {
			t.Fatal(err)
		}
		return text(res)
	}
	a := f.connect(t, "/mcp/sess", "2025-11-25", nil)
	b := f.connect(t, "/mcp/sess", "2025-11-25", nil)
	f.waitTools(t, a, "pid")
	pa, pb := pidOf(a), pidOf(b)
	if pa == pb {
		t.Fatalf("two client sessions share process %s in session mode", pa)
	}
	if again := pidOf(a); again != pa {
		t.Errorf("a session's calls moved from process %s to %s", pa, again)
	}
	a.Close()
	testutil.Eventually(t, 10*time.Second, "one leased process after closing one session", func() bool {
		return f.leased(t, "sess") == 1
	})
}

func TestLegacySSEClient(t *testing.T) {
	f := newFixture(t, gateway.ServerConfig{Name: "alpha"})
	for _, path := range []string{"/sse", "/sse/alpha"} {
		c := mcp.NewClient(&mcp.Implementation{Name: "old-client", Version: "1"}, nil)
		cs, err := c.Connect(t.Context(), &mcp.SSEClientTransport{Endpoint: f.url + path}, nil)
		if err != nil {
			t.Fatalf("SSE connect %s: %v", path, err)
		}
		want := "alpha__echo"
		if path != "/sse" {
			want = "echo"
		}
		f.waitTools(t, cs, want)
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: want, Arguments: map[string]any{"text": "old school"}})
		if err != nil || text(res) != "old school" {
			t.Errorf("%s: call: %q %v", path, text(res), err)
		}
		// A big result is spliced into the SSE stream as into a POST's.
		big := "big"
		if path == "/sse" {
			big = "alpha__big"
		}
		res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: big, Arguments: map[string]any{"kb": 300}})
		if err != nil || res.IsError || len(text(res)) != 300*1024 || !strings.HasPrefix(text(res), "0123456789abcdef") {
			t.Errorf("%s: big: %d bytes, %v", path, len(text(res)), err)
		}
		cs.Close()
	}
}

// TestUnknownEndpoints: /mcp/<server>, /mcp/p/<profile>, /sse/<server> and
// /sse/p/<profile> of a server or profile the gateway does not serve answer
// 404 with a JSON-RPC error naming it (with the id of a request POSTed
// outside a session), and a go-sdk client shows that message.
func TestUnknownEndpoints(t *testing.T) {
	f := newFixture(t, gateway.ServerConfig{Name: "alpha"})
	f.gw.SetProfiles([]gateway.ProfileConfig{{Name: "coding", Servers: []string{"alpha"}}})
	const initialize = `{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	type rpcError struct {
		JSONRPC string `json:"jsonrpc"`
		ID      any    `json:"id"`
		Error   struct {
			Code    int64             `json:"code"`
			Message string            `json:"message"`
			Data    map[string]string `json:"data"`
		} `json:"error"`
	}
	for _, tc := range []struct {
		path, message string
		data          map[string]string
	}{
		{"/mcp/nosuch", `unknown server "nosuch": it is not configured or not enabled`, map[string]string{"server": "nosuch"}},
		{"/mcp/p/nope", `unknown profile "nope": it is not in config.json`, map[string]string{"profile": "nope"}},
		{"/sse/nosuch", `unknown server "nosuch": it is not configured or not enabled`, map[string]string{"server": "nosuch"}},
		{"/sse/p/nope", `unknown profile "nope": it is not in config.json`, map[string]string{"profile": "nope"}},
		{"/mcp/p/", `a profile name is missing: a profile's endpoint is /mcp/p/<profile>`, map[string]string{"profile": ""}},
		{"/mcp/p", `a profile name is missing: a profile's endpoint is /mcp/p/<profile>`, map[string]string{"profile": ""}},
		{"/sse/p", `a profile name is missing: a profile's endpoint is /sse/p/<profile>`, map[string]string{"profile": ""}},
		{"/sse/p/", `a profile name is missing: a profile's endpoint is /sse/p/<profile>`, map[string]string{"profile": ""}},
	} {
		for _, req := range []struct {
			name, method, session, body string
			id                          any
		}{
			{"initialize", http.MethodPost, "", initialize, float64(7)},
			{"in a session", http.MethodPost, "s-1", `{"jsonrpc":"2.0","id":8,"method":"tools/list"}`, nil},
			{"GET", http.MethodGet, "", "", nil},
		} {
			t.Run(tc.path+" "+req.name, func(t *testing.T) {
				r, _ := http.NewRequestWithContext(t.Context(), req.method, f.url+tc.path, strings.NewReader(req.body))
				r.Header.Set("Content-Type", "application/json")
				r.Header.Set("Accept", "application/json, text/event-stream")
				if req.session != "" {
					r.Header.Set("Mcp-Session-Id", req.session)
				}
				resp, err := http.DefaultClient.Do(r)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				var got rpcError
				body, _ := io.ReadAll(resp.Body)
				if resp.StatusCode != http.StatusNotFound || resp.Header.Get("Content-Type") != "application/json" || json.Unmarshal(body, &got) != nil {
					t.Fatalf("%d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
				}
				want := rpcError{JSONRPC: "2.0", ID: req.id}
				want.Error.Code, want.Error.Message, want.Error.Data = -32600, tc.message, tc.data
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("the answer differs (-want +got):\n%s", diff)
				}
			})
		}
	}
	// What a go-sdk client shows; the served endpoints still serve.
	for path, want := range map[string]string{
		"/mcp/nosuch": `unknown server "nosuch": it is not configured or not enabled`,
		"/mcp/p/nope": `unknown profile "nope": it is not in config.json`,
	} {
		c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil)
		_, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: f.url + path}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("a go-sdk client of %s: %v, want an error with %q", path, err, want)
		}
	}
	for _, path := range []string{"/mcp/alpha", "/mcp/p/coding"} {
		f.connect(t, path, "2025-11-25", nil)
	}
}
