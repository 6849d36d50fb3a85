package api_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app/api"
	"github.com/switchboardhq/switchboard/app/api/client"
)

// Tokens are listed without secrets and revoked by label; a revoked
// client's next request to the MCP endpoint (behind Protect) gets 401, and
// the cli token cannot be revoked through the API.
func TestTokens(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	cursor, err := e.tokens.Issue("cursor")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.tokens.Issue("zed"); err != nil {
		t.Fatal(err)
	}
	mcp := httptest.NewServer(e.api.Protect(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello "+api.TokenLabel(r.Context()))
	})))
	t.Cleanup(mcp.Close)
	call := func(secret string) (int, string) {
		t.Helper()
		return postWithToken(t, mcp, "/mcp", secret, "{}")
	}
	before := time.Now().UTC()
	if code, body := call(cursor.Secret); code != http.StatusOK || body != "hello cursor" {
		t.Fatalf("cursor before revoking: %d %s", code, body)
	}

	resp := e.request(t, http.MethodGet, "/api/v1/tokens", "", nil)
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || strings.Contains(string(raw), "sb_") {
		t.Fatalf("GET /tokens: %d %s", resp.StatusCode, raw)
	}
	list, err := e.client.Tokens(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, tv := range list {
		labels = append(labels, tv.Label)
		switch tv.Label {
		case "cursor", "cli": // both used: cursor above, cli by these requests
			if tv.LastUsed == nil || tv.LastUsed.Before(before.Add(-time.Second)) {
				t.Errorf("%s: lastUsed %v", tv.Label, tv.LastUsed)
			}
		case "zed":
			if tv.LastUsed != nil {
				t.Errorf("zed never used, lastUsed %v", tv.LastUsed)
			}
		}
		if tv.ID == "" || tv.Created.IsZero() {
			t.Errorf("token view %+v", tv)
		}
	}
	if strings.Join(labels, ",") != "cli,cursor,zed" {
		t.Errorf("labels %v", labels)
	}

	for _, tt := range []struct {
		label  string
		status int
		want   string
	}{
		{"cli", http.StatusForbidden, `refusing to revoke the "cli" token`},
		{"nobody", http.StatusNotFound, `no token labelled "nobody"`},
	} {
		_, err := e.client.RevokeTokens(ctx, tt.label)
		if statusOf(err) != tt.status || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("revoke %q: %v, want %d with %q", tt.label, err, tt.status, tt.want)
		}
	}
	gone, err := e.client.RevokeTokens(ctx, "cursor")
	if err != nil || len(gone) != 1 || gone[0].ID != cursor.ID {
		t.Fatalf("revoke cursor: %+v %v", gone, err)
	}
	if code, _ := call(cursor.Secret); code != http.StatusUnauthorized {
		t.Errorf("cursor after revoking: %d, want 401", code)
	}
	if code, _ := call(e.token.Secret); code != http.StatusOK {
		t.Errorf("cli after revoking cursor: %d", code)
	}
	list, _ = e.client.Tokens(ctx)
	if len(list) != 2 {
		t.Errorf("tokens after revoking: %+v", list)
	}

	// A client token cannot revoke the token it came with either.
	zed := &client.Client{BaseURL: e.srv.URL, HTTP: e.srv.Client()}
	tok, _ := e.tokens.Ensure("zed")
	zed.Token = tok.Secret
	if _, err := zed.RevokeTokens(ctx, "zed"); statusOf(err) != http.StatusForbidden {
		t.Errorf("zed revoking itself: %v", err)
	}
}
