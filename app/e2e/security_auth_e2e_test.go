package e2e

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app/api"
	"github.com/switchboardhq/switchboard/app/daemon"
	"github.com/switchboardhq/switchboard/app/internal/testutil"
	"github.com/switchboardhq/switchboard/app/tokens"
)

// The security suite runs against a real daemon on loopback: what a local
// program holding a client's token, a dashboard cookie, someone else's
// session id, or no token at all can do.
//
// slowBodyTimeout is the daemon's --read-timeout here, short so that the
// slow-body test is quick; the default is daemon.DefaultReadTimeout.
const slowBodyTimeout = 2 * time.Second

const mcpInitialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"sec-test","version":"1"}}}`

func TestSecuritySuite(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	writeConfig(t, home, "alpha")
	d := startDaemon(t, home, "--read-timeout", slowBodyTimeout.String())
	d.waitRunning(t, "alpha")
	store, err := tokens.Open(filepath.Join(home, daemon.TokensFile))
	if err != nil {
		t.Fatal(err)
	}

	// The token that `clients connect` writes into Cursor's file.
	if code, out, errOut := cli(t, home, "clients", "connect", "cursor"); code != exitOK {
		t.Fatalf("clients connect cursor: %d\n%s%s", code, out, errOut)
	}
	cursorFile, err := os.ReadFile(filepath.Join(d.userHome, ".cursor", "mcp.json"))
	if err != nil {
		t.Fatal(err)
	}
	cursor := tokenIn(t, string(cursorFile))
	if tok, ok := store.Verify(cursor); !ok || tok.Scope != tokens.ScopeClient || tok.Label != "cursor" {
		t.Fatalf("the token in Cursor's config: %+v %v, want a client-scoped token labelled cursor", tok, ok)
	}

	t.Run("slow bodies", func(t *testing.T) { testSlowBodies(t, d) })

	t.Run("client token: 403 on every API route, 200 on /mcp", func(t *testing.T) {
		routes := api.Routes()
		for _, route := range routes {
			method, path, _ := strings.Cut(route, " ")
			path = strings.NewReplacer("{name}", "alpha", "{id}", "1", "{label}", "cli").Replace(path)
			resp := send(t, method, d.info.Address+path, cursor, "application/json", "{}", nil)
			if resp.StatusCode != http.StatusForbidden {
				t.Errorf("%s with Cursor's token: %d, want 403", route, resp.StatusCode)
			}
		}
		t.Logf("%d routes refused", len(routes))
		for _, path := range []string{"/mcp", "/mcp/alpha"} {
			if resp := send(t, "POST", d.info.Address+path, cursor, "application/json", mcpInitialize, nil); resp.StatusCode != 200 {
				t.Errorf("initialize on %s with Cursor's token: %d, want 200", path, resp.StatusCode)
			}
		}
	})

	t.Run("the dashboard cookie is not a bearer token", func(t *testing.T) {
		lc, err := d.client.LoginCode(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := noRedirect.Get(lc.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		var cookie string
		for _, c := range resp.Cookies() {
			if c.Name == api.SessionCookie {
				cookie = c.Value
			}
		}
		if cookie == "" {
			t.Fatalf("login: %d, no cookie", resp.StatusCode)
		}
		if r := send(t, "GET", d.info.Address+"/api/v1/status", "", "", "", map[string]string{"Cookie": api.SessionCookie + "=" + cookie}); r.StatusCode != 200 {
			t.Fatalf("the cookie as a cookie on the API: %d", r.StatusCode)
		}
		if r := send(t, "POST", d.info.Address+"/mcp", cookie, "application/json", mcpInitialize, nil); r.StatusCode != 401 {
			t.Errorf("the cookie as a bearer token on /mcp: %d, want 401", r.StatusCode)
		}
		if r := send(t, "GET", d.info.Address+"/api/v1/status", cookie, "", "", nil); r.StatusCode != 401 {
			t.Errorf("the cookie as a bearer token on the API: %d, want 401", r.StatusCode)
		}
		if r := send(t, "POST", d.info.Address+"/mcp", "", "application/json", mcpInitialize,
			map[string]string{"Cookie": api.SessionCookie + "=" + cookie}); r.StatusCode != 401 {
			t.Errorf("the cookie as a cookie on /mcp: %d, want 401", r.StatusCode)
		}
	})

	t.Run("a session belongs to its token and endpoint", func(t *testing.T) {
		session := openSession(t, d.info.Address+"/mcp/alpha", cursor)
		call := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"mine"}}}`
		for _, tt := range []struct {
			name, path, token string
			want              int
		}{
			{"another token", "/mcp/alpha", d.client.Token, 404},
			{"another endpoint", "/mcp", cursor, 404},
			{"the owner", "/mcp/alpha", cursor, 200},
		} {
			resp := send(t, "POST", d.info.Address+tt.path, tt.token, "application/json", call,
				map[string]string{"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"})
			if resp.StatusCode != tt.want {
				t.Errorf("%s using Cursor's session: %d, want %d", tt.name, resp.StatusCode, tt.want)
			}
		}
		// The call is Cursor's in the history.
		testutil.Eventually(t, 10*time.Second, "the call in the history", func() bool {
			page, err := d.client.History(t.Context(), url.Values{"client": {"cursor"}, "server": {"alpha"}})
			return err == nil && len(page.Calls) == 1 && page.Calls[0].ClientLabel == "cursor" && page.Calls[0].Session == session
		})
	})

	// Through the API (tokens revoke), and by another process changing
	// tokens.json, which the daemon notices.
	for i, via := range []string{"api", "file"} {
		t.Run("revoking closes the token's streams within a second, via "+via, func(t *testing.T) {
			admin, client := "tray", "agent"
			if via == "file" {
				admin, client = "window", "agent2"
			}
			tray, err := store.Ensure(admin)
			if err != nil {
				t.Fatal(err)
			}
			agent, err := store.EnsureClient(client)
			if err != nil {
				t.Fatal(err)
			}
			events := openStream(t, "GET", d.info.Address+"/api/v1/events", tray.Secret, nil)
			session := openSession(t, d.info.Address+"/mcp", agent.Secret)
			mcpStream := openStream(t, "GET", d.info.Address+"/mcp", agent.Secret,
				map[string]string{"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"})

			start := time.Now()
			for _, label := range []string{admin, client} {
				if via == "api" {
					_, err = d.client.RevokeTokens(t.Context(), label)
				} else {
					_, err = store.RevokeLabel(label)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			for name, ended := range map[string]<-chan struct{}{"event stream": events, "MCP stream": mcpStream} {
				select {
				case <-ended:
					t.Logf("%s closed %s after the revocation", name, time.Since(start).Round(time.Millisecond))
					if d := time.Since(start); d > time.Second {
						t.Errorf("the %s closed %s after the revocation, want within 1s", name, d)
					}
				case <-time.After(3 * time.Second):
					t.Errorf("the revoked token's %s is still open after 3s", name)
				}
			}
			if r := send(t, "POST", d.info.Address+"/mcp", agent.Secret, "application/json", `{"jsonrpc":"2.0","id":4,"method":"ping"}`,
				map[string]string{"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}); r.StatusCode != 401 {
				t.Errorf("the revoked token's session: %d, want 401", r.StatusCode)
			}
			// The session itself is closed, not only unreachable.
			testutil.Eventually(t, 2*time.Second, "the session closed in the daemon", func() bool {
				return strings.Count(d.out.String(), "closed the MCP sessions of a revoked token") == i+1
			})
		})
	}

	t.Run("state changes must be JSON", func(t *testing.T) {
		for _, ctype := range []string{"application/x-www-form-urlencoded", "text/plain", "text/plain;charset=UTF-8", "multipart/form-data; boundary=x"} {
			resp := send(t, "POST", d.info.Address+"/api/v1/servers", d.client.Token, ctype,
				`{"name":"evil","command":"/bin/sh","args":["-c","touch pwned"]}`, nil)
			if resp.StatusCode != http.StatusUnsupportedMediaType {
				t.Errorf("POST /api/v1/servers as %s: %d, want 415", ctype, resp.StatusCode)
			}
		}
		if _, err := d.client.Server(t.Context(), "evil"); err == nil {
			t.Error("a non-JSON POST added a server")
		}
	})
}

// send makes one request and returns its response, body read and closed.
func send(t *testing.T, method, url, token, ctype, body string, header map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// openSession initializes an MCP session on endpoint with token and
// returns its id.
func openSession(t *testing.T, endpoint, token string) string {
	t.Helper()
	resp := send(t, "POST", endpoint, token, "application/json", mcpInitialize, nil)
	id := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || id == "" {
		t.Fatalf("initialize on %s: %d", endpoint, resp.StatusCode)
	}
	h := map[string]string{"Mcp-Session-Id": id, "MCP-Protocol-Version": "2025-11-25"}
	if r := send(t, "POST", endpoint, token, "application/json", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, h); r.StatusCode != 202 {
		t.Fatalf("notifications/initialized: %d", r.StatusCode)
	}
	return id
}

// openStream opens an event stream and returns a channel closed when the
// daemon ends it.
func openStream(t *testing.T, method, url, token string, header map[string]string) <-chan struct{} {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), method, url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		resp.Body.Close()
		t.Fatalf("stream %s: %d", url, resp.StatusCode)
	}
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
	}()
	t.Cleanup(func() { resp.Body.Close(); <-ended })
	return ended
}

