// Package oauthfake is a remote MCP server behind a loopback OAuth
// authorization server, for the tests of the sign-in (app/remoteauth) and
// of the daemon that uses it (app/e2e): one copy of the fake both import.
package oauthfake

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// Remote is a remote MCP server behind OAuth on one loopback listener:
// the resource (/mcp streamable HTTP, /sse the legacy transport, both with
// the go-sdk's RequireBearerToken and protected-resource metadata) and its
// authorization server (metadata, /register, /authorize, /token with the
// code and refresh grants, /revoke). Tokens are random; the fake remembers
// every value it handed out so that a test can look for them in logs.
type Remote struct {
	srv *httptest.Server

	// mu guards the fields below; a test changes the exported ones with Set.
	mu           sync.Mutex
	Hold         bool             // /authorize shows a page instead of redirecting (a user who does nothing)
	Revocation   bool             // the metadata lists a revocation endpoint
	Refuse       bool             // the token endpoint refuses refresh tokens
	MetadataDocs bool             // the metadata says client ID metadata documents are supported (any client id is taken)
	access       map[string]grant // access token → what it allows
	refresh      map[string]grant
	codes        map[string]grant
	scopeAsked   []string       // the scope parameter of each authorize request
	secrets      []string       // every token, code, client secret and state handed out or seen
	counts       map[string]int // requests by endpoint, and token requests by grant ("token:refresh")
	revoked      []string       // token_type_hints of revocations
	AccessTTL    time.Duration
	clientSecret string
}

// New starts the fake on a loopback listener closed when the test ends.
func New(t *testing.T) *Remote {
	t.Helper()
	f := &Remote{access: map[string]grant{}, refresh: map[string]grant{}, codes: map[string]grant{},
		counts: map[string]int{}, Revocation: true, AccessTTL: time.Hour}
	mux := http.NewServeMux()
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)

	server := mcp.NewServer(&mcp.Implementation{Name: "fake-remote", Version: "1"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "admin", Description: "needs the admin scope"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "admin"}}}, nil, nil
	})
	mcp.AddTool(server, &mcp.Tool{Name: "echo", Description: "echoes"}, func(ctx context.Context, req *mcp.CallToolRequest, in struct {
		Text string `json:"text"`
	}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	// Sessions whose client could not say goodbye (its token was refused)
	// are closed here, before the listener.
	t.Cleanup(func() {
		for ss := range server.Sessions() {
			ss.Close()
		}
	})
	// Each resource names its own protected-resource metadata in its 401s.
	protect := func(res string, h http.Handler) http.Handler {
		return auth.RequireBearerToken(f.verify, &auth.RequireBearerTokenOptions{
			ResourceMetadataURL: f.srv.URL + "/.well-known/oauth-protected-resource/" + res,
		})(h)
	}
	mux.Handle("/mcp", f.counted("mcp", protect("mcp", requireAdminScope(f.srv.URL, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)))))
	mux.Handle("/sse", f.counted("mcp", protect("sse", mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return server }, nil))))
	for _, res := range []string{"mcp", "sse"} {
		mux.Handle("/.well-known/oauth-protected-resource/"+res, f.counted("prm", auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
			Resource: f.srv.URL + "/" + res, AuthorizationServers: []string{f.srv.URL}, ScopesSupported: []string{"tools"},
		})))
	}
	mux.Handle("/.well-known/oauth-authorization-server", f.counted("asm", http.HandlerFunc(f.metadata)))
	mux.Handle("/register", f.counted("register", http.HandlerFunc(f.register)))
	mux.Handle("/authorize", f.counted("authorize", http.HandlerFunc(f.authorize)))
	mux.Handle("/token", f.counted("token", http.HandlerFunc(f.token)))
	mux.Handle("/revoke", f.counted("revoke", http.HandlerFunc(f.revoke)))
	return f
}

// URL is the address of path on the fake's listener ("" for its root).
func (f *Remote) URL(path string) string { return f.srv.URL + path }

func (f *Remote) counted(name string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.counts[name]++
		f.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

// Count is the number of requests to the endpoint name ("mcp", "prm",
// "asm", "register", "authorize", "token", "revoke") or of token requests
// by grant ("token:code", "token:refresh").
func (f *Remote) Count(name string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.counts[name]
}

// TotalRequests is the number of requests to every endpoint.
func (f *Remote) TotalRequests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for name, c := range f.counts {
		if !strings.Contains(name, ":") { // "token:code" and "token:refresh" are within "token"
			n += c
		}
	}
	return n
}

// Set changes the fake's settings (Hold, Revocation, Refuse, AccessTTL)
// under its lock.
func (f *Remote) Set(change func(f *Remote)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	change(f)
}

// ForgetAccess invalidates every access token, as a server that restarted
// or rotated its keys would: the next call gets a 401.
func (f *Remote) ForgetAccess() {
	f.Set(func(f *Remote) { clear(f.access) })
}

// Revoked is the token_type_hint of each revocation, in order.
func (f *Remote) Revoked() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.revoked...)
}

// ScopeAsked is the scope parameter of each authorize request, in order.
func (f *Remote) ScopeAsked() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.scopeAsked...)
}

