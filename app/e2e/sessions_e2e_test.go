package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/app/gateway"
	"github.com/switchboardhq/switchboard/app/internal/testutil"
)

// mcpPost POSTs body to endpoint with token (in session sid unless "")
// and returns the status, the Content-Type and the body.
func mcpPost(t *testing.T, endpoint, token, sid, body string) (status int, ctype, answer string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, endpoint, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", endpoint, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(data)
}

// cursorToken connects Cursor to d's daemon and returns the client token
// written into its config.
func cursorToken(t *testing.T, d *daemonProc, home string) string {
	t.Helper()
	if code, out, errOut := cli(t, home, "clients", "connect", "cursor"); code != exitOK {
		t.Fatalf("clients connect cursor: %d\n%s%s", code, out, errOut)
	}
	data, err := os.ReadFile(filepath.Join(d.userHome, ".cursor", "mcp.json"))
	if err != nil {
		t.Fatal(err)
	}
	return tokenIn(t, string(data))
}

// TestSessionsPerTokenThroughTheDaemon: with Cursor's token, 2 sessions
// open and 60 initializes sent at once all succeed, and none ends
// another; at the limit (64), a 65th session succeeds and the least
// recently used one then gets 404 with a JSON-RPC error, the others
// answering still.
func TestSessionsPerTokenThroughTheDaemon(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	writeConfig(t, home, "alpha")
	d := startDaemon(t, home)
	d.waitRunning(t, "alpha")
	token := cursorToken(t, d, home)
	endpoint := d.info.Address + "/mcp"
	const ping = `{"jsonrpc":"2.0","id":2,"method":"ping"}`

	sessions := []string{openSession(t, endpoint, token), openSession(t, endpoint, token)}
	const n = 60
	start := make(chan struct{})
	type answer struct {
		status int
		id     string
	}
	answers := make(chan answer, n)
	var wg sync.WaitGroup
	for range n {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, endpoint, strings.NewReader(mcpInitialize))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		wg.Go(func() {
			<-start
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			answers <- answer{resp.StatusCode, resp.Header.Get("Mcp-Session-Id")}
		})
	}
	began := time.Now()
	close(start)
	wg.Wait()
	took := time.Since(began)
	close(answers)
	statuses := map[int]int{}
	for a := range answers {
		statuses[a.status]++
		if a.status == 200 && a.id != "" {
			sessions = append(sessions, a.id)
		}
	}
	t.Logf("%d initializes at once with 2 sessions open: %v in %s", n, statuses, took)
	if statuses[200] != n {
		t.Fatalf("%d initializes at once: %v, want %d × 200", n, statuses, n)
	}
	for i, sid := range sessions {
		if status, _, body := mcpPost(t, endpoint, token, sid, ping); status != 200 {
			t.Fatalf("session %d of %d after the initializes: %d %s", i+1, len(sessions), status, body)
		}
	}

	// The limit: 64 open, the pings above used them in order, so the
	// first is the least recently used.
	for len(sessions) < gateway.DefaultMaxSessionsPerToken {
		sessions = append(sessions, openSession(t, endpoint, token))
	}
	newest := openSession(t, endpoint, token)
	status, ctype, body := mcpPost(t, endpoint, token, sessions[0], ping)
	var refusal struct {
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if status != http.StatusNotFound || ctype != "application/json" || json.Unmarshal([]byte(body), &refusal) != nil ||
		refusal.Error.Message != "session not found" {
		t.Errorf("the least recently used session after the 65th opened: %d %q %s, want 404 with a JSON-RPC error", status, ctype, body)
	}
	for _, sid := range []string{sessions[1], sessions[len(sessions)-1], newest} {
		if status, _, body := mcpPost(t, endpoint, token, sid, ping); status != 200 {
			t.Errorf("a session more recently used after the 65th opened: %d %s", status, body)
		}
	}
}

// TestSubscriptionInterferenceThroughTheDaemon: a client with another
// token, never subscribed, unsubscribing the URI Cursor's session
// subscribed to leaves the server subscribed and Cursor getting updates;
// Cursor's session ending without unsubscribing unsubscribes the server.
func TestSubscriptionInterferenceThroughTheDaemon(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	writeConfig(t, home, "alpha")
	d := startDaemon(t, home)
	d.waitRunning(t, "alpha")
	token := cursorToken(t, d, home)
	const uri = "test://items/3"

	updates := make(chan string, 100)
	connect := func(token string, opts *mcp.ClientOptions) *mcp.ClientSession {
		t.Helper()
		transport := &mcp.StreamableClientTransport{Endpoint: d.info.Address + "/mcp",
			HTTPClient: &http.Client{Transport: bearerTransport(token)}}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "sub-test", Version: "1"}, opts).Connect(t.Context(), transport,
			&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	a := connect(token, &mcp.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
		updates <- req.Params.URI
	}})
	b := connect(d.client.Token, nil)
	subscribed := func() bool {
		res, err := b.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__touch", Arguments: map[string]any{"uri": uri}})
		if err != nil || res.IsError {
			t.Fatalf("touch: %v %+v", err, res)
		}
		var out struct{ Subscribed bool }
		data, _ := json.Marshal(res.StructuredContent)
		_ = json.Unmarshal(data, &out)
		return out.Subscribed
	}
	gotUpdate := func() bool {
		timeout := time.After(5 * time.Second)
		for {
			select {
			case got := <-updates:
				if got == uri {
					return true
				}
			case <-timeout:
				return false
			}
		}
	}

	if err := a.Subscribe(t.Context(), &mcp.SubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, "alpha to know of Cursor's subscription", subscribed)
	if err := b.Unsubscribe(t.Context(), &mcp.UnsubscribeParams{URI: uri}); err != nil {
		t.Fatalf("the other client's unsubscribe: %v", err)
	}
	for len(updates) > 0 {
		<-updates
	}
	if !subscribed() || !gotUpdate() {
		t.Errorf("Cursor's subscription did not survive another client's unsubscribe")
	}
	if err := a.Close(); err != nil { // DELETE, without unsubscribing
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, "alpha to be unsubscribed once Cursor's session ended", func() bool { return !subscribed() })
}
