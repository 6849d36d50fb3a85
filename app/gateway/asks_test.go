package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/app/asks"
	"github.com/switchboardhq/switchboard/app/gateway"
	"github.com/switchboardhq/switchboard/app/record"
	"github.com/switchboardhq/switchboard/app/tiers"
	"github.com/switchboardhq/switchboard/supervisor"
	"github.com/switchboardhq/switchboard/supervisor/testmcp"
)

// newAskFixture serves the test server as alpha, which asks before
// destructive calls (every tool of the test server is destructive by the
// spec's defaults, but pid, which alpha's override makes read), and as
// beta, which does not ask except through profile careful. board, when
// not nil, is the gateway's Asker.
func newAskFixture(t *testing.T, timeout time.Duration, board *asks.Board) *fixture {
	t.Helper()
	servers := []gateway.ServerConfig{
		{Name: "alpha", AskBeforeDestructive: true, Tiers: map[string]tiers.Tier{"pid": tiers.Read}},
		{Name: "beta"},
	}
	var specs []supervisor.Spec
	for _, s := range servers {
		specs = append(specs, supervisor.Spec{Name: s.Name, Command: os.Args[0],
			Env: testEnv(testmcp.Options{Name: s.Name}), Pool: supervisor.PoolSpec{Max: 2}})
	}
	f := newTunedFixture(t, "", func(_ *supervisor.Options, o *gateway.Options) {
		o.AskTimeout = timeout
		if board != nil {
			o.Asker = boardAsker{board}
		}
	}, specs, servers...)
	f.gw.SetProfiles([]gateway.ProfileConfig{{Name: "careful", Servers: []string{"beta"}, AskBeforeDestructive: true}})
	return f
}

// boardAsker is the daemon's adapter of a Board to the gateway's Asker.
type boardAsker struct{ b *asks.Board }

func (a boardAsker) Ask(ctx context.Context, p gateway.PendingAsk) (bool, string, error) {
	return a.b.Ask(ctx, asks.Ask{Server: p.Server, Tool: p.Tool, Endpoint: p.Endpoint, Client: p.Client,
		Tier: string(p.Tier), Arguments: p.Arguments})
}

