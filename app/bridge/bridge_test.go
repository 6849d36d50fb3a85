package bridge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

// The bridge's own behaviour, against a daemon that is a plain go-sdk
// server and a front (testFront) that mirrors its tools. The bridge run
// with the gateway's front, against a real gateway, is tested in
// app/gateway (bridge_test.go, bridge_init_test.go) and, as switchboard
// connect, in app/e2e.

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// The go-sdk's streamable handler closes idle sessions from a timer.
		goleak.IgnoreAnyFunction("github.com/modelcontextprotocol/go-sdk/mcp.(*StreamableHTTPHandler).ServeHTTP.func1"))
}

// testDaemon is the daemon's endpoint as the bridge sees it: a go-sdk
// server with one tool, whoami, which answers with the name its caller's
// session introduced itself with. restart replaces its handler by a new
// one, which knows none of the sessions; its answer, if set, answers
// every request instead (a refusal).
type testDaemon struct {
	*httptest.Server
	srv     *mcp.Server
	handler atomic.Pointer[http.Handler]
	auth    atomic.Value // the last Authorization header
	answer  atomic.Pointer[cannedAnswer]
}

type cannedAnswer struct {
	status int
	body   string
}

func newTestDaemon(t *testing.T) *testDaemon {
	t.Helper()
	d := &testDaemon{srv: mcp.NewServer(&mcp.Implementation{Name: "daemon", Version: "test"}, nil)}
	mcp.AddTool(d.srv, &mcp.Tool{Name: "whoami"}, func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		name := ""
		if p := req.Session.InitializeParams(); p != nil && p.ClientInfo != nil {
			name = p.ClientInfo.Name
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name}}}, nil, nil
	})
	d.restart()
	d.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.auth.Store(r.Header.Get("Authorization"))
		if a := d.answer.Load(); a != nil {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(a.status)
			io.WriteString(w, a.body)
			return
		}
		(*d.handler.Load()).ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		d.Close()
		// The sessions of a handler replaced by restart outlive it.
		for ss := range d.srv.Sessions() {
			ss.Close()
		}
	})
	return d
}

func (d *testDaemon) restart() {
	var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return d.srv }, nil)
	d.handler.Store(&h)
}

func (d *testDaemon) locate(token string) func(context.Context) (string, string, func() bool, error) {
	return func(context.Context) (string, string, func() bool, error) {
		return d.URL + "/mcp", token, func() bool { return true }, nil
	}
}

// testFront is a Front of the go-sdk alone: it lists the upstream's tools
// once, at Start, and forwards their calls.
type testFront struct {
	acquire func(context.Context) (Lease, error)
	server  *mcp.Server
	tried   chan struct{}
	listed  atomic.Bool
	relists atomic.Int64
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

func newTestFront(acquire func(context.Context) (Lease, error), _ *slog.Logger, version string) Front {
	ctx, cancel := context.WithCancel(context.Background())
	return &testFront{acquire: acquire, server: mcp.NewServer(&mcp.Implementation{Name: "bridge", Version: version}, nil),
		tried: make(chan struct{}), ctx: ctx, cancel: cancel}
}

func (f *testFront) Start() {
	f.wg.Go(func() {
		defer close(f.tried)
		var tools []*mcp.Tool
		err := f.use(f.ctx, func(ctx context.Context, cs *mcp.ClientSession) error {
			res, err := cs.ListTools(ctx, nil)
			if err == nil {
				tools = res.Tools
			}
			return err
		})
		if err != nil {
			return
		}
		for _, tool := range tools {
			f.server.AddTool(tool, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				var res *mcp.CallToolResult
				err := f.use(ctx, func(ctx context.Context, cs *mcp.ClientSession) error {
					var err error
					res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: tool.Name, Arguments: req.Params.Arguments})
					return err
				})
				return res, err
			})
		}
		f.listed.Store(true)
	})
}

func (f *testFront) use(ctx context.Context, fn func(context.Context, *mcp.ClientSession) error) error {
	lease, err := f.acquire(ctx)
	if err != nil {
		return err
	}
	defer lease.Release()
	return lease.Do(ctx, fn)
}

