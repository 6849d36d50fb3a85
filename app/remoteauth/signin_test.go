package remoteauth_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/app/internal/testutil"
	"github.com/switchboardhq/switchboard/app/internal/testutil/oauthfake"
	"github.com/switchboardhq/switchboard/app/remoteauth"
	"github.com/switchboardhq/switchboard/app/secrets"
)

// daemon is what the daemon will hold: a secret store in its data
// directory, the redirect endpoint on its loopback listener, a Manager.
// A test "restarts" it by building another over the same directory.
type daemon struct {
	t       *testing.T
	dir     string
	addr    string
	store   *secrets.Store
	m       *remoteauth.Manager
	srv     *http.Server
	logs    *syncBuffer
	browser remoteauth.Browser
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func startDaemon(t *testing.T, dir string, browser remoteauth.Browser, timeout time.Duration) *daemon {
	t.Helper()
	return startDaemonAt(t, "127.0.0.1:0", dir, browser, timeout)
}

// restart stops d and starts another over the same directory and address,
// as the daemon's next run (on its configured port) would.
func (d *daemon) restart() *daemon {
	d.t.Helper()
	addr := d.addr
	d.srv.Close()
	return startDaemonAt(d.t, addr, d.dir, d.browser, 10*time.Second)
}

func startDaemonAt(t *testing.T, addr, dir string, browser remoteauth.Browser, timeout time.Duration) *daemon {
	t.Helper()
	logs := &syncBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	store, err := secrets.Open(context.Background(), secrets.Options{Dir: dir, NoKeychain: true, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	m, err := remoteauth.New(remoteauth.Options{
		Secrets: store, RedirectURL: "http://" + ln.Addr().String() + remoteauth.CallbackPath,
		Browser: browser, Timeout: timeout, Logger: logger,
	})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(remoteauth.CallbackPath, m.Callback())
	d := &daemon{t: t, dir: dir, addr: ln.Addr().String(), store: store, m: m, logs: logs, browser: browser,
		srv: &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}}
	go d.srv.Serve(ln)
	t.Cleanup(func() { d.srv.Close() })
	return d
}

func (d *daemon) signIn(f *oauthfake.Remote, path string) *remoteauth.SignIn {
	d.t.Helper()
	si, err := d.m.Server("linear", f.URL(path), remoteauth.Registration{})
	if err != nil {
		d.t.Fatal(err)
	}
	return si
}

// connect opens an MCP session to f through si, as the remote backend will.
func connect(ctx context.Context, f *oauthfake.Remote, si *remoteauth.SignIn) (*mcp.ClientSession, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	return client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: f.URL("/mcp"), OAuthHandler: si, MaxRetries: -1}, nil)
}

func callEcho(ctx context.Context, t *testing.T, cs *mcp.ClientSession, text string) error {
	t.Helper()
	got, err := testutil.CallText(ctx, cs, "echo", map[string]any{"text": text})
	if err == nil && got != text {
		t.Errorf("echo answered %q, want %q", got, text)
	}
	return err
}

func wantNeedsSignIn(t *testing.T, err error, reason remoteauth.Reason) {
	t.Helper()
	var ns *remoteauth.NeedsSignInError
	if !errors.As(err, &ns) || !errors.Is(err, remoteauth.ErrNeedsSignIn) {
		t.Fatalf("got error %v, want a NeedsSignInError", err)
	}
	if ns.Reason != reason || ns.Server != "linear" {
		t.Errorf("got %+v, want server linear, reason %q", ns, reason)
	}
	if !strings.Contains(err.Error(), `switchboard auth login linear`) {
		t.Errorf("error %q does not say how to sign in", err)
	}
}

