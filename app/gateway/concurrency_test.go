package gateway_test

import (
	"context"
	"net/http/httptest"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/switchboardhq/switchboard/app/gateway"
	"github.com/switchboardhq/switchboard/app/internal/testutil"
	"github.com/switchboardhq/switchboard/supervisor"
	"github.com/switchboardhq/switchboard/supervisor/testmcp"
)

// leased counts the leased processes of server.
func (f *fixture) leased(t *testing.T, server string) int {
	t.Helper()
	st, err := f.sup.Status(server)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range st.Processes {
		if p.Leased {
			n++
		}
	}
	return n
}

// TestSessionModeConcurrentFirstCalls: the first calls of one client
// session, sent at once, share one leased process; none is killed by a
// lease taken in parallel and released.
func TestSessionModeConcurrentFirstCalls(t *testing.T) {
	f := newFixture(t, gateway.ServerConfig{Name: "sess", Mode: supervisor.ModeSession})
	cs := f.connect(t, "/mcp/sess", "2025-11-25", nil)
	f.waitTools(t, cs, "pid")
	const calls = 20
	pids := make([]string, calls)
	var wg sync.WaitGroup
	for i := range calls {
		wg.Go(func() {
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "pid"})
			switch {
			case err != nil:
				t.Errorf("call %d: %v", i, err)
			case res.IsError:
				t.Errorf("call %d: %s", i, text(res))
			default:
				pids[i] = text(res)
			}
		})
	}
	wg.Wait()
	for i, pid := range pids {
		if pid != pids[0] {
			t.Errorf("call %d ran on process %s, call 0 on %s: one session, one process", i, pid, pids[0])
		}
	}
	if n := f.leased(t, "sess"); n != 1 {
		t.Errorf("%d processes are leased to one session, want 1", n)
	}
}

// TestSessionModeIdleLeaseIsReleased: a session that makes no call for the
// pool's idle timeout gives its process back, so an abandoned session does
// not hold it until the session times out; its next call leases again.
func TestSessionModeIdleLeaseIsReleased(t *testing.T) {
	spec := supervisor.Spec{Name: "sess", Command: os.Args[0], Env: testEnv(testmcp.Options{Name: "sess"}),
		Pool: supervisor.PoolSpec{Mode: supervisor.ModeSession, Max: 2}}
	f := newSpecFixture(t, "", []supervisor.Spec{spec},
		gateway.ServerConfig{Name: "sess", Mode: supervisor.ModeSession, IdleTimeout: 300 * time.Millisecond})
	call := func(cs *mcp.ClientSession) string {
		t.Helper()
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "pid"})
		if err != nil || res.IsError {
			t.Fatalf("pid: %v %+v", err, res)
		}
		return text(res)
	}
	a := f.connect(t, "/mcp/sess", "2025-11-25", nil)
	b := f.connect(t, "/mcp/sess", "2025-11-25", nil)
	f.waitTools(t, a, "pid")
	if pa, pb := call(a), call(b); pa == pb {
		t.Fatalf("two sessions share process %s in session mode", pa)
	}
	// Both sessions go quiet (abandoned): a third client gets a process.
	testutil.Eventually(t, 10*time.Second, "idle leases to be released", func() bool { return f.leased(t, "sess") == 0 })
	c := f.connect(t, "/mcp/sess", "2025-11-25", nil)
	call(c)
	call(a) // a quiet session leases again when it comes back
}

// TestSyncWhileCalling edits the servers' settings while calls run; -race
// checks that the settings are not read and written at once.
func TestSyncWhileCalling(t *testing.T) {
	f := newFixture(t, gateway.ServerConfig{Name: "alpha"})
	cs := f.connect(t, "/mcp/alpha", "2025-11-25", nil)
	f.waitTools(t, cs, "echo")
	ctx, stop := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	var answered atomic.Int64
	for range 4 {
		wg.Go(func() {
			for ctx.Err() == nil {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
				if err != nil && ctx.Err() == nil {
					t.Errorf("echo: %v", err)
					return
				}
				if err == nil && text(res) != "x" {
					t.Errorf("echo = %q", text(res))
				}
				answered.Add(1)
			}
		})
	}
	for i := range 50 {
		before := answered.Load()
		f.gw.Sync([]gateway.ServerConfig{{Name: "alpha", Timeout: time.Duration(i+1) * time.Minute, IdleTimeout: time.Duration(i+1) * time.Second}})
		// Calls interleave with the edits: the next edit waits for one.
		testutil.Eventually(t, 10*time.Second, "a call answered after the edit", func() bool { return answered.Load() > before })
	}
	stop()
	wg.Wait()
}

