package gateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/app/gateway"
	"github.com/switchboardhq/switchboard/app/internal/testutil"
	"github.com/switchboardhq/switchboard/supervisor"
	"github.com/switchboardhq/switchboard/supervisor/testmcp"
)

// rawResponse is an HTTP answer of the MCP endpoint, with the JSON-RPC
// message it carried (from a JSON body or the first SSE data event).
type rawResponse struct {
	status int
	header http.Header
	body   []byte
	msg    map[string]json.RawMessage
}

// rawError is a JSON-RPC error object.
type rawError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

func (r *rawResponse) err(t *testing.T) rawError {
	t.Helper()
	var e rawError
	if r.msg == nil || json.Unmarshal(r.msg["error"], &e) != nil {
		t.Fatalf("status %d: body %q is not a JSON-RPC error", r.status, r.body)
	}
	return e
}

// mcpHeaders are what a well-behaved client sends with a POST.
func mcpHeaders(version string) map[string]string {
	h := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
	if version != "" {
		h["MCP-Protocol-Version"] = version
	}
	return h
}

// send sends one raw request; header values "" remove a header.
func (f *fixture) send(t *testing.T, method, path string, header map[string]string, body string) *rawResponse {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, f.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		if v != "" {
			req.Header.Set(k, v)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := &rawResponse{status: resp.StatusCode, header: resp.Header}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data:"); ok && strings.TrimSpace(data) != "" {
				out.body = []byte(strings.TrimSpace(data))
				break
			}
		}
	} else {
		out.body, _ = io.ReadAll(resp.Body)
	}
	_ = json.Unmarshal(out.body, &out.msg)
	return out
}

