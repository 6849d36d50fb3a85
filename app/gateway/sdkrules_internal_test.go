package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The comparison tests of sdkrules.go: each rule the fast path shares with
// the go-sdk gets the same input as the SDK's own code, and the answers
// must agree.

const sdkRuleTimeout = 10 * time.Second

// TestSDKRuleHostCheck compares hostChecked with the DNS-rebinding
// protection of the SDK's streamable handler: for every pair of the
// address a request reached and its Host, the SDK answers 403 exactly when
// hostChecked refuses it.
func TestSDKRuleHostCheck(t *testing.T) {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server {
		return mcp.NewServer(&mcp.Implementation{Name: "rules", Version: "1"}, nil)
	}, nil)
	locals := []net.Addr{
		nil,
		&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 7391},
		&net.TCPAddr{IP: net.IPv4(127, 9, 8, 7), Port: 7391},
		&net.TCPAddr{IP: net.IPv6loopback, Port: 7391},
		&net.TCPAddr{IP: net.IPv4(192, 168, 1, 2), Port: 7391},
		&net.TCPAddr{IP: net.IPv6unspecified, Port: 7391},
	}
	hosts := []string{
		"localhost", "localhost:7391", "127.0.0.1", "127.0.0.1:7391", "127.1.2.3:80", "[::1]:7391", "[::1]", "::1",
		"[::ffff:127.0.0.1]:7391", "LOCALHOST", "Localhost:1", "localhost.", "127.0.0.1.", "0177.0.0.1", "127.1",
		"0.0.0.0", "[::]:1", "", "evil.example", "evil.example:7391", "localhost.evil.example", "127.0.0.1.nip.io",
		"localhost:abc", "[localhost]:80", "127.0.0.1:80:90", "[127.0.0.1]", "%31%32%37.0.0.1", "192.168.1.2:7391",
	}
	compared := 0
	for _, local := range locals {
		for _, host := range hosts {
			r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{}`))
			r.Host = host
			if local != nil {
				r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, local))
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			sdkRefused := rec.Code == http.StatusForbidden && strings.Contains(rec.Body.String(), "invalid Host header")
			if got := !hostChecked(r); got != sdkRefused {
				t.Errorf("local %v, Host %q: hostChecked refuses = %v, the SDK's handler refuses = %v (%d %q)",
					local, host, got, sdkRefused, rec.Code, rec.Body.String())
			}
			compared++
		}
	}
	t.Logf("%d requests compared", compared)
}

// TestSDKRuleProtocolVersions compares sessionVersion with the versions
// the SDK's streamable transport serves a session: every version the SDK
// knows and some it does not. A version sessionVersion takes also passes
// the handler's MCP-Protocol-Version check.
func TestSDKRuleProtocolVersions(t *testing.T) {
	versions := append(mcp.SupportedProtocolVersions(), "2024-10-07", "2025-01-01", "2025-11-24", "2026-07-28", "2026-12-31", "2099-01-01", "latest", "2025-11-25 ")
	stateful := &mcp.StreamableServerTransport{}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server {
		return mcp.NewServer(&mcp.Implementation{Name: "rules", Version: "1"}, nil)
	}, nil)
	for _, v := range versions {
		if got, want := sessionVersion(v), stateful.SupportsProtocolVersion(v); got != want {
			t.Errorf("sessionVersion(%q) = %v, the SDK's session transport supports it: %v", v, got, want)
		}
		if !sessionVersion(v) {
			continue
		}
		r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		r.Header.Set("MCP-Protocol-Version", v)
		r.Header.Set("Mcp-Session-Id", "unknown")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		if strings.Contains(rec.Body.String(), "Unsupported protocol version") {
			t.Errorf("sessionVersion takes %q, which the SDK's handler refuses: %d %q", v, rec.Code, rec.Body.String())
		}
	}
	if !sessionVersion("") {
		t.Error(`sessionVersion("") = false, want true: a request without the header has the session's version`)
	}
}