// TestSignInPersistsAcrossRestart: the first connection fails at once
// (first use); Login signs in (discovery, dynamic registration, the browser
// that follows the redirect back, the code exchange); the tokens are in the
// secret store, not in any other file; a restarted daemon connects with them
// without signing in again. It reports what the sign-in cost in requests.
func TestSignInPersistsAcrossRestart(t *testing.T) {
	ctx, f := newRemote(t)
	dir := t.TempDir()
	d := startDaemon(t, dir, remoteauth.FollowRedirects{}, 10*time.Second)
	si := d.signIn(f, "/mcp")
	if st := si.Status(); st.State != remoteauth.StateNeedsSignIn || st.Reason != remoteauth.ReasonFirstUse {
		t.Fatalf("status before sign-in: %+v", st)
	}
	_, err := connect(ctx, f, si)
	wantNeedsSignIn(t, err, remoteauth.ReasonFirstUse)
	before := f.TotalRequests()
	if err := si.Login(ctx); err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, k := range []string{"prm", "asm", "register", "authorize", "token"} {
		counts[k] = f.Count(k)
	}
	t.Logf("a sign-in cost %d requests to the remote and its authorization server (%v), "+
		"besides the request that got the 401 and its retry, plus 1 to Switchboard's callback", f.TotalRequests()-before, counts)
	if n := f.TotalRequests() - before; n != 5 {
		t.Errorf("a sign-in cost %d requests, want 5 (metadata of the resource and of its server, registration, authorize, token)", n)
	}
	if st := si.Status(); st.State != remoteauth.StateSignedIn {
		t.Fatalf("status after sign-in: %+v", st)
	}
	cs, err := connect(ctx, f, si)
	if err != nil {
		t.Fatal(err)
	}
	if err := callEcho(ctx, t, cs, "one"); err != nil {
		t.Fatal(err)
	}
	cs.Close()

	keys, err := d.store.Keys("linear")
	if err != nil || len(keys) != 1 {
		t.Fatalf("secret store keys of linear: %v %v, want the one sign-in record", keys, err)
	}

	// Restart: a new store, Manager and listener over the same directory.
	d2 := startDaemon(t, dir, remoteauth.FollowRedirects{}, 10*time.Second)
	si2 := d2.signIn(f, "/mcp")
	if st := si2.Status(); st.State != remoteauth.StateSignedIn {
		t.Fatalf("status after restart: %+v", st)
	}
	authorizeBefore, tokenBefore := f.Count("authorize"), f.Count("token")
	cs2, err := connect(ctx, f, si2)
	if err != nil {
		t.Fatal(err)
	}
	defer cs2.Close()
	if err := callEcho(ctx, t, cs2, "two"); err != nil {
		t.Fatal(err)
	}
	if f.Count("authorize") != authorizeBefore || f.Count("token") != tokenBefore {
		t.Errorf("the restarted daemon signed in again (authorize %d→%d, token %d→%d)",
			authorizeBefore, f.Count("authorize"), tokenBefore, f.Count("token"))
	}
}

// newRemote starts the fake remote for a test and gives the test's
// context: 30 seconds for all of its sign-ins and calls.
func newRemote(t *testing.T) (context.Context, *oauthfake.Remote) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx, oauthfake.New(t)
}

// signedIn returns a daemon signed in to f and an open session.
func signedIn(ctx context.Context, t *testing.T, f *oauthfake.Remote) (*daemon, *remoteauth.SignIn, *mcp.ClientSession) {
	t.Helper()
	d := startDaemon(t, t.TempDir(), remoteauth.FollowRedirects{}, 10*time.Second)
	si := d.signIn(f, "/mcp")
	if err := si.Login(ctx); err != nil {
		t.Fatal(err)
	}
	cs, err := connect(ctx, f, si)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return d, si, cs
}

