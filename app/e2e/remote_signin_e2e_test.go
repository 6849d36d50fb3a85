package e2e

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/daemon"
	"github.com/switchboardhq/switchboard/app/internal/testutil"
)

// TestRemoteSignInThroughTheDaemon: a remote server behind a loopback OAuth
// authorization server, configured in a real daemon, fails its calls at
// once with the sign-in error; `switchboard auth login` (with the test
// browser, which follows the redirects) signs it in and the next call
// works; after a restart it still works without a sign-in; `auth logout`
// makes it need one again. No token value is in config.json, the daemon's
// log, the history or the API's answers.
func TestRemoteSignInThroughTheDaemon(t *testing.T) {
	f := newOAuthRemote(t)
	home := filepath.Join(t.TempDir(), "home")
	cfg, _ := json.Marshal(map[string]any{"version": 1, "listen": "127.0.0.1:0", "servers": map[string]any{
		"r": map[string]any{"url": f.srv.URL + "/mcp"},
		"s": map[string]any{"url": f.srv.URL + "/sse", "transport": "sse"},
	}})
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "config.json"), cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(daemon.TestBrowserEnv, "follow")
	d := startDaemon(t, home)

	// Before a sign-in: the call fails at once, naming the command.
	cs := mcpSession(t, d, "/mcp")
	start := time.Now()
	_, err := testutil.CallText(t.Context(), cs, "r__echo", map[string]any{"text": "hi"})
	took := time.Since(start)
	if err == nil || !strings.Contains(err.Error(), "needs sign-in") || !strings.Contains(err.Error(), "switchboard auth login r") {
		t.Fatalf("call before sign-in = %v; want the needs sign-in error", err)
	}
	if took > 2*time.Second {
		t.Errorf("the call before sign-in took %s; want it to fail at once", took)
	}
	t.Logf("the call before sign-in failed in %s: %v", took, err)
	// More failed calls than the supervisor's crash limit, each at once
	// (the server is failing until signed in, not retried with backoff);
	// the sign-in makes the next call work.
	for i := range 7 {
		start := time.Now()
		_, err := testutil.CallText(t.Context(), cs, "r__echo", map[string]any{"text": "hi"})
		if err == nil || !strings.Contains(err.Error(), "switchboard auth login r") {
			t.Fatalf("call %d before sign-in = %v; want the needs sign-in error", i+2, err)
		}
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("call %d before sign-in took %s; want it to fail at once (no backoff to wait out)", i+2, took)
		}
	}
	view, err := d.client.Server(t.Context(), "r")
	if err != nil || view.Auth == nil || view.Auth.State != wire.AuthNeedsSignIn {
		t.Fatalf("view before sign-in = %+v, %v; want auth needs sign-in", view.Auth, err)
	}
	if code, out, _ := cli(t, home, "auth", "status"); code != exitOK || !strings.Contains(out, "needs sign-in") {
		t.Errorf("auth status before sign-in = %d\n%s", code, out)
	}

	// The redirect endpoint takes no Switchboard token but checks the Host.
	for host, want := range map[string]int{"": http.StatusBadRequest, "evil.example": http.StatusForbidden} {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, d.info.Address+"/oauth/callback?state=nope&code=x", nil)
		if host != "" {
			req.Host = host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET /oauth/callback with Host %q (no token) = %d; want %d", host, resp.StatusCode, want)
		}
	}

	// Sign in.
	code, out, errOut := cli(t, home, "auth", "login", "r")
	if code != exitOK || !strings.Contains(out, "signed in to r") || !strings.Contains(out, f.srv.URL+"/authorize") {
		t.Fatalf("auth login r = %d\n%s%s", code, out, errOut)
	}
	// The live feed told each step of it (since 1: what it kept so far).
	var states []string
	evCtx, stopEvents := context.WithTimeout(t.Context(), 10*time.Second)
	errSeen := errors.New("signed in seen")
	err = d.client.Events(evCtx, 1, []string{wire.TypeAuth}, func(ev wire.Event) error {
		if ev.Type == wire.TypeReset {
			return nil
		}
		var a wire.AuthEvent
		if err := json.Unmarshal(ev.Data, &a); err != nil || a.Server != "r" {
			return fmt.Errorf("auth event %s: %v", ev.Data, err)
		}
		states = append(states, a.State)
		if a.State == wire.AuthSignedIn {
			return errSeen
		}
		return nil
	})
	stopEvents()
	if !errors.Is(err, errSeen) || !slices.Contains(states, wire.AuthSigningIn) {
		t.Errorf("auth events of r = %v (%v); want signing in, then signed in", states, err)
	}
	callWorks := func(d *daemonProc, tool, what string) {
		t.Helper()
		cs := mcpSession(t, d, "/mcp")
		var got string
		start := time.Now()
		testutil.Eventually(t, 30*time.Second, what, func() bool {
			got, err = testutil.CallText(t.Context(), cs, tool, map[string]any{"text": "far away"})
			return err == nil
		})
		t.Logf("%s worked after %s", what, time.Since(start))
		if got != "far away" {
			t.Errorf("%s: %s = %q", what, tool, got)
		}
	}
	callWorks(d, "r__echo", "the call after sign-in")

	// The HTTP+SSE transport signs in the same way.
	if _, err := testutil.CallText(t.Context(), cs, "s__echo", map[string]any{"text": "hi"}); err == nil || !strings.Contains(err.Error(), `"s" needs sign-in`) {
		t.Errorf("SSE call before sign-in = %v; want the needs sign-in error", err)
	}
	if code, out, errOut := cli(t, home, "auth", "login", "s"); code != exitOK || !strings.Contains(out, "signed in to s") {
		t.Fatalf("auth login s = %d\n%s%s", code, out, errOut)
	}
	callWorks(d, "s__echo", "the SSE call after sign-in")
	if code, out, _ := cli(t, home, "auth", "status"); code != exitOK || !strings.Contains(out, "signed in") {
		t.Errorf("auth status after sign-in = %d\n%s", code, out)
	}
	apiAnswers := apiText(t, d)

	// A restart keeps the sign-in.
	stopDaemon(t, d)
	logs := d.out.String()
	authorized := f.count("authorize")
	d = startDaemon(t, home)
	callWorks(d, "r__echo", "the call after a restart")
	callWorks(d, "s__echo", "the SSE call after a restart")
	if n := f.count("authorize"); n != authorized {
		t.Errorf("the restart signed in again (%d sign-ins, %d before)", n, authorized)
	}

	// Sign out: the call needs a sign-in again.
	if code, out, errOut := cli(t, home, "auth", "logout", "r"); code != exitOK || !strings.Contains(out, "signed out of r") {
		t.Fatalf("auth logout r = %d\n%s%s", code, out, errOut)
	}
	cs = mcpSession(t, d, "/mcp")
	testutil.Eventually(t, 30*time.Second, "the call after sign-out fails with the sign-in error", func() bool {
		_, err = testutil.CallText(t.Context(), cs, "r__echo", map[string]any{"text": "hi"})
		return err != nil && strings.Contains(err.Error(), "needs sign-in")
	})
	apiAnswers += apiText(t, d)
	stopDaemon(t, d)
	logs += d.out.String()

	t.Logf("daemon log lines: %d, with WARN: %d, ERROR: %d", strings.Count(logs, "\n"), strings.Count(logs, "level=WARN"), strings.Count(logs, "level=ERROR"))
	places := map[string]string{"daemon log": logs, "API answers": apiAnswers}
	for _, name := range []string{"config.json", daemon.HistoryFile, daemon.HistoryFile + "-wal", daemon.JournalFile} {
		data, _ := os.ReadFile(filepath.Join(home, name))
		places[name] = string(data)
	}
	secrets := f.seen()
	if len(secrets) < 4 {
		t.Fatalf("the fake handed out %d values; want codes and tokens", len(secrets))
	}
	for where, text := range places {
		for _, s := range secrets {
			if strings.Contains(text, s) {
				t.Errorf("%s holds a token, code or secret the authorization server handed out (%.6s...)", where, s)
			}
		}
	}
}

