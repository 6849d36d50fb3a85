package remoteauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// State is where a remote server's sign-in stands, as a user sees it.
type State string

const (
	StateNeedsSignIn State = "needs sign-in"
	StateSigningIn   State = "signing in"
	StateSignedIn    State = "signed in"
)

// Reason says why a server needs a sign-in.
type Reason string

const (
	ReasonFirstUse       Reason = "first use"       // never signed in (or no tokens stored)
	ReasonTokenRejected  Reason = "token rejected"  // a 401 and no refresh token to get another
	ReasonRefreshRefused Reason = "refresh refused" // the token endpoint refused the refresh token
	ReasonScopeNeeded    Reason = "scope needed"    // a 403 insufficient_scope: a step-up sign-in is needed
	ReasonSignedOut      Reason = "signed out"
)

// Status is a server's sign-in state. Reason, Scope and Error are kept while
// a sign-in is in progress so that a user sees why it was started.
type Status struct {
	State  State  `json:"state"`
	Reason Reason `json:"reason,omitempty"` // when the state is or was needs sign-in
	Scope  string `json:"scope,omitempty"`  // with ReasonScopeNeeded: the scope the server asked for
	// Error is why the last sign-in failed (timed out, refused, ...).
	Error string `json:"error,omitempty"`
	// SignInURL is the link of the sign-in in progress, for a user whose
	// browser did not open (switchboard auth login prints it).
	SignInURL string    `json:"signInUrl,omitempty"`
	Since     time.Time `json:"since"`
}

// Registration is a client the user registered with the server's
// authorization server beforehand. The zero value means none: Switchboard
// uses a Client ID Metadata Document where the server supports one, else
// registers itself dynamically.
type Registration struct {
	ClientID     string
	ClientSecret string // empty for a public client
	// Scopes are asked for at every sign-in, with the ones the server
	// advertises or asks for.
	Scopes []string
	// ClientIDMetadataURL, when set, replaces [Options.ClientIDMetadataURL]
	// for this server.
	ClientIDMetadataURL string
}

func (r Registration) equal(o Registration) bool {
	return r.ClientID == o.ClientID && r.ClientSecret == o.ClientSecret &&
		slices.Equal(r.Scopes, o.Scopes) && r.ClientIDMetadataURL == o.ClientIDMetadataURL
}

// ErrNeedsSignIn is matched (errors.Is) by every [NeedsSignInError].
var ErrNeedsSignIn = errors.New("needs sign-in")

// A NeedsSignInError is the answer to a request made while the server needs
// a sign-in: it names the server and the command that signs in.
type NeedsSignInError struct {
	Server string
	Reason Reason
	Scope  string
}

func (e *NeedsSignInError) Error() string {
	why := string(e.Reason)
	if e.Scope != "" {
		why += ": " + e.Scope
	}
	return fmt.Sprintf("remote server %q needs sign-in (%s): run \"switchboard auth login %s\"", e.Server, why, e.Server)
}

// Is makes errors.Is(err, ErrNeedsSignIn) true.
func (e *NeedsSignInError) Is(target error) bool { return target == ErrNeedsSignIn }

// A TimeoutError ends a sign-in the user did not finish in time.
type TimeoutError struct {
	Server  string
	Timeout time.Duration
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("sign-in to %q timed out after %s: the browser did not come back to Switchboard; run \"switchboard auth login %s\" to try again",
		e.Server, e.Timeout, e.Server)
}

var (
	errReplaced       = errors.New("sign-in replaced by a newer one")
	errReplacedConfig = errors.New("sign-in stopped: the server's configuration changed")
	errSignedOut      = errors.New("sign-in stopped by a sign-out")
)