// TestSubscribeDoesNotWaitForAnotherServer: a server slow to answer a
// subscription holds up no subscription to another server.
func TestSubscribeDoesNotWaitForAnotherServer(t *testing.T) {
	f := newFixture(t, gateway.ServerConfig{Name: "alpha", Timeout: time.Minute}, gateway.ServerConfig{Name: "beta"})
	slow := f.connect(t, "/mcp/alpha", "2025-11-25", nil)
	f.waitTools(t, slow, "echo")
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	wg.Go(func() { _ = slow.Subscribe(ctx, &mcp.SubscribeParams{URI: testmcp.URIHangSubscribe}) })
	testutil.Eventually(t, 10*time.Second, "alpha to be answering the subscription", func() bool {
		st, _ := f.sup.Status("alpha")
		for _, p := range st.Processes {
			if p.InFlight > 0 {
				return true
			}
		}
		return false
	})
	for _, path := range []string{"/mcp/beta", "/mcp"} {
		cs := f.connect(t, path, "2025-11-25", nil)
		sctx, scancel := context.WithTimeout(t.Context(), 5*time.Second)
		start := time.Now()
		err := cs.Subscribe(sctx, &mcp.SubscribeParams{URI: "test://items/3"})
		scancel()
		if err != nil {
			t.Errorf("subscribe on %s while alpha hangs: %v (after %s)", path, err, time.Since(start))
		}
	}
}

// TestCloseEndsSessionLeaseReleasers: the goroutine that gives a session's
// process back when the session ends belongs to the gateway: Close ends it
// even though the client never closed its session.
func TestCloseEndsSessionLeaseReleasers(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	spec := supervisor.Spec{Name: "sess", Command: os.Args[0], Env: testEnv(testmcp.Options{Name: "sess"}),
		Pool: supervisor.PoolSpec{Mode: supervisor.ModeSession, Max: 2}}
	sup, gw, srv, cs := leakyClient(t, spec, gateway.ServerConfig{Name: "sess", Mode: supervisor.ModeSession}, "pid")
	if res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "pid"}); err != nil || res.IsError {
		t.Fatalf("pid: %v %+v", err, res)
	}
	// The daemon stops: the gateway closes before the client does.
	srv.CloseClientConnections()
	srv.Close()
	gw.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := sup.Close(ctx); err != nil {
		t.Error(err)
	}
	cs.Close()
	goleak.VerifyNone(t, ignore,
		goleak.IgnoreAnyFunction("github.com/modelcontextprotocol/go-sdk/mcp.(*StreamableHTTPHandler).ServeHTTP.func1"))
}

