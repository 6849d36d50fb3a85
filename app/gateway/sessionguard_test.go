package gateway_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/app/gateway"
	"github.com/switchboardhq/switchboard/app/internal/testutil"
	"github.com/switchboardhq/switchboard/supervisor"
	"github.com/switchboardhq/switchboard/supervisor/testmcp"
)

type testTokenKey struct{}

// newTokenGateway runs the test MCP server as "alpha" (one process) behind
// a gateway whose client token is each request's X-Token header, as the
// API's authentication hands it over in the daemon; tune, when not nil,
// changes the gateway's options before it starts.
func newTokenGateway(t *testing.T, tune func(*gateway.Options)) (*gateway.Gateway, *httptest.Server) {
	t.Helper()
	f := newTunedFixture(t, "", func(_ *supervisor.Options, o *gateway.Options) {
		o.ClientToken = func(ctx context.Context) string { s, _ := ctx.Value(testTokenKey{}).(string); return s }
		if tune != nil {
			tune(o)
		}
	}, []supervisor.Spec{{Name: "alpha", Command: os.Args[0],
		Env: testEnv(testmcp.Options{Name: "alpha"}), Pool: supervisor.PoolSpec{Max: 1}}},
		gateway.ServerConfig{Name: "alpha"})
	h := f.gw.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), testTokenKey{}, r.Header.Get("X-Token"))))
	}))
	t.Cleanup(func() { // before the fixture's cleanup, which closes the gateway
		srv.CloseClientConnections()
		srv.Close()
	})
	return f.gw, srv
}

