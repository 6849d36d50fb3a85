package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/daemon"
	"github.com/switchboardhq/switchboard/app/internal/testutil"
	"github.com/switchboardhq/switchboard/app/internal/testutil/oauthfake"
)

// TestRemoteSignInThroughTheDaemon: a remote server behind a loopback OAuth
// authorization server, configured in a real daemon, fails its calls at
// once with the sign-in error; `switchboard auth login` (with the test
// browser, which follows the redirects) signs it in and the next call
// works; after a restart it still works without a sign-in; `auth logout`
// makes it need one again. No token value is in config.json, the daemon's
// log, the history or the API's answers.
func TestRemoteSignInThroughTheDaemon(t *testing.T) {
	f := oauthfake.New(t)
	home := filepath.Join(t.TempDir(), "home")
	cfg, _ := json.Marshal(map[string]any{"version": 1, "listen": "127.0.0.1:0", "servers": map[string]any{
		"r": map[string]any{"url": f.URL("/mcp")},
		"s": map[string]any{"url": f.URL("/sse"), "transport": "sse"},
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
	if code != exitOK || !strings.Contains(out, "signed in to r") || !strings.Contains(out, f.URL("/authorize")) {
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
	authorized := f.Count("authorize")
	d = startDaemon(t, home)
	callWorks(d, "r__echo", "the call after a restart")
	callWorks(d, "s__echo", "the SSE call after a restart")
	if n := f.Count("authorize"); n != authorized {
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
	secrets := f.Seen()
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