// A SignIn signs one remote server in and keeps it signed in. It is the
// [auth.OAuthHandler] of the server's mcp.StreamableClientTransport, and
// [SignIn.Transport] gives the same for an mcp.SSEClientTransport's HTTP
// client. It is safe for concurrent use.
//
// Requests never wait for a user: with a token they carry it (refreshed
// before it expires, and once more on a 401); without one, or when the
// server wants more scope, they fail at once with a [NeedsSignInError]. A
// user's sign-in runs in [SignIn.Login].
type SignIn struct {
	m         *Manager
	name      string
	serverURL string
	reg       Registration

	refreshMu sync.Mutex // one refresh on a 401 at a time

	mu        sync.Mutex
	status    Status
	rec       *record       // what the secret store holds; nil: nothing
	ts        *savingSource // nil: no token
	protected bool          // the server has asked for a token
	challenge *challenge    // the last 401/403 the server answered
	login     *loginRun     // the sign-in in progress
}

var _ auth.OAuthHandler = (*SignIn)(nil)

// challenge is a 401 or 403 answer, kept to start the sign-in from it.
type challenge struct {
	url    string
	status int
	header http.Header
}

type loginRun struct {
	cancel context.CancelCauseFunc
	done   chan struct{}
}

func newSignIn(m *Manager, name, serverURL string, reg Registration) (*SignIn, error) {
	reg.Scopes = slices.Clone(reg.Scopes) // the caller's slice may change
	s := &SignIn{m: m, name: name, serverURL: serverURL, reg: reg}
	rec, err := loadRecord(m.opts.Secrets, name)
	if err != nil {
		return nil, err
	}
	if rec != nil && rec.ServerURL != "" && rec.ServerURL != serverURL {
		// Another server's tokens (the entry's URL changed): never sent to
		// this one. They are overwritten by its sign-in.
		m.logger.Info("the server's URL changed since its sign-in: it needs a new one", "server", name)
		rec = nil
	}
	if rec != nil && !s.fits(rec) {
		// Tokens of a client the configuration no longer names (its
		// clientId or client metadata URL changed): a sign-in with the
		// configured one replaces them.
		m.logger.Info("the server's OAuth client changed since its sign-in: it needs a new one", "server", name)
		rec = nil
	}
	s.rec = rec
	s.status = Status{State: StateNeedsSignIn, Reason: ReasonFirstUse, Since: time.Now()}
	if rec != nil && rec.Token != nil {
		s.ts = s.newSource(rec)
		s.protected = true
		s.status = Status{State: StateSignedIn, Since: time.Now()}
	}
	return s, nil
}

// fits reports whether rec was got with a client a sign-in could use now:
// the configured client id, the client metadata URL in force (which the
// go-sdk's handler prefers to a client id where the server supports it),
// or, with no client id configured, the one Switchboard registered itself.
func (s *SignIn) fits(rec *record) bool {
	switch rec.Registered {
	case registeredPre:
		return s.reg.ClientID != "" && rec.ClientID == s.reg.ClientID
	case registeredMetadataDocument:
		return rec.ClientID == s.metadataURL()
	}
	return s.reg.ClientID == ""
}

// metadataURL is the client metadata URL of this server's sign-ins; "" for none.
func (s *SignIn) metadataURL() string {
	if s.reg.ClientIDMetadataURL != "" {
		return s.reg.ClientIDMetadataURL
	}
	return s.m.opts.ClientIDMetadataURL
}

// Name is the server's name.
func (s *SignIn) Name() string { return s.name }

// Status returns the server's sign-in state.
func (s *SignIn) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.status
}

// setStatus changes the status under s.mu (held by the caller) and returns
// it for notify, which the caller calls after unlocking.
func (s *SignIn) setStatusLocked(st Status) Status {
	st.Since = time.Now()
	s.status = st
	return st
}

func (s *SignIn) needsErrLocked() *NeedsSignInError {
	return &NeedsSignInError{Server: s.name, Reason: s.status.Reason, Scope: s.status.Scope}
}

