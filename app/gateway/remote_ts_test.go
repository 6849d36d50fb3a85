package gateway_test

// The official TypeScript SDK client through the gateway to
// server-everything as a remote server (streamable HTTP and SSE on
// loopback): the same requests as for the stdio server (everythingSteps),
// plus a call the client cancels and a resource subscription's updates.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app/gateway"
	"github.com/switchboardhq/switchboard/app/internal/testutil"
	"github.com/switchboardhq/switchboard/app/record"
	"github.com/switchboardhq/switchboard/supervisor"
)

// cancelSteps calls a 30-step operation of duration seconds (which names
// the call among others) and abandons it after 1.5 s, then calls again on
// the same session.
func cancelSteps(prefix string, duration int) []tsStep {
	return []tsStep{
		{"id": "cancel", "op": "callTool", "name": prefix + "trigger-long-running-operation",
			"args": map[string]any{"duration": duration, "steps": duration}, "progress": true, "cancelAfterMs": 1500},
		{"id": "after-cancel", "op": "callTool", "name": prefix + "echo", "args": map[string]any{"message": "after the cancel"}},
	}
}

// checkCancel asserts on the report of cancelSteps: the client got its
// abort, the next call on the session worked, and the gateway recorded
// the call of server as cancelled, within seconds of the abort.
func checkCancel(t *testing.T, f *fixture, r *tsReport, server, prefix string) {
	t.Helper()
	if e := r.failed(t, "cancel"); e != nil && !strings.Contains(e.Message, "cancelled by the harness") {
		t.Errorf("TS client, %s: the cancelled call failed with %s, want the harness's abort", r.label, e)
	}
	r.wantContains(t, "echo after a cancelled call", r.callText(t, "after-cancel"), "Echo: after the cancel")
	name := prefix + "trigger-long-running-operation"
	var got record.Call
	testutil.Eventually(t, 10*time.Second, "the cancelled call recorded", func() bool {
		for _, c := range f.rec.all() {
			if c.Method == "tools/call" && c.Name == name && c.Server == server && c.Outcome == record.OutcomeCancelled {
				got = c
				return true
			}
		}
		return false
	})
	// 1.5 s to the abort; the operation itself would take 30 s or more.
	if got.Duration > 10*time.Second {
		t.Errorf("the cancelled call lasted %s, want it ended by the cancel (1.5 s)", got.Duration)
	}
}

// subscribeSteps subscribe to a document, have server-everything send
// updates of what its session is subscribed to (toggle-subscriber-updates
// sends one at once, then one every 5 s), wait for one and stop them.
func subscribeSteps(prefix string) []tsStep {
	return []tsStep{
		{"id": "sub", "op": "subscribe", "uri": featuresDoc},
		{"id": "updates-on", "op": "callTool", "name": prefix + "toggle-subscriber-updates"},
		{"id": "updated", "op": "waitFor", "method": "notifications/resources/updated", "timeoutMs": 10000},
		{"id": "updates-off", "op": "callTool", "name": prefix + "toggle-subscriber-updates"},
		{"id": "unsub", "op": "unsubscribe", "uri": featuresDoc},
	}
}

func checkSubscribe(t *testing.T, r *tsReport) {
	t.Helper()
	r.step(t, "sub")
	r.wantContains(t, "toggle-subscriber-updates", r.callText(t, "updates-on"), "Started simulated resource updated notifications")
	r.step(t, "updated")
	r.wantContains(t, "toggle-subscriber-updates", r.callText(t, "updates-off"), "Stopped simulated resource updates")
	r.step(t, "unsub")
	for _, n := range r.notifications("notifications/resources/updated") {
		if n.Params["uri"] != featuresDoc {
			t.Errorf("TS client, %s: an update of %v, which it did not subscribe to", r.label, n.Params["uri"])
		}
	}
}

