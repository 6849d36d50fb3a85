package gateway_test

// Remote servers through the gateway: the official reference server
// (@modelcontextprotocol/server-everything) in its streamable HTTP and SSE
// modes on loopback, configured as the remote server "r", and a go-sdk
// server for what server-everything cannot show (a session the server
// ends with 404, as the spec says).

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/app/gateway"
	"github.com/switchboardhq/switchboard/app/internal/testutil"
	"github.com/switchboardhq/switchboard/app/record"
	"github.com/switchboardhq/switchboard/supervisor"
)

// freePort returns a loopback port that nothing listens on (for now).
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startEverything runs server-everything in mode ("streamableHttp" or
// "sse") on port and waits until it accepts connections; stop (also run at
// cleanup) kills it. It listens on every interface (it has no host
// setting); the tests reach it on 127.0.0.1.
func startEverything(t *testing.T, env nodeEnv, mode string, port int) (stop func()) {
	t.Helper()
	cmd := exec.Command(env.node, env.everything, mode)
	cmd.Dir = env.dir
	cmd.Env = append(cmd.Environ(), "PORT="+strconv.Itoa(port))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	stop = func() {
		_ = cmd.Process.Kill()
		<-exited
	}
	t.Cleanup(stop)
	testutil.Eventually(t, 30*time.Second, "server-everything "+mode+" listening on "+strconv.Itoa(port), func() bool {
		select {
		case <-exited:
			t.Fatalf("server-everything %s exited before it listened", mode)
		default:
		}
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return stop
}

// newRemoteFixture serves the remote server at url as "r", with cfg's
// settings (its Name is set), through a gateway; tune may change the
// supervisor's options.
func newRemoteFixture(t *testing.T, url string, transport supervisor.RemoteTransport, cfg gateway.ServerConfig,
	tune func(*supervisor.Options)) *fixture {
	t.Helper()
	return newTunedRemoteFixture(t, url, transport, cfg, func(o *supervisor.Options, _ *gateway.Options) {
		if tune != nil {
			tune(o)
		}
	})
}

// newTunedRemoteFixture is newRemoteFixture with tune, when not nil,
// changing the gateway's options too.
func newTunedRemoteFixture(t *testing.T, url string, transport supervisor.RemoteTransport, cfg gateway.ServerConfig,
	tune func(*supervisor.Options, *gateway.Options)) *fixture {
	t.Helper()
	httpTransport := &http.Transport{}
	t.Cleanup(httpTransport.CloseIdleConnections) // after the fixture's own cleanup
	cfg.Name = "r"
	return newTunedFixture(t, "", func(o *supervisor.Options, g *gateway.Options) {
		o.RemoteRoundTripper = func(string) http.RoundTripper { return httpTransport }
		if tune != nil {
			tune(o, g)
		}
	}, []supervisor.Spec{{Name: "r", StartTimeout: 20 * time.Second,
		Remote: &supervisor.RemoteSpec{URL: url, Transport: transport, Headers: map[string]string{"X-Team": "a"}}}}, cfg)
}

// connectTo opens a client session of the session era (2025-11-25) on the
// fixture's path, counting the progress notifications it gets.
func connectTo(t *testing.T, f *fixture, path string, progress *atomic.Int64) *mcp.ClientSession {
	t.Helper()
	return f.connect(t, path, "2025-11-25", &mcp.ClientOptions{ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {
		if progress != nil {
			progress.Add(1)
		}
	}})
}

func TestRemoteEverything(t *testing.T) {
	env := nodeHarness(t)
	for _, tt := range []struct {
		name      string
		mode      string // server-everything's
		path      string // its endpoint
		transport supervisor.RemoteTransport
		want      string // the connection's transport
	}{
		{"streamable HTTP", "streamableHttp", "/mcp", supervisor.RemoteStreamableHTTP, "streamable-http"},
		{"SSE", "sse", "/sse", supervisor.RemoteSSE, "sse"},
		{"auto falls back to SSE", "sse", "/sse", supervisor.RemoteAuto, "sse"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			port := freePort(t)
			startEverything(t, env, tt.mode, port)
			f := newRemoteFixture(t, "http://127.0.0.1:"+strconv.Itoa(port)+tt.path, tt.transport, gateway.ServerConfig{}, nil)

			// A client of the stateless era on /mcp: the remote still gets
			// the version its session negotiated.
			all := f.connect(t, "/mcp", "", nil)
			f.waitTools(t, all, "r__echo", "r__trigger-long-running-operation")
			if got, err := testutil.CallText(t.Context(), all, "r__echo", map[string]any{"message": "via /mcp"}); err != nil || got != "Echo: via /mcp" {
				t.Errorf("r__echo on /mcp = %q, %v", got, err)
			}

			var progress atomic.Int64
			own := connectTo(t, f, "/mcp/r", &progress)
			f.waitTools(t, own, "echo")
			res, err := own.CallTool(t.Context(), &mcp.CallToolParams{Name: "trigger-long-running-operation",
				Arguments: map[string]any{"duration": 0.3, "steps": 3}, Meta: mcp.Meta{"progressToken": "p1"}})
			if err != nil || res.IsError {
				t.Fatalf("trigger-long-running-operation = %v, %v", res, err)
			}
			// All of them, the last one too, which the remote sends just
			// before its result (the gateway counts them as the response
			// stream is read: WrapRemoteHTTP, progress.go's drain); the
			// route ends with the call, so a late one would never come.
			// Waited for: this go-sdk client runs its handler on a
			// goroutine of its own, so CallTool can return before it saw
			// the last one (the TS client, in order, shows that they come
			// before the result: TestTSClientRemoteEverything).
			testutil.Eventually(t, 5*time.Second, "3 progress notifications", func() bool { return progress.Load() >= 3 })
			if n := progress.Load(); n != 3 {
				t.Errorf("the client got %d progress notifications, want 3 of 3", n)
			}

			var servers []string
			for _, c := range f.rec.all() {
				if c.Method == "tools/call" && c.Outcome == record.OutcomeOK {
					servers = append(servers, c.Server+":"+c.Name)
				}
			}
			for _, want := range []string{"r:r__echo", "r:trigger-long-running-operation"} {
				if !slices.Contains(servers, want) {
					t.Errorf("recorded calls %v lack %s", servers, want)
				}
			}
			st, err := f.sup.Status("r")
			if err != nil || st.State != supervisor.StateRunning || len(st.Processes) != 1 || st.Processes[0].Transport != tt.want {
				t.Errorf("status = %+v, %v; want running over %s", st, err, tt.want)
			}
		})
	}
}

// A remote that is down when the daemon starts makes calls fail at once,
// naming the server; once it is up it is connected (after the failing
// cool-down) and listed without a restart.
func TestRemoteEverythingDownAtStart(t *testing.T) {
	env := nodeHarness(t)
	port := freePort(t)
	f := newRemoteFixture(t, "http://127.0.0.1:"+strconv.Itoa(port)+"/mcp", supervisor.RemoteStreamableHTTP, gateway.ServerConfig{},
		func(o *supervisor.Options) { o.FailingCoolDown = 300 * time.Millisecond })
	// Leased for itself, as the gateway does for a call: refused at once.
	start := time.Now()
	_, err := f.sup.Acquire(t.Context(), "r")
	if err == nil || !strings.Contains(err.Error(), `server "r"`) || time.Since(start) > 5*time.Second {
		t.Fatalf("Acquire of a remote that is down = %v after %s, want an error naming the server at once", err, time.Since(start))
	}
	startEverything(t, env, "streamableHttp", port)
	f.waitTools(t, connectTo(t, f, "/mcp", nil), "r__echo")
}

// A remote that goes away during a call fails the call within seconds,
// naming the server.
func TestRemoteEverythingGoneMidCall(t *testing.T) {
	env := nodeHarness(t)
	port := freePort(t)
	stop := startEverything(t, env, "streamableHttp", port)
	f := newRemoteFixture(t, "http://127.0.0.1:"+strconv.Itoa(port)+"/mcp", supervisor.RemoteStreamableHTTP, gateway.ServerConfig{}, nil)
	var progress atomic.Int64
	cs := connectTo(t, f, "/mcp/r", &progress)
	f.waitTools(t, cs, "trigger-long-running-operation")
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "trigger-long-running-operation",
			Arguments: map[string]any{"duration": 60, "steps": 60}, Meta: mcp.Meta{"progressToken": "p"}})
		if err != nil {
			res = &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}
		}
		done <- res
	}()
	testutil.Eventually(t, 20*time.Second, "progress from the long call", func() bool { return progress.Load() > 0 })
	stop()
	gone := time.Now()
	select {
	case res := <-done:
		if !res.IsError || !strings.Contains(testutil.Text(res), `server "r"`) {
			t.Errorf("the call = %+v (%s), want an error naming the server", res, testutil.Text(res))
		}
		if d := time.Since(gone); d > 5*time.Second {
			t.Errorf("the call failed %s after the remote went away", d)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the call still waits 30s after the remote went away")
	}
}