// Seen is every token, code, client secret and state the fake handed out
// or was sent, for a test to look for in logs and files.
func (f *Remote) Seen() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.secrets...)
}

func (f *Remote) newValue(prefix string) string {
	v := prefix + rand.Text()
	f.secrets = append(f.secrets, v)
	return v
}

func (f *Remote) verify(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	g, ok := f.access[token]
	if !ok {
		return nil, fmt.Errorf("unknown token: %w", auth.ErrInvalidToken)
	}
	return &auth.TokenInfo{Scopes: g.scopes, Expiration: g.expiry}, nil
}

func (f *Remote) metadata(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	meta := map[string]any{
		"issuer": f.srv.URL, "authorization_endpoint": f.srv.URL + "/authorize", "token_endpoint": f.srv.URL + "/token",
		"registration_endpoint": f.srv.URL + "/register", "response_types_supported": []string{"code"},
		"code_challenge_methods_supported": []string{"S256"}, "scopes_supported": []string{"tools", "offline_access"},
		"token_endpoint_auth_methods_supported": []string{"client_secret_post"},
	}
	if f.Revocation {
		meta["revocation_endpoint"] = f.srv.URL + "/revoke"
	}
	if f.MetadataDocs {
		meta["client_id_metadata_document_supported"] = true
	}
	f.mu.Unlock()
	writeJSON(w, http.StatusOK, meta)
}

func (f *Remote) register(w http.ResponseWriter, r *http.Request) {
	var req struct {
		RedirectURIs []string `json:"redirect_uris"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.RedirectURIs) == 0 {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_client_metadata"})
		return
	}
	f.mu.Lock()
	f.clientSecret = f.newValue("cs-")
	secret := f.clientSecret
	f.mu.Unlock()
	writeJSON(w, http.StatusCreated, map[string]any{"client_id": "client-1", "client_secret": secret,
		"redirect_uris": req.RedirectURIs, "token_endpoint_auth_method": "client_secret_post"})
}

func (f *Remote) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("resource") != f.srv.URL+"/mcp" && q.Get("resource") != f.srv.URL+"/sse" {
		http.Error(w, "want PKCE S256 and the resource", http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	hold := f.Hold && q.Get("approve") != "1"
	f.secrets = append(f.secrets, q.Get("state"))
	f.scopeAsked = append(f.scopeAsked, q.Get("scope"))
	code := f.newValue("code-")
	f.codes[code] = grant{scopes: strings.Fields(q.Get("scope"))}
	f.mu.Unlock()
	if hold {
		fmt.Fprintln(w, "<p>Sign in to the fake remote</p>")
		return
	}
	back, err := url.Parse(q.Get("redirect_uri"))
	if err != nil {
		http.Error(w, "bad redirect_uri", http.StatusBadRequest)
		return
	}
	bq := back.Query()
	bq.Set("code", code)
	bq.Set("state", q.Get("state"))
	back.RawQuery = bq.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

func (f *Remote) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request"})
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if r.PostForm.Get("client_secret") != f.clientSecret {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client"})
		return
	}
	var g grant
	switch r.PostForm.Get("grant_type") {
	case "authorization_code":
		code := r.PostForm.Get("code")
		var ok bool
		if g, ok = f.codes[code]; !ok || r.PostForm.Get("code_verifier") == "" {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
			return
		}
		delete(f.codes, code)
		f.counts["token:code"]++
	case "refresh_token":
		f.counts["token:refresh"]++
		rt := r.PostForm.Get("refresh_token")
		var ok bool
		if g, ok = f.refresh[rt]; f.Refuse || !ok {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant", "error_description": "refresh token expired"})
			return
		}
		delete(f.refresh, rt) // rotated
	default:
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "unsupported_grant_type"})
		return
	}
	at, rt := f.newValue("at-"), f.newValue("rt-")
	g.expiry = time.Now().Add(f.AccessTTL)
	f.access[at] = g
	f.refresh[rt] = g
	writeJSON(w, http.StatusOK, map[string]any{"access_token": at, "token_type": "Bearer", "refresh_token": rt,
		"expires_in": int(f.AccessTTL.Seconds()), "scope": strings.Join(g.scopes, " ")})
}

func (f *Remote) revoke(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil || r.PostForm.Get("client_id") != "client-1" {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client"})
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	tok := r.PostForm.Get("token")
	delete(f.access, tok)
	delete(f.refresh, tok)
	f.revoked = append(f.revoked, r.PostForm.Get("token_type_hint"))
	w.WriteHeader(http.StatusOK)
}

// grant is what a code or token allows.
type grant struct {
	scopes []string
	expiry time.Time
}

// requireAdminScope answers a tools/call of the tool "admin" with a token
// that lacks the admin scope with 403 insufficient_scope, as a server that
// asks for a step-up does.
func requireAdminScope(base string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "read", http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct {
			Method string `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		_ = json.Unmarshal(body, &msg)
		if info := auth.TokenInfoFromContext(r.Context()); msg.Method == "tools/call" && msg.Params.Name == "admin" &&
			info != nil && !slices.Contains(info.Scopes, "admin") {
			w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="admin", resource_metadata="`+
				base+`/.well-known/oauth-protected-resource/mcp"`)
			http.Error(w, "insufficient scope", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}