// apiText is what the API answers about the servers and their history.
func apiText(t *testing.T, d *daemonProc) string {
	t.Helper()
	list, err := d.client.Servers(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	page, err := d.client.History(t.Context(), url.Values{})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal([]any{list, page})
	return string(data)
}

// oauthRemote is a remote MCP server (streamable HTTP at /mcp, behind the
// go-sdk's RequireBearerToken; /sse the HTTP+SSE transport) and its authorization server (metadata,
// dynamic registration, an /authorize that approves at once and redirects
// back, /token with the code and refresh grants, /revoke) on one loopback
// listener. It remembers every value it hands out.
type oauthRemote struct {
	srv *httptest.Server

	mu      sync.Mutex
	access  map[string]bool
	refresh map[string]bool
	codes   map[string]bool
	secrets []string
	counts  map[string]int
	client  string // the registered client's secret
}

func newOAuthRemote(t *testing.T) *oauthRemote {
	t.Helper()
	f := &oauthRemote{access: map[string]bool{}, refresh: map[string]bool{}, codes: map[string]bool{}, counts: map[string]int{}}
	mux := http.NewServeMux()
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	server := mcp.NewServer(&mcp.Implementation{Name: "oauth-remote", Version: "1"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "echo", Description: "echoes"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct {
		Text string `json:"text"`
	}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	t.Cleanup(func() {
		for ss := range server.Sessions() {
			ss.Close()
		}
	})
	protect := auth.RequireBearerToken(f.verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: f.srv.URL + "/.well-known/oauth-protected-resource/mcp"})
	mux.Handle("/mcp", protect(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)))
	mux.Handle("/sse", auth.RequireBearerToken(f.verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: f.srv.URL + "/.well-known/oauth-protected-resource/sse"})(
		mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return server }, nil)))
	for _, res := range []string{"mcp", "sse"} {
		mux.Handle("/.well-known/oauth-protected-resource/"+res, auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
			Resource: f.srv.URL + "/" + res, AuthorizationServers: []string{f.srv.URL}, ScopesSupported: []string{"tools"}}))
	}
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, _ *http.Request) {
		writeJSONAnswer(w, http.StatusOK, map[string]any{
			"issuer": f.srv.URL, "authorization_endpoint": f.srv.URL + "/authorize", "token_endpoint": f.srv.URL + "/token",
			"registration_endpoint": f.srv.URL + "/register", "revocation_endpoint": f.srv.URL + "/revoke",
			"response_types_supported": []string{"code"}, "code_challenge_methods_supported": []string{"S256"},
			"token_endpoint_auth_methods_supported": []string{"client_secret_post"},
		})
	})
	mux.HandleFunc("/register", f.register)
	mux.HandleFunc("/authorize", f.authorize)
	mux.HandleFunc("/token", f.token)
	mux.HandleFunc("/revoke", f.revoke)
	return f
}