// TestSDKRuleDuplicateID compares refuseDuplicate with the SDK handler's
// answer to a call whose id is in flight on its session: same status,
// content type and JSON, for a number and a string id.
func TestSDKRuleDuplicateID(t *testing.T) {
	started := make(chan struct{}, 2)
	release := make(chan struct{})
	server := mcp.NewServer(&mcp.Implementation{Name: "rules", Version: "1"}, nil)
	server.AddTool(&mcp.Tool{Name: "block", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			started <- struct{}{}
			select {
			case <-release:
			case <-ctx.Done():
			}
			return &mcp.CallToolResult{}, nil
		})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
	defer ts.Close()
	client := ts.Client()
	post := func(sid, body string) *http.Response {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), sdkRuleTimeout)
		t.Cleanup(cancel)
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := post("", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatalf("initialize: no session id (%s)", resp.Status)
	}
	resp = post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	resp.Body.Close()
	defer func() { // the session ends, and its goroutines with it
		req, err := http.NewRequest(http.MethodDelete, ts.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Mcp-Session-Id", sid)
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
		} else {
			t.Errorf("ending the session: %v", err)
		}
	}()

	var wg sync.WaitGroup
	defer wg.Wait()
	defer close(release)
	for _, id := range []string{`7`, `"seven"`} {
		call := `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"block","arguments":{}}}`
		wg.Go(func() {
			resp := post(sid, call)
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		})
		select {
		case <-started:
		case <-time.After(sdkRuleTimeout):
			t.Fatalf("the call with id %s did not start", id)
		}
		dup := post(sid, call)
		sdkBody, err := io.ReadAll(dup.Body)
		dup.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		refuseDuplicate(rec, []byte(id))
		if rec.Code != dup.StatusCode {
			t.Errorf("id %s: refuseDuplicate answers %d, the SDK %d", id, rec.Code, dup.StatusCode)
		}
		if got, want := rec.Header().Get("Content-Type"), dup.Header.Get("Content-Type"); got != want {
			t.Errorf("id %s: refuseDuplicate's Content-Type %q, the SDK's %q", id, got, want)
		}
		if diff := cmp.Diff(decodeJSON(t, sdkBody), decodeJSON(t, rec.Body.Bytes())); diff != "" {
			t.Errorf("id %s: refuseDuplicate's answer differs from the SDK's (-sdk +fast):\n%s\nsdk: %s\nfast: %s", id, diff, sdkBody, rec.Body.Bytes())
		}
	}
}

func decodeJSON(t *testing.T, data []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(bytes.TrimSpace(data), &v); err != nil {
		t.Fatalf("not JSON: %q: %v", data, err)
	}
	return v
}

// rawPeer is one end of an in-memory connection to an SDK session, driven
// message by message.
type rawPeer struct {
	t    *testing.T
	conn mcp.Connection
	ctx  context.Context
}

func (p *rawPeer) write(msg jsonrpc.Message) {
	p.t.Helper()
	if err := p.conn.Write(p.ctx, msg); err != nil {
		p.t.Fatalf("writing to the SDK's session: %v", err)
	}
}

func (p *rawPeer) request(id int64, method string, params string) {
	p.t.Helper()
	rid, _ := jsonrpc.MakeID(float64(id))
	p.write(&jsonrpc.Request{ID: rid, Method: method, Params: json.RawMessage(params)})
}

func (p *rawPeer) read() jsonrpc.Message {
	p.t.Helper()
	msg, err := p.conn.Read(p.ctx)
	if err != nil {
		p.t.Fatalf("reading from the SDK's session: %v", err)
	}
	return msg
}

// response reads messages up to the response to id.
func (p *rawPeer) response(id int64) *jsonrpc.Response {
	p.t.Helper()
	for {
		if r, ok := p.read().(*jsonrpc.Response); ok && r.ID.Raw() == id {
			return r
		}
	}
}

// connectRaw serves server over an in-memory connection and returns the
// client's end, initialized with capabilities.
func connectRaw(t *testing.T, server *mcp.Server, capabilities string) *rawPeer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), sdkRuleTimeout)
	t.Cleanup(cancel)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	conn, err := ct.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	p := &rawPeer{t: t, conn: conn, ctx: ctx}
	p.request(1, "initialize", `{"protocolVersion":"2025-11-25","capabilities":`+capabilities+`,"clientInfo":{"name":"t","version":"1"}}`)
	if r := p.response(1); r.Error != nil {
		t.Fatalf("initialize: %v", r.Error)
	}
	p.write(&jsonrpc.Request{Method: "notifications/initialized", Params: json.RawMessage(`{}`)})
	return p
}

// TestSDKRuleToolResultNormalized compares normalizeToolResult with what
// the SDK's server writes for a tool's result: the same JSON, for a result
// without content and one with.
func TestSDKRuleToolResultNormalized(t *testing.T) {
	results := []*mcp.CallToolResult{
		{},
		{IsError: true},
		{StructuredContent: map[string]any{"n": 1.0}},
		{Content: []mcp.Content{}},
		{Content: []mcp.Content{&mcp.TextContent{Text: "x"}}},
	}
	for i, want := range results {
		server := mcp.NewServer(&mcp.Implementation{Name: "rules", Version: "1"}, nil)
		server.AddTool(&mcp.Tool{Name: "r", InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				r := *want
				return &r, nil
			})
		p := connectRaw(t, server, `{}`)
		p.request(2, "tools/call", `{"name":"r","arguments":{}}`)
		resp := p.response(2)
		if resp.Error != nil {
			t.Fatalf("result %d: %v", i, resp.Error)
		}
		fast := *want
		normalizeToolResult(&fast)
		data, err := marshalNoEscape(&fast)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(decodeJSON(t, resp.Result), decodeJSON(t, data)); diff != "" {
			t.Errorf("result %d: the fast path's JSON differs from the SDK server's (-sdk +fast):\n%s", i, diff)
		}
	}
}