// TestRefreshOn401: the remote forgets the access token mid-session; the
// next call gets a 401, the token is refreshed once, the call retried and
// answered, and the new token saved (a restart uses it).
func TestRefreshOn401(t *testing.T) {
	ctx, f := newRemote(t)
	d, si, cs := signedIn(ctx, t, f)
	if err := callEcho(ctx, t, cs, "before"); err != nil {
		t.Fatal(err)
	}
	f.ForgetAccess()
	if err := callEcho(ctx, t, cs, "after"); err != nil {
		t.Fatalf("the call after a 401 failed: %v", err)
	}
	if n := f.Count("token:refresh"); n != 1 {
		t.Errorf("refreshed %d times, want 1", n)
	}
	if st := si.Status(); st.State != remoteauth.StateSignedIn {
		t.Errorf("status: %+v", st)
	}
	// The refreshed token was saved: a restarted daemon's call works
	// without another refresh.
	d2 := startDaemon(t, d.dir, remoteauth.FollowRedirects{}, 10*time.Second)
	cs2, err := connect(ctx, f, d2.signIn(f, "/mcp"))
	if err != nil {
		t.Fatal(err)
	}
	defer cs2.Close()
	if err := callEcho(ctx, t, cs2, "restarted"); err != nil {
		t.Fatal(err)
	}
	if n := f.Count("token:refresh"); n != 1 {
		t.Errorf("refreshed %d times after the restart, want still 1 (the saved token)", n)
	}
}

// TestRefreshRefused: the access token is rejected and the refresh token
// refused: the call fails at once with a NeedsSignInError (refresh refused),
// the status says so, and the next call fails without reaching the remote.
func TestRefreshRefused(t *testing.T) {
	ctx, f := newRemote(t)
	_, si, cs := signedIn(ctx, t, f)
	f.ForgetAccess()
	f.Set(func(f *oauthfake.Remote) { f.Refuse = true })
	start := time.Now()
	err := callEcho(ctx, t, cs, "x")
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("the refused call took %s", elapsed)
	}
	wantNeedsSignIn(t, err, remoteauth.ReasonRefreshRefused)
	if st := si.Status(); st.State != remoteauth.StateNeedsSignIn || st.Reason != remoteauth.ReasonRefreshRefused {
		t.Errorf("status: %+v", st)
	}
	mcpBefore := f.Count("mcp")
	err = callEcho(ctx, t, cs, "y")
	wantNeedsSignIn(t, err, remoteauth.ReasonRefreshRefused)
	if n := f.Count("mcp") - mcpBefore; n != 0 {
		t.Errorf("a call while the server needs sign-in reached it %d times, want 0", n)
	}
	// Signing in again makes the same session work.
	f.Set(func(f *oauthfake.Remote) { f.Refuse = false })
	if err := si.Login(ctx); err != nil {
		t.Fatal(err)
	}
	if err := callEcho(ctx, t, cs, "z"); err != nil {
		t.Fatalf("after signing in again: %v", err)
	}
}

// TestSignInAbandoned: the user never comes back from the browser; the
// sign-in ends after the timeout with a message that says so and how to
// try again, and the status keeps it.
func TestSignInAbandoned(t *testing.T) {
	ctx, f := newRemote(t)
	f.Set(func(f *oauthfake.Remote) { f.Hold = true })
	d := startDaemon(t, t.TempDir(), &recordingBrowser{}, 300*time.Millisecond)
	si := d.signIn(f, "/mcp")
	err := si.Login(ctx)
	var te *remoteauth.TimeoutError
	if !errors.As(err, &te) {
		t.Fatalf("got %v, want a TimeoutError", err)
	}
	want := `sign-in to "linear" timed out after 300ms: the browser did not come back to Switchboard; run "switchboard auth login linear" to try again`
	if err.Error() != want {
		t.Errorf("message:\n got %s\nwant %s", err, want)
	}
	st := si.Status()
	if st.State != remoteauth.StateNeedsSignIn || st.Error != want {
		t.Errorf("status: %+v", st)
	}
	if len(d.browser.(*recordingBrowser).opened()) != 1 {
		t.Errorf("browser opened %d links, want 1", len(d.browser.(*recordingBrowser).opened()))
	}
}