// TokenSource implements [auth.OAuthHandler]: the source of the token the
// transport puts on each request, nil while there is none. When the server
// is known to want a token and there is none, it fails at once so that the
// request is not even sent.
func (s *SignIn) TokenSource(context.Context) (oauth2.TokenSource, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ts == nil {
		if s.protected && s.status.State != StateSignedIn {
			return nil, s.needsErrLocked()
		}
		return nil, nil
	}
	return s.ts, nil
}

// Authorize implements [auth.OAuthHandler]; the transport calls it when a
// request is answered 401 or 403 and retries the request once when it
// returns nil. It never waits for a user:
//   - 401 with a refresh token: the token is refreshed (once: the transport
//     does not call again for the retried request), saved, and the request
//     retried; a refused refresh makes the server need a sign-in;
//   - 401 without one: the server needs a sign-in (first use, token rejected);
//   - 403 insufficient_scope: it needs a step-up sign-in (scope needed);
//   - another 403 is the server's answer, not ours to fix: nil, as the
//     go-sdk's handler does, so that the transport reports it.
func (s *SignIn) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	defer func() {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
	}()
	challenges, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if resp.StatusCode == http.StatusForbidden && bearerParam(challenges, "error") != "insufficient_scope" {
		return nil
	}
	s.mu.Lock()
	s.protected = true
	s.challenge = &challenge{url: req.URL.String(), status: resp.StatusCode, header: resp.Header.Clone()}
	if resp.StatusCode == http.StatusForbidden {
		scope := bearerParam(challenges, "scope")
		st := s.setStatusLocked(Status{State: StateNeedsSignIn, Reason: ReasonScopeNeeded, Scope: scope})
		err := s.needsErrLocked()
		s.mu.Unlock()
		s.m.logger.Info("remote server needs more scope", "server", s.name, "scope", scope)
		s.m.notify(s.name, st)
		return err
	}
	ts := s.ts
	reason := ReasonFirstUse
	if s.status.State == StateNeedsSignIn && s.status.Reason != "" {
		reason = s.status.Reason // signed out, refused: still the reason
	}
	s.mu.Unlock()
	if ts == nil {
		return s.dropTokens(nil, reason)
	}
	return s.refreshAfter401(ctx, ts, strings.TrimPrefix(req.Header.Get("Authorization"), "Bearer "))
}

// refreshAfter401 gets a new access token with the refresh token after the
// server rejected the one sent. If another request refreshed meanwhile, the
// retry just uses that token.
func (s *SignIn) refreshAfter401(ctx context.Context, ts *savingSource, sent string) error {
	s.refreshMu.Lock()
	defer s.refreshMu.Unlock()
	s.mu.Lock()
	current, rec := s.ts, s.rec
	s.mu.Unlock()
	if current != ts || ts.lastToken() != sent {
		return nil // a newer token exists: the retry carries it
	}
	if rec == nil || rec.Token == nil || rec.Token.RefreshToken == "" {
		return s.dropTokens(ts, ReasonTokenRejected)
	}
	expired := &oauth2.Token{RefreshToken: rec.Token.RefreshToken}
	tok, err := rec.config().TokenSource(s.m.contextWithClient(ctx), expired).Token()
	if err != nil {
		return s.refreshFailed(ts, err)
	}
	s.m.logger.Info("remote server rejected its token; refreshed", "server", s.name, "expiry", tok.Expiry)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ts != ts {
		return nil
	}
	next := s.rec.withToken(tok)
	if err := saveRecord(s.m.opts.Secrets, s.name, next); err != nil {
		s.m.logger.Warn("saving the refreshed token failed", "server", s.name, "err", err)
	}
	s.rec = next
	s.ts = s.newSource(next)
	return nil
}

// refreshFailed turns a failed refresh into the request's error: a refusal
// by the token endpoint (a 4xx: invalid_grant, revoked, expired) means the
// user must sign in again; anything else (network, 5xx) is reported as it is.
func (s *SignIn) refreshFailed(ts *savingSource, err error) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) && re.Response != nil && re.Response.StatusCode >= 400 && re.Response.StatusCode < 500 {
		s.m.logger.Info("token refresh refused", "server", s.name, "error", re.ErrorCode)
		return s.dropTokens(ts, ReasonRefreshRefused)
	}
	return fmt.Errorf("refreshing the token of remote server %q: %w", s.name, err)
}