// rawSession opens a session-era session on path by hand and returns its id.
func (f *fixture) rawSession(t *testing.T, path string) string {
	t.Helper()
	init := f.send(t, "POST", path, mcpHeaders(""), `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	id := init.header.Get("Mcp-Session-Id")
	if init.status != 200 || id == "" {
		t.Fatalf("initialize: %d %s", init.status, init.body)
	}
	h := mcpHeaders("2025-11-25")
	h["Mcp-Session-Id"] = id
	if r := f.send(t, "POST", path, h, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); r.status != 202 {
		t.Fatalf("initialized: %d %s", r.status, r.body)
	}
	t.Cleanup(func() { // end the session, as a client's Close does
		req, _ := http.NewRequest(http.MethodDelete, f.url+path, nil)
		req.Header.Set("Mcp-Session-Id", id)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	})
	return id
}

// statelessCall is a 2026-07-28 request body with its per-request _meta.
func statelessCall(method, params string, caps string) string {
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":` + caps + `}`
	if params == "" {
		params = "{" + meta + "}"
	} else {
		params = strings.TrimSuffix(params, "}") + "," + meta + "}"
	}
	return `{"jsonrpc":"2.0","id":7,"method":"` + method + `","params":` + params + `}`
}

// refusalEndpoints are the kinds of MCP endpoint a refusal is checked on:
// the aggregate, a server's and a profile's (newRefusalFixture).
var refusalEndpoints = []string{"/mcp", "/mcp/alpha", "/mcp/p/coding"}

// newRefusalFixture serves alpha on refusalEndpoints.
func newRefusalFixture(t *testing.T) *fixture {
	f := newFixture(t, gateway.ServerConfig{Name: "alpha"})
	f.gw.SetProfiles([]gateway.ProfileConfig{{Name: "coding", Servers: []string{"alpha"}}})
	f.waitTools(t, f.connect(t, "/mcp", "2025-11-25", nil), "alpha__echo")
	return f
}

// TestHTTPRefusals checks the HTTP-level answers the spec's transport rules
// and the official SDKs give, on each kind of endpoint and in both eras.
func TestHTTPRefusals(t *testing.T) {
	f := newRefusalFixture(t)
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`
	for _, path := range refusalEndpoints {
		for _, era := range []string{"2025-11-25", "2026-07-28"} {
			t.Run(path+"/"+era, func(t *testing.T) {
				for _, tt := range []struct {
					name   string
					header map[string]string
					body   string
					status int
					code   int
				}{
					{"Accept JSON only", map[string]string{"Accept": "application/json"}, list, 406, -32000},
					{"Accept SSE only", map[string]string{"Accept": "text/event-stream"}, list, 406, -32000},
					{"no Accept", map[string]string{"Accept": ""}, list, 406, -32000},
					{"Content-Type text", map[string]string{"Content-Type": "text/plain"}, list, 415, -32000},
					{"truncated JSON", nil, `{"jsonrpc":"2.0","id":1,"method":`, 400, -32700},
					{"not JSON", nil, `hello`, 400, -32700},
					{"JSON object, not JSON-RPC", nil, `{"foo":1}`, 400, -32600},
					{"JSON number", nil, `42`, 400, -32600},
					{"empty batch", nil, `[]`, 400, -32600},
					{"wrong version", nil, `{"jsonrpc":"1.0","id":1,"method":"tools/list"}`, 400, -32600},
					{"method not a string", nil, `{"jsonrpc":"2.0","id":1,"method":7}`, 400, -32600},
				} {
					h := mcpHeaders(era)
					for k, v := range tt.header {
						h[k] = v
					}
					r := f.send(t, "POST", path, h, tt.body)
					if r.status != tt.status {
						t.Errorf("%s: status %d, want %d (body %s)", tt.name, r.status, tt.status, r.body)
						continue
					}
					if ct := r.header.Get("Content-Type"); ct != "application/json" {
						t.Errorf("%s: Content-Type %q, want application/json", tt.name, ct)
					}
					if e := r.err(t); e.Code != tt.code || e.Message == "" {
						t.Errorf("%s: error %+v, want code %d", tt.name, e, tt.code)
					}
					if string(r.msg["id"]) != "null" || string(r.msg["jsonrpc"]) != `"2.0"` {
						t.Errorf("%s: body %s, want a JSON-RPC error with id null", tt.name, r.body)
					}
				}
			})
		}
		t.Run(path+"/stateless GET and DELETE", func(t *testing.T) {
			for _, method := range []string{"GET", "DELETE"} {
				h := map[string]string{"Accept": "text/event-stream", "MCP-Protocol-Version": "2026-07-28", "Mcp-Session-Id": "whatever"}
				r := f.send(t, method, path, h, "")
				if r.status != 405 || r.header.Get("Allow") != "POST" {
					t.Errorf("%s: %d, Allow %q, want 405 with Allow: POST (body %s)", method, r.status, r.header.Get("Allow"), r.body)
				}
			}
			// The session era keeps its GET stream and DELETE.
			h := map[string]string{"Accept": "text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
			if r := f.send(t, "GET", path, h, ""); r.status != 400 {
				t.Errorf("session-era GET without a session: %d, want 400", r.status)
			}
		})
	}
}

// TestRefusalsAreJSONRPC: every refusal of a request on an MCP endpoint,
// the gateway's own and those the go-sdk's handlers write (as plain text,
// made JSON by jsonRefusals), is a JSON-RPC error served as
// application/json, in a session and outside one, in both eras. (The
// session guard's refusals, 429 and the 404 of an unknown session, are
// its own: see sessionguard_test.go.)
func TestRefusalsAreJSONRPC(t *testing.T) {
	f := newRefusalFixture(t)
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	tooBig := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"alpha__echo","arguments":{"text":"` +
		strings.Repeat("x", gateway.MaxRequestBody) + `"}}}`
	stateless := mcpHeaders("2026-07-28")
	stateless["Mcp-Method"] = "nope/nope"
	for _, path := range refusalEndpoints {
		t.Run(path, func(t *testing.T) {
			session := mcpHeaders("2025-11-25")
			session["Mcp-Session-Id"] = f.rawSession(t, path)
			for _, tt := range []struct {
				name, method string
				header       map[string]string
				body         string
				status, code int
			}{
				{"a batch in a session of 2025-11-25", "POST", session, "[" + list + "]", 400, -32600},
				{"a method nobody serves, in a session", "POST", session, `{"jsonrpc":"2.0","id":1,"method":"nope/nope"}`, 400, -32600},
				{"a method nobody serves, outside a session", "POST", mcpHeaders("2025-11-25"), `{"jsonrpc":"2.0","id":1,"method":"nope/nope"}`, 400, -32600},
				{"a method nobody serves, stateless", "POST", stateless, statelessCall("nope/nope", "", "{}"), 404, -32601},
				{"an unknown protocol version", "POST", mcpHeaders("1999-01-01"), list, 400, -32600},
				{"a body over the limit", "POST", session, tooBig, 413, -32000},
				{"GET without a session", "GET", map[string]string{"Accept": "text/event-stream"}, "", 400, -32600},
				{"GET of a session without Accept: text/event-stream", "GET", map[string]string{"Accept": "application/json",
					"Mcp-Session-Id": session["Mcp-Session-Id"], "MCP-Protocol-Version": "2025-11-25"}, "", 400, -32600},
				{"DELETE without a session", "DELETE", nil, "", 400, -32600},
				{"PUT", "PUT", session, list, 405, -32000},
			} {
				r := f.send(t, tt.method, path, tt.header, tt.body)
				if r.status != tt.status {
					t.Errorf("%s: status %d, want %d (body %.200s)", tt.name, r.status, tt.status, r.body)
					continue
				}
				checkRefusal(t, tt.name, r.header, r.body, tt.code)
			}
		})
	}
}

// TestStatelessDiscover: in the 2026-07-28 era, server/discover advertises
// what the endpoint serves in that era: no logging (logging/setLevel is
// gone from the era, and no server's log reaches a stateless request),
// and resource subscriptions, which subscriptions/listen serves: a listen
// for a resource is acknowledged and gets the resource's update. The
// session era's initialize keeps logging.
func TestStatelessDiscover(t *testing.T) {
	f := newRefusalFixture(t)
	for _, path := range refusalEndpoints {
		t.Run(path, func(t *testing.T) {
			h := mcpHeaders("2026-07-28")
			h["Mcp-Method"] = "server/discover"
			r := f.send(t, "POST", path, h, statelessCall("server/discover", "", "{}"))
			var discover struct {
				Capabilities map[string]json.RawMessage `json:"capabilities"`
			}
			if r.status != 200 || json.Unmarshal(r.msg["result"], &discover) != nil {
				t.Fatalf("server/discover: %d %s", r.status, r.body)
			}
			if _, ok := discover.Capabilities["logging"]; ok {
				t.Errorf("server/discover of 2026-07-28 advertises logging: %s", r.msg["result"])
			}
			for key, want := range map[string]string{"tools": `{"listChanged":true}`, "prompts": `{"listChanged":true}`,
				"resources": `{"listChanged":true,"subscribe":true}`, "completions": `{}`} {
				if got := string(discover.Capabilities[key]); got != want {
					t.Errorf("server/discover capability %s: %s, want %s", key, got, want)
				}
			}
			h["Mcp-Method"] = "logging/setLevel"
			if r := f.send(t, "POST", path, h, statelessCall("logging/setLevel", `{"level":"debug"}`, "{}")); r.err(t).Code != -32601 {
				t.Errorf("logging/setLevel of 2026-07-28: %d %s, want -32601", r.status, r.body)
			}
			checkStatelessResourceSubscription(t, f, path)

			// The session era serves logging, and says so.
			init := f.send(t, "POST", path, mcpHeaders(""), `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
			var initialized struct {
				Capabilities map[string]json.RawMessage `json:"capabilities"`
			}
			if json.Unmarshal(init.msg["result"], &initialized) != nil || initialized.Capabilities["logging"] == nil {
				t.Errorf("initialize of 2025-11-25: %d %s, want the logging capability", init.status, init.body)
			}
		})
	}
}

// checkStatelessResourceSubscription opens a 2026-07-28 subscriptions/listen
// for alpha's hello resource on path, and checks that it is acknowledged
// with the resource and gets its update once alpha's touch tool is called.
func checkStatelessResourceSubscription(t *testing.T, f *fixture, path string) {
	t.Helper()
	const uri = "test://static/hello"
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	body := statelessCall("subscriptions/listen", `{"notifications":{"resourceSubscriptions":["`+uri+`"]}}`, "{}")
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, f.url+path, strings.NewReader(body))
	for k, v := range mcpHeaders("2026-07-28") {
		req.Header.Set(k, v)
	}
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	touch := "alpha__touch"
	if path == "/mcp/alpha" {
		touch = "touch"
	}
	sc := bufio.NewScanner(resp.Body)
	var acknowledged bool
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var msg struct {
			Method string `json:"method"`
			Params struct {
				URI           string `json:"uri"`
				Notifications struct {
					ResourceSubscriptions []string `json:"resourceSubscriptions"`
				} `json:"notifications"`
			} `json:"params"`
		}
		_ = json.Unmarshal([]byte(data), &msg)
		switch msg.Method {
		case "notifications/subscriptions/acknowledged":
			if !slices.Equal(msg.Params.Notifications.ResourceSubscriptions, []string{uri}) {
				t.Fatalf("%s: subscriptions/listen acknowledged %s, want the resource %s", path, data, uri)
			}
			acknowledged = true
			h := mcpHeaders("2026-07-28")
			h["Mcp-Method"], h["Mcp-Name"] = "tools/call", touch
			if r := f.send(t, "POST", path, h, statelessCall("tools/call", `{"name":"`+touch+`","arguments":{"uri":"`+uri+`"}}`, "{}")); r.status != 200 {
				t.Fatalf("%s: %s: %d %s", path, touch, r.status, r.body)
			}
		case "notifications/resources/updated":
			if !acknowledged || msg.Params.URI != uri {
				t.Fatalf("%s: %s before the acknowledgement", path, data)
			}
			return
		}
	}
	t.Fatalf("%s: the listen ended (%v) without the resource's update (acknowledged %v)", path, sc.Err(), acknowledged)
}

// TestProtocolVersionErrors: the stateless era's errors about versions.
func TestProtocolVersionErrors(t *testing.T) {
	f := newFixture(t, gateway.ServerConfig{Name: "alpha"})
	f.waitTools(t, f.connect(t, "/mcp", "2025-11-25", nil), "alpha__echo")
	all := []string{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}
	for _, path := range []string{"/mcp", "/mcp/alpha"} {
		t.Run(path, func(t *testing.T) {
			// An unknown later version: the error lists every version served.
			body := strings.ReplaceAll(statelessCall("tools/list", "", "{}"), "2026-07-28", "2099-01-01")
			h := mcpHeaders("2099-01-01")
			h["Mcp-Method"] = "tools/list"
			r := f.send(t, "POST", path, h, body)
			e := r.err(t)
			var data struct {
				Supported []string `json:"supported"`
			}
			_ = json.Unmarshal(e.Data, &data)
			if r.status != 200 && r.status != 400 || e.Code != -32022 || !slices.Equal(data.Supported, all) {
				t.Errorf("version 2099-01-01: %d %+v, want -32022 listing %v", r.status, e, all)
			}
			// The per-request version without the header: the header is
			// required (not "only legacy versions are supported").
			r = f.send(t, "POST", path, mcpHeaders(""), statelessCall("tools/list", "", "{}"))
			if e := r.err(t); r.status != 400 || e.Code != -32020 {
				t.Errorf("_meta version without the header: %d %+v, want 400 with -32020", r.status, e)
			}
			// A stateless request carrying a stale session id is served.
			h = mcpHeaders("2026-07-28")
			h["Mcp-Session-Id"], h["Mcp-Method"] = "stale", "tools/list"
			r = f.send(t, "POST", path, h, statelessCall("tools/list", "", "{}"))
			if r.status != 200 || r.msg["result"] == nil {
				t.Errorf("stateless tools/list with a session id: %d %s", r.status, r.body)
			}
			// An old unknown version is refused with every version listed.
			r = f.send(t, "POST", path, mcpHeaders("1999-01-01"), `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
			if r.status != 400 || !strings.Contains(string(r.body), "2026-07-28") {
				t.Errorf("version 1999-01-01: %d %s, want 400 listing 2026-07-28", r.status, r.body)
			}
		})
	}
}

// TestEraFields: the 2026-07-28 era's cache and result-type fields reach
// only its clients, and an input-required result carries no content.
func TestEraFields(t *testing.T) {
	f := newFixture(t, gateway.ServerConfig{Name: "alpha"})
	f.waitTools(t, f.connect(t, "/mcp", "2025-11-25", nil), "alpha__echo")
	for _, path := range []string{"/mcp", "/mcp/alpha"} {
		prefix := "alpha__"
		if path != "/mcp" {
			prefix = ""
		}
		t.Run(path+"/session era", func(t *testing.T) {
			h := mcpHeaders("2025-11-25")
			h["Mcp-Session-Id"] = f.rawSession(t, path)
			for _, req := range []string{
				`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`,
				`{"jsonrpc":"2.0","id":3,"method":"prompts/list","params":{}}`,
				`{"jsonrpc":"2.0","id":4,"method":"resources/list","params":{}}`,
				`{"jsonrpc":"2.0","id":5,"method":"resources/templates/list","params":{}}`,
				`{"jsonrpc":"2.0","id":6,"method":"resources/read","params":{"uri":"test://items/5"}}`,
				`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + prefix + `echo","arguments":{"text":"hi"}}}`,
				`{"jsonrpc":"2.0","id":8,"method":"prompts/get","params":{"name":"` + prefix + `greet","arguments":{"name":"Ada"}}}`,
			} {
				r := f.send(t, "POST", path, h, req)
				var result map[string]json.RawMessage
				if r.status != 200 || json.Unmarshal(r.msg["result"], &result) != nil {
					t.Errorf("%s: %d %s", req, r.status, r.body)
					continue
				}
				for _, k := range []string{"ttlMs", "cacheScope", "resultType"} {
					if _, ok := result[k]; ok {
						t.Errorf("%s: a session-era result carries %q: %s", req, k, r.body)
					}
				}
			}
		})
		t.Run(path+"/stateless era", func(t *testing.T) {
			h := mcpHeaders("2026-07-28")
			h["Mcp-Method"] = "tools/list"
			r := f.send(t, "POST", path, h, statelessCall("tools/list", "", "{}"))
			var result map[string]json.RawMessage
			_ = json.Unmarshal(r.msg["result"], &result)
			if _, ok := result["ttlMs"]; !ok || string(result["resultType"]) != `"complete"` {
				t.Errorf("stateless tools/list lacks its era's fields: %s", r.body)
			}
			h["Mcp-Method"], h["Mcp-Name"] = "tools/call", prefix+"sample"
			r = f.send(t, "POST", path, h, statelessCall("tools/call", `{"name":"`+prefix+`sample","arguments":{"prompt":"x"}}`, `{"sampling":{}}`))
			result = nil
			_ = json.Unmarshal(r.msg["result"], &result)
			if string(result["resultType"]) != `"input_required"` || result["inputRequests"] == nil || result["requestState"] == nil {
				t.Fatalf("sample: %d %s, want an input-required result", r.status, r.body)
			}
			if c, ok := result["content"]; ok {
				t.Errorf("an input-required result carries content %s: %s", c, r.body)
			}
			var meta map[string]json.RawMessage
			if json.Unmarshal(result["_meta"], &meta) != nil || meta[mcp.MetaKeyServerInfo] == nil {
				t.Errorf("an input-required result lost the server's info: %s", r.body)
			}
		})
	}
}

// TestSubscribeToTemplatedResource: a URI that only a server's template
// matches can be subscribed to on /mcp, and its updates arrive; with one
// server enabled, any URI goes to it.
func TestSubscribeToTemplatedResource(t *testing.T) {
	// One process: the subscription and the touch that fires its update
	// must reach the same one.
	spec := supervisor.Spec{Name: "alpha", Command: os.Args[0], Env: testEnv(testmcp.Options{Name: "alpha"}),
		Pool: supervisor.PoolSpec{Max: 1}}
	f := newSpecFixture(t, "", []supervisor.Spec{spec}, gateway.ServerConfig{Name: "alpha"})
	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(era, func(t *testing.T) {
			updates := make(chan string, 10)
			cs := f.connect(t, "/mcp", era, &mcp.ClientOptions{
				ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) { updates <- req.Params.URI },
			})
			f.waitTools(t, cs, "alpha__touch")
			for _, uri := range []string{"test://items/42", "test://unlisted/thing"} {
				checkSubscription(t, cs, updates, uri, func(args map[string]any) (*mcp.CallToolResult, error) {
					return cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__touch", Arguments: args})
				})
				for len(updates) > 0 {
					<-updates
				}
			}
		})
	}
}

// checkSubscription subscribes cs to uri, has the server touch it (touch
// calls alpha__touch, however the endpoint offers it) until the server
// knows of the subscription, waits for the update on updates (fed by cs's
// ResourceUpdatedHandler), and unsubscribes.
func checkSubscription(t *testing.T, cs *mcp.ClientSession, updates <-chan string, uri string, touch func(args map[string]any) (*mcp.CallToolResult, error)) {
	t.Helper()
	if err := cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: uri}); err != nil {
		t.Fatalf("subscribe %s: %v", uri, err)
	}
	testutil.Eventually(t, 10*time.Second, "the server to know of the subscription to "+uri, func() bool {
		res, err := touch(map[string]any{"uri": uri})
		if err != nil || res.IsError {
			t.Fatalf("touch: %v %+v", err, res)
		}
		var out struct{ Subscribed bool }
		data, _ := json.Marshal(res.StructuredContent)
		_ = json.Unmarshal(data, &out)
		return out.Subscribed
	})
	select {
	case got := <-updates:
		if got != uri {
			t.Errorf("update for %q, want %q", got, uri)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("no update for %s", uri)
	}
	if err := cs.Unsubscribe(t.Context(), &mcp.UnsubscribeParams{URI: uri}); err != nil {
		t.Errorf("unsubscribe %s: %v", uri, err)
	}
}