func (f *testFront) Server() *mcp.Server                         { return f.server }
func (f *testFront) Client(impl *mcp.Implementation) *mcp.Client { return mcp.NewClient(impl, nil) }
func (f *testFront) Relist()                                     { f.relists.Add(1) }
func (f *testFront) Tried() <-chan struct{}                      { return f.tried }
func (f *testFront) Listed() bool                                { return f.listed.Load() }
func (f *testFront) Close()                                      { f.cancel(); f.wg.Wait() }

// runBridge runs the bridge with opts (and a testFront) and connects a
// client of the protocol era era to it, returning the connection's error;
// leave closes the client's side and returns what Run returned.
func runBridge(t *testing.T, opts Options, era string) (cs *mcp.ClientSession, leave func() error, connectErr error) {
	t.Helper()
	toBridge, toBridgeW := io.Pipe()
	fromBridge, bridgeOut := io.Pipe()
	opts.In, opts.Out, opts.Version, opts.Front = toBridge, bridgeOut, "test", newTestFront
	ended := make(chan error, 1)
	go func() { ended <- Run(context.Background(), opts) }()
	var once sync.Once
	var runErr error
	leave = func() error {
		once.Do(func() {
			if cs != nil {
				cs.Close()
			}
			toBridgeW.Close()
			select {
			case runErr = <-ended:
			case <-time.After(10 * time.Second):
				t.Error("the bridge did not end when its client left")
			}
			fromBridge.Close()
		})
		return runErr
	}
	t.Cleanup(func() { leave() })
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	cs, connectErr = mcp.NewClient(&mcp.Implementation{Name: "claude-ai", Version: "0.9"}, nil).Connect(ctx,
		&mcp.IOTransport{Reader: fromBridge, Writer: toBridgeW}, &mcp.ClientSessionOptions{ProtocolVersion: era})
	return cs, leave, connectErr
}

func callText(ctx context.Context, cs *mcp.ClientSession, name string) (string, error) {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	if res.IsError {
		return "", errors.New(b.String())
	}
	return b.String(), nil
}

// TestRunRelaysInTheClientsName: the bridge sends its token, and the
// daemon sees the calls of the bridge's client under the client's name
// (not the bridge's own, which its first listing used), for a client of
// each era: initialize, or server/discover with clientInfo in each
// request's _meta.
func TestRunRelaysInTheClientsName(t *testing.T) {
	d := newTestDaemon(t)
	for _, era := range []string{"2025-11-25", ""} {
		t.Run("era="+era, func(t *testing.T) {
			cs, leave, err := runBridge(t, Options{Locate: d.locate("the-token")}, era)
			if err != nil {
				t.Fatal(err)
			}
			who, err := callText(t.Context(), cs, "whoami")
			if err != nil || who != "claude-ai" {
				t.Errorf("whoami through the bridge = %q, %v; want the bridge's client, claude-ai", who, err)
			}
			if auth := d.auth.Load(); auth != "Bearer the-token" {
				t.Errorf("the daemon got Authorization %q, want the bridge's token", auth)
			}
			if err := leave(); err != nil {
				t.Errorf("Run returned %v, want nil", err)
			}
		})
	}
}

