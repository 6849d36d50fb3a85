package supervisor_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/supervisor"
	"github.com/switchboardhq/switchboard/supervisor/testutil"
)

// A testRemote is a remote MCP server on loopback, made with the go-sdk:
// echo, and block (which returns when the call is cancelled or the test
// says so). It records the headers of the requests it gets.
type testRemote struct {
	srv     *httptest.Server
	server  *mcp.Server
	release chan struct{} // closed to end the block calls
	blocked chan struct{} // gets a value when a block call starts

	mu      sync.Mutex
	headers []http.Header
}

func newTestRemote(t *testing.T, transport supervisor.RemoteTransport, addr string) *testRemote {
	t.Helper()
	r := &testRemote{release: make(chan struct{}), blocked: make(chan struct{}, 8)}
	r.server = mcp.NewServer(&mcp.Implementation{Name: "test-remote", Version: "1"}, nil)
	type echoArgs struct {
		Text string `json:"text"`
	}
	mcp.AddTool(r.server, &mcp.Tool{Name: "echo"}, func(ctx context.Context, req *mcp.CallToolRequest, a echoArgs) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil, nil
	})
	mcp.AddTool(r.server, &mcp.Tool{Name: "block"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		r.blocked <- struct{}{}
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-r.release:
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "released"}}}, nil, nil
		}
	})
	var h http.Handler
	if transport == supervisor.RemoteSSE {
		h = mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return r.server }, nil)
	} else {
		h = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return r.server }, nil)
	}
	r.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.headers = append(r.headers, req.Header.Clone())
		r.mu.Unlock()
		h.ServeHTTP(w, req)
	}))
	if addr != "" {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		r.srv.Listener.Close()
		r.srv.Listener = ln
	}
	r.srv.Start()
	t.Cleanup(r.stop)
	return r
}

var stopOnce sync.Map

func (r *testRemote) stop() {
	if _, done := stopOnce.LoadOrStore(r, true); done {
		return
	}
	select {
	case <-r.release:
	default:
		close(r.release)
	}
	r.srv.CloseClientConnections()
	r.srv.Close()
	for ss := range r.server.Sessions() { // those no client ended (goleak)
		ss.Close()
	}
}

func (r *testRemote) url() string { return r.srv.URL + "/mcp" }

// sawHeader reports whether every request the server got carried name: value.
func (r *testRemote) sawHeader(name, value string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, h := range r.headers {
		if h.Get(name) != value {
			return false
		}
	}
	return len(r.headers) > 0
}

// remoteOptions are fastOptions with an HTTP transport of the test's own,
// whose idle connections are closed at the end (goleak).
func remoteOptions(t *testing.T) supervisor.Options {
	o := fastOptions(t)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	o.RemoteRoundTripper = func(string) http.RoundTripper { return tr }
	return o
}

func remoteSpec(name, url string, transport supervisor.RemoteTransport, headers map[string]string) supervisor.Spec {
	return supervisor.Spec{Name: name, StartTimeout: 10 * time.Second,
		Remote: &supervisor.RemoteSpec{URL: url, Transport: transport, Headers: headers}}
}

func TestRemoteTransports(t *testing.T) {
	for _, tt := range []struct {
		name   string
		serves supervisor.RemoteTransport // what the server speaks
		asked  supervisor.RemoteTransport // what the spec says
		want   supervisor.RemoteTransport // what the connection is
	}{
		{"streamable HTTP", supervisor.RemoteStreamableHTTP, supervisor.RemoteStreamableHTTP, supervisor.RemoteStreamableHTTP},
		{"SSE", supervisor.RemoteSSE, supervisor.RemoteSSE, supervisor.RemoteSSE},
		{"auto finds streamable HTTP", supervisor.RemoteStreamableHTTP, "", supervisor.RemoteStreamableHTTP},
		{"auto falls back to SSE", supervisor.RemoteSSE, supervisor.RemoteAuto, supervisor.RemoteSSE},
	} {
		t.Run(tt.name, func(t *testing.T) {
			remote := newTestRemote(t, tt.serves, "")
			o := remoteOptions(t)
			// The hook sees every request of the connection, with the
			// server's headers on.
			var wrapped, withHeaders atomic.Int32
			o.WrapRemoteHTTP = func(server string, rt http.RoundTripper) http.RoundTripper {
				return roundTripFunc(func(req *http.Request) (*http.Response, error) {
					wrapped.Add(1)
					if server == "r" && req.Header.Get("X-Team") == "a" {
						withHeaders.Add(1)
					}
					return rt.RoundTrip(req)
				})
			}
			s := newSupervisor(t, o)
			apply(t, s, remoteSpec("r", remote.url(), tt.asked, map[string]string{"X-Team": "a", "Authorization": "Bearer s3cret"}))
			res, pid, err := call(t.Context(), s, "r", "echo", map[string]any{"text": "hi"})
			if err != nil {
				t.Fatal(err)
			}
			if got := text(res); got != "hi" || pid != 0 {
				t.Errorf("echo = %q with pid %d, want \"hi\" with pid 0 (a remote has no process)", got, pid)
			}
			if !remote.sawHeader("X-Team", "a") || !remote.sawHeader("Authorization", "Bearer s3cret") {
				t.Error("not every request carried the configured headers")
			}
			if n := wrapped.Load(); n == 0 || withHeaders.Load() != n {
				t.Errorf("WrapRemoteHTTP's transport saw %d requests, %d of them for r with its headers; want all", n, withHeaders.Load())
			}
			st := status(t, s, "r")
			if st.State != supervisor.StateRunning || len(st.Processes) != 1 || st.Processes[0].Transport != string(tt.want) ||
				st.URL != remote.url() {
				t.Errorf("status = %+v, want running over %s at %s", st, tt.want, remote.url())
			}
			var logs []string
			for _, l := range st.Logs {
				logs = append(logs, l.Stream+": "+l.Text)
				if strings.Contains(l.Text, "s3cret") {
					t.Errorf("a log line shows a header's value: %s", l.Text)
				}
			}
			if joined := strings.Join(logs, "\n"); !strings.Contains(joined, "remote: connected over "+string(tt.want)) {
				t.Errorf("logs do not tell the connection:\n%s", joined)
			}
		})
	}
}