// dropTokens forgets the tokens of ts (all of them with ts nil), keeping
// the registered client, and makes the server need a sign-in for reason.
// It returns the error the request gets.
func (s *SignIn) dropTokens(ts *savingSource, reason Reason) error {
	s.mu.Lock()
	if ts != nil && s.ts != ts {
		s.mu.Unlock()
		return nil // already replaced by a newer sign-in or refresh
	}
	s.ts = nil
	s.protected = true
	if s.rec != nil && s.rec.Token != nil {
		next := s.rec.withToken(nil)
		if err := saveRecord(s.m.opts.Secrets, s.name, next); err != nil {
			s.m.logger.Warn("forgetting a refused token failed", "server", s.name, "err", err)
		}
		s.rec = next
	}
	var st Status
	changed := s.status.State != StateNeedsSignIn || s.status.Reason != reason
	if s.status.State == StateSigningIn {
		changed = false // the sign-in in progress will decide
	} else if changed {
		st = s.setStatusLocked(Status{State: StateNeedsSignIn, Reason: reason})
	}
	err := &NeedsSignInError{Server: s.name, Reason: reason}
	s.mu.Unlock()
	if changed {
		s.m.notify(s.name, st)
	}
	return err
}

// Login runs a sign-in: it starts from the server's last challenge (or asks
// the server for one), lets the go-sdk's handler discover, register and
// build the sign-in link, opens it with the Browser, waits for the
// redirect to [CallbackPath], exchanges the code, and saves the tokens. It
// returns when the server is signed in, or with the reason it is not: the
// timeout ([TimeoutError]), a newer sign-in that replaced this one, ctx, or
// the authorization server's refusal.
func (s *SignIn) Login(ctx context.Context) error {
	ctx, cancel := context.WithCancelCause(ctx)
	run := &loginRun{cancel: cancel, done: make(chan struct{})}
	s.startLogin(run)
	timeout := &TimeoutError{Server: s.name, Timeout: s.m.opts.Timeout}
	ctx, stop := context.WithTimeoutCause(ctx, s.m.opts.Timeout, timeout)
	defer func() {
		stop()
		cancel(nil)
		s.mu.Lock()
		if s.login == run {
			s.login = nil
		}
		s.mu.Unlock()
		close(run.done)
	}()

	s.mu.Lock()
	st := s.setStatusLocked(Status{State: StateSigningIn, Reason: s.status.Reason, Scope: s.status.Scope})
	ch := s.challenge
	s.mu.Unlock()
	s.m.notify(s.name, st)
	s.m.logger.Info("sign-in started", "server", s.name, "reason", st.Reason)

	err := s.authorize(ctx, ch)
	if err != nil && ctx.Err() != nil {
		err = context.Cause(ctx)
	}
	if errors.Is(err, errReplaced) || errors.Is(err, errReplacedConfig) || errors.Is(err, errSignedOut) {
		return fmt.Errorf("signing in to remote server %q: %w", s.name, err)
	}
	if err != nil {
		s.mu.Lock()
		st := s.setStatusLocked(Status{State: StateNeedsSignIn, Reason: s.status.Reason, Scope: s.status.Scope, Error: err.Error()})
		if st.Reason == "" {
			st = s.setStatusLocked(Status{State: StateNeedsSignIn, Reason: ReasonFirstUse, Error: err.Error()})
		}
		s.mu.Unlock()
		s.m.notify(s.name, st)
		s.m.logger.Info("sign-in failed", "server", s.name, "err", err)
		var te *TimeoutError
		if errors.As(err, &te) {
			return err
		}
		return fmt.Errorf("signing in to remote server %q: %w", s.name, err)
	}
	return nil
}