// decisionOf waits for the record of the call of name whose arguments
// contain marker, and returns it.
func (f *fixture) recordOf(t *testing.T, name, marker string) record.Call {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		for _, c := range f.rec.all() {
			if c.Name == name && strings.Contains(string(c.Arguments), marker) {
				return c
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no record of %s with %q in %+v", name, marker, f.rec.all())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// checkDecision checks that c was decided by by, allowed or not.
func checkDecision(t *testing.T, c record.Call, by string, allowed bool) {
	t.Helper()
	if c.Decision == nil {
		t.Fatalf("call %s %s has no decision, want %s allowed=%v", c.Name, c.Arguments, by, allowed)
	}
	if c.Decision.By != by || c.Decision.Allowed != allowed || c.Decision.At.IsZero() || c.Decision.At.Before(c.Start) {
		t.Errorf("call %s %s decision %+v (started %v), want %s allowed=%v", c.Name, c.Arguments, *c.Decision, c.Start, by, allowed)
	}
	if c.Tier != string(tiers.Destructive) {
		t.Errorf("call %s recorded with tier %q", c.Name, c.Tier)
	}
}

// TestAskByElicitation: a session-era client that declares elicitation
// (the go-sdk's) is asked by form elicitation before a destructive call on
// a server that asks; accept runs the call, decline and an "allow": false
// deny it, no answer within the ask timeout denies it; a read tool, a
// server that does not ask, and the same server through a profile that
// asks behave as they should; every decision is in the call's record.
func TestAskByElicitation(t *testing.T) {
	f := newAskFixture(t, 400*time.Millisecond, nil)
	var answer atomic.Value // func(*mcp.ElicitRequest) (*mcp.ElicitResult, error)
	var asked atomic.Int32
	opts := &mcp.ClientOptions{ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked.Add(1)
		return answer.Load().(func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error))(ctx, req)
	}}
	cs := f.connect(t, "/mcp", "2025-11-25", opts)
	f.waitTools(t, cs, "alpha__echo", "beta__echo")
	careful := f.connect(t, "/mcp/p/careful", "2025-11-25", opts)
	f.waitTools(t, careful, "beta__echo")

	var message string
	for _, tt := range []struct {
		name    string
		answer  func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)
		allowed bool
		by      string
	}{
		{"accept", func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			message = req.Params.Message
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"allow": true}}, nil
		}, true, record.DecidedByElicitation},
		{"decline", func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "decline"}, nil
		}, false, record.DecidedByElicitation},
		{"accept-unticked", func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"allow": false}}, nil
		}, false, record.DecidedByElicitation},
		{"silent", func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			// The client answers long after the ask timeout (an accept
			// that comes too late): the timeout has denied the call.
			select {
			case <-ctx.Done():
			case <-time.After(1500 * time.Millisecond):
			}
			return &mcp.ElicitResult{Action: "accept"}, nil
		}, false, record.DecidedByTimeout},
	} {
		t.Run(tt.name, func(t *testing.T) {
			answer.Store(tt.answer)
			before := asked.Load()
			start := time.Now()
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": tt.name}})
			took := time.Since(start)
			if err != nil {
				t.Fatal(err)
			}
			if asked.Load() != before+1 {
				t.Errorf("the client was asked %d times, want once", asked.Load()-before)
			}
			if tt.allowed && (res.IsError || text(res) != tt.name) {
				t.Errorf("allowed call answered %q (error %v)", text(res), res.IsError)
			}
			if !tt.allowed && (!res.IsError || !strings.Contains(text(res), "denied")) {
				t.Errorf("denied call answered %q (error %v)", text(res), res.IsError)
			}
			if tt.by == record.DecidedByTimeout && (took < 400*time.Millisecond || took > 1400*time.Millisecond) {
				t.Errorf("timed out after %v, want the ask timeout (400ms)", took)
			}
			t.Logf("%s: answered in %v", tt.name, took)
			checkDecision(t, f.recordOf(t, "alpha__echo", tt.name), tt.by, tt.allowed)
		})
	}
	if !strings.Contains(message, `"echo"`) || !strings.Contains(message, `"alpha"`) {
		t.Errorf("the form's message %q names neither tool nor server", message)
	}

	// None of the asked calls took the fast path; the calls that need no
	// asking take it as before (unless it is off).
	if n := gateway.FastCalls(f.gw); n != 0 {
		t.Errorf("the fast path served %d asked calls", n)
	}
	answer.Store(func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "accept"}, nil
	})
	before := asked.Load()
	// A read tool of alpha, and beta on /mcp: not asked.
	for name, args := range map[string]map[string]any{"alpha__pid": {}, "beta__echo": {"text": "plain"}} {
		if res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args}); err != nil || res.IsError {
			t.Errorf("%s: %v %q", name, err, text(res))
		}
	}
	if n := asked.Load() - before; n != 0 {
		t.Errorf("calls that need no asking asked %d times", n)
	}
	if n := gateway.FastCalls(f.gw); os.Getenv(gateway.FastPathEnv) != "0" && n != 2 {
		t.Errorf("the fast path served %d of the 2 calls that need no asking", n)
	}
	if c := f.recordOf(t, "beta__echo", "plain"); c.Decision != nil {
		t.Errorf("a call that was not asked has decision %+v", c.Decision)
	}
	// beta through the profile that asks: asked.
	res, err := careful.CallTool(t.Context(), &mcp.CallToolParams{Name: "beta__echo", Arguments: map[string]any{"text": "profiled"}})
	if err != nil || res.IsError || text(res) != "profiled" {
		t.Errorf("profile call: %v %q", err, text(res))
	}
	if n := asked.Load() - before; n != 1 {
		t.Errorf("the profile's call asked %d times, want once", n)
	}
	checkDecision(t, f.recordOf(t, "beta__echo", "profiled"), record.DecidedByElicitation, true)
}

// TestAskStatelessInputRequired: a 2026-07-28 client (the go-sdk's, which
// does the rounds itself) is asked through an input-required round; its
// accept runs the call, its decline denies it.
func TestAskStatelessInputRequired(t *testing.T) {
	f := newAskFixture(t, 0, nil)
	var accept atomic.Bool
	var asked atomic.Int32
	client := mcp.NewClient(&mcp.Implementation{Name: "modern", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked.Add(1)
			if accept.Load() {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"allow": true}}, nil
			}
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
	})
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: f.url + "/mcp"},
		&mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	f.waitTools(t, cs, "alpha__echo")
	for _, allowed := range []bool{true, false} {
		accept.Store(allowed)
		before := asked.Load()
		marker := map[bool]string{true: "modern-yes", false: "modern-no"}[allowed]
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": marker}})
		if err != nil {
			t.Fatal(err)
		}
		if asked.Load() != before+1 {
			t.Errorf("asked %d times, want once", asked.Load()-before)
		}
		if allowed != !res.IsError || (allowed && text(res) != marker) {
			t.Errorf("allowed=%v: answered %q (error %v)", allowed, text(res), res.IsError)
		}
		// Two records: the round answered with the input request, and the
		// retry, which has the decision.
		var decided int
		for _, c := range f.rec.all() {
			if c.Name == "alpha__echo" && strings.Contains(string(c.Arguments), marker) && c.Decision != nil {
				decided++
				checkDecision(t, c, record.DecidedByInputRequired, allowed)
			}
		}
		if decided != 1 {
			t.Errorf("%d records with a decision for %s, want 1", decided, marker)
		}
	}
}