// slowWatcher is the test's recorder, slow to take a call's last progress
// notification, as a loaded machine may be to run the goroutine that
// passes it on: the result, which the remote sends right after it, must
// still wait for it (the gateway counted it as it read the remote's
// stream: WrapRemoteHTTP), where waiting briefly for more would not do.
type slowWatcher struct{ *recorder }

func (w slowWatcher) CallProgress(c record.Call, p gateway.CallProgress) {
	if p.Total > 0 && p.Progress >= p.Total {
		time.Sleep(50 * time.Millisecond) // slowness, not waiting for anything
	}
	w.recorder.CallProgress(c, p)
}

// progressPerCall returns the progress values the client got for each
// progress token, in the order the tokens first came.
func progressPerCall(r *tsReport) [][]float64 {
	var order []string
	per := map[string][]float64{}
	for _, n := range r.notifications("notifications/progress") {
		token := fmt.Sprint(n.Params["progressToken"])
		if _, ok := per[token]; !ok {
			order = append(order, token)
		}
		progress, _ := n.Params["progress"].(float64)
		per[token] = append(per[token], progress)
	}
	var out [][]float64
	for _, token := range order {
		out = append(out, per[token])
	}
	return out
}

// A sentMessages is the JSON-RPC messages the gateway sent a remote server
// (the bodies of its POSTs), seen under the supervisor's RemoteRoundTripper.
type sentMessages struct {
	mu   sync.Mutex
	msgs []sentMessage
}

type sentMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name      string          `json:"name"`
		Arguments map[string]any  `json:"arguments"`
		RequestID json.RawMessage `json:"requestId"`
	} `json:"params"`
}

func (s *sentMessages) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if req.Method == http.MethodPost && req.Body != nil {
			body, err := io.ReadAll(req.Body)
			req.Body.Close()
			if err != nil {
				return nil, err
			}
			req = req.Clone(req.Context())
			req.Body = io.NopCloser(bytes.NewReader(body))
			var m sentMessage
			if json.Unmarshal(body, &m) == nil {
				s.mu.Lock()
				s.msgs = append(s.msgs, m)
				s.mu.Unlock()
			}
		}
		return next.RoundTrip(req)
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// cancelled reports whether the gateway sent the remote a
// notifications/cancelled for its tools/call of tool with the argument
// duration.
func (s *sentMessages) cancelled(tool string, duration int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	var id json.RawMessage
	for _, m := range s.msgs {
		if m.Method == "tools/call" && m.Params.Name == tool && m.Params.Arguments["duration"] == float64(duration) {
			id = m.ID
		}
		if id != nil && m.Method == "notifications/cancelled" && bytes.Equal(m.Params.RequestID, id) {
			return true
		}
	}
	return false
}

