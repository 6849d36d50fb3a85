// Package remoteauth signs Switchboard in to remote MCP servers with OAuth
// 2.1, as the MCP authorization spec (2025-11-25) asks of a client, and keeps
// them signed in.
//
// The flow itself is the go-sdk's [auth.AuthorizationCodeHandler]: discovery
// from the WWW-Authenticate challenge through protected-resource metadata
// (RFC 9728) and authorization-server metadata (RFC 8414 / OpenID), client
// registration (Client ID Metadata Document, pre-registered client id,
// dynamic registration per RFC 7591), PKCE S256, the resource parameter
// (RFC 8707), the state and iss checks, and the token exchange. This package
// adds what a daemon needs around it:
//
//   - a [Manager] with the redirect endpoint ([Manager.Callback], mounted at
//     [CallbackPath] on the daemon's own loopback listener), which matches the
//     state of the redirect to the pending sign-in and completes it;
//   - a [Browser] that opens the sign-in link ([SystemBrowser] in the
//     product; [FollowRedirects] where the authorization server redirects
//     straight back, as the conformance suite's do);
//   - one [SignIn] per remote server, an [auth.OAuthHandler] for
//     mcp.StreamableClientTransport and a RoundTripper ([SignIn.Transport])
//     for mcp.SSEClientTransport, which never waits for a user: a request
//     that needs a sign-in fails at once with a [NeedsSignInError] naming the
//     server and the command that signs in; a sign-in is started explicitly
//     with [SignIn.Login];
//   - tokens and the registered client kept in the secret store under the
//     server's name (never in a log line), loaded at start, refreshed before
//     expiry (golang.org/x/oauth2) and once on a 401, saved when they change,
//     deleted and revoked (RFC 7009) by [SignIn.SignOut];
//   - the states a user sees ([Status]): needs sign-in with the reason,
//     signing in, signed in.
package remoteauth

import (
	"context"
	"errors"
	"fmt"
	"html"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/app/config"
	"golang.org/x/oauth2"
)

// CallbackPath is where the authorization server sends the browser back:
// the daemon mounts [Manager.Callback] there on its loopback listener. The
// browser brings no Switchboard token: the state parameter, known only to the
// pending sign-in, is what the handler checks.
const CallbackPath = "/oauth/callback"

// DefaultTimeout bounds a sign-in: the time a user has to finish it in the
// browser before it is abandoned.
const DefaultTimeout = 5 * time.Minute

// callbackWait bounds how long the redirect's page waits for the token
// exchange that follows it before it answers anyway.
const callbackWait = 30 * time.Second

// Secrets is the part of the secret store (app/secrets.Store) a Manager
// uses. Get returns an error wrapping secrets.ErrNotFound for a missing key.
type Secrets interface {
	Get(server, key string) (string, error)
	Set(server, key, value string) error
	Delete(server, key string) error
}

// Options configure a Manager.
type Options struct {
	// Secrets keeps each server's tokens and registered client. Required.
	Secrets Secrets
	// RedirectURL is the loopback URL of [CallbackPath] on the daemon's
	// listener, e.g. http://127.0.0.1:7420/oauth/callback. Required.
	RedirectURL string
	// Browser opens the sign-in link. Nil means [SystemBrowser].
	Browser Browser
	// Timeout bounds a sign-in; 0 means DefaultTimeout.
	Timeout time.Duration
	// HTTPClient makes the discovery, registration, token, refresh and
	// revocation requests. Nil means a client with a 30s timeout.
	HTTPClient *http.Client
	// ClientName is the client_name of a dynamic registration;
	// "" means "Switchboard".
	ClientName string
	// ClientIDMetadataURL is the https URL of Switchboard's Client ID
	// Metadata Document, used as the client id by authorization servers that
	// support such documents. Empty: not used.
	ClientIDMetadataURL string
	// Logger receives sign-in events (INFO), refreshes (DEBUG) and problems
	// (WARN). No token, code, state or secret is ever logged. Nil discards.
	Logger *slog.Logger
	// OnChange, when set, is called with a server's new status each time it
	// changes (for the supervisor's state, the tray and the events stream).
	// It must not call back into the SignIn.
	OnChange func(server string, st Status)
}

// A Manager holds the sign-ins of every remote server and the redirect
// endpoint they share. It is safe for concurrent use.
type Manager struct {
	opts   Options
	client *http.Client
	logger *slog.Logger

	mu      sync.Mutex
	pending map[string]*pending // by the state parameter of the sign-in link
	signIns map[string]*SignIn  // by server name
}

// New returns a Manager for opts.
func New(opts Options) (*Manager, error) {
	if opts.Secrets == nil {
		return nil, errors.New("remote sign-in: no secret store given")
	}
	u, err := url.Parse(opts.RedirectURL)
	if err != nil || u.Scheme != "http" || !config.IsLoopbackHost(u.Hostname()) || u.Port() == "" {
		return nil, fmt.Errorf("remote sign-in: redirect URL %q must be http:// to a loopback address with a port", opts.RedirectURL)
	}
	if err := checkMetadataURL(opts.ClientIDMetadataURL); err != nil {
		return nil, fmt.Errorf("remote sign-in: %w", err)
	}
	if opts.Browser == nil {
		opts.Browser = SystemBrowser{}
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.ClientName == "" {
		opts.ClientName = "Switchboard"
	}
	client := opts.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second}
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Manager{
		opts: opts, client: client, logger: logger,
		pending: map[string]*pending{}, signIns: map[string]*SignIn{},
	}, nil
}