// TestAskStatelessRawRound: the input-required round as bytes on the
// wire, as a client of another SDK sees it: the input request is a form
// elicitation, the retry with the answer and the requestState runs the
// call, a retry of another call with that state is refused, and a state
// is good for one retry only.
func TestAskStatelessRawRound(t *testing.T) {
	f := newAskFixture(t, 0, nil)
	f.waitTools(t, f.connect(t, "/mcp", "2025-11-25", nil), "alpha__echo")
	h := mcpHeaders("2026-07-28")
	h["Mcp-Method"], h["Mcp-Name"] = "tools/call", "alpha__echo"
	caps := `{"elicitation":{"form":{}}}`
	first := f.send(t, "POST", "/mcp", h, statelessCall("tools/call", `{"name":"alpha__echo","arguments":{"text":"raw"}}`, caps))
	var round struct {
		ResultType    string                     `json:"resultType"`
		InputRequests map[string]json.RawMessage `json:"inputRequests"`
		RequestState  string                     `json:"requestState"`
	}
	if err := json.Unmarshal(first.msg["result"], &round); err != nil || round.ResultType != "input_required" || len(round.InputRequests) != 1 || round.RequestState == "" {
		t.Fatalf("first round: %d %s", first.status, first.body)
	}
	var id string
	for k, v := range round.InputRequests {
		id = k
		var req struct {
			Method string `json:"method"`
			Params struct {
				Message         string          `json:"message"`
				RequestedSchema json.RawMessage `json:"requestedSchema"`
			} `json:"params"`
		}
		if err := json.Unmarshal(v, &req); err != nil || req.Method != "elicitation/create" || !strings.Contains(req.Params.Message, "echo") ||
			!strings.Contains(string(req.Params.RequestedSchema), `"allow"`) {
			t.Errorf("input request %s: %s (%v)", k, v, err)
		}
	}
	answer := `"inputResponses":{"` + id + `":{"action":"accept","content":{"allow":true}}},"requestState":"` + round.RequestState + `"`
	other := f.send(t, "POST", "/mcp", h, statelessCall("tools/call", `{"name":"alpha__echo","arguments":{"text":"other"},`+answer+`}`, caps))
	if e := other.err(t); !strings.Contains(e.Message, "requestState") {
		t.Errorf("a retry with other arguments: %+v", e)
	}
	// The state was spent on the refused retry: ask again.
	first = f.send(t, "POST", "/mcp", h, statelessCall("tools/call", `{"name":"alpha__echo","arguments":{"text":"raw"}}`, caps))
	round.InputRequests, round.RequestState = nil, ""
	if err := json.Unmarshal(first.msg["result"], &round); err != nil || len(round.InputRequests) != 1 {
		t.Fatalf("second first round: %s", first.body)
	}
	for k := range round.InputRequests {
		id = k
	}
	answer = `"inputResponses":{"` + id + `":{"action":"accept","content":{"allow":true}}},"requestState":"` + round.RequestState + `"`
	done := f.send(t, "POST", "/mcp", h, statelessCall("tools/call", `{"name":"alpha__echo","arguments":{"text":"raw"},`+answer+`}`, caps))
	var res struct {
		ResultType string `json:"resultType"`
		Content    []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(done.msg["result"], &res); err != nil || res.IsError || len(res.Content) != 1 || res.Content[0].Text != "raw" {
		t.Fatalf("retry: %s", done.body)
	}
	if res.ResultType != "complete" {
		t.Errorf("retry's resultType %q", res.ResultType)
	}
	again := f.send(t, "POST", "/mcp", h, statelessCall("tools/call", `{"name":"alpha__echo","arguments":{"text":"raw"},`+answer+`}`, caps))
	if e := again.err(t); !strings.Contains(e.Message, "requestState") {
		t.Errorf("a second retry with a spent state: %+v", e)
	}
	// A stateless client without elicitation cannot be asked: nobody
	// answers here (no Asker), and the timeout denies it. (The fixture's
	// timeout is the default; this one is quick.)
	f.gw.SetAskTimeout(200 * time.Millisecond)
	plain := f.send(t, "POST", "/mcp", h, statelessCall("tools/call", `{"name":"alpha__echo","arguments":{"text":"nocaps"}}`, `{}`))
	if err := json.Unmarshal(plain.msg["result"], &res); err != nil || !res.IsError || !strings.Contains(res.Content[0].Text, "denied") {
		t.Errorf("client without elicitation: %s", plain.body)
	}
	checkDecision(t, f.recordOf(t, "alpha__echo", "nocaps"), record.DecidedByTimeout, false)
}

// TestAskThroughBoard: a client that cannot answer (no elicitation) waits
// on the board until the user answers there; the call is allowed or
// denied as answered, the arguments shown are redacted, and the timeout
// denies an ask nobody answers.
func TestAskThroughBoard(t *testing.T) {
	posted := make(chan asks.Ask, 4)
	board := asks.New(asks.Options{
		Redact: func(json.RawMessage) json.RawMessage { return json.RawMessage(`{"text":"[redacted]"}`) },
		Asked:  func(a asks.Ask) { posted <- a },
	})
	f := newAskFixture(t, 0, board)
	cs := f.connect(t, "/mcp", "2025-11-25", nil) // the go-sdk declares no elicitation without a handler
	f.waitTools(t, cs, "alpha__echo")
	for _, allow := range []bool{true, false} {
		marker := map[bool]string{true: "board-yes", false: "board-no"}[allow]
		go func() {
			a := <-posted
			if a.Server != "alpha" || a.Tool != "echo" || string(a.Arguments) != `{"text":"[redacted]"}` || a.Deadline.IsZero() {
				t.Errorf("pending ask %+v", a)
			}
			if p := board.Pending(); len(p) != 1 || p[0].ID != a.ID {
				t.Errorf("board's pending %+v", p)
			}
			if _, err := board.Answer(a.ID, allow, record.DecidedByDashboard); err != nil {
				t.Error(err)
			}
		}()
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": marker}})
		if err != nil || allow == res.IsError {
			t.Fatalf("allow=%v: %v %q", allow, err, text(res))
		}
		checkDecision(t, f.recordOf(t, "alpha__echo", marker), record.DecidedByDashboard, allow)
	}
	f.gw.SetAskTimeout(300 * time.Millisecond)
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": "board-late"}})
	if err != nil || !res.IsError {
		t.Fatalf("unanswered: %v %q", err, text(res))
	}
	<-posted
	checkDecision(t, f.recordOf(t, "alpha__echo", "board-late"), record.DecidedByTimeout, false)
	if p := board.Pending(); len(p) != 0 {
		t.Errorf("the timed-out ask is still pending: %+v", p)
	}
}

// TestTSClientAskElicitation: the official TypeScript SDK's client, which
// declares form elicitation, is asked before alpha's destructive echo: its
// accept runs the call, its decline denies it; the form it was sent is the
// gateway's (one "allow" boolean); the records have the decisions.
func TestTSClientAskElicitation(t *testing.T) {
	env := nodeHarness(t)
	f := newAskFixture(t, 0, nil)
	f.waitTools(t, f.connect(t, "/mcp", "2025-11-25", nil), "alpha__echo")
	for _, tt := range []struct {
		answer  map[string]any
		allowed bool
	}{
		{map[string]any{"action": "accept", "content": map[string]any{"allow": true}}, true},
		{map[string]any{"action": "decline"}, false},
	} {
		marker := "ts-" + tt.answer["action"].(string)
		t.Run(marker, func(t *testing.T) {
			r := runTS(t, t.Context(), env, tsScenario{Transport: "streamable", URL: f.url + "/mcp", Elicitation: tt.answer,
				Steps: []tsStep{{"id": "call", "op": "callTool", "name": "alpha__echo", "args": map[string]any{"text": marker}}}})
			var res tsCallResult
			if !r.decode(t, "call", &res) {
				return
			}
			if tt.allowed && (res.IsError || res.text() != marker) {
				t.Errorf("accepted: %+v", res)
			}
			if !tt.allowed && (!res.IsError || !strings.Contains(res.text(), "declined")) {
				t.Errorf("declined: %+v", res)
			}
			var asked int
			for _, m := range r.ServerRequests {
				if m.Method == "elicitation/create" {
					asked++
					schema, _ := json.Marshal(m.Params["requestedSchema"])
					if !strings.Contains(string(schema), `"allow"`) || !strings.Contains(fmt.Sprint(m.Params["message"]), "echo") {
						t.Errorf("the form sent: %v", m.Params)
					}
				}
			}
			if asked != 1 {
				t.Errorf("the TS client was asked %d times, want once: %+v", asked, r.ServerRequests)
			}
			checkDecision(t, f.recordOf(t, "alpha__echo", marker), record.DecidedByElicitation, tt.allowed)
		})
	}
}
