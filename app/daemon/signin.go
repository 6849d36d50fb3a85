package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/config"
	"github.com/switchboardhq/switchboard/app/events"
	"github.com/switchboardhq/switchboard/app/remoteauth"
	"github.com/switchboardhq/switchboard/supervisor"
)

// TestBrowserEnv, set to "follow", makes the daemon's sign-ins "open" their
// link with an HTTP client that follows redirects (remoteauth.FollowRedirects)
// instead of the system browser. It is for tests, whose loopback
// authorization servers approve without a user; nothing else reads it.
const TestBrowserEnv = "SWITCHBOARD_TEST_BROWSER"

// TestSignInTimeoutEnv, set to a duration ("5s"), bounds the daemon's
// sign-ins instead of remoteauth.DefaultTimeout (5 minutes), so that a
// test of a sign-in nobody finishes sees its timeout in seconds. It is for
// tests; nothing else reads it, and a value that is not a positive
// duration is ignored.
const TestSignInTimeoutEnv = "SWITCHBOARD_TEST_SIGNIN_TIMEOUT"

// loginLinkWait bounds how long POST .../login waits for the sign-in link
// (discovery and registration come first).
const loginLinkWait = 30 * time.Second

// signedInStartTimeout bounds the start of a remote server after its sign-in.
const signedInStartTimeout = time.Minute

// browserWait is how long POST .../login waits for the browser to say it
// opened the link before it answers without knowing.
const browserWait = 3 * time.Second

// signIns are the remote servers' sign-ins: one remoteauth.Manager, made
// once the daemon's listener (the redirect's address) is known, and the
// supervisor's and the API's way to each server's SignIn.
type signIns struct {
	log     *slog.Logger
	current func() *config.Config
	manager atomic.Pointer[remoteauth.Manager]
	secrets remoteauth.Secrets // the servers' OAuth client secrets; set by start before manager
	browser *watchedBrowser
	bus     *events.Bus     // sign-in changes go on the live feed
	timeout time.Duration   // of a sign-in; 0: remoteauth.DefaultTimeout
	ctx     context.Context // sign-ins outlive the request that started them; close ends them
	cancel  context.CancelFunc
	running sync.WaitGroup // the sign-ins and the starts after them

	mu    sync.Mutex
	asked map[string]bool   // servers that asked for a sign-in: their views show its state
	links map[string]string // the link of each server's latest sign-in (a fast one is over before Login looks)
}

func newSignIns(ctx context.Context, log *slog.Logger, current func() *config.Config, bus *events.Bus) *signIns {
	ctx, cancel := context.WithCancel(ctx)
	var b remoteauth.Browser = remoteauth.SystemBrowser{}
	if os.Getenv(TestBrowserEnv) == "follow" {
		b = remoteauth.FollowRedirects{}
	}
	var timeout time.Duration
	if v := os.Getenv(TestSignInTimeoutEnv); v != "" {
		if d, err := time.ParseDuration(v); err == nil && d > 0 {
			timeout = d
		} else {
			log.Warn("ignoring "+TestSignInTimeoutEnv+": not a positive duration", "value", v)
		}
	}
	return &signIns{log: log, current: current, bus: bus, ctx: ctx, cancel: cancel, timeout: timeout, browser: &watchedBrowser{Browser: b, opened: map[string]chan error{}}, asked: map[string]bool{}, links: map[string]string{}}
}