// TestSessionTimeoutSetting: a client session idle for the session timeout
// is closed (its next request gets 404), a session whose requests come
// closer together than the timeout stays open, and a changed timeout
// applies to sessions already open.
func TestSessionTimeoutSetting(t *testing.T) {
	// The timeout is 10 times the client's pace, so that a loaded machine
	// has room; a 404 still fails the test unless the client itself saw
	// a gap of a whole timeout (see keptOpen).
	const timeout, pace = time.Second, 100 * time.Millisecond
	f := newFixture(t, gateway.ServerConfig{Name: "alpha"})
	f.waitTools(t, f.connect(t, "/mcp", "2025-11-25", nil), "alpha__echo")
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`
	// keptOpen opens a session under the default timeout, changes the
	// timeout, and sends requests pace apart. It is false when a request
	// came back closed after a gap the client measured (from sending the
	// previous request, before which the session cannot have gone idle, to
	// this answer) of at least the timeout: the machine stalled, and the
	// 404 was due. Any other 404 fails the test.
	keptOpen := func() (h map[string]string, ok bool) {
		f.gw.SetSessionTimeout(0)
		h = mcpHeaders("2025-11-25")
		h["Mcp-Session-Id"] = f.rawSession(t, "/mcp/alpha")
		if r := f.send(t, "POST", "/mcp/alpha", h, list); r.status != 200 {
			t.Fatalf("tools/list: %d %s", r.status, r.body)
		}
		last := time.Now()
		f.gw.SetSessionTimeout(timeout)
		for i := range 7 {
			if i > 0 {
				time.Sleep(pace) // the client's pace, not a wait for something
			}
			sent := time.Now()
			r := f.send(t, "POST", "/mcp/alpha", h, list)
			gap := time.Since(last)
			switch {
			case r.status == 200:
				last = sent
				continue
			case r.status == 404 && gap >= timeout:
				t.Logf("request %d came back closed %s after the one before was sent (timeout %s): the machine stalled; again", i, gap, timeout)
				return h, false
			}
			t.Fatalf("a session in use was closed (request %d, %s after the one before was sent, timeout %s): %d %s", i, gap, timeout, r.status, r.body)
		}
		return h, true
	}
	var h map[string]string
	for attempt := 1; ; attempt++ {
		var ok bool
		if h, ok = keptOpen(); ok {
			break
		}
		if attempt == 3 {
			t.Fatalf("the machine stalled for a whole timeout (%s) in %d attempts: nothing shown", timeout, attempt)
		}
	}
	// Left idle, it is closed: watched without a request, which would
	// count as activity; then a request gets 404.
	testutil.Eventually(t, 20*time.Second, "the idle session to be closed", func() bool {
		return !gateway.SessionOpen(f.gw, h["Mcp-Session-Id"])
	})
	if r := f.send(t, "POST", "/mcp/alpha", h, list); r.status != 404 {
		t.Fatalf("a request on the closed session: %d %s, want 404", r.status, r.body)
	}
}

// TestSessionModeCancelledFirstCallDoesNotFailTheNext: when a session's
// first call, which is acquiring its process, is cancelled, the call of the
// same session waiting for that acquisition acquires for itself instead of
// failing with the other call's cancellation.
func TestSessionModeCancelledFirstCallDoesNotFailTheNext(t *testing.T) {
	spec := supervisor.Spec{Name: "sess", Command: os.Args[0], Env: testEnv(testmcp.Options{Name: "sess"}),
		Pool: supervisor.PoolSpec{Mode: supervisor.ModeSession, Max: 1}}
	f := newSpecFixture(t, "", []supervisor.Spec{spec}, gateway.ServerConfig{Name: "sess", Mode: supervisor.ModeSession})
	holder := f.connect(t, "/mcp/sess", "2025-11-25", nil)
	f.waitTools(t, holder, "pid")
	if res, err := holder.CallTool(t.Context(), &mcp.CallToolParams{Name: "pid"}); err != nil || res.IsError {
		t.Fatalf("pid: %v %+v", err, res)
	}
	waiting := func(n int) func() bool {
		return func() bool { st, err := f.sup.Status("sess"); return err == nil && st.Waiting == n }
	}
	// The pool's only process is leased to holder: the other session's
	// first call waits for one.
	cs := f.connect(t, "/mcp/sess", "2025-11-25", nil)
	first, cancelFirst := context.WithCancel(t.Context())
	firstDone := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(first, &mcp.CallToolParams{Name: "pid"})
		firstDone <- err
	}()
	testutil.Eventually(t, 10*time.Second, "the first call to wait for a process", waiting(1))
	type result struct {
		res *mcp.CallToolResult
		err error
	}
	secondDone := make(chan result, 1)
	go func() {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "pid"})
		secondDone <- result{res, err}
	}()
	// The second call waits for the first's acquisition; the first is
	// cancelled (its client gave up), and the second takes its place.
	testutil.Eventually(t, 10*time.Second, "the gateway to have the second call", func() bool {
		return len(f.rec.allStarted()) == 3 // holder's, the first, the second
	})
	cancelFirst()
	<-firstDone
	select {
	case r := <-secondDone:
		t.Fatalf("the second call ended with the first's cancellation: %v %q", r.err, text(r.res))
	default:
	}
	testutil.Eventually(t, 10*time.Second, "the second call to wait for a process", waiting(1))
	holder.Close() // gives its process back: the pool starts one for cs
	r := <-secondDone
	if r.err != nil || r.res.IsError {
		t.Fatalf("the second call: %v %q", r.err, text(r.res))
	}
}

// leakyClient sets up what the Close tests need outside newFixture, which
// closes everything itself: a supervisor running spec, a gateway serving
// it as cfg over HTTP, and a client session on /mcp/<name> that lists
// tool. The test closes each part, in the order it is about.
func leakyClient(t *testing.T, spec supervisor.Spec, cfg gateway.ServerConfig, tool string) (*supervisor.Supervisor, *gateway.Gateway, *httptest.Server, *mcp.ClientSession) {
	t.Helper()
	sup, err := supervisor.New(t.Context(), supervisor.Options{StateDir: t.TempDir(), Env: os.Environ(),
		StopGrace: 500 * time.Millisecond, SampleInterval: -1, HealthInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	gw := gateway.New(gateway.Options{Backends: gateway.FromSupervisor(sup)})
	if err := sup.Apply(t.Context(), []supervisor.Spec{spec}); err != nil {
		t.Fatal(err)
	}
	gw.Sync([]gateway.ServerConfig{cfg})
	srv := httptest.NewServer(gw.Handler())
	f := &fixture{sup: sup, gw: gw, url: srv.URL}
	c := mcp.NewClient(&mcp.Implementation{Name: "leaky", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp/" + spec.Name},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	f.waitTools(t, cs, tool)
	return sup, gw, srv, cs
}