// startLogin registers a new sign-in, first stopping the one in progress.
func (s *SignIn) startLogin(run *loginRun) {
	for {
		s.mu.Lock()
		prev := s.login
		if prev == nil {
			s.login = run
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		s.m.logger.Info("a new sign-in replaces the pending one", "server", s.name)
		prev.cancel(errReplaced)
		<-prev.done
	}
}

// cancelLogin stops the sign-in in progress, if any, and waits for it.
func (s *SignIn) cancelLogin(cause error) {
	s.mu.Lock()
	run := s.login
	s.mu.Unlock()
	if run != nil {
		run.cancel(cause)
		<-run.done
	}
}

// captured is what the go-sdk's handler hands over at the end of a sign-in.
type captured struct {
	cfg *oauth2.Config
	src oauth2.TokenSource
	tok *oauth2.Token
}

// authorize drives the go-sdk's handler through one sign-in.
func (s *SignIn) authorize(ctx context.Context, ch *challenge) error {
	if ch == nil {
		var err error
		if ch, err = s.probe(ctx); err != nil {
			return err
		}
	}
	meta := &metadataRecorder{}
	var got captured
	var (
		pend      *pending
		pendState string
		opened    chan struct{}
		stopOpen  context.CancelFunc = func() {}
	)
	fetch := func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		u, err := url.Parse(args.URL)
		if err != nil || u.Query().Get("state") == "" {
			return nil, fmt.Errorf("the sign-in link has no state")
		}
		if u.Scheme != "https" && u.Scheme != "http" {
			return nil, fmt.Errorf("the authorization endpoint is not an http(s) URL")
		}
		pendState = u.Query().Get("state")
		pend = s.m.addPending(pendState, s.name)
		s.mu.Lock()
		st := s.setStatusLocked(Status{State: StateSigningIn, Reason: s.status.Reason, Scope: s.status.Scope, SignInURL: args.URL})
		s.mu.Unlock()
		s.m.notify(s.name, st)
		s.m.logger.Info("sign-in waiting for the browser", "server", s.name)
		// The browser may be slower than the redirect it leads to (an
		// HTTP client following redirects returns only after the callback
		// page), so it runs beside the wait.
		var openCtx context.Context
		openCtx, stopOpen = context.WithCancel(context.WithoutCancel(ctx))
		opened = make(chan struct{})
		go func() {
			defer close(opened)
			if err := s.m.opts.Browser.Open(openCtx, args.URL); err != nil && openCtx.Err() == nil {
				s.m.logger.Warn("could not open the sign-in link in a browser; open it by hand", "server", s.name, "err", err)
			}
		}()
		select {
		case res := <-pend.result:
			if res.err != nil {
				return nil, res.err
			}
			return &auth.AuthorizationResult{Code: res.code, State: res.state, Iss: res.iss}, nil
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
	h, reusedClient, err := s.newHandler(fetch, meta, &got)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ch.url, nil)
	if err != nil {
		return fmt.Errorf("sign-in of %q: %w", s.name, err)
	}
	resp := &http.Response{StatusCode: ch.status, Header: ch.header.Clone(), Body: http.NoBody, Request: req}
	err = h.Authorize(ctx, req, resp)
	if err == nil && got.src == nil {
		err = errors.New("the authorization server gave no token")
	}
	if err == nil {
		// The handler may have used (and so refreshed and rotated) the
		// token already: the source holds the current one.
		got.tok, err = got.src.Token()
	}
	if err == nil {
		err = s.signedIn(got, meta)
	}
	if err != nil && reusedClient && ctx.Err() == nil {
		// Refused by the server, not abandoned by the user: the server may
		// have forgotten the client, so the next sign-in registers again.
		s.forgetClient()
	}
	if pend != nil {
		s.m.finishPending(pendState, pend, err)
		if ctx.Err() != nil {
			stopOpen()
		}
		select {
		case <-opened:
		case <-time.After(5 * time.Second):
			stopOpen()
			<-opened
		}
		stopOpen()
	}
	return err
}

// newHandler configures the go-sdk's handler for one sign-in. It reports
// whether it reuses the client this server registered dynamically before.
func (s *SignIn) newHandler(fetch auth.AuthorizationCodeFetcher, meta *metadataRecorder, got *captured) (*auth.AuthorizationCodeHandler, bool, error) {
	redirect := s.m.opts.RedirectURL
	s.mu.Lock()
	rec := s.rec
	s.mu.Unlock()
	var granted []string
	if rec != nil {
		granted = rec.Scopes
	}
	cfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:              redirect,
		AuthorizationCodeFetcher: fetch,
		Client:                   &http.Client{Transport: meta.wrap(s.m.client.Transport), Timeout: s.m.client.Timeout},
		RequestRefreshToken:      true,
		// The handler unions the scopes it granted earlier only within its
		// own lifetime; the stored ones make a step-up after a restart keep
		// what was granted before.
		ScopeFilter: func(discovered []string) []string { return unionScopes(unionScopes(granted, s.reg.Scopes), discovered) },
		NewTokenSource: func(ctx context.Context, c *oauth2.Config, t *oauth2.Token) (oauth2.TokenSource, error) {
			got.cfg, got.src = c, c.TokenSource(ctx, t)
			return got.src, nil
		},
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{
			Metadata: &oauthex.ClientRegistrationMetadata{
				RedirectURIs:  []string{redirect},
				ClientName:    s.m.opts.ClientName,
				GrantTypes:    []string{"authorization_code", "refresh_token"},
				ResponseTypes: []string{"code"},
			},
		},
	}
	if u := s.metadataURL(); u != "" {
		cfg.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: u}
	}
	reused := false
	switch {
	case s.reg.ClientID != "":
		cfg.PreregisteredClient = credentials(s.reg.ClientID, s.reg.ClientSecret, "")
	case rec != nil && rec.Registered == registeredDynamic && rec.RedirectURL == redirect && rec.ClientID != "":
		cfg.PreregisteredClient = credentials(rec.ClientID, rec.ClientSecret, rec.Issuer)
		reused = true
	}
	h, err := auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		return nil, false, fmt.Errorf("sign-in of %q: %w", s.name, err)
	}
	return h, reused, nil
}