// start makes the Manager, with listen (host:port) as the redirect's
// address. signedIn is called (in a goroutine of its own, with a context
// that close ends) when a server's
// sign-in completes: its connection failed before, maybe often enough to
// make it failing, and should be tried again now.
func (s *signIns) start(store remoteauth.Secrets, listen string, signedIn func(ctx context.Context, server string)) error {
	m, err := remoteauth.New(remoteauth.Options{Secrets: store, RedirectURL: "http://" + listen + remoteauth.CallbackPath,
		Browser: s.browser, Timeout: s.timeout, Logger: s.log.With("part", "remote sign-in"),
		OnChange: func(server string, st remoteauth.Status) {
			s.markAsked(server)
			publish(s.log, s.bus, events.TypeAuth, events.Auth{Server: server, State: string(st.State), Reason: string(st.Reason), Scope: st.Scope, Error: st.Error})
			if st.State == remoteauth.StateSignedIn && s.ctx.Err() == nil { // not once close began
				s.running.Go(func() { signedIn(s.ctx, server) })
			}
			if st.SignInURL != "" {
				s.mu.Lock()
				s.links[server] = st.SignInURL
				s.mu.Unlock()
			}
		}})
	if err != nil {
		return err
	}
	s.secrets = store
	s.manager.Store(m)
	return nil
}

// close ends the sign-ins in progress and waits for them (and for the
// starts that follow a sign-in).
func (s *signIns) close() {
	s.cancel()
	s.running.Wait()
}

// signIn returns the sign-in of the remote server name of the config in force.
func (s *signIns) signIn(name string) (*remoteauth.SignIn, error) {
	m := s.manager.Load()
	if m == nil {
		return nil, errors.New("remote sign-in is not ready yet")
	}
	sc, ok := s.current().Servers[name]
	if !ok || !sc.IsRemote() {
		return nil, fmt.Errorf("%q is not a remote server of the config", name)
	}
	reg, err := s.registration(name, sc.OAuth)
	if err != nil {
		return nil, err
	}
	return m.Server(name, sc.URL, reg)
}

// registration is the OAuth client of a server's config entry, its secret
// read from the secret store (config.json only names it).
func (s *signIns) registration(server string, o *config.OAuth) (remoteauth.Registration, error) {
	if o == nil {
		return remoteauth.Registration{}, nil
	}
	reg := remoteauth.Registration{ClientID: o.ClientID, Scopes: o.Scopes, ClientIDMetadataURL: o.ClientMetadataURL}
	if o.ClientSecret != "" {
		// s.secrets is set: the caller loaded the manager, stored after it.
		v, err := s.secrets.Get(server, o.ClientSecret)
		if err != nil {
			return remoteauth.Registration{}, fmt.Errorf("the OAuth client secret of remote server %q (servers.%s.oauth.clientSecret names %q): %w",
				server, server, o.ClientSecret, err)
		}
		reg.ClientSecret = v
	}
	return reg, nil
}

// roundTripper is the supervisor's RemoteRoundTripper: each connection to
// a remote server goes through its sign-in, which puts the token on the
// requests and fails them at once with "needs sign-in" when there is none.
// (The same RoundTripper serves the streamable HTTP and the SSE transport.)
func (s *signIns) roundTripper(server string) http.RoundTripper {
	si, err := s.signIn(server)
	if err != nil {
		s.log.Warn("remote server connects without sign-in", "server", server, "err", err)
		return nil
	}
	return &askedTransport{base: si.Transport(nil), asked: func() { s.markAsked(server) }}
}

func (s *signIns) markAsked(server string) {
	s.mu.Lock()
	s.asked[server] = true
	s.mu.Unlock()
}

// An askedTransport notes that its server asked for a sign-in, so that
// its view shows the sign-in state (a server that never did shows none).
type askedTransport struct {
	base  http.RoundTripper
	asked func()
}

func (t *askedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if errors.Is(err, remoteauth.ErrNeedsSignIn) {
		t.asked()
		return nil, needsUserError{err}
	}
	if err == nil && resp.StatusCode == http.StatusUnauthorized {
		t.asked()
	}
	return resp, err
}

// needsUserError tells the supervisor that the connection cannot be made
// until the user signs in: it is not retried with backoff (each call would
// wait for the next try only to fail again), and the sign-in starts it.
type needsUserError struct{ err error }

func (e needsUserError) Error() string   { return e.err.Error() }
func (e needsUserError) Unwrap() []error { return []error{e.err, supervisor.ErrNeedsUser} }

