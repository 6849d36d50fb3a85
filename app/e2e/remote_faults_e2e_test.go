package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/daemon"
	"github.com/switchboardhq/switchboard/app/internal/testutil"
	"github.com/switchboardhq/switchboard/app/internal/testutil/oauthfake"
	"github.com/switchboardhq/switchboard/app/secrets"
)

// signInTimeout is the daemon's sign-in timeout in TestRemoteFaults
// (daemon.TestSignInTimeoutEnv): long enough for a sign-in that the test
// browser follows through on 2 busy cores, short enough to wait out.
const signInTimeout = 6 * time.Second

// TestRemoteFaults: the faults of remote servers with OAuth, through one
// real daemon. Each subtest has a server of its own, each behind an
// authorization server of its own (oauthfake), so that what one does to
// its tokens does not touch another's; the last subtest looks for every
// secret the others handed out.
func TestRemoteFaults(t *testing.T) {
	fakes := map[string]*oauthfake.Remote{"refresh": oauthfake.New(t), "refused": oauthfake.New(t), "held": oauthfake.New(t)}
	servers := map[string]any{}
	for name, f := range fakes {
		servers[name] = map[string]any{"url": f.URL("/mcp")}
	}
	home := filepath.Join(t.TempDir(), "home")
	cfg, _ := json.Marshal(map[string]any{"version": 1, "listen": "127.0.0.1:0", "servers": servers})
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, daemon.ConfigFile), cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(daemon.TestBrowserEnv, "follow")
	t.Setenv(daemon.TestSignInTimeoutEnv, signInTimeout.String())
	d := startDaemon(t, home)
	cs := mcpSession(t, d, "/mcp")
	// cliOut is everything the CLI printed, and ran the number of subtests
	// that ran to their end, for the last subtest.
	var cliOut strings.Builder
	ran := 0
	run := func(args ...string) (int, string, string) {
		t.Helper()
		code, out, errOut := cli(t, home, args...)
		cliOut.WriteString(out + errOut)
		return code, out, errOut
	}
	echo := func(tool string) (string, error) {
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		return testutil.CallText(ctx, cs, tool, map[string]any{"text": "far away"})
	}
	works := func(t *testing.T, tool, what string) {
		t.Helper()
		var got string
		var err error
		start := time.Now()
		testutil.Eventually(t, 30*time.Second, what, func() bool {
			got, err = echo(tool)
			return err == nil
		})
		if got != "far away" {
			t.Errorf("%s: %s = %q", what, tool, got)
		}
		t.Logf("%s worked after %s", what, time.Since(start).Round(time.Millisecond))
	}
	// signIn signs name in with `auth login` (the test browser approves)
	// and waits for a call to work.
	signIn := func(t *testing.T, name string) {
		t.Helper()
		if code, out, errOut := run("auth", "login", name); code != exitOK || !strings.Contains(out, "signed in to "+name) {
			t.Fatalf("auth login %s = %d\n%s%s", name, code, out, errOut)
		}
		works(t, name+"__echo", "the call after the sign-in of "+name)
	}
	// needsSignIn makes name ask for a sign-in: a call is refused by the
	// remote, which the daemon learns from.
	needsSignIn := func(t *testing.T, name string) {
		t.Helper()
		if _, err := echo(name + "__echo"); err == nil || !strings.Contains(err.Error(), "switchboard auth login "+name) {
			t.Fatalf("call before the sign-in of %s = %v; want the needs sign-in error", name, err)
		}
	}
	// counts are the fake's requests by endpoint.
	endpoints := []string{"mcp", "prm", "asm", "register", "authorize", "token", "token:code", "token:refresh", "revoke"}
	counts := func(f *oauthfake.Remote) map[string]int {
		m := map[string]int{"total": f.TotalRequests()}
		for _, e := range endpoints {
			m[e] = f.Count(e)
		}
		return m
	}
	delta := func(before, after map[string]int) map[string]int {
		m := map[string]int{}
		for k, v := range after {
			if v != before[k] {
				m[k] = v - before[k]
			}
		}
		return m
	}

	t.Run("refresh on a 401 mid-session", func(t *testing.T) {
		f := fakes["refresh"]
		needsSignIn(t, "refresh")
		before := counts(f)
		start := time.Now()
		if code, out, errOut := run("auth", "login", "refresh"); code != exitOK || !strings.Contains(out, "signed in to refresh") {
			t.Fatalf("auth login refresh = %d\n%s%s", code, out, errOut)
		}
		took := time.Since(start)
		works(t, "refresh__echo", "the call after the sign-in")
		signInCost := delta(before, counts(f))
		// "mcp" are the requests of the connection the daemon makes once
		// signed in, and of the call; the rest are the sign-in's.
		t.Logf("figure: one fresh `auth login` through the daemon took %s and cost the authorization server %d requests, then %d MCP requests to connect and call: %v",
			took.Round(time.Millisecond), signInCost["total"]-signInCost["mcp"], signInCost["mcp"], signInCost)
		if signInCost["authorize"] != 1 || signInCost["token:code"] != 1 || signInCost["token:refresh"] != 0 {
			t.Errorf("the sign-in's requests = %v; want one authorize and one code exchange", signInCost)
		}

		// The remote forgets its access tokens (a restart, rotated keys):
		// the next call is refused once, refreshed and retried, unseen.
		before = counts(f)
		f.ForgetAccess()
		start = time.Now()
		got, err := echo("refresh__echo")
		took = time.Since(start)
		if err != nil || got != "far away" {
			t.Fatalf("the call after the remote forgot the access token = %q, %v; want it to work", got, err)
		}
		refreshCost := delta(before, counts(f))
		t.Logf("figure: the call that met a 401 and refreshed took %s; the remote saw %d requests: %v",
			took.Round(time.Millisecond), refreshCost["total"], refreshCost)
		if refreshCost["token:refresh"] != 1 || refreshCost["authorize"] != 0 || refreshCost["token:code"] != 0 {
			t.Errorf("the refresh's requests = %v; want exactly one refresh grant and no new sign-in", refreshCost)
		}
		before = counts(f)
		works(t, "refresh__echo", "the next call")
		if c := delta(before, counts(f)); c["token"] != 0 {
			t.Errorf("the call after the refresh refreshed again: %v", c)
		}
		if v, err := d.client.Server(t.Context(), "refresh"); err != nil || v.Auth == nil || v.Auth.State != wire.AuthSignedIn {
			t.Errorf("view after the refresh = %+v, %v; want signed in", v.Auth, err)
		}
		ran++
	})

	t.Run("refresh refused", func(t *testing.T) {
		f := fakes["refused"]
		needsSignIn(t, "refused")
		signIn(t, "refused")
		f.Set(func(f *oauthfake.Remote) { f.Refuse = true })
		f.ForgetAccess()
		start := time.Now()
		_, err := echo("refused__echo")
		took := time.Since(start)
		t.Logf("figure: the call whose refresh was refused failed in %s: %v", took.Round(time.Millisecond), err)
		if err == nil || !strings.Contains(err.Error(), `"refused" needs sign-in`) || !strings.Contains(err.Error(), "switchboard auth login refused") {
			t.Fatalf("the call after a refused refresh = %v; want the needs sign-in error naming the server and the command", err)
		}
		if strings.Contains(err.Error(), "did not answer") {
			t.Errorf("the call after a refused refresh = %v; the server did answer (401): say only that it needs a sign-in", err)
		}
		if took > 5*time.Second {
			t.Errorf("the call after a refused refresh took %s; want it to fail at once", took)
		}
		if f.Count("token:refresh") != 1 {
			t.Errorf("refresh grants = %d; want 1 (refused once, not retried)", f.Count("token:refresh"))
		}
		v, err := d.client.Server(t.Context(), "refused")
		if err != nil || v.Auth == nil || v.Auth.State != wire.AuthNeedsSignIn || v.Auth.Reason != "refresh refused" {
			t.Fatalf("view after the refused refresh = %+v, %v; want needs sign-in, refresh refused", v.Auth, err)
		}
		// The next call fails at once too, without asking the token endpoint.
		start = time.Now()
		if _, err := echo("refused__echo"); err == nil || !strings.Contains(err.Error(), "switchboard auth login refused") {
			t.Errorf("the second call after a refused refresh = %v; want the needs sign-in error", err)
		}
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("the second call after a refused refresh took %s", took)
		}
		if n := f.Count("token:refresh"); n != 1 {
			t.Errorf("refresh grants after the second call = %d; want still 1", n)
		}
		f.Set(func(f *oauthfake.Remote) { f.Refuse = false })
		signIn(t, "refused")
		ran++
	})

	t.Run("sign-in abandoned, then replaced", func(t *testing.T) {
		f := fakes["held"]
		needsSignIn(t, "held")
		f.Set(func(f *oauthfake.Remote) { f.Hold = true })

		// Nobody finishes the sign-in: auth login ends with the timeout.
		start := time.Now()
		code, out, errOut := run("auth", "login", "held")
		took := time.Since(start)
		t.Logf("figure: the abandoned `auth login` ended after %s (sign-in timeout %s): %s", took.Round(time.Millisecond), signInTimeout, strings.TrimSpace(errOut))
		if code == exitOK || !strings.Contains(out, f.URL("/authorize")) ||
			!strings.Contains(errOut, `sign-in to "held" timed out after `+signInTimeout.String()) || !strings.Contains(errOut, "switchboard auth login held") {
			t.Errorf("abandoned auth login = %d\n%s%s\nwant the link, then the timeout and the command", code, out, errOut)
		}
		if took < signInTimeout || took > signInTimeout+10*time.Second {
			t.Errorf("the abandoned auth login took %s; want about the sign-in timeout, %s", took, signInTimeout)
		}
		v, err := d.client.Server(t.Context(), "held")
		if err != nil || v.Auth == nil || v.Auth.State != wire.AuthNeedsSignIn || !strings.Contains(v.Auth.Error, "timed out") {
			t.Errorf("view after the timeout = %+v, %v; want needs sign-in with the timeout", v.Auth, err)
		}

		// A second sign-in replaces a first one still waiting: the first's
		// link is no longer valid; the second completes once the user
		// approves (the hold is released for its link).
		first, err := d.client.Login(t.Context(), "held")
		if err != nil || first.SignInURL == "" || first.Auth.State != wire.AuthSigningIn {
			t.Fatalf("first login = %+v, %v; want a link, signing in", first, err)
		}
		second, err := d.client.Login(t.Context(), "held")
		if err != nil || second.SignInURL == "" || second.SignInURL == first.SignInURL || second.Auth.State != wire.AuthSigningIn {
			t.Fatalf("second login = %+v, %v; want a new link, signing in", second, err)
		}
		approve := func(link string) (int, string) {
			resp, err := http.Get(link + "&approve=1") // the fake redirects; the client follows to the daemon's callback
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(body)
		}
		testutil.Eventually(t, 10*time.Second, "the first sign-in ended, replaced", func() bool {
			return strings.Contains(d.out.String(), "sign-in replaced by a newer one")
		})
		if code, page := approve(first.SignInURL); code != http.StatusBadRequest || !strings.Contains(page, "no longer valid") {
			t.Errorf("approving the replaced sign-in = %d %s; want it refused as no longer valid", code, page)
		}
		if code, page := approve(second.SignInURL); code != http.StatusOK || !strings.Contains(page, "Signed in to held") {
			t.Errorf("approving the second sign-in = %d %s; want signed in", code, page)
		}
		if n := f.Count("token:code"); n != 1 {
			t.Errorf("code exchanges = %d; want 1 (the second sign-in's)", n)
		}
		works(t, "held__echo", "the call after the second sign-in")
		f.Set(func(f *oauthfake.Remote) { f.Hold = false })
		ran++
	})

	// The secret header of the server of the next subtest, for the last.
	const headerSecret = "sk-e2eFaultsH3ader0123456789abcdef"
	t.Run("remote down at start, then up", func(t *testing.T) {
		addr := closedLoopbackPort(t)
		if code, out, errOut := run("install", "--url", "http://"+addr+"/mcp", "--name", "down",
			"--secret-header", "X-Api-Key="+headerSecret); code != exitOK {
			t.Fatalf("install --url = %d\n%s%s", code, out, errOut)
		}
		// The daemon picks the new entry up from config.json: until then
		// the tool is unknown.
		start := time.Now()
		var err error
		testutil.Eventually(t, 30*time.Second, "a call to the remote that is down fails naming it", func() bool {
			_, err = echo("down__echo")
			return err != nil && strings.Contains(err.Error(), `server "down"`)
		})
		t.Logf("figure: the first call to the remote that is down failed %s after the install: %v", time.Since(start).Round(time.Millisecond), err)
		if !strings.Contains(err.Error(), "connection refused") {
			t.Errorf("the call to the remote that is down = %v; want why (connection refused)", err)
		}

		// A remote comes up at that address, wanting the secret header:
		// the calls work by themselves (the next connection attempt).
		keys := lateRemote(t, addr, headerSecret)
		up := time.Now()
		works(t, "down__echo", "the call once the remote is up")
		t.Logf("figure: calls worked %s after the remote came up, without a restart", time.Since(up).Round(time.Millisecond))
		for _, k := range keys() {
			if k != headerSecret {
				t.Errorf("the remote got X-Api-Key %q; want the secret header on every request", k)
			}
		}
		ran++
	})

	t.Run("remote down long enough to be failing, then up", func(t *testing.T) {
		addr := closedLoopbackPort(t)
		if code, out, errOut := run("install", "--url", "http://"+addr+"/mcp", "--name", "late"); code != exitOK {
			t.Fatalf("install --url = %d\n%s%s", code, out, errOut)
		}
		// Each call waits out the connection's backoff, then fails naming
		// the server; after the supervisor's crash limit the server is
		// failing, and the calls fail at once saying how to retry.
		var tooks []time.Duration
		var err error
		testutil.Eventually(t, 60*time.Second, "the remote that is down is failing", func() bool {
			start := time.Now()
			_, err = echo("late__echo")
			if err != nil && strings.Contains(err.Error(), `server "late"`) {
				tooks = append(tooks, time.Since(start).Round(time.Millisecond))
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("a call to the remote that is down took %s; want it to fail within seconds", took)
			}
			return err != nil && strings.Contains(err.Error(), "start it again to retry")
		})
		t.Logf("figure: calls to the remote that is down failed in %v, the last: %v", tooks, err)

		// Up now; a failing server stays so for its cool-down (5 minutes)
		// unless started: `switchboard start late`, no daemon restart.
		lateRemote(t, addr, "")
		if _, err := echo("late__echo"); err == nil || !strings.Contains(err.Error(), "start it again to retry") {
			t.Errorf("the call right after the remote came up = %v; want it still failing, saying how to retry", err)
		}
		up := time.Now()
		if code, out, errOut := run("start", "late"); code != exitOK || !strings.Contains(out, "late: running") {
			t.Errorf("switchboard start late = %d\n%s%s", code, out, errOut)
		}
		works(t, "late__echo", "the call once the failing remote is up and started")
		t.Logf("figure: calls worked %s after `switchboard start` of the failing remote", time.Since(up).Round(time.Millisecond))
		ran++
	})

	t.Run("no secret anywhere", func(t *testing.T) {
		if ran != 5 {
			t.Skipf("%d of the 5 subtests before this one ran to their end (-run picked some?): it looks for what they handed out", ran)
		}
		// The views, and what the CLI shows of them.
		for _, args := range [][]string{{"auth", "status"}, {"auth", "status", "--json"}, {"servers"}, {"servers", "--json"},
			{"status"}, {"history"}, {"logs", "refresh"}, {"logs", "down"}} {
			if code, out, errOut := run(args...); code != exitOK {
				t.Errorf("switchboard %s = %d\n%s%s", strings.Join(args, " "), code, out, errOut)
			}
		}
		// Cursor connected to Switchboard (a backup of its file, a file
		// written with its entries), and the preview of restoring it.
		cursorFile := filepath.Join(d.userHome, ".cursor", "mcp.json")
		if err := os.MkdirAll(filepath.Dir(cursorFile), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(cursorFile, []byte(`{"mcpServers": {"mine": {"url": "http://127.0.0.1:1/mcp"}}}`), 0o600); err != nil {
			t.Fatal(err)
		}
		change := wire.ClientChange{Action: "connect", Servers: []string{"refresh", "down"}}
		plan, err := d.client.PlanClient(t.Context(), "cursor", change)
		if err != nil {
			t.Fatal(err)
		}
		change.Hash = plan.Hash
		if _, err := d.client.ApplyClient(t.Context(), "cursor", change); err != nil {
			t.Fatal(err)
		}
		backups, err := d.client.Backups(t.Context(), "cursor", "")
		if err != nil || len(backups) == 0 {
			t.Fatalf("cursor's backups = %v, %v; want the one connect made", backups, err)
		}
		restore, err := d.client.PlanRestore(t.Context(), "cursor", "", wire.RestoreRequest{Backup: backups[0].Name})
		if err != nil || restore.Diff == "" {
			t.Fatalf("restore plan = %+v, %v", restore, err)
		}
		answers := everyGet(t, d)
		restoreText, _ := json.Marshal(restore)
		answers["POST /api/v1/clients/cursor/restore/plan"] = string(restoreText)
		// `auth login` prints the sign-in link, whose state the fake counts
		// among its secrets; it is for the user to open and is worthless
		// once that sign-in ended (the callback forgets it). The rest of
		// the CLI's output must hold nothing.
		var printed []string
		for line := range strings.Lines(cliOut.String()) {
			if !strings.Contains(line, "/authorize?") {
				printed = append(printed, line)
			}
		}
		places := map[string]string{"the CLI's output": strings.Join(printed, "")}
		for path, body := range answers {
			places["GET "+path] = body
		}
		fileTexts(t, home, places)
		fileTexts(t, d.userHome, places)
		stopDaemon(t, d)
		places["daemon log"] = d.out.String()
		fileTexts(t, home, places) // after the last checkpoint of the history

		secretsSeen := []string{headerSecret}
		for _, f := range fakes {
			secretsSeen = append(secretsSeen, f.Seen()...)
		}
		if len(secretsSeen) < 20 {
			t.Fatalf("the fakes handed out %d values; want codes, tokens and refreshed tokens", len(secretsSeen))
		}
		t.Logf("looked for %d secrets in %d places (%d API answers, %d bytes in all)", len(secretsSeen), len(places), len(answers), totalLen(places))
		for where, text := range places {
			for _, s := range secretsSeen {
				if strings.Contains(text, s) {
					t.Errorf("%s holds a token, code or secret (%.6s...)", where, s)
				}
			}
		}
		// The secret store does hold them: the look was in the right places.
		store, err := os.ReadFile(filepath.Join(home, secrets.FileName))
		if err != nil || !strings.Contains(string(store), headerSecret) {
			t.Errorf("the file secret store lacks the secret header (%v): the search above proves nothing", err)
		}
	})
}

