package api_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/app/api"
)

// A token bound to a profile reaches that profile's endpoint only: /mcp,
// /mcp/<server>, /sse and another profile's endpoint answer 403 with a
// JSON-RPC error naming the profile. A token without a profile reaches
// every MCP endpoint, profiles' included.
func TestProfileBoundToken(t *testing.T) {
	e := newEnv(t)
	cursor, err := e.tokens.EnsureClient("cursor")
	if err != nil {
		t.Fatal(err)
	}
	free, err := e.tokens.EnsureClient("vscode")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.tokens.Bind("cursor", "coding"); err != nil {
		t.Fatal(err)
	}
	mcp := httptest.NewServer(e.api.Protect(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "served "+r.URL.Path)
	})))
	defer mcp.Close()
	post := func(secret, path string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, mcp.URL+path, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		req.Header.Set("Authorization", "Bearer "+secret)
		req.Header.Set("Content-Type", "application/json")
		resp, err := mcp.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	for _, path := range []string{"/mcp/p/coding", "/mcp/p/coding/"} {
		if code, body := post(cursor.Secret, path); code != 200 || body != "served "+path {
			t.Errorf("bound token on %s: %d %s", path, code, body)
		}
	}
	for _, path := range []string{"/mcp", "/mcp/", "/mcp/fs", "/sse", "/sse/fs", "/mcp/p/other", "/mcp/p/coding2", "/mcp/p/coding/x"} {
		code, body := post(cursor.Secret, path)
		var rpc struct {
			JSONRPC string `json:"jsonrpc"`
			Error   struct {
				Code    int               `json:"code"`
				Message string            `json:"message"`
				Data    map[string]string `json:"data"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(body), &rpc); err != nil {
			t.Errorf("%s: body is not JSON: %s", path, body)
		}
		if code != http.StatusForbidden || rpc.JSONRPC != "2.0" || rpc.Error.Code != -32600 ||
			!strings.Contains(rpc.Error.Message, `bound to profile "coding"`) || !strings.Contains(rpc.Error.Message, "/mcp/p/coding only") ||
			rpc.Error.Data["profile"] != "coding" {
			t.Errorf("bound token on %s: %d %s", path, code, body)
		}
	}
	for _, path := range []string{"/mcp", "/mcp/fs", "/mcp/p/coding", "/mcp/p/other"} {
		if code, body := post(free.Secret, path); code != 200 || body != "served "+path {
			t.Errorf("token without a profile on %s: %d %s", path, code, body)
		}
	}

	// Unbinding gives the token /mcp back at its next request.
	if _, err := e.tokens.Bind("cursor", ""); err != nil {
		t.Fatal(err)
	}
	if code, body := post(cursor.Secret, "/mcp"); code != 200 {
		t.Errorf("unbound token on /mcp: %d %s", code, body)
	}
	if api.ProfilePath("coding") != "/mcp/p/coding" {
		t.Error(api.ProfilePath("coding"))
	}
}