// A slow remote is bounded by the server's timeout.
func TestRemoteEverythingSlow(t *testing.T) {
	env := nodeHarness(t)
	port := freePort(t)
	startEverything(t, env, "streamableHttp", port)
	f := newRemoteFixture(t, "http://127.0.0.1:"+strconv.Itoa(port)+"/mcp", supervisor.RemoteStreamableHTTP,
		gateway.ServerConfig{Timeout: time.Second}, nil)
	cs := connectTo(t, f, "/mcp/r", nil)
	f.waitTools(t, cs, "trigger-long-running-operation")
	start := time.Now()
	got, err := testutil.CallText(t.Context(), cs, "trigger-long-running-operation", map[string]any{"duration": 10, "steps": 1})
	if err == nil || !strings.Contains(err.Error(), `server "r" did not answer within 1s`) {
		t.Errorf("a call slower than the timeout = %q, %v", got, err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the call returned after %s, want about 1s", d)
	}
}

// A remote session the server ends (404) is started again and the call
// sent again: the client sees nothing.
func TestRemoteSessionExpiredIsInvisible(t *testing.T) {
	server := mcp.NewServer(&mcp.Implementation{Name: "expiring", Version: "1"}, nil)
	type echoArgs struct {
		Text string `json:"text"`
	}
	mcp.AddTool(server, &mcp.Tool{Name: "echo"}, func(ctx context.Context, req *mcp.CallToolRequest, a echoArgs) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil, nil
	})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		for ss := range server.Sessions() {
			ss.Close()
		}
	})
	f := newRemoteFixture(t, srv.URL, supervisor.RemoteStreamableHTTP, gateway.ServerConfig{}, nil)
	cs := connectTo(t, f, "/mcp/r", nil)
	f.waitTools(t, cs, "echo")
	if got, err := testutil.CallText(t.Context(), cs, "echo", map[string]any{"text": "one"}); err != nil || got != "one" {
		t.Fatalf("echo = %q, %v", got, err)
	}
	for ss := range server.Sessions() {
		ss.Close()
	}
	if got, err := testutil.CallText(t.Context(), cs, "echo", map[string]any{"text": "two"}); err != nil || got != "two" {
		t.Fatalf("echo after the remote ended its session = %q, %v; want it sent again on a new session", got, err)
	}
	if st, _ := f.sup.Status("r"); st.Restarts != 0 {
		t.Errorf("restarts = %d, want 0", st.Restarts)
	}
}