// Status implements api.SignIns.
func (s *signIns) Status(server string) (wire.AuthStatus, bool) {
	if sc, ok := s.current().Servers[server]; !ok || !sc.IsRemote() {
		return wire.AuthStatus{}, false
	}
	si, err := s.signIn(server)
	if err != nil {
		return wire.AuthStatus{}, false
	}
	st := si.Status()
	s.mu.Lock()
	asked := s.asked[server]
	s.mu.Unlock()
	// A server that never asked for a token shows no sign-in.
	if st.State == remoteauth.StateNeedsSignIn && st.Reason == remoteauth.ReasonFirstUse && !asked {
		return wire.AuthStatus{}, false
	}
	return authStatus(st), true
}

func authStatus(st remoteauth.Status) wire.AuthStatus {
	return wire.AuthStatus{State: string(st.State), Reason: string(st.Reason), Scope: st.Scope, Error: st.Error, SignInURL: st.SignInURL, Since: st.Since}
}

// Login implements api.SignIns: it starts the sign-in in the daemon and
// returns once its link is known (or the sign-in ended first).
func (s *signIns) Login(ctx context.Context, server string) (wire.LoginResult, error) {
	si, err := s.signIn(server)
	if err != nil {
		return wire.LoginResult{}, err
	}
	s.mu.Lock()
	delete(s.links, server)
	s.mu.Unlock()
	done := make(chan error, 1)
	s.running.Go(func() {
		err := si.Login(s.ctx)
		if err != nil {
			s.log.Info("remote sign-in ended", "server", server, "err", err)
		}
		done <- err
	})
	res := wire.LoginResult{Server: server}
	deadline := time.NewTimer(loginLinkWait)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	ended := false // the sign-in is over (signed in faster than a tick)
	for {
		s.mu.Lock()
		link := s.links[server]
		s.mu.Unlock()
		if link != "" {
			res.SignInURL = link
			res.BrowserOpened = s.browser.wait(ctx, link)
		}
		if link != "" || ended {
			res.Auth = authStatus(si.Status())
			return res, nil
		}
		select {
		case err := <-done:
			if err != nil {
				return res, err
			}
			ended = true
		case <-deadline.C:
			res.Auth = authStatus(si.Status())
			return res, nil
		case <-ctx.Done():
			return res, ctx.Err()
		case <-tick.C:
		}
	}
}

// Logout implements api.SignIns.
func (s *signIns) Logout(ctx context.Context, server string) (wire.LogoutResult, error) {
	si, err := s.signIn(server)
	if err != nil {
		return wire.LogoutResult{}, err
	}
	out, err := si.SignOut(ctx)
	if err != nil {
		return wire.LogoutResult{}, err
	}
	return wire.LogoutResult{Server: server, Revoked: out.Revoked, RevokeError: out.RevokeError, Auth: authStatus(si.Status())}, nil
}

// A watchedBrowser tells POST .../login whether the link was opened.
type watchedBrowser struct {
	remoteauth.Browser
	mu     sync.Mutex
	opened map[string]chan error // by link, until wait takes it
}

func (b *watchedBrowser) result(link string) chan error {
	b.mu.Lock()
	defer b.mu.Unlock()
	ch := b.opened[link]
	if ch == nil {
		ch = make(chan error, 1)
		b.opened[link] = ch
	}
	return ch
}

// Open implements remoteauth.Browser.
func (b *watchedBrowser) Open(ctx context.Context, link string) error {
	err := b.Browser.Open(ctx, link)
	b.result(link) <- err
	return err
}

// wait reports whether the browser opened link, waiting browserWait at most.
func (b *watchedBrowser) wait(ctx context.Context, link string) bool {
	ch := b.result(link)
	defer func() {
		b.mu.Lock()
		delete(b.opened, link)
		b.mu.Unlock()
	}()
	t := time.NewTimer(browserWait)
	defer t.Stop()
	select {
	case err := <-ch:
		return err == nil
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}
