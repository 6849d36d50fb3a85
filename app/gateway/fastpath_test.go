package gateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/app/gateway"
	"github.com/switchboardhq/switchboard/app/internal/testutil"
	"github.com/switchboardhq/switchboard/app/record"
	"github.com/switchboardhq/switchboard/supervisor"
	"github.com/switchboardhq/switchboard/supervisor/testmcp"
)

// modeFixture is a gateway with its fast path on or off in front of the
// test server "alpha", served with the token named by the X-Token header.
type modeFixture struct {
	gw  *gateway.Gateway
	url string
	rec *recorder
}

func newModeFixture(t *testing.T, mode gateway.FastPathMode, options ...func(*gateway.Options)) *modeFixture {
	t.Helper()
	f := &modeFixture{rec: &recorder{}}
	sup, err := supervisor.New(t.Context(), supervisor.Options{StateDir: t.TempDir(), Env: os.Environ(),
		StopGrace: 500 * time.Millisecond, SampleInterval: -1, HealthInterval: -1,
		NewClient:     func(s string) *mcp.Client { return f.gw.NewClient(s) },
		Prepare:       func(ctx context.Context, s string, cs *mcp.ClientSession) error { return f.gw.Prepare(ctx, s, cs) },
		WrapTransport: func(s string, tr mcp.Transport) mcp.Transport { return f.gw.WrapTransport(s, tr) }})
	if err != nil {
		t.Fatal(err)
	}
	opts := gateway.Options{Backends: gateway.FromSupervisor(sup), Recorder: f.rec, Version: "test",
		FastPath:    mode,
		ClientLabel: func(context.Context) string { return "test-client" },
		ClientToken: func(ctx context.Context) string { s, _ := ctx.Value(testTokenKey{}).(string); return s }}
	for _, o := range options {
		o(&opts)
	}
	f.gw = gateway.New(opts)
	if err := sup.Apply(t.Context(), []supervisor.Spec{{Name: "alpha", Command: os.Args[0],
		Env: testEnv(testmcp.Options{Name: "alpha", AssumeURLElicitation: true}), Pool: supervisor.PoolSpec{Max: 1}}}); err != nil {
		t.Fatal(err)
	}
	f.gw.Sync([]gateway.ServerConfig{{Name: "alpha"}})
	h := f.gw.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), testTokenKey{}, r.Header.Get("X-Token"))))
	}))
	f.url = srv.URL
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		f.gw.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = sup.Close(ctx)
	})
	return f
}

