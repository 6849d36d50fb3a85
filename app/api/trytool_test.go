package api_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app/api"
	"github.com/switchboardhq/switchboard/app/api/wire"
)

// The credential the daemon calls its own MCP endpoint with, to try a tool
// for the dashboard, is taken on the MCP endpoints only, as a client
// token labelled "dashboard" that no revocation check ends; on the API it
// is no token at all. Without the daemon's address, trying answers 503.
func TestTryCredentialReachesOnlyMCP(t *testing.T) {
	e := newEnv(t)
	secret := e.api.TrySecret()
	if !strings.HasPrefix(secret, "sbtry_") || len(secret) < 40 {
		t.Fatalf("try credential %q", secret)
	}
	if other := newEnv(t).api.TrySecret(); other == secret {
		t.Error("two API servers made the same try credential")
	}
	for _, path := range []string{"/api/v1/status", "/api/v1/servers", "/api/v1/servers/fs/tools/echo"} {
		resp := e.request(t, "GET", path, "", map[string]string{"Authorization": "Bearer " + secret})
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("GET %s with the try credential: %d %s, want 401", path, resp.StatusCode, body)
		}
	}
	// On an MCP endpoint: through, as the dashboard, for longer than the
	// revocation check's interval (it is not a token of the store).
	mcp := httptest.NewServer(e.api.Protect(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
			http.Error(w, "ended: "+r.Context().Err().Error(), http.StatusGone)
			return
		case <-time.After(600 * time.Millisecond):
		}
		_, _ = io.WriteString(w, "label "+api.TokenLabel(r.Context())+" id "+api.TokenID(r.Context()))
	})))
	defer mcp.Close()
	code, body := postWithToken(t, mcp, "/mcp/fs", secret, "{}")
	if code != http.StatusOK || !strings.HasPrefix(body, "label "+wire.TryClientName+" id try-") {
		t.Errorf("MCP with the try credential: %d %q", code, body)
	}
	if code, _ := postWithToken(t, mcp, "/mcp/fs", secret+"x", "{}"); code != http.StatusUnauthorized {
		t.Errorf("MCP with a wrong try credential: %d, want 401", code)
	}
	// A daemon that was not told its address cannot try tools.
	resp := e.request(t, "POST", "/api/v1/servers/fs/tools/echo/call", `{"arguments":{}}`, nil)
	body2, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("try without the daemon's address: %d %s, want 503", resp.StatusCode, body2)
	}
	resp = e.request(t, "POST", "/api/v1/servers/fs/tools/echo/call", `{"arguments":{},"extra":1}`, nil)
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("try with an unknown field: %d, want 400", resp.StatusCode)
	}
}