// TestRunRefusedAnswersTheClient: a bridge that Switchboard refuses (its
// token, at the daemon), or that gets no token (Locate refuses), answers its
// client's requests at once with the reason, and Run returns the refusal
// when the client leaves.
func TestRunRefusedAnswersTheClient(t *testing.T) {
	d := newTestDaemon(t)
	d.answer.Store(&cannedAnswer{http.StatusUnauthorized, `{"error":"invalid token"}`})
	for _, tt := range []struct {
		name   string
		locate func(context.Context) (string, string, func() bool, error)
		reason []string
	}{
		{"token refused", d.locate("a-revoked-token"), []string{"invalid token", "switchboard clients connect"}},
		{"no token", func(context.Context) (string, string, func() bool, error) {
			return "", "", nil, fmt.Errorf("%w: --client: the label \"cli\" is reserved", ErrRefused)
		}, []string{`the label "cli" is reserved`}},
	} {
		for _, era := range []string{"2025-11-25", ""} {
			t.Run(tt.name+" era="+era, func(t *testing.T) {
				// Reconnect is long: the answers must not wait for it.
				cs, leave, err := runBridge(t, Options{Locate: tt.locate, Reconnect: time.Minute}, era)
				if err == nil {
					_, err = cs.ListTools(t.Context(), nil)
				}
				if err == nil || !strings.Contains(err.Error(), "Switchboard refused the bridge") {
					t.Fatalf("the client got %v, want the refusal", err)
				}
				for _, r := range tt.reason {
					if !strings.Contains(err.Error(), r) {
						t.Errorf("the client got %v, want it to name %q", err, r)
					}
				}
				if err := leave(); !errors.Is(err, ErrRefused) {
					t.Errorf("Run returned %v, want the refusal", err)
				}
			})
		}
	}
}

// TestRunServesWhileTheDaemonIsAway: a daemon that cannot be reached (not
// refused) leaves the client served, with nothing to list, and Run returns
// nil when it leaves.
func TestRunServesWhileTheDaemonIsAway(t *testing.T) {
	locate := func(context.Context) (string, string, func() bool, error) {
		return "", "", nil, errors.New("Switchboard is not running")
	}
	cs, leave, err := runBridge(t, Options{Locate: locate, Reconnect: 200 * time.Millisecond}, "2025-11-25")
	if err != nil {
		t.Fatalf("the client could not initialize: %v", err)
	}
	if err := cs.Ping(t.Context(), nil); err != nil {
		t.Errorf("ping: %v", err)
	}
	if err := leave(); err != nil {
		t.Errorf("Run returned %v, want nil", err)
	}
}

// newTestUpstream is an upstream to d with a testFront, closed with the
// test.
func newTestUpstream(t *testing.T, opts Options) (*upstream, *testFront) {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	u := &upstream{opts: opts, ctx: ctx}
	f := newTestFront(u.Acquire, opts.Logger, "test").(*testFront)
	u.front = f
	t.Cleanup(func() {
		cancel()
		f.Close()
		u.close()
		u.wg.Wait()
	})
	return u, f
}

// whoami calls the test daemon's tool on cs, for a lease's Do.
func whoami(ctx context.Context, cs *mcp.ClientSession) error {
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "whoami", Arguments: map[string]any{}})
	return err
}

// TestUpstreamReconnectsOnUnknownSession: a daemon that does not know the
// bridge's session (it restarted on the same address) answers 404 "session
// not found", which is no refusal: the call is sent again in a new
// session, and the front is asked to list again.
func TestUpstreamReconnectsOnUnknownSession(t *testing.T) {
	d := newTestDaemon(t)
	u, f := newTestUpstream(t, Options{Locate: d.locate(""), Reconnect: 5 * time.Second})
	lease, err := u.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := lease.Do(t.Context(), whoami); err != nil {
		t.Fatalf("a call before the restart: %v", err)
	}
	d.restart()
	if err := lease.Do(t.Context(), whoami); err != nil {
		t.Errorf("a call after the restart: %v, want it sent again in a new session", err)
	}
	if f.relists.Load() == 0 {
		t.Error("the front was not asked to list again after the reconnect")
	}
	if err := u.refused(); err != nil {
		t.Errorf("the unknown session counted as a refusal: %v", err)
	}
}

// TestUpstreamResendsOnSessionDroppedUnderIt: two calls lease the same
// session; the first finds it unknown to the restarted daemon and drops
// it, so the second meets a closed session before its request is written.
// That call too is sent again in the new session, not failed.
func TestUpstreamResendsOnSessionDroppedUnderIt(t *testing.T) {
	d := newTestDaemon(t)
	u, _ := newTestUpstream(t, Options{Locate: d.locate(""), Reconnect: 5 * time.Second})
	first, err := u.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	second, err := u.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if first.Session() != second.Session() {
		t.Fatal("the two leases hold different sessions")
	}
	d.restart()
	if err := first.Do(t.Context(), whoami); err != nil {
		t.Fatalf("the call that found the session unknown: %v", err)
	}
	if err := second.Do(t.Context(), whoami); err != nil {
		t.Errorf("the call on the session dropped under it: %v, want it sent in the new session", err)
	}
}

