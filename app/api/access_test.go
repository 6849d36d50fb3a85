package api_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app/api"
	"github.com/switchboardhq/switchboard/app/api/client"
	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/events"
)

// A client-scoped token reaches no route of the API (403, whatever the
// route), and the MCP endpoint behind Protect.
func TestClientScopeOnEveryRoute(t *testing.T) {
	e := newEnv(t)
	cursor, err := e.tokens.EnsureClient("cursor")
	if err != nil {
		t.Fatal(err)
	}
	routes := api.Routes()
	if len(routes) < 30 {
		t.Fatalf("api.Routes lists %d routes: %v", len(routes), routes)
	}
	for _, route := range routes {
		method, path, _ := strings.Cut(route, " ")
		path = strings.NewReplacer("{name}", "fs", "{id}", "x", "{label}", "cli").Replace(path)
		resp := e.request(t, method, path, "{}", map[string]string{"Authorization": "Bearer " + cursor.Secret})
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "MCP client") {
			t.Errorf("%s with a client token: %d %s", route, resp.StatusCode, body)
		}
	}

	mcp := httptest.NewServer(e.api.Protect(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "label "+api.TokenLabel(r.Context()))
	})))
	defer mcp.Close()
	if code, body := postWithToken(t, mcp, "/mcp", cursor.Secret, "{}"); code != 200 || body != "label cursor" {
		t.Errorf("MCP with a client token: %d %q", code, body)
	}
}

// State-changing requests must say their body is JSON.
func TestRequireJSON(t *testing.T) {
	e := newEnv(t)
	for _, tt := range []struct {
		name, method, ctype, body string
		want                      int
	}{
		{"form", "POST", "application/x-www-form-urlencoded", "name=x&command=/bin/sh", 415},
		{"text/plain", "POST", "text/plain", `{"name":"x","command":"/bin/sh"}`, 415},
		{"multipart", "POST", "multipart/form-data; boundary=x", "--x--", 415},
		{"no type", "POST", "", `{"name":"x"}`, 415},
		{"bad type", "POST", "application/json;;", `{}`, 415},
		{"text/plain PUT", "PUT", "text/plain", `{}`, 415},
		{"json with charset", "POST", "application/json; charset=utf-8", `{"name":"x"}`, 400},
		{"GET is not checked", "GET", "text/plain", "", 200},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := "/api/v1/servers"
			if tt.method == "PUT" {
				path = "/api/v1/settings"
			}
			if tt.method == "GET" {
				path = "/api/v1/status"
			}
			resp := e.request(t, tt.method, path, tt.body, map[string]string{"Content-Type": tt.ctype})
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.want {
				t.Errorf("%s %s with Content-Type %q: %d %s, want %d", tt.method, path, tt.ctype, resp.StatusCode, body, tt.want)
			}
			if tt.want == 415 && !strings.Contains(string(body), "application/json") {
				t.Errorf("415 without saying what to send: %s", body)
			}
		})
	}
	// A POST without a body needs no type (the CLI's start and stop).
	if resp := e.request(t, "POST", "/api/v1/servers/fs/stop", "", nil); resp.StatusCode != 200 {
		t.Errorf("POST without a body: %d", resp.StatusCode)
	}
}

// signIn trades a login code for the dashboard's cookie value.
func signIn(t *testing.T, e *testEnv, lc wire.LoginCode) string {
	t.Helper()
	dash := httptest.NewServer(e.api.Dashboard(nil))
	defer dash.Close()
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Get(dash.URL + "/login?code=" + lc.Code)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, c := range resp.Cookies() {
		if c.Name == api.SessionCookie {
			return c.Value
		}
	}
	t.Fatalf("login: %d, no cookie", resp.StatusCode)
	return ""
}

