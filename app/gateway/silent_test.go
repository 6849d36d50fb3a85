package gateway_test

import (
	"bufio"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app/gateway"
)

// withKeepAlive sets a gateway's keep-alive interval.
func withKeepAlive(d time.Duration) func(*gateway.Options) {
	return func(o *gateway.Options) { o.KeepAlive = d }
}

// TestSilentCallsGetHeaders: a call that says nothing until it answers
// (sleep without a progress token) gets the headers of an event stream and
// a keep-alive comment once silent for the keep-alive interval, long
// before its answer, which then comes on the same stream; on both paths
// and in both eras. A call that answers at once is written as before
// (TestFastCallFraming checks its framing).
func TestSilentCallsGetHeaders(t *testing.T) {
	const interval = 300 * time.Millisecond
	const sleep = 2 * time.Second
	for _, path := range []struct {
		name string
		mode gateway.FastPathMode
	}{{"fast", gateway.FastPathOn}, {"go-sdk", gateway.FastPathOff}} {
		f := newModeFixture(t, path.mode, withKeepAlive(interval))
		session := f.open(t, "tok-a", "/mcp/alpha")
		call := `{"name":"sleep","arguments":{"ms":2000}}`
		for _, era := range []struct{ name, session, body string }{
			{"2025-11-25", session, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":` + call + `}`},
			{"2026-07-28", stateless, statelessCall("tools/call", call, `{}`)},
		} {
			t.Run(path.name+"/"+era.name, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
				defer cancel()
				fastBefore := gateway.FastCalls(f.gw)
				start := time.Now()
				resp := f.post(t, ctx, "tok-a", "/mcp/alpha", era.session, era.body)
				defer resp.Body.Close()
				headers := time.Since(start)
				if headers < interval || headers >= sleep {
					t.Errorf("headers after %s; want them after the interval %s, before the answer at %s", headers, interval, sleep)
				}
				if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
					t.Fatalf("%d %s, want 200 text/event-stream", resp.StatusCode, resp.Header.Get("Content-Type"))
				}
				lines := bufio.NewScanner(resp.Body)
				if !lines.Scan() || lines.Text() != ": keep-alive" {
					t.Fatalf("first line %q, want a keep-alive comment", lines.Text())
				}
				if comment := time.Since(start); comment >= sleep {
					t.Errorf("the first comment came after %s, with the answer", comment)
				}
				comments, answer := 1, ""
				for lines.Scan() {
					switch line := lines.Text(); {
					case line == ": keep-alive":
						comments++
					case strings.HasPrefix(line, "data: "):
						answer = line
					}
				}
				if !strings.Contains(answer, `"id":7,"result"`) || !strings.Contains(answer, "slept 2000 ms") {
					t.Errorf("answer %q, want the sleep's result", answer)
				}
				fast := gateway.FastCalls(f.gw) > fastBefore
				if want := path.mode == gateway.FastPathOn && era.session != stateless; fast != want {
					t.Errorf("served by the fast path: %v, want %v", fast, want)
				}
				t.Logf("headers after %s, %d keep-alive comments, answer after %s", headers.Round(time.Millisecond), comments, time.Since(start).Round(time.Millisecond))
			})
		}
	}
}
