package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/app/gateway"
	"github.com/switchboardhq/switchboard/supervisor"
)

// noBackends is a gateway's Backends without any process.
type noBackends struct{}

func (noBackends) Acquire(context.Context, string) (gateway.Lease, error) {
	return nil, errors.New("no process in this test")
}

func (noBackends) Subscribe(int) (<-chan *supervisor.Event, func()) {
	ch := make(chan *supervisor.Event)
	return ch, func() {}
}

// protectedGateway serves a gateway with one server, alpha, and no process
// at /mcp and /mcp/, behind e's API checks (Protect), as the daemon mounts
// it.
func protectedGateway(t *testing.T, e *testEnv) *httptest.Server {
	t.Helper()
	gw := gateway.New(gateway.Options{Backends: noBackends{}})
	t.Cleanup(gw.Close)
	gw.Sync([]gateway.ServerConfig{{Name: "alpha"}})
	mux := http.NewServeMux()
	h := e.api.Protect(gw.Handler())
	mux.Handle("/mcp", h)
	mux.Handle("/mcp/", h)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// TestMCPOriginSpellings: the MCP endpoints behind Protect accept an Origin
// that names this server by another loopback spelling than the Host (the
// "localhost" page talking to 127.0.0.1), while a browser's cross-site
// request is still refused.
func TestMCPOriginSpellings(t *testing.T) {
	e := newEnv(t)
	srv := protectedGateway(t, e)
	u, _ := url.Parse(srv.URL)
	port := u.Port()

	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"page","version":"1"}}}`
	tests := []struct {
		name, host, origin, site string
		want                     int
	}{
		{"Origin localhost, Host 127.0.0.1", "127.0.0.1:" + port, "http://localhost:" + port, "", 200},
		{"Origin [::1], Host 127.0.0.1", "127.0.0.1:" + port, "http://[::1]:" + port, "", 200},
		{"Origin 127.0.0.1, Host localhost", "localhost:" + port, "http://127.0.0.1:" + port, "", 200},
		{"Origin localhost, Host [::1]", "[::1]:" + port, "http://localhost:" + port, "", 200},
		{"same origin", "127.0.0.1:" + port, "http://127.0.0.1:" + port, "same-origin", 200},
		{"cross-site from localhost", "127.0.0.1:" + port, "http://localhost:" + port, "cross-site", 403},
		{"cross-site without Origin", "127.0.0.1:" + port, "", "cross-site", 403},
		{"same-site from another port", "127.0.0.1:" + port, "http://127.0.0.1:1", "same-site", 403},
		{"evil Origin", "127.0.0.1:" + port, "https://evil.example", "", 403},
	}
	// A request of each era: initialize, and a stateless server/discover.
	discover := `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"page","version":"1"}}}}`
	for _, path := range []string{"/mcp", "/mcp/alpha"} {
		for _, tt := range tests {
			for _, body := range []string{initialize, discover} {
				stateless := body == discover
				t.Run(path+"/"+tt.name+map[bool]string{true: "/stateless"}[stateless], func(t *testing.T) {
					req, _ := http.NewRequestWithContext(t.Context(), "POST", srv.URL+path, strings.NewReader(body))
					if stateless {
						req.Header.Set("MCP-Protocol-Version", "2026-07-28")
						req.Header.Set("Mcp-Method", "server/discover")
					}
					req.Host = tt.host
					req.Header.Set("Authorization", "Bearer "+e.token.Secret)
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Accept", "application/json, text/event-stream")
					if tt.origin != "" {
						req.Header.Set("Origin", tt.origin)
					}
					if tt.site != "" {
						req.Header.Set("Sec-Fetch-Site", tt.site)
					}
					resp, err := srv.Client().Do(req)
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
					if resp.StatusCode != tt.want {
						t.Errorf("status %d, want %d", resp.StatusCode, tt.want)
					}
					if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
						// End the session (the test checks for leaked goroutines).
						del, _ := http.NewRequestWithContext(t.Context(), "DELETE", srv.URL+path, nil)
						del.Header.Set("Authorization", "Bearer "+e.token.Secret)
						del.Header.Set("Mcp-Session-Id", id)
						if resp, err := srv.Client().Do(del); err == nil {
							resp.Body.Close()
						}
					} else if tt.want == 200 && !stateless {
						t.Error("initialize answered without a session")
					}
				})
			}
		}
	}
}

// TestMCPRefusalsThroughProtect: behind the daemon's checks, the MCP
// endpoints still answer malformed requests as the spec's transport rules
// say (the gateway's own tests cover every row).
func TestMCPRefusalsThroughProtect(t *testing.T) {
	e := newEnv(t)
	srv := protectedGateway(t, e)
	for _, path := range []string{"/mcp", "/mcp/alpha"} {
		for _, tt := range []struct {
			name, method, accept, version, body string
			status                              int
			code                                int
			allow                               string
		}{
			{"Accept without SSE", "POST", "application/json", "2025-11-25", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, 406, -32000, ""},
			{"unparsable body", "POST", "application/json, text/event-stream", "2026-07-28", `{"jsonrpc":`, 400, -32700, ""},
			{"not JSON-RPC", "POST", "application/json, text/event-stream", "2025-11-25", `{"hello":"world"}`, 400, -32600, ""},
			{"stateless GET", "GET", "text/event-stream", "2026-07-28", "", 405, -32600, "POST"},
		} {
			req, _ := http.NewRequestWithContext(t.Context(), tt.method, srv.URL+path, strings.NewReader(tt.body))
			req.Header.Set("Authorization", "Bearer "+e.token.Secret)
			req.Header.Set("Accept", tt.accept)
			req.Header.Set("MCP-Protocol-Version", tt.version)
			if tt.body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var msg struct {
				Error struct {
					Code int `json:"code"`
				} `json:"error"`
			}
			err = json.NewDecoder(resp.Body).Decode(&msg)
			resp.Body.Close()
			if resp.StatusCode != tt.status || err != nil || msg.Error.Code != tt.code || resp.Header.Get("Allow") != tt.allow {
				t.Errorf("%s %s: %d (JSON-RPC code %d, %v, Allow %q), want %d with code %d", path, tt.name,
					resp.StatusCode, msg.Error.Code, err, resp.Header.Get("Allow"), tt.status, tt.code)
			}
		}
	}
}

// TestMCPRefusedFromHeaders: what the daemon's checks refuse on an MCP
// endpoint before the gateway sees it (no token, a wrong one, a profile's
// token elsewhere, a foreign Host or Origin, a body not JSON) is a
// JSON-RPC error that names why, as the gateway's own refusals are; the
// API's refusals keep the API's error body.
func TestMCPRefusedFromHeaders(t *testing.T) {
	e := newEnv(t)
	srv := protectedGateway(t, e)
	bound, err := e.tokens.Issue("cursor")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.tokens.Bind("cursor", "coding"); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, token, host, origin, contentType string
		status                                 int
		want                                   string
	}{
		{"no token", "", "", "", "application/json", 401, "missing token"},
		{"a wrong token", "sb_wrong", "", "", "application/json", 401, "invalid token"},
		{"a profile's token on /mcp", bound.Secret, "", "", "application/json", 403, `bound to profile "coding"`},
		{"a foreign Host", e.token.Secret, "evil.example", "", "application/json", 403, "not a loopback address"},
		{"a foreign Origin", e.token.Secret, "", "https://evil.example", "application/json", 403, "cross-origin request refused"},
		{"a body not JSON", e.token.Secret, "", "", "text/plain", 415, "send the body as JSON"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(t.Context(), "POST", srv.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
			req.Header.Set("Content-Type", tt.contentType)
			req.Header.Set("Accept", "application/json, text/event-stream")
			if tt.token != "" {
				req.Header.Set("Authorization", "Bearer "+tt.token)
			}
			if tt.host != "" {
				req.Host = tt.host
			}
			if tt.origin != "" {
				req.Header.Set("Origin", tt.origin)
			}
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var msg struct {
				JSONRPC string `json:"jsonrpc"`
				Error   struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			err = json.NewDecoder(resp.Body).Decode(&msg)
			if resp.StatusCode != tt.status || err != nil || msg.JSONRPC != "2.0" || msg.Error.Code == 0 ||
				!strings.Contains(msg.Error.Message, tt.want) || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
				t.Errorf("%d %s %+v (%v), want %d with a JSON-RPC error saying %q", resp.StatusCode, resp.Header.Get("Content-Type"), msg, err, tt.status, tt.want)
			}
		})
	}
	t.Run("the API keeps its error body", func(t *testing.T) {
		resp, err := http.Get(e.srv.URL + "/api/v1/status")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != 401 {
			t.Fatalf("%d %v", resp.StatusCode, err)
		}
		if msg, ok := body["error"].(string); !ok || !strings.Contains(msg, "missing token") {
			t.Errorf("the API's 401: %v, want {\"error\": \"missing token ...\"}", body)
		}
	})
}