func (f *oauthRemote) newValue(prefix string) string {
	v := prefix + rand.Text()
	f.secrets = append(f.secrets, v)
	return v
}

func (f *oauthRemote) seen() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.secrets...)
}

func (f *oauthRemote) count(name string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.counts[name]
}

func (f *oauthRemote) verify(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.access[token] {
		return nil, fmt.Errorf("unknown token: %w", auth.ErrInvalidToken)
	}
	return &auth.TokenInfo{Scopes: []string{"tools"}, Expiration: time.Now().Add(time.Hour)}, nil
}

func (f *oauthRemote) register(w http.ResponseWriter, r *http.Request) {
	var req struct {
		RedirectURIs []string `json:"redirect_uris"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.RedirectURIs) == 0 {
		writeJSONAnswer(w, http.StatusBadRequest, map[string]string{"error": "invalid_client_metadata"})
		return
	}
	f.mu.Lock()
	f.client = f.newValue("cs-")
	secret := f.client
	f.mu.Unlock()
	writeJSONAnswer(w, http.StatusCreated, map[string]any{"client_id": "client-1", "client_secret": secret,
		"redirect_uris": req.RedirectURIs, "token_endpoint_auth_method": "client_secret_post"})
}

func (f *oauthRemote) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if res := q.Get("resource"); q.Get("code_challenge_method") != "S256" || res != f.srv.URL+"/mcp" && res != f.srv.URL+"/sse" {
		http.Error(w, "want PKCE S256 and the resource", http.StatusBadRequest)
		return
	}
	back, err := url.Parse(q.Get("redirect_uri"))
	if err != nil {
		http.Error(w, "bad redirect_uri", http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.counts["authorize"]++
	f.secrets = append(f.secrets, q.Get("state"))
	code := f.newValue("code-")
	f.codes[code] = true
	f.mu.Unlock()
	bq := back.Query()
	bq.Set("code", code)
	bq.Set("state", q.Get("state"))
	back.RawQuery = bq.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

func (f *oauthRemote) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		writeJSONAnswer(w, http.StatusBadRequest, map[string]string{"error": "invalid_request"})
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if r.PostForm.Get("client_secret") != f.client {
		writeJSONAnswer(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client"})
		return
	}
	grants := map[string]map[string]bool{"authorization_code": f.codes, "refresh_token": f.refresh}
	field := map[string]string{"authorization_code": "code", "refresh_token": "refresh_token"}
	kind := r.PostForm.Get("grant_type")
	used := r.PostForm.Get(field[kind])
	if grants[kind] == nil || !grants[kind][used] {
		writeJSONAnswer(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
		return
	}
	delete(grants[kind], used)
	at, rt := f.newValue("at-"), f.newValue("rt-")
	f.access[at], f.refresh[rt] = true, true
	writeJSONAnswer(w, http.StatusOK, map[string]any{"access_token": at, "token_type": "Bearer", "refresh_token": rt, "expires_in": 3600})
}

func (f *oauthRemote) revoke(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.access, r.PostForm.Get("token"))
	delete(f.refresh, r.PostForm.Get("token"))
	w.WriteHeader(http.StatusOK)
}

func writeJSONAnswer(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}