// TestTSClientRemoteEverything drives server-everything as a remote server
// (streamable HTTP, SSE) through the gateway with the TS SDK's client, on
// /mcp (prefixed) and on /mcp/r, with everythingSteps, a cancelled call and
// a subscription's updates.
func TestTSClientRemoteEverything(t *testing.T) {
	env := nodeHarness(t)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	for _, mode := range []struct {
		name      string
		mode      string // server-everything's
		path      string // its endpoint
		transport supervisor.RemoteTransport
	}{
		{"streamable HTTP", "streamableHttp", "/mcp", supervisor.RemoteStreamableHTTP},
		{"SSE", "sse", "/sse", supervisor.RemoteSSE},
	} {
		t.Run(mode.name, func(t *testing.T) {
			port := freePort(t)
			startEverything(t, env, mode.mode, port)
			sent := &sentMessages{}
			f := newRemoteFixture(t, "http://127.0.0.1:"+strconv.Itoa(port)+mode.path, mode.transport,
				gateway.ServerConfig{Roots: []string{everythingRoot}}, func(o *supervisor.Options) {
					base := o.RemoteRoundTripper
					o.RemoteRoundTripper = func(s string) http.RoundTripper { return sent.wrap(base(s)) }
				})
			// The tools server-everything adds once it knows the gateway's
			// capabilities (as newEverythingFixture waits for).
			f.waitTools(t, connectTo(t, f, "/mcp", nil), "r__echo", "r__trigger-sampling-request", "r__get-roots-list",
				"r__toggle-subscriber-updates")

			// As TestTSClientProgressBeforeResult for the stdio server: every
			// progress notification the remote sends before its result
			// reaches the client, on each of ten calls, also where passing
			// the last one on is slow (see slowWatcher).
			t.Run("progress-before-result", func(t *testing.T) {
				f := newTunedRemoteFixture(t, "http://127.0.0.1:"+strconv.Itoa(port)+mode.path, mode.transport, gateway.ServerConfig{},
					func(_ *supervisor.Options, g *gateway.Options) { g.Recorder = slowWatcher{g.Recorder.(*recorder)} })
				f.waitTools(t, connectTo(t, f, "/mcp", nil), "r__trigger-long-running-operation")
				var steps []tsStep
				for i := range 10 {
					steps = append(steps, tsStep{"id": strconv.Itoa(i), "op": "callTool", "name": "r__trigger-long-running-operation",
						"args": map[string]any{"duration": 0.2, "steps": 3}, "progress": true})
				}
				r := runTS(t, ctx, env, tsScenario{Transport: "streamable", URL: f.url + "/mcp", Steps: steps})
				for _, s := range r.Steps {
					if !s.OK {
						t.Errorf("TS client, %s: call %s failed: %s", r.label, s.ID, s.Error)
					}
				}
				if got := progressPerCall(r); len(got) != len(steps) || slices.ContainsFunc(got, func(p []float64) bool { return !slices.Equal(p, []float64{1, 2, 3}) }) {
					t.Errorf("TS client, %s: the progress of each of %d calls = %v, want 1, 2, 3 for each", r.label, len(steps), got)
				}
			})

			for i, endpoint := range []struct{ path, prefix, recorded string }{{"/mcp", "r__", ""}, {"/mcp/r", "", "r"}} {
				t.Run(strings.TrimPrefix(endpoint.path, "/"), func(t *testing.T) {
					duration := 30 + i // names this endpoint's cancelled call
					steps := slices.Concat(everythingSteps(endpoint.prefix), cancelSteps(endpoint.prefix, duration),
						subscribeSteps(endpoint.prefix))
					r := runTS(t, ctx, env, tsScenario{Transport: "streamable", URL: f.url + endpoint.path,
						Elicitation: everythingElicitation, Steps: steps})
					checkEverything(t, r, endpoint.prefix, env)
					// checkEverything takes 2 of 3; a remote's are all relayed
					// (as progress-before-result checks over more calls).
					if got := progressPerCall(r); len(got) == 0 || !slices.Equal(got[0], []float64{1, 2, 3}) {
						t.Errorf("TS client, %s: progress of the 3-step operation, then of the cancelled one: %v, want 1, 2, 3 first", r.label, got)
					}
					checkCancel(t, f, r, "r", endpoint.prefix)
					testutil.Eventually(t, 10*time.Second, "notifications/cancelled sent to the remote", func() bool {
						return sent.cancelled("trigger-long-running-operation", duration)
					})
					checkSubscribe(t, r)

					var recorded []string
					for _, c := range f.rec.all() {
						if c.Method == "tools/call" && c.ClientName == "switchboard-ts-harness" && c.Endpoint == endpoint.recorded {
							recorded = append(recorded, c.Name+":"+c.Server+":"+c.Outcome)
						}
					}
					p := endpoint.prefix
					r.wantListed(t, "recorded calls", recorded, p+"echo:r:ok", p+"get-sum:r:ok", p+"get-sum:r:tool_error",
						p+"trigger-long-running-operation:r:ok", p+"trigger-long-running-operation:r:cancelled",
						p+"trigger-sampling-request:r:ok", p+"trigger-elicitation-request:r:ok", p+"toggle-subscriber-updates:r:ok")
				})
			}
		})
	}
}