// TestSessionsBoundToTokenAndEndpoint: a session answers only the token
// that opened it, on the endpoint that opened it (404 otherwise, as for an
// unknown session); a token may have MaxSessionsPerToken open, a new one
// ending its least recently used; CloseSessionsOf ends a token's sessions.
func TestSessionsBoundToTokenAndEndpoint(t *testing.T) {
	gw, srv := newTokenGateway(t, func(o *gateway.Options) { o.MaxSessionsPerToken = 2 })

	post := func(token, path, session, body string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("X-Token", token)
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(data)
	}
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	const ping = `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	open := func(token, path string) string {
		t.Helper()
		resp, body := post(token, path, "", initialize)
		id := resp.Header.Get("Mcp-Session-Id")
		if resp.StatusCode != 200 || id == "" {
			t.Fatalf("initialize on %s as %s: %d %s", path, token, resp.StatusCode, body)
		}
		if resp, body := post(token, path, id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); resp.StatusCode != 202 {
			t.Fatalf("initialized: %d %s", resp.StatusCode, body)
		}
		return id
	}

	a := open("tok_a", "/mcp")
	for _, tt := range []struct {
		name, token, path string
		want              int
	}{
		{"owner on its endpoint", "tok_a", "/mcp", 200},
		{"another token", "tok_b", "/mcp", 404},
		{"no token", "", "/mcp", 404},
		{"owner on another endpoint", "tok_a", "/mcp/alpha", 404},
		{"owner on the endpoint with a slash", "tok_a", "/mcp/", 200},
	} {
		if resp, body := post(tt.token, tt.path, a, ping); resp.StatusCode != tt.want {
			t.Errorf("%s: %d %s, want %d", tt.name, resp.StatusCode, body, tt.want)
		}
	}
	perServer := open("tok_a", "/mcp/alpha")
	if resp, _ := post("tok_a", "/mcp", perServer, ping); resp.StatusCode != 404 {
		t.Errorf("a /mcp/alpha session on /mcp: %d, want 404", resp.StatusCode)
	}

	// The cap: tok_a has two open, both idle; a third takes the place of
	// the least recently used (a: the refused requests naming
	// perServer did not count as its use), which then gets 404.
	a3 := open("tok_a", "/mcp")
	if resp, body := post("tok_a", "/mcp", a, ping); resp.StatusCode != 404 {
		t.Errorf("the least recently used session after a third opened: %d %s, want 404", resp.StatusCode, body)
	}
	if resp, body := post("tok_a", "/mcp/alpha", perServer, ping); resp.StatusCode != 200 {
		t.Errorf("the other session after a third opened: %d %s, want 200", resp.StatusCode, body)
	}
	b := open("tok_b", "/mcp")

	// Closing a session makes room; revoking closes them all.
	req, _ := http.NewRequest(http.MethodDelete, srv.URL+"/mcp/alpha", nil)
	req.Header.Set("Mcp-Session-Id", perServer)
	req.Header.Set("X-Token", "tok_a")
	if resp, err := srv.Client().Do(req); err != nil || resp.StatusCode != 204 {
		t.Fatalf("DELETE: %v %v", resp, err)
	}
	a2 := open("tok_a", "/mcp")
	if n := gw.CloseSessionsOf("tok_a"); n != 2 {
		t.Errorf("CloseSessionsOf closed %d sessions, want 2", n)
	}
	for _, id := range []string{a, a2, a3} {
		if resp, _ := post("tok_a", "/mcp", id, ping); resp.StatusCode != 404 {
			t.Errorf("a closed session: %d", resp.StatusCode)
		}
	}
	if resp, body := post("tok_b", "/mcp", b, ping); resp.StatusCode != 200 {
		t.Errorf("another token's session after the revocation: %d %s", resp.StatusCode, body)
	}
	if n := gw.CloseSessionsOf("tok_b"); n != 1 {
		t.Errorf("CloseSessionsOf(tok_b) closed %d", n)
	}

	// The legacy SSE transport: the session of a GET stream answers its
	// token on its endpoint only.
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	req, _ = http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/sse", nil)
	req.Header.Set("X-Token", "tok_c")
	stream, err := srv.Client().Do(req)
	if err != nil || stream.StatusCode != 200 {
		t.Fatalf("GET /sse: %v %v", stream, err)
	}
	defer stream.Body.Close()
	var endpoint string
	sc := bufio.NewScanner(stream.Body)
	for endpoint == "" && sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok && strings.Contains(data, "sessionid=") {
			endpoint = data
		}
	}
	if endpoint == "" {
		t.Fatalf("no endpoint event on /sse: %v", sc.Err())
	}
	_, sid, _ := strings.Cut(endpoint, "sessionid=")
	for _, tt := range []struct {
		name, token, path string
		want              int
	}{
		{"another token", "tok_a", "/sse", 404},
		{"another endpoint", "tok_c", "/sse/alpha", 404},
		{"the owner", "tok_c", "/sse", 202},
	} {
		resp, body := post(tt.token, tt.path+"?sessionid="+sid, "", initialize)
		if resp.StatusCode != tt.want {
			t.Errorf("SSE session, %s: %d %s, want %d", tt.name, resp.StatusCode, body, tt.want)
		}
	}
	cancel()
}

// The go-sdk client of a session keeps working through the guard (its
// GET stream, its calls, its DELETE).
func TestSessionGuardWithSDKClient(t *testing.T) {
	f := newFixture(t, gateway.ServerConfig{Name: "alpha"})
	cs := f.connect(t, "/mcp", "2025-11-25", nil)
	f.waitTools(t, cs, "alpha__echo")
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": "hi"}})
	if err != nil || res.IsError || !strings.Contains(text(res), "hi") {
		t.Fatalf("call: %v %+v", err, res)
	}
	if err := cs.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
}

// TestRequestStateBoundToToken: the requestState of a stateless client's
// parked call (2026-07-28, input-required rounds) is bound like a session:
// another token, or another tool, continuing it gets "unknown or expired
// requestState" and neither answers the server nor reads the result; and
// CloseSessionsOf ends the token's parked calls too.
func TestRequestStateBoundToToken(t *testing.T) {
	gw, srv := newTokenGateway(t, nil)

	// call sends a stateless tools/call and returns its JSON-RPC answer.
	call := func(token, tool, state, key string) map[string]any {
		t.Helper()
		params := map[string]any{"name": tool, "arguments": map[string]any{"message": "for a only"},
			"_meta": map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28",
				"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "x", "version": "1"},
				"io.modelcontextprotocol/clientCapabilities": map[string]any{"elicitation": map[string]any{}}}}
		if state != "" {
			params["requestState"] = state
			params["inputResponses"] = map[string]any{key: map[string]any{"action": "accept", "content": map[string]any{"answer": "from " + token}}}
		}
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/mcp", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", tool)
		req.Header.Set("X-Token", token)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		s := string(data)
		if i := strings.Index(s, "data: "); i >= 0 {
			s = s[i+len("data: "):]
		}
		var out map[string]any
		if err := json.Unmarshal([]byte(strings.TrimSpace(s)), &out); err != nil {
			t.Fatalf("%s: %d %s", tool, resp.StatusCode, data)
		}
		return out
	}
	// park starts a call of alpha__elicit as token, which the server
	// answers with an elicitation: the requestState and the input's key.
	park := func(token string) (state, key string) {
		t.Helper()
		var res map[string]any
		testutil.Eventually(t, 20*time.Second, "alpha__elicit to be listed", func() bool {
			res, _ = call(token, "alpha__elicit", "", "")["result"].(map[string]any)
			return res != nil && res["requestState"] != nil
		})
		for k := range res["inputRequests"].(map[string]any) {
			key = k
		}
		return res["requestState"].(string), key
	}
	refused := func(answer map[string]any) bool {
		e, _ := answer["error"].(map[string]any)
		msg, _ := e["message"].(string)
		return strings.Contains(msg, "unknown or expired requestState")
	}

	state, key := park("tok_a")
	if a := call("tok_b", "alpha__elicit", state, key); !refused(a) {
		t.Errorf("another token continued tok_a's call: %v", a)
	}
	if a := call("tok_a", "alpha__echo", state, key); !refused(a) {
		t.Errorf("another tool continued the call: %v", a)
	}
	a := call("tok_a", "alpha__elicit", state, key)
	if res, _ := a["result"].(map[string]any); res == nil || !strings.Contains(fmt.Sprint(res["content"]), "from tok_a") {
		t.Errorf("tok_a's own retry: %v", a)
	}

	state, key = park("tok_a")
	gw.CloseSessionsOf("tok_a")
	if a := call("tok_a", "alpha__elicit", state, key); !refused(a) {
		t.Errorf("a parked call outlived CloseSessionsOf: %v", a)
	}
}

// newLimitFixture runs the test MCP server as "alpha" (up to three
// processes) behind a gateway whose every request has the token "tok",
// with limit sessions per token (0: the default), and waits until alpha is
// listed (that session closed again).
func newLimitFixture(t *testing.T, limit int) *fixture {
	t.Helper()
	f := newTunedFixture(t, "", func(_ *supervisor.Options, o *gateway.Options) {
		o.ClientToken = func(context.Context) string { return "tok" }
		o.MaxSessionsPerToken = limit
	}, []supervisor.Spec{{Name: "alpha", Command: os.Args[0],
		Env: testEnv(testmcp.Options{Name: "alpha"}), Pool: supervisor.PoolSpec{Max: 3}}},
		gateway.ServerConfig{Name: "alpha"})
	cs := f.connect(t, "/mcp", "2025-11-25", nil)
	f.waitTools(t, cs, "alpha__sleep")
	if err := cs.Close(); err != nil {
		t.Fatal(err)
	}
	return f
}

const rawInitialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// ping sends a ping in session sid on /mcp.
func (f *fixture) ping(t *testing.T, sid string) *rawResponse {
	t.Helper()
	h := mcpHeaders("2025-11-25")
	h["Mcp-Session-Id"] = sid
	return f.send(t, http.MethodPost, "/mcp", h, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
}

// checkRPCRefusal fails unless r is an HTTP status want with a JSON-RPC
// error body (application/json) of code whose message contains text.
func checkRPCRefusal(t *testing.T, what string, r *rawResponse, want, code int, text string) {
	t.Helper()
	if r.status != want {
		t.Errorf("%s: %d %s, want %d", what, r.status, r.body, want)
		return
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s: Content-Type %q, want application/json (%s)", what, ct, r.body)
		return
	}
	if e := r.err(t); e.Code != code || !strings.Contains(e.Message, text) {
		t.Errorf("%s: error %+v, want code %d and a message with %q", what, e, code, text)
	}
}

// TestSessionLimitEndsLeastRecentlyUsed: at its token's limit, a new
// session takes the place of the least recently used one with nothing in
// flight, whose next request gets 404 (a JSON-RPC error, as for any
// unknown session); only when every session of the token has a request
// in progress is the new one refused, 429 with a JSON-RPC error naming
// the limit, until one is done.
func TestSessionLimitEndsLeastRecentlyUsed(t *testing.T) {
	f := newLimitFixture(t, 3)
	s1, s2, s3 := f.rawSession(t, "/mcp"), f.rawSession(t, "/mcp"), f.rawSession(t, "/mcp")
	// A request's answer can reach the client before its handler returns
	// (the first session's notifications/initialized waits for the
	// server's process), and a session is used until then: wait for every
	// handler to return, then use s3 and s1, so that s2 is the least
	// recently used.
	testutil.Eventually(t, 10*time.Second, "the three sessions' handlers to return", func() bool {
		return gateway.SessionIdle(f.gw, s1) && gateway.SessionIdle(f.gw, s2) && gateway.SessionIdle(f.gw, s3)
	})
	for _, sid := range []string{s3, s1} {
		if r := f.ping(t, sid); r.status != 200 {
			t.Fatalf("ping: %d %s", r.status, r.body)
		}
	}
	testutil.Eventually(t, 10*time.Second, "the pings' handlers to return", func() bool {
		return gateway.SessionIdle(f.gw, s1) && gateway.SessionIdle(f.gw, s3)
	})
	s4 := f.rawSession(t, "/mcp") // s2 is the least recently used now
	checkRPCRefusal(t, "the least recently used session", f.ping(t, s2), http.StatusNotFound, -32001, "session not found")
	if gateway.SessionOpen(f.gw, s2) {
		t.Errorf("the session ended for a new one is still open")
	}
	for _, sid := range []string{s1, s3, s4} {
		if r := f.ping(t, sid); r.status != 200 {
			t.Errorf("a session more recently used: %d %s", r.status, r.body)
		}
	}

	// Every session busy: s1, s3 and s4 each wait for a long call.
	inFlight := func() int {
		st, _ := f.sup.Status("alpha")
		n := 0
		for _, p := range st.Processes {
			n += p.InFlight
		}
		return n
	}
	drops := map[string]context.CancelFunc{}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		for _, drop := range drops {
			drop()
		}
		wg.Wait()
	})
	for _, sid := range []string{s1, s3, s4} {
		ctx, drop := context.WithCancel(t.Context())
		drops[sid] = drop
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, f.url+"/mcp", strings.NewReader(
			`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"alpha__sleep","arguments":{"ms":60000}}}`))
		for k, v := range mcpHeaders("2025-11-25") {
			req.Header.Set(k, v)
		}
		req.Header.Set("Mcp-Session-Id", sid)
		wg.Go(func() {
			if resp, err := http.DefaultClient.Do(req); err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
	testutil.Eventually(t, 20*time.Second, "the three calls to reach alpha", func() bool { return inFlight() == 3 })
	checkRPCRefusal(t, "a fourth session while the three are busy", f.send(t, http.MethodPost, "/mcp", mcpHeaders(""), rawInitialize),
		http.StatusTooManyRequests, -32000, "the limit is 3")

	// s3's client gives up: s3 has nothing in flight, and makes room.
	drops[s3]()
	var s5 string
	testutil.Eventually(t, 20*time.Second, "a new session to take s3's place", func() bool {
		r := f.send(t, http.MethodPost, "/mcp", mcpHeaders(""), rawInitialize)
		s5 = r.header.Get("Mcp-Session-Id")
		return r.status == 200 && s5 != ""
	})
	checkRPCRefusal(t, "the session whose client gave up", f.ping(t, s3), http.StatusNotFound, -32001, "session not found")
	for _, sid := range []string{s1, s4} {
		if !gateway.SessionOpen(f.gw, sid) {
			t.Errorf("a busy session was ended for a new one")
		}
	}
	testutil.Eventually(t, 15*time.Second, "s3's call to be cancelled with its session", func() bool { return inFlight() == 2 })
}

// TestSimultaneousInitializes: 60 sessions opening at once on one token
// with 2 open (the default limit is 64) all open, and none ends another:
// an opening session counts once, also while its answer is on its way
// out. Each initialize is held in the middle of its answer (after its
// headers) until the 60 are, the next one starting once the one before
// is held there.
func TestSimultaneousInitializes(t *testing.T) {
	f := newLimitFixture(t, 0)
	open := []string{f.rawSession(t, "/mcp"), f.rawSession(t, "/mcp")}
	const n = 60
	h := f.gw.Handler()
	release := make(chan struct{})
	var wg sync.WaitGroup
	defer wg.Wait()
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	statuses := map[int]int{}
	for range n {
		w := &heldWriter{header: http.Header{}, status: make(chan int, 1), release: release}
		req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/mcp", strings.NewReader(rawInitialize))
		for k, v := range mcpHeaders("") {
			req.Header.Set(k, v)
		}
		wg.Go(func() { h.ServeHTTP(w, req) })
		select {
		case status := <-w.status:
			statuses[status]++
			if id := w.header.Get("Mcp-Session-Id"); status == 200 && id != "" {
				open = append(open, id)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("no answer to an initialize after %v", statuses)
		}
	}
	close(release)
	wg.Wait()
	if statuses[200] != n {
		t.Errorf("%d initializes opening at once: statuses %v, want %d × 200", n, statuses, n)
	}
	ended := 0
	for _, sid := range open {
		if r := f.ping(t, sid); r.status != 200 {
			ended++
		}
	}
	if ended > 0 {
		t.Errorf("%d of the %d sessions were ended: the limit was taken as reached", ended, len(open))
	}
	t.Logf("%d initializes opening at once with 2 sessions open: %v; %d sessions answer", n, statuses, len(open)-ended)
}

// heldWriter is the ResponseWriter of a request whose answer, once its
// headers are out (told on status), is held until release closes: a
// client reading it slowly. A refusal is not held.
type heldWriter struct {
	header  http.Header
	status  chan int // buffered: the status, once
	code    int
	release <-chan struct{}
}

func (w *heldWriter) Header() http.Header { return w.header }

func (w *heldWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
		w.status <- code
	}
}

func (w *heldWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	if w.code == http.StatusOK {
		<-w.release
	}
	return len(b), nil
}

func (w *heldWriter) Flush() { w.WriteHeader(http.StatusOK) }

// TestRefusedDeleteEndsNothing: a DELETE of a session on another endpoint
// than the session's is refused (404) and ends nothing: the session's call
// in flight goes on to its answer, and the session answers after.
func TestRefusedDeleteEndsNothing(t *testing.T) {
	f := newLimitFixture(t, 0)
	sid := f.rawSession(t, "/mcp")
	h := mcpHeaders("2025-11-25")
	h["Mcp-Session-Id"] = sid
	answer := make(chan *rawResponse, 1)
	go func() {
		answer <- f.send(t, http.MethodPost, "/mcp", h,
			`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"alpha__sleep","arguments":{"ms":2000}}}`)
	}()
	testutil.Eventually(t, 10*time.Second, "the call to reach alpha", func() bool {
		st, _ := f.sup.Status("alpha")
		for _, p := range st.Processes {
			if p.InFlight > 0 {
				return true
			}
		}
		return false
	})
	checkRPCRefusal(t, "a DELETE on another endpoint", f.send(t, http.MethodDelete, "/mcp/alpha", h, ""),
		http.StatusNotFound, -32001, "session not found")
	select {
	case r := <-answer:
		if !strings.Contains(string(r.body), "slept 2000 ms") {
			t.Errorf("the call after a refused DELETE of its session: %d %s", r.status, r.body)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no answer to the call")
	}
	if r := f.ping(t, sid); r.status != 200 {
		t.Errorf("the session after a refused DELETE: %d %s", r.status, r.body)
	}
}