func credentials(id, secret, issuer string) *oauthex.ClientCredentials {
	c := &oauthex.ClientCredentials{ClientID: id, Issuer: issuer}
	if secret != "" {
		c.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: secret}
	}
	return c
}

// signedIn saves what a finished sign-in got and makes the server signed in.
func (s *SignIn) signedIn(got captured, meta *metadataRecorder) error {
	kind := registeredDynamic
	switch got.cfg.ClientID {
	case s.reg.ClientID:
		kind = registeredPre
	case s.metadataURL():
		kind = registeredMetadataDocument
	}
	scopes := got.cfg.Scopes
	if granted, ok := got.tok.Extra("scope").(string); ok && granted != "" {
		scopes = strings.Fields(granted)
	}
	issuer, revocation := meta.result()
	rec := &record{
		Version: recordVersion, ServerURL: s.serverURL, Registered: kind,
		ClientID: got.cfg.ClientID, ClientSecret: got.cfg.ClientSecret, AuthStyle: got.cfg.Endpoint.AuthStyle,
		RedirectURL: got.cfg.RedirectURL, Issuer: issuer,
		AuthURL: got.cfg.Endpoint.AuthURL, TokenURL: got.cfg.Endpoint.TokenURL, RevocationURL: revocation,
		Scopes: scopes, Token: got.tok,
	}
	if err := saveRecord(s.m.opts.Secrets, s.name, rec); err != nil {
		return err
	}
	s.mu.Lock()
	s.rec = rec
	s.ts = s.newSource(rec)
	s.protected = true
	s.challenge = nil
	st := s.setStatusLocked(Status{State: StateSignedIn})
	s.mu.Unlock()
	s.m.notify(s.name, st)
	s.m.logger.Info("signed in", "server", s.name, "scopes", strings.Join(scopes, " "), "client", kind)
	return nil
}