// post sends body on path as token, in session (if set), and returns the
// response with its body unread.
func (f *modeFixture) post(t *testing.T, ctx context.Context, token, path, session, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, f.url+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("X-Token", token)
	switch session {
	case "":
	case stateless:
		var m struct {
			Method string `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		_ = json.Unmarshal([]byte(body), &m)
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", m.Method)
		req.Header.Set("Mcp-Name", m.Params.Name)
	default:
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// stateless, as the session of modeFixture.post, sends a request of the
// stateless 2026-07-28 era.
const stateless = "-"

// open opens a session on path for token, as a client that can answer
// sampling and elicitation, and waits until the gateway lists alpha's tools.
func (f *modeFixture) open(t *testing.T, token, path string) string {
	return f.openWith(t, token, path, `{"sampling":{},"elicitation":{}}`)
}

// openWith is open for a client that declares the capabilities caps (a
// JSON object).
func (f *modeFixture) openWith(t *testing.T, token, path, caps string) string {
	t.Helper()
	resp := f.post(t, t.Context(), token, path, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":`+caps+`,"clientInfo":{"name":"raw","version":"1"}}}`)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	id := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || id == "" {
		t.Fatalf("initialize: %d", resp.StatusCode)
	}
	t.Cleanup(func() { // end the session, as a client's Close does
		req, _ := http.NewRequest(http.MethodDelete, f.url+path, nil)
		req.Header.Set("Mcp-Session-Id", id)
		req.Header.Set("X-Token", token)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	})
	resp = f.post(t, t.Context(), token, path, id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	resp.Body.Close()
	testutil.Eventually(t, 30*time.Second, "the gateway lists alpha's tools", func() bool {
		resp := f.post(t, t.Context(), token, path, id, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return strings.Contains(string(data), `echo"`)
	})
	return id
}

// exchange is what a client saw of one call: the HTTP status and type,
// and the SSE events (or the body, when it is not a stream).
type exchange struct {
	Status int
	Type   string
	Events []string
}

// call posts body and reads the whole answer, replying to each request the
// gateway sends on the stream with reply (its id as sent): the result, or
// an "error" member.
func (f *modeFixture) call(t *testing.T, token, path, session, body string, reply func(method string) string) exchange {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	resp := f.post(t, ctx, token, path, session, body)
	defer resp.Body.Close()
	ex := exchange{Status: resp.StatusCode, Type: resp.Header.Get("Content-Type")}
	if !strings.HasPrefix(ex.Type, "text/event-stream") {
		data, _ := io.ReadAll(resp.Body)
		ex.Events = []string{string(data)}
		return ex
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 4<<20)
	var event strings.Builder
	for sc.Scan() {
		line := sc.Text()
		if line != "" {
			event.WriteString(line + "\n")
			continue
		}
		ev := event.String()
		event.Reset()
		ex.Events = append(ex.Events, ev)
		_, data, _ := strings.Cut(ev, "data: ")
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal([]byte(data), &msg) == nil && msg.ID != nil && msg.Method != "" && reply != nil {
			answer := reply(msg.Method)
			if !strings.HasPrefix(answer, `"error":`) {
				answer = `"result":` + answer
			}
			r := f.post(t, ctx, token, path, session, `{"jsonrpc":"2.0","id":`+string(msg.ID)+`,`+answer+`}`)
			r.Body.Close()
			if r.StatusCode != http.StatusAccepted {
				t.Errorf("reply to %s: status %d", msg.Method, r.StatusCode)
			}
		}
	}
	return ex
}

// normalized is a recorded call without what differs between two runs.
func normalized(c record.Call) record.Call {
	c.Start, c.Duration = time.Time{}, 0
	if c.Session != "" {
		c.Session = "<session>"
	}
	if c.PID != 0 {
		c.PID = 1
	}
	return c
}

// TestFastPathMatchesTheSDKPath runs the same calls through a gateway with
// the fast path on and one with it off, and checks that clients get the
// same bytes and history the same records, and that the fast path served
// the calls it takes (and only those).
func TestFastPathMatchesTheSDKPath(t *testing.T) {
	type outcome struct {
		ex      exchange
		records []record.Call
	}
	const echo = `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi <b> & \"é\""}}}`
	type matchCase struct {
		name, path, body string
		otherToken       bool
		caps             string // the capabilities of the client, if not open's
		fast             bool   // the fast path takes it
		reply            func(method string) string
		progress         bool // events before the last are progress notifications, as many as the timing gives
	}
	answer := func(s string) func(string) string { return func(string) string { return s } }
	elicit := func(id int, args string) string {
		return `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"tools/call","params":{"name":"elicit","arguments":` + args + `}}`
	}
	const (
		numberSchema   = `{"type":"object","properties":{"n":{"type":"integer","minimum":1}},"required":["n"]}`
		defaultsSchema = `{"type":"object","properties":{"answer":{"type":"string"},"color":{"type":"string","default":"blue"},"count":{"type":"integer","default":3}}}`
		urlCaps        = `{"elicitation":{"url":{}}}`
		rootsCaps      = `{"roots":{"listChanged":true}}`
	)
	cases := []matchCase{
		{name: "echo", path: "/mcp/alpha", body: echo, fast: true},
		{name: "echo on /mcp", path: "/mcp", body: strings.Replace(echo, `"echo"`, `"alpha__echo"`, 1), fast: true},
		{name: "string id and spaces", path: "/mcp/alpha", fast: true,
			body: `{ "jsonrpc": "2.0", "id": "a-1", "method": "tools/call", "params": { "name": "echo", "arguments": { "text": "x" } } }`},
		{name: "tool error", path: "/mcp/alpha", fast: true,
			body: `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"big","arguments":{"kb":-1}}}`},
		{name: "bad arguments", path: "/mcp/alpha", fast: true,
			body: `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"text":5}}}`},
		{name: "unknown tool", path: "/mcp/alpha",
			body: `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"nope","arguments":{}}}`},
		{name: "256 KiB", path: "/mcp/alpha", fast: true,
			body: `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"big","arguments":{"kb":256}}}`},
		{name: "progress", path: "/mcp/alpha", fast: true, progress: true,
			body: `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":250},"_meta":{"progressToken":"p-1"}}}`},
		{name: "elicitation", path: "/mcp/alpha", fast: true,
			body: `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"elicit","arguments":{"message":"yes?"}}}`,
			reply: func(method string) string {
				if method != "elicitation/create" {
					return `{}`
				}
				return `{"action":"accept","content":{"answer":"yes"}}`
			}},
		{name: "sampling", path: "/mcp/alpha", fast: true,
			body: `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"sample","arguments":{"prompt":"hello"}}}`,
			reply: func(string) string {
				return `{"role":"assistant","content":{"type":"text","text":"sampled"},"model":"m"}`
			}},
		// Elicitation answers are checked as ServerSession.Elicit checks
		// them: the content against the requested schema (and its defaults
		// added), the mode against the client's capabilities.
		{name: "elicitation against the schema", path: "/mcp/alpha", fast: true,
			body: elicit(20, `{"message":"n?","schema":`+numberSchema+`}`), reply: answer(`{"action":"accept","content":{"n":"x"}}`)},
		{name: "elicitation below the minimum", path: "/mcp/alpha", fast: true,
			body: elicit(21, `{"message":"n?","schema":`+numberSchema+`}`), reply: answer(`{"action":"accept","content":{"n":0}}`)},
		{name: "elicitation missing a required property", path: "/mcp/alpha", fast: true,
			body: elicit(22, `{"message":"n?","schema":`+numberSchema+`}`), reply: answer(`{"action":"accept","content":{}}`)},
		{name: "elicitation with defaults", path: "/mcp/alpha", fast: true,
			body: elicit(23, `{"message":"color?","schema":`+defaultsSchema+`}`), reply: answer(`{"action":"accept","content":{"answer":"yes","count":5}}`)},
		{name: "elicitation declined", path: "/mcp/alpha", fast: true,
			body: elicit(24, `{"message":"n?","schema":`+numberSchema+`}`), reply: answer(`{"action":"decline"}`)},
		{name: "elicitation cancelled", path: "/mcp/alpha", fast: true,
			body: elicit(25, `{"message":"n?","schema":`+numberSchema+`}`), reply: answer(`{"action":"cancel","content":{"n":"x"}}`)},
		{name: "elicitation answered with an error", path: "/mcp/alpha", fast: true,
			body: elicit(26, `{"message":"yes?"}`), reply: answer(`"error":{"code":-32600,"message":"the user went away"}`)},
		{name: "elicitation answered with a wrong type", path: "/mcp/alpha", fast: true,
			body: elicit(27, `{"message":"yes?"}`), reply: answer(`{"action":5}`)},
		{name: "elicitation answered with a capitalized key", path: "/mcp/alpha", fast: true,
			body: elicit(35, `{"message":"yes?"}`), reply: answer(`{"Action":"accept","content":{"answer":"yes"}}`)},
		{name: "url elicitation of a form client", path: "/mcp/alpha", fast: true,
			body: elicit(28, `{"message":"sign in","url":"https://example.com/login"}`)},
		{name: "url elicitation", path: "/mcp/alpha", caps: urlCaps, fast: true,
			body: elicit(29, `{"message":"sign in","url":"https://example.com/login"}`), reply: answer(`{"action":"accept"}`)},
		{name: "form elicitation of a url client", path: "/mcp/alpha", caps: urlCaps, fast: true,
			body: elicit(30, `{"message":"yes?"}`)},
		// Sampling answers are converted as ServerSession.CreateMessage
		// converts them: one content block or none.
		{name: "sampling with two contents", path: "/mcp/alpha", fast: true,
			body:  `{"jsonrpc":"2.0","id":31,"method":"tools/call","params":{"name":"sample","arguments":{"prompt":"hello"}}}`,
			reply: answer(`{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}],"model":"m"}`)},
		{name: "sampling without content", path: "/mcp/alpha", fast: true,
			body:  `{"jsonrpc":"2.0","id":32,"method":"tools/call","params":{"name":"sample","arguments":{"prompt":"hello"}}}`,
			reply: answer(`{"role":"assistant","content":[],"model":"m"}`)},
		{name: "roots", path: "/mcp/alpha", caps: rootsCaps, fast: true,
			body:  `{"jsonrpc":"2.0","id":33,"method":"tools/call","params":{"name":"roots","arguments":{}}}`,
			reply: answer(`{"roots":[{"uri":"file:///tmp/x","name":"x"}]}`)},
		{name: "roots answered with an error", path: "/mcp/alpha", caps: rootsCaps, fast: true,
			body:  `{"jsonrpc":"2.0","id":34,"method":"tools/call","params":{"name":"roots","arguments":{}}}`,
			reply: answer(`"error":{"code":-32601,"message":"no roots here"}`)},
		{name: "session of another token", path: "/mcp/alpha", otherToken: true, body: echo},
		// The go-sdk path's calls, which take the backend hop when the fast
		// path is on.
		{name: "prompts/get", path: "/mcp/alpha",
			body: `{"jsonrpc":"2.0","id":11,"method":"prompts/get","params":{"name":"greet","arguments":{"name":"Ada"}}}`},
		{name: "prompts/get error", path: "/mcp/alpha",
			body: `{"jsonrpc":"2.0","id":12,"method":"prompts/get","params":{"name":"greet","arguments":{}}}`},
		{name: "resources/read", path: "/mcp",
			body: `{"jsonrpc":"2.0","id":13,"method":"resources/read","params":{"uri":"test://static/hello"}}`},
		{name: "stateless echo", path: "/mcp/alpha", body: statelessCall("tools/call", `{"name":"echo","arguments":{"text":"x"}}`, `{}`)},
		{name: "stateless 256 KiB", path: "/mcp/alpha", body: statelessCall("tools/call", `{"name":"big","arguments":{"kb":256}}`, `{}`)},
	}
	run := func(t *testing.T, mode gateway.FastPathMode) map[string]outcome {
		f := newModeFixture(t, mode)
		session := f.open(t, "tok-a", "/mcp/alpha")
		aggSession := f.open(t, "tok-a", "/mcp")
		withCaps := map[string]string{}
		out := map[string]outcome{}
		for _, c := range cases {
			before := len(f.rec.all())
			token, sid := "tok-a", session
			if c.otherToken {
				token = "tok-b"
			}
			if c.caps != "" {
				if withCaps[c.caps] == "" {
					withCaps[c.caps] = f.openWith(t, token, c.path, c.caps)
				}
				sid = withCaps[c.caps]
			}
			if c.path == "/mcp" {
				sid = aggSession
			}
			if strings.Contains(c.body, "2026-07-28") {
				sid = stateless
			}
			fastBefore := gateway.FastCalls(f.gw)
			ex := f.call(t, token, c.path, sid, c.body, c.reply)
			if taken := gateway.FastCalls(f.gw) - fastBefore; taken != map[bool]int64{true: 1}[c.fast && mode == gateway.FastPathOn] {
				t.Errorf("%s: the fast path served %d calls", c.name, taken)
			}
			var recs []record.Call
			for _, r := range f.rec.all()[before:] {
				if r.Method != "tools/list" {
					recs = append(recs, normalized(r))
				}
			}
			out[c.name] = outcome{ex, recs}
		}
		out["cancel"] = outcome{records: cancelHang(t, f, session)}
		return out
	}
	on := run(t, gateway.FastPathOn)
	off := run(t, gateway.FastPathOff)
	for _, c := range append(cases, matchCase{name: "cancel"}) {
		a, b := on[c.name], off[c.name]
		if c.progress {
			a.ex.Events, b.ex.Events = progressEvents(t, c.name, a.ex.Events), progressEvents(t, c.name, b.ex.Events)
		}
		if c.reply != nil {
			// The request to the client carries an id of the path that sent it.
			a.ex.Events, b.ex.Events = withoutIDs(a.ex.Events), withoutIDs(b.ex.Events)
		}
		if diff := cmp.Diff(b.ex, a.ex); diff != "" {
			t.Errorf("%s: the client's answer differs (-sdk +fast):\n%s", c.name, diff)
		}
		if diff := cmp.Diff(b.records, a.records); diff != "" {
			t.Errorf("%s: the records differ (-sdk +fast):\n%s", c.name, diff)
		}
		if c.name != "session of another token" && c.name != "cancel" && len(a.records) != 1 {
			t.Errorf("%s: %d records", c.name, len(a.records))
		}
	}
	if ex := on["session of another token"].ex; ex.Status != http.StatusNotFound {
		t.Errorf("another token's session: status %d, want 404", ex.Status)
	}
	if ex := on["echo"].ex; len(ex.Events) != 1 || !strings.Contains(ex.Events[0], `"id":3,"result":{"content":[{"type":"text","text":"hi \u003cb\u003e \u0026 \"é\""}]`) {
		t.Errorf("echo: %q", ex.Events)
	}
	if ex := on["elicitation"].ex; len(ex.Events) != 2 || !strings.Contains(ex.Events[1], `accept`) {
		t.Errorf("elicitation: %q", ex.Events)
	}
	// What the server saw of the client's elicitation and sampling answers
	// (the go-sdk path's, which the fast path's equal).
	for name, want := range map[string]string{
		"elicitation against the schema":              `elicitation result content does not match requested schema: validating root: validating /properties/n: type: x has type \"string\", want \"integer\" (JSON-RPC error 0)`,
		"elicitation below the minimum":               `does not match requested schema: validating root: validating /properties/n: minimum: 0/1 is less than 1`,
		"elicitation missing a required property":     `does not match requested schema: validating root: required: missing properties: [\"n\"]`,
		"elicitation with defaults":                   `{\"action\":\"accept\",\"content\":{\"answer\":\"yes\",\"color\":\"blue\",\"count\":5}}`,
		"elicitation declined":                        `{\"action\":\"decline\"}`,
		"elicitation cancelled":                       `{\"action\":\"cancel\",\"content\":{\"n\":\"x\"}}`,
		"elicitation answered with a capitalized key": `{\"action\":\"\",\"content\":{\"answer\":\"yes\"}}`,
		"url elicitation of a form client":            `client does not support \"url\" elicitation (JSON-RPC error 0)`,
		"url elicitation":                             `{\"action\":\"accept\"}`,
		"form elicitation of a url client":            `client does not support \"form\" elicitation (JSON-RPC error 0)`,
		"sampling with two contents":                  `CreateMessage result has 2 content blocks; use CreateMessageWithTools for multiple content`,
		"sampling without content":                    `sampling: calling \"sampling/createMessage\": nil content`,
	} {
		ex := on[name].ex
		if len(ex.Events) == 0 || !strings.Contains(ex.Events[len(ex.Events)-1], want) {
			t.Errorf("%s: %q, want the result to contain %q", name, ex.Events, want)
		}
	}
	for _, name := range []string{"url elicitation of a form client", "form elicitation of a url client"} {
		if ex := on[name].ex; len(ex.Events) != 1 {
			t.Errorf("%s: %d events, want only the response (no request to the client)", name, len(ex.Events))
		}
	}
	if ex := on["256 KiB"].ex; len(ex.Events) != 1 || len(ex.Events[0]) < 256<<10 {
		t.Errorf("256 KiB: %d events", len(ex.Events))
	}
	if recs := on["cancel"].records; len(recs) != 1 || recs[0].Outcome != record.OutcomeCancelled {
		t.Errorf("cancelled call recorded as %+v", recs)
	}
}

// progressEvents checks that a call's events are progress notifications
// with the client's token, then the response, and returns the response.
func progressEvents(t *testing.T, name string, events []string) []string {
	t.Helper()
	if len(events) < 2 {
		t.Errorf("%s: %d events, want progress then the response", name, len(events))
		return events
	}
	for _, ev := range events[:len(events)-1] {
		if !strings.Contains(ev, `"method":"notifications/progress"`) || !strings.Contains(ev, `"progressToken":"p-1"`) {
			t.Errorf("%s: event %q is not progress for the client's token", name, ev)
		}
	}
	return events[len(events)-1:]
}

// withoutIDs replaces the id of requests to the client in events.
func withoutIDs(events []string) []string {
	out := make([]string, len(events))
	for i, ev := range events {
		if strings.Contains(ev, `"method":"`) && strings.Contains(ev, `"id":`) {
			start := strings.Index(ev, `"id":`) + len(`"id":`)
			end := start + strings.IndexAny(ev[start:], ",}")
			ev = ev[:start] + "<id>" + ev[end:]
		}
		out[i] = ev
	}
	return out
}

// cancelHang starts the hang tool, cancels it with notifications/cancelled
// once it runs, and returns its record.
func cancelHang(t *testing.T, f *modeFixture, session string) []record.Call {
	t.Helper()
	before := len(f.rec.all())
	started := len(f.rec.allStarted())
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, f.url+"/mcp/alpha",
			strings.NewReader(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"hang"}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("X-Token", "tok-a")
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		if resp, err := http.DefaultClient.Do(req); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	testutil.Eventually(t, 10*time.Second, "the hang call starts", func() bool { return len(f.rec.allStarted()) > started })
	resp := f.post(t, t.Context(), "tok-a", "/mcp/alpha", session,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":42,"reason":"bored"}}`)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Errorf("notifications/cancelled: status %d", resp.StatusCode)
	}
	testutil.Eventually(t, 10*time.Second, "the cancelled call is recorded", func() bool { return len(f.rec.all()) > before })
	cancel()
	<-done
	var recs []record.Call
	for _, r := range f.rec.all()[before:] {
		recs = append(recs, normalized(r))
	}
	return recs
}

// TestDuplicateIDInFlight: a request whose id is that of a request still
// in flight on the same session gets the go-sdk's refusal whichever path
// serves either of them, and the first request ends as it would have alone.
func TestDuplicateIDInFlight(t *testing.T) {
	const (
		sleep = `{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":1000}}}`
		// An escaped key: the fast path leaves the call to the go-sdk.
		sdkSleep = `{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"n\u0061me":"sleep","arguments":{"ms":1000}}}`
		echo     = `{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"echo","arguments":{"text":"again"}}}`
		prompt   = `{"jsonrpc":"2.0","id":%s,"method":"prompts/get","params":{"name":"greet","arguments":{"name":"Ada"}}}`
	)
	cases := []struct {
		name, first, second, id, otherText string
	}{
		{"fast then fast", sleep, echo, `50`, `"text":"again"`},
		{"fast then fast, string id", sleep, echo, `"dup-1"`, `"text":"again"`},
		{"fast then go-sdk", sleep, prompt, `51`, `Hello, Ada!`},
		{"go-sdk then fast", sdkSleep, echo, `52`, `"text":"again"`},
	}
	type outcome struct {
		First, Second, Other exchange
		Records              []record.Call // tools/call only
	}
	run := func(t *testing.T, mode gateway.FastPathMode) map[string]outcome {
		f := newModeFixture(t, mode)
		session := f.open(t, "tok-a", "/mcp/alpha")
		other := f.open(t, "tok-a", "/mcp/alpha")
		outs := map[string]outcome{}
		for _, tc := range cases {
			started, recorded := len(f.rec.allStarted()), len(f.rec.all())
			var out outcome
			done := make(chan struct{})
			go func() {
				defer close(done)
				out.First = f.call(t, "tok-a", "/mcp/alpha", session, fmt.Sprintf(tc.first, tc.id), nil)
			}()
			testutil.Eventually(t, 10*time.Second, "the first call starts", func() bool { return len(f.rec.allStarted()) > started })
			out.Second = f.call(t, "tok-a", "/mcp/alpha", session, fmt.Sprintf(tc.second, tc.id), nil)
			// The same id on another session is another request.
			out.Other = f.call(t, "tok-a", "/mcp/alpha", other, fmt.Sprintf(tc.second, tc.id), nil)
			<-done
			for _, r := range f.rec.all()[recorded:] {
				if r.Method == "tools/call" {
					out.Records = append(out.Records, normalized(r))
				}
			}
			outs[tc.name] = out
		}
		return outs
	}
	on, off := run(t, gateway.FastPathOn), run(t, gateway.FastPathOff)
	for _, tc := range cases {
		on, off := on[tc.name], off[tc.name]
		if diff := cmp.Diff(off, on); diff != "" {
			t.Errorf("%s: the answers differ (-sdk +fast):\n%s", tc.name, diff)
		}
		want := exchange{Status: http.StatusBadRequest, Type: "application/json", Events: []string{
			`{"jsonrpc":"2.0","id":` + tc.id + `,"error":{"code":-32600,"message":"duplicate in-flight request ID ` + strings.Trim(tc.id, `"`) + `"}}`}}
		if diff := cmp.Diff(want, on.Second); diff != "" {
			t.Errorf("%s: the duplicate's answer (-want +got):\n%s", tc.name, diff)
		}
		if ev := on.First.Events; len(ev) != 1 || !strings.Contains(ev[0], `"id":`+tc.id+`,"result":{"content":[{"type":"text","text":"slept 1000 ms"}]`) {
			t.Errorf("%s: the first call's answer: %q", tc.name, ev)
		}
		if ev := on.Other.Events; len(ev) != 1 || !strings.Contains(ev[0], tc.otherText) {
			t.Errorf("%s: the same id on another session: %q", tc.name, ev)
		}
		if n := len(on.Records); n == 0 || on.Records[n-1].Name != "sleep" {
			t.Errorf("%s: recorded %+v, want the sleep last", tc.name, on.Records)
		}
	}
}

// TestFastCallFraming checks how the fast path frames a call's answer on
// the wire: a response that is the stream's only event is not flushed on
// its own but written with the end of the response, so a small one goes
// out whole with a Content-Length (one write); a call with progress gets
// each notification as it is sent (chunked), then the response.
func TestFastCallFraming(t *testing.T) {
	f := newModeFixture(t, gateway.FastPathOn)
	session := f.open(t, "tok-a", "/mcp/alpha")

	resp := f.post(t, t.Context(), "tok-a", "/mcp/alpha", session,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if resp.ContentLength != int64(len(body)) || len(resp.TransferEncoding) != 0 {
		t.Errorf("echo: Content-Length %d, Transfer-Encoding %q for a body of %d bytes; want the length, no chunks",
			resp.ContentLength, resp.TransferEncoding, len(body))
	}
	if want := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"hi\"}],\"structuredContent\":{\"text\":\"hi\"}}}\n\n"; string(body) != want ||
		resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Errorf("echo: %s %q, want text/event-stream %q", resp.Header.Get("Content-Type"), body, want)
	}

	// With progress, the first notification reaches the client while the
	// call still runs (the tool reports progress every 100 ms for 2 s).
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	start := time.Now()
	resp = f.post(t, ctx, "tok-a", "/mcp/alpha", session,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":2000},"_meta":{"progressToken":"p"}}}`)
	defer resp.Body.Close()
	if resp.ContentLength != -1 {
		t.Errorf("progress: Content-Length %d, want a stream of unknown length", resp.ContentLength)
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() && !strings.Contains(sc.Text(), "notifications/progress") {
	}
	if took := time.Since(start); took >= 2*time.Second {
		t.Errorf("the first progress notification came after %s, with the response", took)
	}
	rest, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(rest), `"id":4,"result"`) {
		t.Errorf("progress: no response after the notifications: %q", rest)
	}
}