// TestSDKRuleCaseSensitiveDecoding compares decodeAnswer with how the
// SDK's ServerSession.Elicit decodes a client's answer: keys matched
// exactly (no "Action" for "action"), escapes decoded, the last of
// duplicate keys kept.
func TestSDKRuleCaseSensitiveDecoding(t *testing.T) {
	answers := []string{
		`{"action":"decline"}`,
		`{"Action":"accept","action":"decline"}`,
		`{"action":"decline","ACTION":"accept"}`,
		`{"\u0061ction":"cancel"}`,
		`{"action":"accept","action":"decline"}`,
		`{"action":"decline","_meta":{"k":1},"_Meta":{"j":2}}`,
		`{"action":"accept","content":{"a":"x"},"Content":{"a":"y"}}`,
		`{"action":"accept","CONTENT":{"a":"y"},"content":{"a":"x"}}`,
	}
	results := make(chan *mcp.ElicitResult, 1)
	errs := make(chan error, 1)
	server := mcp.NewServer(&mcp.Implementation{Name: "rules", Version: "1"}, nil)
	server.AddTool(&mcp.Tool{Name: "ask", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			r, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "?", RequestedSchema: map[string]any{
				"type": "object", "properties": map[string]any{"a": map[string]any{"type": "string"}}}})
			if err != nil {
				errs <- err
			} else {
				results <- r
			}
			return &mcp.CallToolResult{}, nil
		})
	p := connectRaw(t, server, `{"elicitation":{}}`)
	for i, answer := range answers {
		id := int64(10 + i)
		p.request(id, "tools/call", `{"name":"ask","arguments":{}}`)
		ask, ok := p.read().(*jsonrpc.Request)
		if !ok || ask.Method != "elicitation/create" {
			t.Fatalf("answer %d: the server did not ask (%+v)", i, ask)
		}
		p.write(&jsonrpc.Response{ID: ask.ID, Result: json.RawMessage(answer)})
		p.response(id)
		var sdk *mcp.ElicitResult
		select {
		case sdk = <-results:
		case err := <-errs:
			t.Fatalf("answer %s: the SDK refused it: %v (choose answers it takes)", answer, err)
		}
		var fast mcp.ElicitResult
		if err := decodeAnswer([]byte(answer), &fast); err != nil {
			t.Fatalf("answer %s: decodeAnswer: %v", answer, err)
		}
		if diff := cmp.Diff(sdk, &fast); diff != "" {
			t.Errorf("answer %s: decodeAnswer differs from the SDK (-sdk +fast):\n%s", answer, diff)
		}
	}
}

// TestSDKRuleClientError compares clientError with the SDK's decoding of
// a client's reply with that error member: the SDK takes the message
// exactly when clientError takes the error, and reads the same error.
func TestSDKRuleClientError(t *testing.T) {
	for _, obj := range []string{
		`{"code":-32000,"message":"no"}`, `{"code":1,"message":"x","data":{"a":1}}`, `{"code":""}`, `{"code":1.5}`,
		`{"Code":7,"message":"m"}`, `{"code":1,"message":2}`, `{}`, `null`, `[]`, `"x"`, `{"code":1,"MESSAGE":"m","message":"n"}`,
	} {
		msg, err := jsonrpc.DecodeMessage([]byte(`{"jsonrpc":"2.0","id":"a","error":` + obj + `}`))
		var sdk *jsonrpc.Error
		if resp, ok := msg.(*jsonrpc.Response); err == nil && ok {
			sdk, _ = resp.Error.(*jsonrpc.Error)
		}
		fast, ok := clientError([]byte(obj))
		if ok != (sdk != nil) {
			t.Errorf("error %s: clientError takes it: %v, the SDK reads an error: %v (%v)", obj, ok, sdk != nil, err)
			continue
		}
		if ok && !cmp.Equal(fast, sdk) {
			t.Errorf("error %s: clientError reads %+v, the SDK %+v", obj, fast, sdk)
		}
	}
}