// TestSecondSignInReplacesFirst: a sign-in started while one waits for the
// browser replaces it: the first returns at once saying so, its link is
// refused by the callback, and the second completes.
func TestSecondSignInReplacesFirst(t *testing.T) {
	ctx, f := newRemote(t)
	f.Set(func(f *oauthfake.Remote) { f.Hold = true })
	b := &recordingBrowser{}
	d := startDaemon(t, t.TempDir(), b, 20*time.Second)
	si := d.signIn(f, "/mcp")

	first := make(chan error, 1)
	go func() { first <- si.Login(ctx) }()
	testutil.Eventually(t, 10*time.Second, "the first sign-in opens its link", func() bool { return len(b.opened()) == 1 })
	if st := si.Status(); st.State != remoteauth.StateSigningIn || st.SignInURL != b.opened()[0] {
		t.Errorf("status while signing in: %+v", st)
	}
	second := make(chan error, 1)
	go func() { second <- si.Login(ctx) }()
	select {
	case err := <-first:
		if err == nil || !strings.Contains(err.Error(), "replaced by a newer one") {
			t.Errorf("the first sign-in ended with %v, want replaced", err)
		}
	case <-ctx.Done():
		t.Fatal("the first sign-in did not end")
	}
	testutil.Eventually(t, 10*time.Second, "the second sign-in opens its link", func() bool { return len(b.opened()) == 2 })
	links := b.opened()

	// The user approves in the first tab: its redirect is refused.
	err := remoteauth.FollowRedirects{}.Open(ctx, links[0]+"&approve=1")
	if err == nil || !strings.Contains(err.Error(), "HTTP 400") {
		t.Errorf("the replaced link's redirect: %v, want HTTP 400 from the callback", err)
	}
	// Then in the second: it completes.
	if err := (remoteauth.FollowRedirects{}).Open(ctx, links[1]+"&approve=1"); err != nil {
		t.Fatalf("the second link's redirect: %v", err)
	}
	if err := <-second; err != nil {
		t.Fatal(err)
	}
	if st := si.Status(); st.State != remoteauth.StateSignedIn {
		t.Errorf("status: %+v", st)
	}
}