// A remote that is down fails calls at once, naming the server; once it is
// up, calls reach it without a restart of anything.
func TestRemoteDownAtStartThenUp(t *testing.T) {
	addr := freedAddr(t)
	s := newSupervisor(t, remoteOptions(t))
	apply(t, s, remoteSpec("down", "http://"+addr+"/mcp", supervisor.RemoteStreamableHTTP, nil))

	start := time.Now()
	_, _, err := call(t.Context(), s, "down", "echo", map[string]any{"text": "x"})
	if err == nil || !strings.Contains(err.Error(), `server "down"`) {
		t.Fatalf("call to a remote that is down = %v, want an error naming the server", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the call failed after %s, want at once", d)
	}
	if logs := status(t, s, "down").Logs; len(logs) == 0 || !strings.Contains(logs[len(logs)-1].Text, "cannot connect") {
		t.Errorf("logs = %+v, want the connection failure", logs)
	}

	newTestRemote(t, supervisor.RemoteStreamableHTTP, addr)
	// A call waits out the backoff; a failing server is tried again after
	// its cool-down, or when started, as here.
	testutil.Eventually(t, 20*time.Second, "a call to the remote once it is up", func() bool {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		res, _, err := call(ctx, s, "down", "echo", map[string]any{"text": "up"})
		if err == nil && text(res) == "up" {
			return true
		}
		if errors.Is(err, supervisor.ErrFailing) {
			_ = s.Start(ctx, "down")
		}
		return false
	})
}

// A remote that goes away during a call fails the call within seconds,
// with an error naming the server, not at the call's deadline.
func TestRemoteGoneMidCall(t *testing.T) {
	remote := newTestRemote(t, supervisor.RemoteStreamableHTTP, "")
	s := newSupervisor(t, remoteOptions(t))
	apply(t, s, remoteSpec("r", remote.url(), supervisor.RemoteStreamableHTTP, nil))
	if _, _, err := call(t.Context(), s, "r", "echo", map[string]any{"text": "x"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	failed := make(chan error, 1)
	go func() {
		_, _, err := call(ctx, s, "r", "block", nil)
		failed <- err
	}()
	select {
	case <-remote.blocked:
	case <-time.After(10 * time.Second):
		t.Fatal("the blocking call did not reach the remote")
	}
	gone := time.Now()
	remote.srv.CloseClientConnections()
	remote.srv.Listener.Close()
	select {
	case err := <-failed:
		if err == nil || !strings.Contains(err.Error(), `server "r"`) {
			t.Errorf("call = %v, want an error naming the server", err)
		}
		if d := time.Since(gone); d > 5*time.Second {
			t.Errorf("the call failed %s after the remote went away", d)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the call still waits 20s after the remote went away")
	}
}

// A remote session that the server ends (HTTP 404) fails the call in
// flight with ErrSessionExpired (the gateway sends it again), is not
// counted as a crash, and the next call gets a new session.
func TestRemoteSessionExpired(t *testing.T) {
	remote := newTestRemote(t, supervisor.RemoteStreamableHTTP, "")
	s := newSupervisor(t, remoteOptions(t))
	apply(t, s, remoteSpec("r", remote.url(), supervisor.RemoteStreamableHTTP, nil))
	if _, _, err := call(t.Context(), s, "r", "echo", map[string]any{"text": "x"}); err != nil {
		t.Fatal(err)
	}
	for ss := range remote.server.Sessions() {
		ss.Close()
	}
	_, _, err := call(t.Context(), s, "r", "echo", map[string]any{"text": "y"})
	if !errors.Is(err, supervisor.ErrSessionExpired) {
		t.Fatalf("call on an expired session = %v, want ErrSessionExpired", err)
	}
	res, _, err := call(t.Context(), s, "r", "echo", map[string]any{"text": "again"})
	if err != nil || text(res) != "again" {
		t.Fatalf("call after the session expired = %v, %v", res, err)
	}
	if st := status(t, s, "r"); st.Restarts != 0 {
		t.Errorf("restarts = %d, want 0: an expired session is no crash", st.Restarts)
	}
}

// A remote server that ends the session it has just made, during the
// handshake (HTTP 404 to the first request carrying the session's id): the
// connection ends by itself, is no crash, and the call gets a new session.
func TestRemoteSessionExpiredWhileConnecting(t *testing.T) {
	remote := newTestRemote(t, supervisor.RemoteStreamableHTTP, "")
	var refused atomic.Bool
	h := remote.srv.Config.Handler
	remote.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method == http.MethodPost && req.Header.Get("Mcp-Session-Id") != "" && refused.CompareAndSwap(false, true) {
			http.NotFound(w, req)
			return
		}
		h.ServeHTTP(w, req)
	})
	s := newSupervisor(t, remoteOptions(t))
	apply(t, s, remoteSpec("r", remote.url(), supervisor.RemoteStreamableHTTP, nil))
	var res *mcp.CallToolResult
	var err error
	for range 2 { // the gateway sends a call again once on ErrSessionExpired
		if res, _, err = call(t.Context(), s, "r", "echo", map[string]any{"text": "x"}); !errors.Is(err, supervisor.ErrSessionExpired) {
			break
		}
	}
	if err != nil || text(res) != "x" {
		t.Fatalf("call = %v, %v", res, err)
	}
	if !refused.Load() {
		t.Fatal("the server never refused the session")
	}
	if !slices.ContainsFunc(status(t, s, "r").Logs, func(l supervisor.LogLine) bool { return strings.Contains(l.Text, "it had just made") }) {
		t.Errorf("no log line says the session ended during the handshake: %v", status(t, s, "r").Logs)
	}
	if st := status(t, s, "r"); st.Restarts != 0 || st.LastError != "" {
		t.Errorf("restarts %d, last error %q: an expired session is no crash", st.Restarts, st.LastError)
	}
}

// A credential in the URL's query (some servers take ?key=) is in no error
// and no log line: they show the URL without its query.
func TestRemoteURLQueryIsNotShown(t *testing.T) {
	addr := freedAddr(t)
	s := newSupervisor(t, remoteOptions(t))
	apply(t, s, remoteSpec("q", "http://"+addr+"/mcp?key=s3cretq", supervisor.RemoteAuto, nil))
	_, _, err := call(t.Context(), s, "q", "echo", nil)
	if err == nil || strings.Contains(err.Error(), "s3cretq") || !strings.Contains(err.Error(), "http://"+addr+"/mcp") {
		t.Errorf("call = %v, want an error with the URL but not its query", err)
	}
	st := status(t, s, "q")
	for _, l := range st.Logs {
		if strings.Contains(l.Text, "s3cretq") {
			t.Errorf("a log line shows the query: %s", l.Text)
		}
	}
	if strings.Contains(st.LastError, "s3cretq") || strings.Contains(st.URL, "s3cretq") || len(st.Logs) == 0 {
		t.Errorf("status = %+v, want logs, and no query in the last error or URL", st)
	}
}

// needsUserTransport fails every request with an error wrapping
// ErrNeedsUser until signed is set, as a sign-in does.
type needsUserTransport struct {
	base   http.RoundTripper
	signed atomic.Bool
}

func (n *needsUserTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !n.signed.Load() {
		return nil, fmt.Errorf("remote needs sign-in: %w", supervisor.ErrNeedsUser)
	}
	return n.base.RoundTrip(req)
}

// A connection that fails with ErrNeedsUser makes the server failing at
// once: no backoff that each call would wait out; Start tries again.
func TestRemoteNeedsUserIsNotRetried(t *testing.T) {
	remote := newTestRemote(t, supervisor.RemoteStreamableHTTP, "")
	o := remoteOptions(t)
	tr := &needsUserTransport{base: o.RemoteRoundTripper("r")}
	o.RemoteRoundTripper = func(string) http.RoundTripper { return tr }
	s := newSupervisor(t, o)
	apply(t, s, remoteSpec("r", remote.url(), supervisor.RemoteStreamableHTTP, nil))
	for i := range 3 {
		start := time.Now()
		_, _, err := call(t.Context(), s, "r", "echo", map[string]any{"text": "x"})
		if !errors.Is(err, supervisor.ErrNeedsUser) || !strings.Contains(err.Error(), "needs sign-in") {
			t.Fatalf("call %d = %v, want the needs-user error", i, err)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("call %d failed after %s, want at once", i, d)
		}
	}
	if st := status(t, s, "r"); st.State != supervisor.StateFailing {
		t.Errorf("state = %s, want failing", st.State)
	}
	tr.signed.Store(true)
	if err := s.Start(t.Context(), "r"); err != nil {
		t.Fatal(err)
	}
	if res, _, err := call(t.Context(), s, "r", "echo", map[string]any{"text": "in"}); err != nil || text(res) != "in" {
		t.Fatalf("call after Start = %v, %v", res, err)
	}
}

// freedAddr is a loopback address where nothing listens: a port the system
// just gave out and the test let go of.
func freedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
