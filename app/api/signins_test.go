package api_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"sync"
	"testing"

	"github.com/switchboardhq/switchboard/app/api"
	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/config"
)

// fakeSignIns answers for the remote server "rem" and records its calls.
type fakeSignIns struct {
	mu       sync.Mutex
	calls    []string
	loginErr error
}

func (f *fakeSignIns) record(c string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, c)
}

func (f *fakeSignIns) Status(server string) (wire.AuthStatus, bool) {
	if server != "rem" {
		return wire.AuthStatus{}, false
	}
	return wire.AuthStatus{State: wire.AuthNeedsSignIn, Reason: "first use"}, true
}

func (f *fakeSignIns) Login(_ context.Context, server string) (wire.LoginResult, error) {
	f.record("login " + server)
	if f.loginErr != nil {
		return wire.LoginResult{}, f.loginErr
	}
	return wire.LoginResult{Server: server, SignInURL: "http://127.0.0.1:1/authorize?state=s", BrowserOpened: true,
		Auth: wire.AuthStatus{State: wire.AuthSigningIn, SignInURL: "http://127.0.0.1:1/authorize?state=s"}}, nil
}

func (f *fakeSignIns) Logout(_ context.Context, server string) (wire.LogoutResult, error) {
	f.record("logout " + server)
	return wire.LogoutResult{Server: server, Revoked: true, Auth: wire.AuthStatus{State: wire.AuthNeedsSignIn, Reason: "signed out"}}, nil
}

func withRemote(t *testing.T, e *testEnv) {
	t.Helper()
	if _, err := e.cfg.Update(t.Context(), func(c *config.Config) error {
		c.Servers["rem"] = config.Server{URL: "http://127.0.0.1:1/mcp", Enabled: boolPtr(false)}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

func TestRemoteSignInRoutes(t *testing.T) {
	f := &fakeSignIns{}
	e := newEnv(t, func(o *api.Options) { o.SignIns = f })
	withRemote(t, e)

	_, err := e.client.Login(t.Context(), "nope")
	wantAPIError(t, err, http.StatusNotFound, `unknown server "nope"`)
	_, err = e.client.Logout(t.Context(), "fs")
	wantAPIError(t, err, http.StatusBadRequest, `server "fs" is a local process, not a remote server`)

	res, err := e.client.Login(t.Context(), "rem")
	if err != nil || res.Server != "rem" || res.SignInURL == "" || !res.BrowserOpened || res.Auth.State != wire.AuthSigningIn {
		t.Fatalf("Login(rem) = %+v, %v", res, err)
	}
	out, err := e.client.Logout(t.Context(), "rem")
	if err != nil || !out.Revoked || out.Auth.Reason != "signed out" {
		t.Fatalf("Logout(rem) = %+v, %v", out, err)
	}
	f.loginErr = errors.New("the authorization server is down")
	_, err = e.client.Login(t.Context(), "rem")
	wantAPIError(t, err, http.StatusBadGateway, "the authorization server is down")
	if want := []string{"login rem", "logout rem", "login rem"}; !slices.Equal(f.calls, want) {
		t.Errorf("sign-in calls = %v; want %v", f.calls, want)
	}

	// The view of a remote carries its sign-in; a local server's none.
	v, err := e.client.Server(t.Context(), "rem")
	if err != nil || v.Auth == nil || v.Auth.State != wire.AuthNeedsSignIn {
		t.Errorf("view of rem = %+v, %v; want auth needs sign-in", v.Auth, err)
	}
	if v, err := e.client.Server(t.Context(), "fs"); err != nil || v.Auth != nil {
		t.Errorf("view of fs has auth %+v, %v", v.Auth, err)
	}
	list, err := e.client.Servers(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range list {
		if (v.Name == "rem") != (v.Auth != nil) {
			t.Errorf("listed %s with auth %+v", v.Name, v.Auth)
		}
	}
}

// A daemon without sign-ins answers 503.
func TestRemoteSignInUnavailable(t *testing.T) {
	e := newEnv(t)
	withRemote(t, e)
	_, err := e.client.Login(t.Context(), "rem")
	wantAPIError(t, err, http.StatusServiceUnavailable, "remote sign-in is not available")
}