// everyGet is the body of every GET of the API that tells about the
// servers, their calls and sign-ins, their logs, the live feed so far, and
// the preview (diff) of writing each client's config, by path.
func everyGet(t *testing.T, d *daemonProc) map[string]string {
	t.Helper()
	out := map[string]string{}
	get := func(path string) string {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, d.info.Address+path, nil)
		req.Header.Set("Authorization", "Bearer "+d.client.Token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s = %d %s", path, resp.StatusCode, body)
		}
		out[path] = string(body)
		return string(body)
	}
	for _, p := range []string{"/api/v1/status", "/api/v1/servers", "/api/v1/history?limit=1000", "/api/v1/history/export",
		"/api/v1/stats", "/api/v1/usage", "/api/v1/lifecycle?limit=1000", "/api/v1/settings", "/api/v1/tokens",
		"/api/v1/profiles", "/api/v1/held-tools", "/api/v1/installs"} {
		get(p)
	}
	var list []wire.ServerView
	if err := json.Unmarshal([]byte(out["/api/v1/servers"]), &list); err != nil {
		t.Fatal(err)
	}
	for _, s := range list {
		get("/api/v1/servers/" + s.Name)
		get("/api/v1/servers/" + s.Name + "/logs?n=1000")
	}
	var page wire.CallPage
	if err := json.Unmarshal([]byte(out["/api/v1/history?limit=1000"]), &page); err != nil || len(page.Calls) == 0 {
		t.Fatalf("history: %v, %d calls", err, len(page.Calls))
	}
	for _, c := range page.Calls {
		get("/api/v1/history/" + strconv.FormatInt(c.ID, 10))
	}

	// The live feed from its start: what it kept, read for a moment.
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	var feed strings.Builder
	err := d.client.Events(ctx, 1, nil, func(ev wire.Event) error {
		feed.Write(ev.Data)
		feed.WriteByte('\n')
		return nil
	})
	if err != nil && !errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		t.Errorf("events: %v", err)
	}
	if !strings.Contains(feed.String(), wire.AuthSignedIn) {
		t.Errorf("the live feed has no sign-in event:\n%s", feed.String())
	}
	out["/api/v1/events?since=1"] = feed.String()

	// A preview of each client's config with Switchboard in it.
	clients, err := d.client.Clients(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	get("/api/v1/clients")
	get("/api/v1/clients/cursor/backups")
	planned := 0
	for _, c := range clients {
		plan, err := d.client.PlanClient(t.Context(), c.ID, wire.ClientChange{Action: "connect", Servers: []string{"refresh", "down"}})
		if err != nil {
			continue // a client whose config cannot be written here
		}
		planned++
		data, _ := json.Marshal(plan)
		out["POST /api/v1/clients/"+c.ID+"/plan"] = string(data)
	}
	if planned == 0 {
		t.Errorf("no client's config could be previewed among %d clients", len(clients))
	}
	return out
}