// TestUpstreamDial: a daemon that cannot be reached is asked for again
// until Reconnect runs out; a refusal is not retried.
func TestUpstreamDial(t *testing.T) {
	for _, tt := range []struct {
		name      string
		err       error
		want      string
		wantCalls func(int64) bool
	}{
		{"unreachable", errors.New("Switchboard is not running"), "cannot reach Switchboard", func(n int64) bool { return n > 1 }},
		{"refused", fmt.Errorf("%w: no token", ErrRefused), "no token", func(n int64) bool { return n == 1 }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int64
			u, _ := newTestUpstream(t, Options{Reconnect: 300 * time.Millisecond,
				Locate: func(context.Context) (string, string, func() bool, error) {
					calls.Add(1)
					return "", "", nil, tt.err
				}})
			_, err := u.Acquire(t.Context())
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Acquire = %v, want an error naming %q", err, tt.want)
			}
			if n := calls.Load(); !tt.wantCalls(n) {
				t.Errorf("Locate called %d times", n)
			}
			if refused := errors.Is(err, ErrRefused); refused != (u.refused() != nil) || refused != errors.Is(tt.err, ErrRefused) {
				t.Errorf("Acquire = %v, noted refusal %v", err, u.refused())
			}
		})
	}
}

// TestBearer: the token goes with every request, and only the daemon's
// refusals are noted as such, with its reason: 401 and 403, and the 404
// of an endpoint it does not serve (an unknown server or profile), not the
// 404 of a session it does not know.
func TestBearer(t *testing.T) {
	for _, tt := range []struct {
		name   string
		status int
		body   string
		want   []string // in the refusal; nil: none
	}{
		{"ok", http.StatusOK, `{}`, nil},
		{"401 of the API", http.StatusUnauthorized, `{"error":"invalid token"}`, []string{"401", "invalid token", "switchboard clients connect"}},
		{"403 as JSON-RPC", http.StatusForbidden, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"the token may not use this endpoint"}}`,
			[]string{"403", "the token may not use this endpoint"}},
		{"403 as text", http.StatusForbidden, "forbidden\n", []string{"403", "forbidden"}},
		{"unknown server", http.StatusNotFound, `{"error":{"code":-32600,"message":"unknown server \"x\"","data":{"server":"x"}}}`, []string{`unknown server "x"`}},
		{"unknown profile", http.StatusNotFound, `{"error":{"code":-32600,"message":"unknown profile \"p\"","data":{"profile":"p"}}}`, []string{`unknown profile "p"`}},
		{"unknown session", http.StatusNotFound, "session not found\n", nil},
		{"404 of something else", http.StatusNotFound, `{"error":{"code":-32600,"message":"gone"}}`, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var auth string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				auth = r.Header.Get("Authorization")
				w.WriteHeader(tt.status)
				io.WriteString(w, tt.body)
			}))
			defer srv.Close()
			note := &refusalNote{}
			client := &http.Client{Transport: bearer{token: "tok", next: http.DefaultTransport, refused: note}}
			resp, err := client.Get(srv.URL + "/mcp")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(body) != tt.body {
				t.Errorf("the caller read %q, want the daemon's body %q", body, tt.body)
			}
			if auth != "Bearer tok" {
				t.Errorf("Authorization = %q", auth)
			}
			refused := note.get()
			if (refused != nil) != (tt.want != nil) {
				t.Fatalf("refusal = %v, want one: %v", refused, tt.want != nil)
			}
			if refused == nil {
				return
			}
			if !errors.Is(refused, ErrRefused) {
				t.Errorf("refusal %v does not wrap ErrRefused", refused)
			}
			for _, w := range tt.want {
				if !strings.Contains(refused.Error(), w) {
					t.Errorf("refusal %q does not name %q", refused, w)
				}
			}
		})
	}
}
