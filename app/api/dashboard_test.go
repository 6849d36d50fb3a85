package api_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/switchboardhq/switchboard/app/api"
	"github.com/switchboardhq/switchboard/app/api/client"
)

// TestDashboardSignIn: `switchboard open` gets a one-time code with the CLI
// token; the browser trades it for an HttpOnly, SameSite=Strict cookie and
// is sent to the page; the cookie then opens the API (not the MCP endpoint),
// only from the page's own origin; the code works once.
func TestDashboardSignIn(t *testing.T) {
	e := newEnv(t)
	assets := fstest.MapFS{
		"index.html":    {Data: []byte("<!doctype html><title>Switchboard</title>")},
		"assets/app.js": {Data: []byte("console.log(1)")},
	}
	mux := http.NewServeMux()
	mux.Handle("/api/", e.api)
	mux.Handle("/mcp", e.api.Protect(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) })))
	mux.Handle("/", e.api.Dashboard(assets))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	client := &client.Client{BaseURL: srv.URL, Token: e.client.Token}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	get := func(path string, header map[string]string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		for k, v := range header {
			if k == "Host" {
				req.Host = v
				continue
			}
			req.Header.Set(k, v)
		}
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp, string(body)
	}

	// The page's files need no token; its routes get index.html.
	for path, want := range map[string]string{"/": "<title>Switchboard", "/servers/alpha": "<title>Switchboard", "/assets/app.js": "console.log"} {
		resp, body := get(path, nil)
		if resp.StatusCode != 200 || !strings.Contains(body, want) {
			t.Errorf("GET %s: %d %q", path, resp.StatusCode, body)
		}
	}
	if resp, _ := get("/assets/app.js", nil); !strings.Contains(resp.Header.Get("Cache-Control"), "immutable") {
		t.Errorf("hashed asset cache: %q", resp.Header.Get("Cache-Control"))
	}
	if resp, _ := get("/", map[string]string{"Host": "evil.example"}); resp.StatusCode != 403 {
		t.Errorf("foreign Host: %d", resp.StatusCode)
	}

	lc, err := client.LoginCode(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(lc.URL, srv.URL+"/login?code=") {
		t.Fatalf("login URL %q", lc.URL)
	}
	resp, _ := get("/login?code="+lc.Code, nil)
	var session *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == api.SessionCookie {
			session = c
		}
	}
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" || session == nil ||
		!session.HttpOnly || session.SameSite != http.SameSiteStrictMode || session.Path != "/" {
		t.Fatalf("login: %d, Location %q, cookie %+v", resp.StatusCode, resp.Header.Get("Location"), session)
	}
	if again, body := get("/login?code="+lc.Code, nil); again.StatusCode != 401 || !strings.Contains(body, "switchboard open") {
		t.Errorf("second use of the code: %d %q", again.StatusCode, body)
	}
	if bad, _ := get("/login?code=nope", nil); bad.StatusCode != 401 {
		t.Errorf("bad code: %d", bad.StatusCode)
	}

	cookie := api.SessionCookie + "=" + session.Value
	if resp, body := get("/api/v1/status", map[string]string{"Cookie": cookie}); resp.StatusCode != 200 || !strings.Contains(body, "1.2.3-test") {
		t.Errorf("API with the cookie: %d %q", resp.StatusCode, body)
	}
	if resp, _ := get("/api/v1/status", map[string]string{"Cookie": cookie, "Origin": srv.URL}); resp.StatusCode != 200 {
		t.Errorf("API with the cookie from the page's origin: %d", resp.StatusCode)
	}
	if resp, _ := get("/api/v1/status", map[string]string{"Cookie": cookie, "Origin": "https://evil.example"}); resp.StatusCode != 403 {
		t.Errorf("API with the cookie from another origin: %d", resp.StatusCode)
	}
	if resp, _ := get("/mcp", map[string]string{"Cookie": cookie}); resp.StatusCode != 401 {
		t.Errorf("MCP endpoint with the cookie: %d, want 401 (bearer tokens only)", resp.StatusCode)
	}

	// Without a build, the page says how to get one.
	bare := httptest.NewServer(e.api.Dashboard(nil))
	defer bare.Close()
	r2, err := http.Get(bare.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(r2.Body)
	r2.Body.Close()
	if r2.StatusCode != 404 || !strings.Contains(string(body), "make build") {
		t.Errorf("no build: %d %q", r2.StatusCode, body)
	}
}

// The "dashboard" token stands behind the browser's sessions and is never
// handed out; its secret is refused as a bearer token. Before sessions, the
// cookie held that very secret (for 400 days, and a browser sends it to
// every port of 127.0.0.1): after an upgrade, such an old cookie replayed
// as "Authorization: Bearer" must not open the API nor the MCP endpoint.
func TestDashboardTokenIsNotABearer(t *testing.T) {
	e := newEnv(t)
	old, err := e.tokens.Ensure(api.DashboardTokenLabel) // what the old login put in the cookie
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/api/", e.api)
	mux.Handle("/mcp", e.api.Protect(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) })))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	for _, path := range []string{"/api/v1/status", "/api/v1/tokens", "/mcp"} {
		for _, h := range []map[string]string{
			{"Authorization": "Bearer " + old.Secret},
			{"Cookie": api.SessionCookie + "=" + old.Secret},
		} {
			req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
			for k, v := range h {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("GET %s with %v (the dashboard token's secret): %d %s, want 401", path, h, resp.StatusCode, body)
			}
		}
	}
}