// fileTexts puts the content of every file under dir, but the file secret
// store (whose job is to hold the secrets), into places by path.
func fileTexts(t *testing.T, dir string, places map[string]string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil || !e.Type().IsRegular() || e.Name() == secrets.FileName {
			return err
		}
		data, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil // gone since the walk listed it (SQLite's -shm)
		}
		if err != nil {
			return err
		}
		places[path] += string(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func totalLen(m map[string]string) int {
	n := 0
	for _, v := range m {
		n += len(v)
	}
	return n
}

// lateRemote serves a go-sdk streamable MCP server with echo at addr (a
// port given back by closedLoopbackPort) until the test ends. With key set,
// it refuses requests whose X-Api-Key is not key. keys returns the X-Api-Key
// of each request.
func lateRemote(t *testing.T, addr, key string) (keys func() []string) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listening on %s, which was free: %v", addr, err)
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "late-remote", Version: "1"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct {
		Text string `json:"text"`
	}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	var mu sync.Mutex
	var seen []string
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("X-Api-Key"))
		mu.Unlock()
		if key != "" && r.Header.Get("X-Api-Key") != key {
			http.Error(w, "no key", http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})}
	served := make(chan struct{})
	go func() { defer close(served); _ = srv.Serve(ln) }()
	t.Cleanup(func() {
		for ss := range server.Sessions() {
			ss.Close()
		}
		srv.Close()
		<-served
	})
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...)
	}
}
