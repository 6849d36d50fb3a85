package gateway_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app/gateway"
	"github.com/switchboardhq/switchboard/app/internal/testutil"
	"github.com/switchboardhq/switchboard/supervisor"
)

// Node's fetch (undici, what the TypeScript SDK uses) gives up on a
// response whose headers have not come within its headersTimeout (300 s by
// default). These tests give it 5 s, and call a tool that says nothing for
// 20 s: the gateway's keep-alives (every 2 s here) send the headers and
// comments in time.
const (
	undiciHeadersTimeout = 5 * time.Second
	silentCallLength     = 20 * time.Second
	silentKeepAlive      = 2 * time.Second
)

// runPost sends one POST through undici with post.mjs, with the tests'
// headers timeout.
func runPost(t *testing.T, ctx context.Context, env nodeEnv, url string, headers map[string]string, body string) testutil.UndiciReport {
	t.Helper()
	return testutil.UndiciPost(t, ctx, env.node, env.dir, url, headers, body, undiciHeadersTimeout)
}

// silentFixture serves the test server as "alpha" with the fast path as
// mode and keep-alives every keepAlive (negative: none).
func silentFixture(t *testing.T, mode gateway.FastPathMode, keepAlive time.Duration) *fixture {
	return newTunedFixture(t, "", func(_ *supervisor.Options, o *gateway.Options) {
		o.FastPath, o.KeepAlive = mode, keepAlive
	}, []supervisor.Spec{alphaSpec()}, gateway.ServerConfig{Name: "alpha"})
}

// TestUndiciSilentCall: a 20 s call without a word until its answer
// succeeds through undici with a 5 s headers timeout, on both paths, in
// both eras: the session era through the official TypeScript SDK's client,
// the 2026-07-28 era (which that SDK does not speak) as one raw POST. The
// control: without keep-alives the same client gives up at 5 s.
func TestUndiciSilentCall(t *testing.T) {
	env := nodeHarness(t)
	sleepMs := silentCallLength.Milliseconds()
	call := fmt.Sprintf(`{"name":"sleep","arguments":{"ms":%d}}`, sleepMs)
	wantText := fmt.Sprintf("slept %d ms", sleepMs)
	// Each subtest runs in parallel, after this function has returned.
	timeout := func(t *testing.T) context.Context {
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
		t.Cleanup(cancel)
		return ctx
	}
	statelessHeaders := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "sleep"}

	for _, path := range []struct {
		name string
		mode gateway.FastPathMode
	}{{"fast", gateway.FastPathOn}, {"go-sdk", gateway.FastPathOff}} {
		f := silentFixture(t, path.mode, silentKeepAlive)
		t.Run(path.name+"/2025-11-25", func(t *testing.T) {
			t.Parallel()
			before := gateway.FastCalls(f.gw)
			r := runTS(t, timeout(t), env, tsScenario{Transport: "streamable", URL: f.url + "/mcp/alpha",
				HeadersTimeout: int(undiciHeadersTimeout.Milliseconds()), TimeoutMs: int((3 * silentCallLength).Milliseconds()),
				Steps: []tsStep{{"id": "sleep", "op": "callTool", "name": "sleep", "args": map[string]any{"ms": sleepMs}}}})
			r.wantContains(t, "the silent call's answer", r.callText(t, "sleep"), wantText)
			if fast, want := gateway.FastCalls(f.gw) > before, path.mode == gateway.FastPathOn; fast != want {
				t.Errorf("served by the fast path: %v, want %v", fast, want)
			}
		})
		t.Run(path.name+"/2026-07-28", func(t *testing.T) {
			t.Parallel()
			r := runPost(t, timeout(t), env, f.url+"/mcp/alpha", statelessHeaders, statelessCall("tools/call", call, `{}`))
			if r.Error != nil {
				t.Fatalf("undici: %s (%s; %s)", r.Error.Message, r.Error.Code, r.Error.Cause)
			}
			if r.Status != 200 || r.ContentType != "text/event-stream" || !strings.Contains(r.Body, `"result"`) || !strings.Contains(r.Body, wantText) {
				t.Errorf("undici: %d %s %q, want the sleep's result on an event stream", r.Status, r.ContentType, r.Body)
			}
			if time.Duration(r.HeadersAfterMs)*time.Millisecond >= undiciHeadersTimeout || time.Duration(r.TotalMs)*time.Millisecond < silentCallLength {
				t.Errorf("headers after %d ms, answer after %d ms; want the headers within %s, the answer after %s",
					r.HeadersAfterMs, r.TotalMs, undiciHeadersTimeout, silentCallLength)
			}
			t.Logf("headers after %d ms, answer after %d ms", r.HeadersAfterMs, r.TotalMs)
		})
	}

	// The control: without keep-alives, both clients give up at 5 s.
	control := silentFixture(t, gateway.FastPathOn, -1)
	t.Run("control/2025-11-25", func(t *testing.T) {
		t.Parallel()
		start := time.Now()
		r := runTS(t, timeout(t), env, tsScenario{Transport: "streamable", URL: control.url + "/mcp/alpha",
			HeadersTimeout: int(undiciHeadersTimeout.Milliseconds()), TimeoutMs: int((3 * silentCallLength).Milliseconds()),
			Steps: []tsStep{{"id": "sleep", "op": "callTool", "name": "sleep", "args": map[string]any{"ms": sleepMs}}}})
		if s := r.Steps[0]; s.OK || s.Error == nil || !strings.Contains(s.Error.Message, "fetch failed") || time.Since(start) >= silentCallLength {
			t.Errorf("without keep-alives: %+v after %s; want undici's fetch to fail before the answer", s, time.Since(start))
		} else {
			t.Logf("without keep-alives: %s", s.Error)
		}
	})
	t.Run("control/2026-07-28", func(t *testing.T) {
		t.Parallel()
		r := runPost(t, timeout(t), env, control.url+"/mcp/alpha", statelessHeaders, statelessCall("tools/call", call, `{}`))
		if r.Error == nil || r.Error.Code != "UND_ERR_HEADERS_TIMEOUT" {
			t.Errorf("without keep-alives: %+v; want undici's headers timeout", r)
		}
	})
}