// The cookie is a session id: it opens the API as a cookie, is no bearer
// token, ends when the dashboard token is revoked, and a "kept" session
// survives a new Server (a restart) while a plain one does not.
func TestDashboardSessions(t *testing.T) {
	e := newEnv(t)
	lc, err := e.client.LoginCode(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	cookie := signIn(t, e, lc)
	if strings.HasPrefix(cookie, "sb_") {
		t.Errorf("the cookie looks like a token: %q", cookie)
	}
	status := func(header map[string]string) int {
		resp := e.request(t, "GET", "/api/v1/status", "", header)
		return resp.StatusCode
	}
	if got := status(map[string]string{"Authorization": "", "Cookie": api.SessionCookie + "=" + cookie}); got != 200 {
		t.Fatalf("API with the cookie: %d", got)
	}
	if got := status(map[string]string{"Authorization": "Bearer " + cookie}); got != 401 {
		t.Errorf("the cookie value as a bearer token: %d, want 401", got)
	}
	if _, ok := e.tokens.Verify(cookie); ok {
		t.Error("the cookie value verifies as a token")
	}
	data, _ := os.ReadFile(e.tokens.Path())
	if strings.Contains(string(data), cookie) {
		t.Error("the cookie value is in tokens.json")
	}

	// Keep me signed in: the session is on disk (as a hash), 0600, and a
	// new Server over the same data directory knows it.
	kept, err := e.client.KeptLoginCode(t.Context())
	if err != nil || !kept.Keep {
		t.Fatalf("KeptLoginCode: %+v %v", kept, err)
	}
	keptCookie := signIn(t, e, kept)
	file := filepath.Join(filepath.Dir(e.tokens.Path()), api.DashboardSessionsFile)
	fi, err := os.Stat(file)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("kept sessions file: %v %v", fi, err)
	}
	if data, _ := os.ReadFile(file); strings.Contains(string(data), keptCookie) {
		t.Error("the kept session's id is on disk in the clear")
	}
	restarted := newEnv(t, func(o *api.Options) { o.Tokens = e.tokens; o.Home = filepath.Dir(e.tokens.Path()) })
	get := func(env *testEnv, cookie string) int {
		resp := env.request(t, "GET", "/api/v1/status", "", map[string]string{"Authorization": "", "Cookie": api.SessionCookie + "=" + cookie})
		return resp.StatusCode
	}
	if got := get(restarted, keptCookie); got != 200 {
		t.Errorf("kept session after a restart: %d", got)
	}
	if got := get(restarted, cookie); got != 401 {
		t.Errorf("plain session after a restart: %d, want 401", got)
	}

	// tokens revoke dashboard ends every session.
	if _, err := e.client.RevokeTokens(t.Context(), api.DashboardTokenLabel); err != nil {
		t.Fatal(err)
	}
	if got := get(e, cookie); got != 401 {
		t.Errorf("session after revoking the dashboard token: %d", got)
	}
	if got := get(restarted, keptCookie); got != 401 {
		t.Errorf("kept session after revoking the dashboard token: %d", got)
	}
}

// A token may have MaxLoginCodes codes outstanding; the next gets 429
// naming the limit, and using one makes room.
func TestLoginCodeCap(t *testing.T) {
	e := newEnv(t)
	var codes []wire.LoginCode
	for range api.MaxLoginCodes {
		lc, err := e.client.LoginCode(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		codes = append(codes, lc)
	}
	_, err := e.client.LoginCode(t.Context())
	var ae *client.APIError
	if !errors.As(err, &ae) || ae.Status != 429 || !strings.Contains(ae.Message, "limit is 5") {
		t.Fatalf("code over the cap: %v", err)
	}
	signIn(t, e, codes[0])
	if _, err := e.client.LoginCode(t.Context()); err != nil {
		t.Errorf("after using a code: %v", err)
	}
}

// Revoking a token ends its open event stream within a second.
func TestRevokeEndsStreams(t *testing.T) {
	bus := events.New(0)
	defer bus.Close()
	e := newEnv(t, func(o *api.Options) { o.Events = bus })
	tray, err := e.tokens.Ensure("tray")
	if err != nil {
		t.Fatal(err)
	}
	for _, via := range []string{"api", "file"} {
		t.Run(via, func(t *testing.T) {
			if via == "file" {
				if tray, err = e.tokens.Ensure("tray"); err != nil {
					t.Fatal(err)
				}
			}
			resp := e.request(t, "GET", "/api/v1/events", "", map[string]string{"Authorization": "Bearer " + tray.Secret, "Accept": "text/event-stream"})
			if resp.StatusCode != 200 {
				t.Fatalf("events: %d", resp.StatusCode)
			}
			ended := make(chan error, 1)
			go func() {
				_, err := io.Copy(io.Discard, bufio.NewReader(resp.Body))
				ended <- err
			}()
			start := time.Now()
			if via == "api" {
				if _, err := e.client.RevokeTokens(t.Context(), "tray"); err != nil {
					t.Fatal(err)
				}
			} else if _, err := e.tokens.RevokeLabel("tray"); err != nil { // as another process would
				t.Fatal(err)
			}
			select {
			case <-ended:
				if d := time.Since(start); d > time.Second {
					t.Errorf("the stream ended %s after the revocation", d)
				}
			case <-time.After(2 * time.Second):
				t.Fatal("the revoked token's event stream is still open after 2s")
			}
		})
	}
	var views []wire.TokenView
	resp := e.request(t, "GET", "/api/v1/tokens", "", nil)
	_ = json.NewDecoder(resp.Body).Decode(&views)
	if len(views) == 0 || views[0].Label != "cli" || views[0].Scope != "admin" {
		t.Errorf("token views: %+v, want cli first, admin", views)
	}
}