// TestSDKRuleNullError gives a backend's response to the SDK's decoder and
// to fastEnvelope: where the fast path takes it, it reads an error exactly
// when the SDK does, and the same result; "error": null is none.
func TestSDKRuleNullError(t *testing.T) {
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":"sbf-1","result":{"a":1},"error":null}`,
		`{"jsonrpc":"2.0","id":"sbf-1","error":null,"result":{}}`,
		`{"jsonrpc":"2.0","id":"sbf-1","result":null,"error": null }`,
		`{"jsonrpc":"2.0","id":"sbf-1","error":null}`,
		`{"jsonrpc":"2.0","id":"sbf-1","error":{"code":-32602,"message":"no"}}`,
		`{"jsonrpc":"2.0","id":"sbf-1","result":{"a":1}}`,
	} {
		msg, err := jsonrpc.DecodeMessage([]byte(line))
		resp, isResp := msg.(*jsonrpc.Response)
		if err != nil || !isResp {
			t.Fatalf("%s: the SDK reads %T, %v; want a response", line, msg, err)
		}
		_, result, errObj, ok := fastEnvelope([]byte(line))
		if !ok {
			// Left to the go-sdk, which delivers it (deliverMessage): fine
			// for a response with neither member, which fastEnvelope
			// cannot tell a result of.
			if resp.Error == nil && resp.Result != nil {
				t.Errorf("%s: the fast path leaves to the SDK a plain result", line)
			}
			continue
		}
		if (errObj != nil) != (resp.Error != nil) {
			t.Errorf("%s: the fast path reads an error: %v (%s), the SDK: %v", line, errObj != nil, errObj, resp.Error)
		}
		if errObj == nil && string(result) != string(resp.Result) {
			t.Errorf("%s: the fast path reads result %s, the SDK %s", line, result, resp.Result)
		}
	}
}

// TestSDKClientIDsAreNumbers fails if the SDK's client ever sends a
// request with a string id: the gateway's own calls on a backend
// connection (fastback.go) use string ids starting fastIDPrefix, which
// must never meet the SDK client's on the same connection.
func TestSDKClientIDsAreNumbers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), sdkRuleTimeout)
	defer cancel()
	ct, st := mcp.NewInMemoryTransports()
	conn, err := st.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu  sync.Mutex
		ids []any
	)
	results := map[string]string{
		"initialize":     `{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true},"prompts":{},"resources":{}},"serverInfo":{"name":"raw","version":"1"}}`,
		"tools/list":     `{"tools":[{"name":"t","inputSchema":{"type":"object"}}]}`,
		"tools/call":     `{"content":[]}`,
		"prompts/list":   `{"prompts":[]}`,
		"resources/list": `{"resources":[]}`,
		"ping":           `{}`,
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			msg, err := conn.Read(ctx)
			if err != nil {
				return
			}
			req, ok := msg.(*jsonrpc.Request)
			if !ok || !req.IsCall() {
				continue
			}
			mu.Lock()
			ids = append(ids, req.ID.Raw())
			mu.Unlock()
			resp := &jsonrpc.Response{ID: req.ID}
			if res, ok := results[req.Method]; ok {
				resp.Result = json.RawMessage(res)
			} else {
				resp.Error = &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "no " + req.Method}
			}
			if conn.Write(ctx, resp) != nil {
				return
			}
		}
	})
	client := mcp.NewClient(&mcp.Implementation{Name: "switchboard", Version: "1"}, nil)
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	steps := []func() error{
		func() error { _, err := cs.ListTools(ctx, nil); return err },
		func() error { _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "t"}); return err },
		func() error { _, err := cs.ListPrompts(ctx, nil); return err },
		func() error { _, err := cs.ListResources(ctx, nil); return err },
		func() error { return cs.Ping(ctx, nil) },
	}
	for i, step := range steps {
		if err := step(); err != nil {
			t.Errorf("step %d: %v", i, err)
		}
	}
	_ = cs.Close()
	_ = conn.Close()
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if len(ids) < len(steps)+1 {
		t.Fatalf("the raw server saw %d requests, want at least %d", len(ids), len(steps)+1)
	}
	for _, id := range ids {
		if _, ok := id.(int64); !ok {
			t.Errorf("the SDK's client sent the id %#v (%T): the fast path's backend ids (%q...) rely on its ids being numbers", id, id, fastIDPrefix)
		}
	}
	if i := slices.IndexFunc(ids, func(id any) bool { s, ok := id.(string); return ok && strings.HasPrefix(s, fastIDPrefix) }); i >= 0 {
		t.Errorf("the SDK's client sent id %v, which is one of the fast path's", ids[i])
	}
	t.Logf("ids of the SDK's client: %s", fmt.Sprint(ids))
}