func (s *SignIn) forgetClient() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rec == nil || s.rec.Token != nil {
		return
	}
	s.rec = nil
	if err := s.m.opts.Secrets.Delete(s.name, storeKey); err != nil {
		s.m.logger.Warn("forgetting the registered client failed", "server", s.name, "err", err)
	}
}

// probe asks the server for a challenge when none has been seen yet (a
// sign-in started before any request): a GET (what a streamable HTTP or SSE
// endpoint answers without side effects), then an initialize POST.
func (s *SignIn) probe(ctx context.Context) (*challenge, error) {
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"switchboard","version":"probe"}}}`
	last := 0
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		var body io.Reader
		if method == http.MethodPost {
			body = strings.NewReader(initialize)
		}
		req, err := http.NewRequestWithContext(ctx, method, s.serverURL, body)
		if err != nil {
			return nil, fmt.Errorf("sign-in of %q: %w", s.name, err)
		}
		req.Header.Set("Accept", "application/json, text/event-stream")
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := s.m.client.Do(req)
		if err != nil {
			return nil, fmt.Errorf("reaching remote server %q to sign in: %w", s.name, err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
			return &challenge{url: s.serverURL, status: resp.StatusCode, header: resp.Header.Clone()}, nil
		}
		last = resp.StatusCode
	}
	return nil, fmt.Errorf("remote server %q did not ask for a sign-in (HTTP %d without a token): it needs none", s.name, last)
}

// SignOutResult says what a sign-out did beyond deleting the tokens.
type SignOutResult struct {
	// RevocationSupported: the authorization server has a revocation
	// endpoint (RFC 7009) and there were tokens to revoke.
	RevocationSupported bool
	// Revoked: it accepted the revocation.
	Revoked bool
	// RevokeError is why the revocation failed (the tokens are deleted here
	// anyway).
	RevokeError string
}

// SignOut stops a sign-in in progress, deletes the server's tokens and
// registered client from the secret store, and revokes the tokens where
// the authorization server supports revocation. The error is only a
// failure to delete: a revocation that fails is in the result.
func (s *SignIn) SignOut(ctx context.Context) (SignOutResult, error) {
	s.cancelLogin(errSignedOut)
	s.mu.Lock()
	rec := s.rec
	s.rec, s.ts, s.challenge = nil, nil, nil
	st := s.setStatusLocked(Status{State: StateNeedsSignIn, Reason: ReasonSignedOut})
	s.mu.Unlock()
	s.m.notify(s.name, st)
	var res SignOutResult
	if rec != nil && rec.Token != nil && rec.RevocationURL != "" {
		res.RevocationSupported = true
		err := s.m.revoke(ctx, rec)
		res.Revoked = err == nil
		if err != nil {
			res.RevokeError = err.Error()
			s.m.logger.Warn("revoking the tokens failed; they are deleted here", "server", s.name, "err", err)
		}
	}
	if err := s.m.opts.Secrets.Delete(s.name, storeKey); err != nil {
		return res, fmt.Errorf("signing out of remote server %q: %w", s.name, err)
	}
	s.m.logger.Info("signed out", "server", s.name, "revoked", res.Revoked)
	return res, nil
}

// bearerParam returns param of the first Bearer challenge that has it.
func bearerParam(cs []oauthex.Challenge, param string) string {
	for _, c := range cs {
		if c.Scheme == "bearer" && c.Params[param] != "" {
			return c.Params[param]
		}
	}
	return ""
}

// unionScopes returns a's scopes then b's new ones; nil when both are empty.
func unionScopes(a, b []string) []string {
	var out []string
	for _, sc := range slices.Concat(a, b) {
		if !slices.Contains(out, sc) {
			out = append(out, sc)
		}
	}
	return out
}