// Server returns the sign-in of the remote server name at serverURL,
// creating it on first use with the tokens the secret store holds for it
// (so a restart does not ask the user to sign in again). A later call with
// another URL or registration replaces it.
func (m *Manager) Server(name, serverURL string, reg Registration) (*SignIn, error) {
	if _, err := url.Parse(serverURL); err != nil || serverURL == "" {
		return nil, fmt.Errorf("remote sign-in of %q: invalid server URL %q", name, serverURL)
	}
	if err := checkMetadataURL(reg.ClientIDMetadataURL); err != nil {
		return nil, fmt.Errorf("remote sign-in of %q: %w", name, err)
	}
	m.mu.Lock()
	if s := m.signIns[name]; s != nil && s.serverURL == serverURL && s.reg.equal(reg) {
		m.mu.Unlock()
		return s, nil
	}
	m.mu.Unlock()
	s, err := newSignIn(m, name, serverURL, reg)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	old := m.signIns[name]
	m.signIns[name] = s
	m.mu.Unlock()
	if old != nil {
		old.cancelLogin(errReplacedConfig)
	}
	return s, nil
}

// checkMetadataURL checks a Client ID Metadata Document's URL ("" is none).
func checkMetadataURL(raw string) error {
	if raw == "" {
		return nil
	}
	if u, err := url.Parse(raw); err != nil || u.Scheme != "https" || u.Path == "" || u.Path == "/" {
		return fmt.Errorf("client ID metadata URL %q must be an https URL with a path", raw)
	}
	return nil
}

// pending is a sign-in waiting for the browser to come back.
type pending struct {
	server    string
	result    chan callbackResult // buffered 1: the one redirect that counts
	delivered bool                // guarded by Manager.mu
	done      chan struct{}       // closed when the sign-in has finished
	err       error               // its outcome, set before done is closed
}

// callbackResult is what the redirect brought: a code or an error.
type callbackResult struct {
	code, state, iss string
	err              error
}

func (m *Manager) addPending(state, server string) *pending {
	p := &pending{server: server, result: make(chan callbackResult, 1), done: make(chan struct{})}
	m.mu.Lock()
	m.pending[state] = p
	m.mu.Unlock()
	return p
}

// finishPending records the outcome of the sign-in of state, wakes the
// redirect's page and forgets the state: a second redirect with it is refused.
func (m *Manager) finishPending(state string, p *pending, err error) {
	m.mu.Lock()
	if m.pending[state] == p {
		delete(m.pending, state)
	}
	m.mu.Unlock()
	p.err = err
	close(p.done)
}

// Callback returns the handler of [CallbackPath]: it matches the state of
// the redirect to the pending sign-in, hands it the code (or the error the
// authorization server sent), waits for the token exchange and shows the
// outcome in the browser.
func (m *Manager) Callback() http.Handler { return http.HandlerFunc(m.serveCallback) }

func (m *Manager) serveCallback(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		writePage(w, http.StatusMethodNotAllowed, "Sign-in failed", "The sign-in redirect must be a GET request.")
		return
	}
	q := r.URL.Query()
	state := q.Get("state")
	m.mu.Lock()
	p := m.pending[state]
	first := p != nil && !p.delivered
	if first {
		p.delivered = true
	}
	m.mu.Unlock()
	if state == "" || !first {
		writePage(w, http.StatusBadRequest, "Sign-in link no longer valid",
			"This sign-in was replaced by a newer one, timed out or was already completed. "+
				"Start again with: switchboard auth login SERVER")
		return
	}
	res := callbackResult{code: q.Get("code"), state: state, iss: q.Get("iss")}
	if e := q.Get("error"); e != "" {
		res.err = fmt.Errorf("the authorization server refused the sign-in: %s %s", e, q.Get("error_description"))
	} else if res.code == "" {
		res.err = errors.New("the authorization server's redirect carried no code")
	}
	p.result <- res
	timer := time.NewTimer(callbackWait)
	defer timer.Stop()
	select {
	case <-p.done:
	case <-timer.C:
		writePage(w, http.StatusAccepted, "Signing in to "+p.server, "Switchboard is finishing the sign-in; see its status.")
		return
	case <-r.Context().Done():
		return
	}
	if p.err != nil {
		writePage(w, http.StatusBadGateway, "Sign-in to "+p.server+" failed", p.err.Error())
		return
	}
	writePage(w, http.StatusOK, "Signed in to "+p.server, "You can close this tab and go back to what you were doing.")
}

func writePage(w http.ResponseWriter, code int, title, body string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(code)
	fmt.Fprintf(w, "<!doctype html><meta charset=utf-8><title>%s</title><h1>%s</h1><p>%s</p>\n",
		html.EscapeString(title), html.EscapeString(title), html.EscapeString(body))
}

func (m *Manager) notify(server string, st Status) {
	if m.opts.OnChange != nil {
		m.opts.OnChange(server, st)
	}
}

// contextWithClient is how golang.org/x/oauth2 is told which HTTP client to
// use for token and refresh requests.
func (m *Manager) contextWithClient(ctx context.Context) context.Context {
	return context.WithValue(ctx, oauth2.HTTPClient, m.client)
}