// TestSignOut deletes the tokens and the registered client from the store
// and revokes both tokens at a server that has a revocation endpoint; at
// one without, it deletes them and says revocation is not supported.
func TestSignOut(t *testing.T) {
	for _, revocation := range []bool{true, false} {
		t.Run(map[bool]string{true: "revocation", false: "no-revocation"}[revocation], func(t *testing.T) {
			ctx, f := newRemote(t)
			f.Set(func(f *oauthfake.Remote) { f.Revocation = revocation })
			d, si, cs := signedIn(ctx, t, f)
			res, err := si.SignOut(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if res.RevocationSupported != revocation || res.Revoked != revocation || res.RevokeError != "" {
				t.Errorf("sign-out result %+v, want revoked=%v", res, revocation)
			}
			if revocation {
				revoked := strings.Join(f.Revoked(), ",")
				if revoked != "refresh_token,access_token" {
					t.Errorf("revoked %q, want refresh_token,access_token", revoked)
				}
			}
			if keys, err := d.store.Keys("linear"); err != nil || len(keys) != 0 {
				t.Errorf("store keys after sign-out: %v %v", keys, err)
			}
			if st := si.Status(); st.State != remoteauth.StateNeedsSignIn || st.Reason != remoteauth.ReasonSignedOut {
				t.Errorf("status: %+v", st)
			}
			wantNeedsSignIn(t, callEcho(ctx, t, cs, "x"), remoteauth.ReasonSignedOut)
		})
	}
}

// TestSSETransport: the legacy SSE transport takes no OAuthHandler; its
// HTTP client with SignIn.Transport carries the token, and a 401 is
// refreshed and retried as with streamable HTTP.
func TestSSETransport(t *testing.T) {
	ctx, f := newRemote(t)
	d := startDaemon(t, t.TempDir(), remoteauth.FollowRedirects{}, 10*time.Second)
	si, err := d.m.Server("linear", f.URL("/sse"), remoteauth.Registration{})
	if err != nil {
		t.Fatal(err)
	}
	if err := si.Login(ctx); err != nil { // no request yet: Login asks the server for its challenge
		t.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.SSEClientTransport{Endpoint: f.URL("/sse"),
		HTTPClient: &http.Client{Transport: si.Transport(nil)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if err := callEcho(ctx, t, cs, "sse"); err != nil {
		t.Fatal(err)
	}
	f.ForgetAccess()
	if err := callEcho(ctx, t, cs, "sse after 401"); err != nil {
		t.Fatalf("after a 401: %v", err)
	}
	if n := f.Count("token:refresh"); n != 1 {
		t.Errorf("refreshed %d times, want 1", n)
	}
}

// TestNoSecretInLogs: across a sign-in, a refresh, a refused refresh and a
// sign-out, at DEBUG, no line holds a token, a code, a client secret or a
// state value.
func TestNoSecretInLogs(t *testing.T) {
	ctx, f := newRemote(t)
	d, si, cs := signedIn(ctx, t, f)
	f.ForgetAccess()
	if err := callEcho(ctx, t, cs, "refresh"); err != nil {
		t.Fatal(err)
	}
	f.ForgetAccess()
	f.Set(func(f *oauthfake.Remote) { f.Refuse = true })
	_ = callEcho(ctx, t, cs, "refused")
	f.Set(func(f *oauthfake.Remote) { f.Refuse = false })
	if err := si.Login(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := si.SignOut(ctx); err != nil {
		t.Fatal(err)
	}
	logs := d.logs.String()
	values := f.Seen()
	if len(values) < 8 {
		t.Fatalf("the fake handed out only %d values", len(values))
	}
	for _, line := range strings.Split(logs, "\n") {
		if v := hasAny(line, values); v != "" {
			t.Errorf("a log line holds a secret value (%.6s...): %s", v, line)
		}
	}
	if !strings.Contains(logs, "signed in") || !strings.Contains(logs, "token refresh refused") {
		t.Errorf("the logs miss the sign-in events:\n%s", logs)
	}
}

// TestRefreshBeforeExpiry: a token about to expire is refreshed before the
// request is sent (golang.org/x/oauth2's reuse source), without a 401.
func TestRefreshBeforeExpiry(t *testing.T) {
	ctx, f := newRemote(t)
	f.Set(func(f *oauthfake.Remote) { f.AccessTTL = 5 * time.Second }) // inside oauth2's 10s margin: due at once
	_, _, cs := signedIn(ctx, t, f)
	refreshes := f.Count("token:refresh")
	if err := callEcho(ctx, t, cs, "x"); err != nil {
		t.Fatal(err)
	}
	if n := f.Count("token:refresh") - refreshes; n != 1 {
		t.Errorf("refreshed %d times for the call, want 1", n)
	}
}

// TestCallback: the redirect endpoint refuses what is not a pending
// sign-in's redirect, and passes on the authorization server's refusal.
func TestCallback(t *testing.T) {
	ctx, f := newRemote(t)
	f.Set(func(f *oauthfake.Remote) { f.Hold = true })
	b := &recordingBrowser{}
	d := startDaemon(t, t.TempDir(), b, 20*time.Second)
	si := d.signIn(f, "/mcp")
	done := make(chan error, 1)
	go func() { done <- si.Login(ctx) }()
	testutil.Eventually(t, 10*time.Second, "the sign-in opens its link", func() bool { return len(b.opened()) == 1 })
	link, err := url.Parse(b.opened()[0])
	if err != nil {
		t.Fatal(err)
	}
	state := link.Query().Get("state")
	callback := d.m.Callback()
	for _, tc := range []struct {
		method, query string
		code          int
	}{
		{http.MethodPost, "state=" + state + "&code=c", http.StatusMethodNotAllowed},
		{http.MethodGet, "code=c", http.StatusBadRequest},
		{http.MethodGet, "state=guess&code=c", http.StatusBadRequest},
		{http.MethodGet, "state=" + state + "&error=access_denied&error_description=no", http.StatusBadGateway},
		{http.MethodGet, "state=" + state + "&code=c", http.StatusBadRequest}, // used already
	} {
		rec := httptest.NewRecorder()
		callback.ServeHTTP(rec, httptest.NewRequest(tc.method, remoteauth.CallbackPath+"?"+tc.query, nil))
		if rec.Code != tc.code {
			t.Errorf("%s ?%s: HTTP %d, want %d: %s", tc.method, tc.query, rec.Code, tc.code, rec.Body)
		}
	}
	if err := <-done; err == nil || !strings.Contains(err.Error(), "refused the sign-in: access_denied") {
		t.Errorf("Login: %v, want the authorization server's refusal", err)
	}
}

// TestStepUpAfterRestart: a call answered 403 insufficient_scope fails at
// once (scope needed, naming the scope) while other calls keep working;
// the step-up sign-in, after a restart, asks for the scopes granted before
// plus the new one, and the call then works.
func TestStepUpAfterRestart(t *testing.T) {
	ctx, f := newRemote(t)
	d, _, first := signedIn(ctx, t, f)
	first.Close()

	si := d.restart().signIn(f, "/mcp")
	cs, err := connect(ctx, f, si)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	_, err = testutil.CallText(ctx, cs, "admin", nil)
	wantNeedsSignIn(t, err, remoteauth.ReasonScopeNeeded)
	if st := si.Status(); st.Reason != remoteauth.ReasonScopeNeeded || st.Scope != "admin" {
		t.Errorf("status: %+v", st)
	}
	if err := callEcho(ctx, t, cs, "still works"); err != nil {
		t.Errorf("a call that needs no more scope: %v", err)
	}
	if err := si.Login(ctx); err != nil {
		t.Fatal(err)
	}
	scopes := f.ScopeAsked()
	asked := scopes[len(scopes)-1]
	// As a set: the order the scopes were granted in is the server's.
	if got := strings.Fields(asked); !slices.Equal(slices.Sorted(slices.Values(got)), []string{"admin", "offline_access", "tools"}) {
		t.Errorf("the step-up asked for scope %q, want the granted ones (tools, offline_access) and admin", asked)
	}
	if got, err := testutil.CallText(ctx, cs, "admin", nil); err != nil || got != "admin" {
		t.Errorf("admin after the step-up: %q %v", got, err)
	}
	if n := f.Count("register"); n != 1 {
		t.Errorf("registered %d times, want 1 (the client is kept)", n)
	}
}

// TestPreRegisteredClient: with a client id the user registered, the
// sign-in does not register one (4 requests instead of 5).
func TestPreRegisteredClient(t *testing.T) {
	ctx, f := newRemote(t)
	d := startDaemon(t, t.TempDir(), remoteauth.FollowRedirects{}, 10*time.Second)
	si, err := d.m.Server("linear", f.URL("/mcp"), remoteauth.Registration{ClientID: "client-1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := si.Login(ctx); err != nil {
		t.Fatal(err)
	}
	if n := f.Count("register"); n != 0 {
		t.Errorf("registered %d times with a pre-registered client", n)
	}
	cs, err := connect(ctx, f, si)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if err := callEcho(ctx, t, cs, "pre"); err != nil {
		t.Fatal(err)
	}
}

// TestURLChangedNeedsNewSignIn: tokens got for one URL of a server are not
// sent to another URL the entry is given later (after a restart, too).
func TestURLChangedNeedsNewSignIn(t *testing.T) {
	f := oauthfake.New(t)
	d, _, _ := signedIn(t.Context(), t, f)
	d = d.restart()
	if st := d.signIn(f, "/mcp").Status(); st.State != remoteauth.StateSignedIn {
		t.Fatalf("after a restart, same URL: %+v, want signed in", st)
	}
	other := oauthfake.New(t)
	si := d.signIn(other, "/mcp")
	if st := si.Status(); st.State != remoteauth.StateNeedsSignIn || st.Reason != remoteauth.ReasonFirstUse {
		t.Fatalf("another URL: %+v, want needs sign-in (first use)", st)
	}
	_, err := connect(t.Context(), other, si)
	wantNeedsSignIn(t, err, remoteauth.ReasonFirstUse)
	if n := f.Count("token"); n != 1 {
		t.Errorf("the first server's token endpoint got %d requests, want 1 (the sign-in; no refresh for the other URL)", n)
	}
}

// TestRegistrationChangedNeedsNewSignIn: the configured scopes are asked
// for, and tokens got with one pre-registered client are not used once the
// entry names another client or none (after a restart, too).
func TestRegistrationChangedNeedsNewSignIn(t *testing.T) {
	ctx, f := newRemote(t)
	d := startDaemon(t, t.TempDir(), remoteauth.FollowRedirects{}, 10*time.Second)
	reg := remoteauth.Registration{ClientID: "client-1", Scopes: []string{"admin"}}
	si, err := d.m.Server("linear", f.URL("/mcp"), reg)
	if err != nil {
		t.Fatal(err)
	}
	if err := si.Login(ctx); err != nil {
		t.Fatal(err)
	}
	if asked := f.ScopeAsked(); len(asked) != 1 || !slices.Contains(strings.Fields(asked[0]), "admin") || !slices.Contains(strings.Fields(asked[0]), "tools") {
		t.Errorf("authorize asked for scope %q, want the configured admin with the advertised tools", asked)
	}
	d = d.restart()
	for _, tt := range []struct {
		name string
		reg  remoteauth.Registration
		want remoteauth.State
	}{
		{"same client", reg, remoteauth.StateSignedIn},
		{"same client, other scopes", remoteauth.Registration{ClientID: "client-1"}, remoteauth.StateSignedIn},
		{"another client", remoteauth.Registration{ClientID: "client-2"}, remoteauth.StateNeedsSignIn},
		{"no client configured", remoteauth.Registration{}, remoteauth.StateNeedsSignIn},
	} {
		si, err := d.m.Server("linear", f.URL("/mcp"), tt.reg)
		if err != nil {
			t.Fatal(err)
		}
		if st := si.Status(); st.State != tt.want {
			t.Errorf("%s: %+v, want %s", tt.name, st, tt.want)
		}
	}
	if n := f.Count("token"); n != 1 {
		t.Errorf("the token endpoint got %d requests, want 1 (the sign-in)", n)
	}
}

// TestMetadataDocumentRegistration: where the server supports client ID
// metadata documents, the configured document URL is the client id even
// with a client id configured too (the go-sdk's handler prefers it), and
// its tokens are kept across a restart while that URL stays configured.
func TestMetadataDocumentRegistration(t *testing.T) {
	ctx, f := newRemote(t)
	f.Set(func(f *oauthfake.Remote) { f.MetadataDocs = true })
	d := startDaemon(t, t.TempDir(), remoteauth.FollowRedirects{}, 10*time.Second)
	const doc = "https://example.com/switchboard.json"
	reg := remoteauth.Registration{ClientID: "client-1", ClientIDMetadataURL: doc}
	si, err := d.m.Server("linear", f.URL("/mcp"), reg)
	if err != nil {
		t.Fatal(err)
	}
	if err := si.Login(ctx); err != nil {
		t.Fatal(err)
	}
	if n := f.Count("register"); n != 0 {
		t.Errorf("registered %d times with a client metadata document", n)
	}
	d = d.restart()
	for _, tt := range []struct {
		name string
		reg  remoteauth.Registration
		want remoteauth.State
	}{
		{"same registration", reg, remoteauth.StateSignedIn},
		{"the document alone", remoteauth.Registration{ClientIDMetadataURL: doc}, remoteauth.StateSignedIn},
		{"another document", remoteauth.Registration{ClientIDMetadataURL: "https://example.com/other.json"}, remoteauth.StateNeedsSignIn},
		{"the client id alone", remoteauth.Registration{ClientID: "client-1"}, remoteauth.StateNeedsSignIn},
	} {
		si, err := d.m.Server("linear", f.URL("/mcp"), tt.reg)
		if err != nil {
			t.Fatal(err)
		}
		if st := si.Status(); st.State != tt.want {
			t.Errorf("%s: %+v, want %s", tt.name, st, tt.want)
		}
	}
}