// testSlowBodies: 500 connections with the cli token that send a request
// body a byte at a time are all closed by the daemon within its read
// timeout, and its open descriptors come back to where they were. (A slow
// body without a token is answered 401 at once and closed: see
// TestCrowdWithoutToken.)
func testSlowBodies(t *testing.T, d *daemonProc) {
	const conns = 500
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	pid := d.cmd.Process.Pid
	baseline := settledFDs(t, pid)
	addr := strings.TrimPrefix(d.info.Address, "http://")

	type result struct {
		open time.Duration // how long the daemon kept it
		err  error
	}
	results := make(chan result, conns)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	// The peak is the most descriptors seen from the first dial until every
	// connection has ended: on a loaded machine the daemon accepts the last
	// connections late, or its read timeout closes the first before the last
	// are dialed, so one count after dialing can miss many (seen: 232 of 500).
	var peaked atomic.Int64
	sampling := make(chan struct{})
	wg.Go(func() {
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			if n, err := fdCount(pid); err == nil && int64(n) > peaked.Load() {
				peaked.Store(int64(n))
			}
			select {
			case <-sampling:
				return
			case <-tick.C:
			}
		}
	})
	for range conns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("dial: %v", err)
		}
		start := time.Now()
		fmt.Fprintf(c, "POST /api/v1/servers HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{",
			addr, d.client.Token)
		wg.Go(func() { // a byte every 100ms until the daemon hangs up
			tick := time.NewTicker(100 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
					if _, err := c.Write([]byte(" ")); err != nil {
						return
					}
				}
			}
		})
		wg.Go(func() {
			defer c.Close()
			_ = c.SetReadDeadline(time.Now().Add(slowBodyTimeout + 10*time.Second))
			_, err := io.Copy(io.Discard, bufio.NewReader(c))
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				results <- result{err: fmt.Errorf("still open after %s", time.Since(start).Round(time.Millisecond))}
				return
			}
			results <- result{open: time.Since(start)}
		})
	}
	var longest time.Duration
	for range conns {
		r := <-results
		if r.err != nil {
			t.Error(r.err)
			continue
		}
		longest = max(longest, r.open)
	}
	close(sampling)
	close(stop)
	wg.Wait()
	peak := int(peaked.Load())
	if runtime.GOOS != "linux" {
		peak = -1
	}
	t.Logf("%d slow connections: daemon descriptors %d before, %d while open, longest kept %s (read timeout %s)",
		conns, baseline, peak, longest.Round(time.Millisecond), slowBodyTimeout)
	if longest > slowBodyTimeout+time.Second {
		t.Errorf("a slow connection was kept %s, read timeout %s", longest, slowBodyTimeout)
	}
	if runtime.GOOS == "linux" && peak < baseline+conns/2 {
		t.Errorf("the daemon held at most %d descriptors more while %d connections were open: the test measures nothing", peak-baseline, conns)
	}
	after := countFDs(t, pid)
	for deadline := time.Now().Add(5 * time.Second); after > baseline && time.Now().Before(deadline); after = countFDs(t, pid) {
		time.Sleep(20 * time.Millisecond)
	}
	if after > baseline {
		t.Errorf("the daemon has %d descriptors open 5s after the slow connections closed, %d before: %v", after, baseline, fdTargets(pid))
	}
	t.Logf("descriptors after: %d", after)
}

// fdTargets lists what pid's descriptors are, for a failure message.
func fdTargets(pid int) []string {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	ents, _ := os.ReadDir(dir)
	var out []string
	for _, e := range ents {
		target, _ := os.Readlink(filepath.Join(dir, e.Name()))
		out = append(out, e.Name()+"→"+target)
	}
	return out
}

// countFDs returns how many descriptors process pid has open (Linux; -1
// elsewhere). All of them count: the resource sampler reads /proc and no
// longer leaves pidfds behind for the garbage collector.
func countFDs(t *testing.T, pid int) int {
	if runtime.GOOS != "linux" {
		return -1
	}
	n, err := fdCount(pid)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// fdCount is how many descriptors pid has open (Linux's /proc).
func fdCount(pid int) (int, error) {
	ents, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd")
	return len(ents), err
}

// settledFDs waits until pid's descriptor count holds still for a moment
// (connections the test closed are closed on the daemon's side too).
func settledFDs(t *testing.T, pid int) int {
	last, same := countFDs(t, pid), 0
	for deadline := time.Now().Add(5 * time.Second); same < 5 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		n := countFDs(t, pid)
		if n == last {
			same++
		} else {
			last, same = n, 0
		}
	}
	return last
}
