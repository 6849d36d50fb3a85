package gateway_test

import (
	"context"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/switchboardhq/switchboard/app/gateway"
	"github.com/switchboardhq/switchboard/app/internal/testutil"
	"github.com/switchboardhq/switchboard/app/record"
	"github.com/switchboardhq/switchboard/supervisor"
	"github.com/switchboardhq/switchboard/supervisor/testmcp"
)

// sleepCall is a call that would hold alpha's process for 60 s.
const sleepCall = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":60000}}}`

// TestSessionEndCancelsCalls: when a client session ends (DELETE, the idle
// timeout, its token's revocation), its calls in flight are cancelled at
// once: the server's process is given back (no call in flight on it) and
// the history records the call as cancelled, as for a client's
// notifications/cancelled, long before the call's own end. On both paths
// (SWITCHBOARD_FASTPATH=0 runs the go-sdk's).
func TestSessionEndCancelsCalls(t *testing.T) {
	for _, tt := range []struct {
		name string
		// end ends session sid; drop cancels the request of the call (its
		// client went away).
		end func(t *testing.T, f *fixture, sid string, drop context.CancelFunc)
	}{
		{"DELETE", func(t *testing.T, f *fixture, sid string, _ context.CancelFunc) {
			h := mcpHeaders("2025-11-25")
			h["Mcp-Session-Id"] = sid
			if r := f.send(t, http.MethodDelete, "/mcp/alpha", h, ""); r.status != http.StatusNoContent {
				t.Fatalf("DELETE: %d %s", r.status, r.body)
			}
		}},
		{"idle timeout", func(t *testing.T, f *fixture, _ string, drop context.CancelFunc) {
			// A session whose client waits for an answer is not idle: the
			// client goes away, and the session idles out.
			f.gw.SetSessionTimeout(100 * time.Millisecond)
			drop()
		}},
		{"revocation", func(t *testing.T, f *fixture, _ string, _ context.CancelFunc) {
			if n := f.gw.CloseSessionsOf("tok"); n < 1 {
				t.Fatalf("CloseSessionsOf closed %d sessions", n)
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newTunedFixture(t, "", func(_ *supervisor.Options, o *gateway.Options) {
				o.ClientToken = func(context.Context) string { return "tok" }
			}, []supervisor.Spec{{Name: "alpha", Command: os.Args[0],
				Env: testEnv(testmcp.Options{Name: "alpha"}), Pool: supervisor.PoolSpec{Max: 1}}},
				gateway.ServerConfig{Name: "alpha"})
			f.waitTools(t, f.connect(t, "/mcp/alpha", "2025-11-25", nil), "sleep")
			sid := f.rawSession(t, "/mcp/alpha")
			fastBefore := gateway.FastCalls(f.gw)

			ctx, drop := context.WithCancel(t.Context())
			defer drop()
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, f.url+"/mcp/alpha", strings.NewReader(sleepCall))
			for k, v := range mcpHeaders("2025-11-25") {
				req.Header.Set(k, v)
			}
			req.Header.Set("Mcp-Session-Id", sid)
			answered := make(chan struct{})
			start := time.Now()
			go func() {
				defer close(answered)
				if resp, err := http.DefaultClient.Do(req); err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}()
			t.Cleanup(func() { drop(); <-answered })
			inFlight := func() int {
				st, _ := f.sup.Status("alpha")
				n := 0
				for _, p := range st.Processes {
					n += p.InFlight
				}
				return n
			}
			testutil.Eventually(t, 10*time.Second, "the call to reach alpha", func() bool { return inFlight() > 0 })

			tt.end(t, f, sid, drop)
			testutil.Eventually(t, 15*time.Second, "alpha's process to be given back", func() bool { return inFlight() == 0 })
			var got record.Call
			testutil.Eventually(t, 15*time.Second, "the call to be recorded", func() bool {
				for _, c := range f.rec.all() {
					if c.Method == "tools/call" && c.Session == sid {
						got = c
						return true
					}
				}
				return false
			})
			if got.Outcome != record.OutcomeCancelled {
				t.Errorf("the call of the ended session was recorded as %q (%s), want %q", got.Outcome, got.Error, record.OutcomeCancelled)
			}
			if took := time.Since(start); took > 30*time.Second {
				t.Errorf("the call ended %s after it started, not at its session's end", took)
			}
			if os.Getenv(gateway.FastPathEnv) != "0" && gateway.FastCalls(f.gw) == fastBefore {
				t.Errorf("the fast path did not serve the call")
			}
		})
	}
}

// TestCloseEndsOpenSessions: Gateway.Close closes the client sessions its
// clients left open (one with a call in flight): none of their goroutines
// outlives it.
func TestCloseEndsOpenSessions(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	spec := supervisor.Spec{Name: "alpha", Command: os.Args[0], Env: testEnv(testmcp.Options{Name: "alpha"}),
		Pool: supervisor.PoolSpec{Max: 1}}
	sup, gw, srv, cs := leakyClient(t, spec, gateway.ServerConfig{Name: "alpha"}, "sleep")
	called := make(chan struct{})
	callCtx, cancelCall := context.WithCancel(context.Background())
	defer cancelCall()
	go func() {
		defer close(called)
		_, _ = cs.CallTool(callCtx, &mcp.CallToolParams{Name: "sleep", Arguments: map[string]any{"ms": 60000}})
	}()
	testutil.Eventually(t, 10*time.Second, "the call to reach alpha", func() bool {
		st, _ := sup.Status("alpha")
		for _, p := range st.Processes {
			if p.InFlight > 0 {
				return true
			}
		}
		return false
	})
	// The daemon stops: the gateway closes before the client does; the
	// call's handler ends with it (else the server's Close waits for it).
	srv.CloseClientConnections()
	gw.Close()
	srv.Close()
	if n := gateway.ClientSessions(gw); n != 0 {
		t.Errorf("%d client sessions open after Close", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := sup.Close(ctx); err != nil {
		t.Error(err)
	}
	cancelCall() // the client gives up too (the gateway's end is what is tested)
	cs.Close()
	<-called
	goleak.VerifyNone(t, ignore,
		goleak.IgnoreAnyFunction("github.com/modelcontextprotocol/go-sdk/mcp.(*StreamableHTTPHandler).ServeHTTP.func1"))
}
