//go:build linux

package e2e

import (
	"bufio"
	"bytes"
	"errors"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/daemon"
	"github.com/switchboardhq/switchboard/app/internal/testutil"
	"github.com/switchboardhq/switchboard/app/record"
)

// quitBound is how long a stop may take with a call in flight and streams
// open: well under a second plus the servers' own stop.
const quitBound = 3 * time.Second

// TestStopAnswersCallsInFlight stops the daemon (SIGTERM, as the tray's Quit
// and switchboard stop end it) while two clients wait on a 30 s tool call,
// one in a session (2025-11-25), one stateless (2026-07-28), and other
// clients hold streams open (a session's GET stream, a legacy /sse stream,
// the API's event stream): the daemon exits promptly, each call's client
// gets an answer that says Switchboard is shutting down (not a dropped
// connection), and the next daemon shows the calls as cancelled with that
// reason, not as interrupted.
func TestStopAnswersCallsInFlight(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	writeConfig(t, home, "alpha")
	d := startDaemon(t, home)
	d.waitRunning(t, "alpha")

	connect := func(path, era string) *mcp.ClientSession {
		transport := &mcp.StreamableClientTransport{Endpoint: d.info.Address + path,
			HTTPClient: &http.Client{Transport: bearerTransport(d.client.Token)}}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "stop-test", Version: "1"}, nil).Connect(t.Context(), transport,
			&mcp.ClientSessionOptions{ProtocolVersion: era})
		if err != nil {
			t.Fatalf("connecting to %s in the %s era: %v", path, era, err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	callers := map[string]*mcp.ClientSession{"session": connect("/mcp/alpha", "2025-11-25"), "stateless": connect("/mcp/alpha", "2026-07-28")}
	// A session on /mcp holds the go-sdk's GET stream open (the client
	// opens it after initialization).
	connect("/mcp", "2025-11-25")
	legacy, err := mcp.NewClient(&mcp.Implementation{Name: "legacy", Version: "1"}, nil).Connect(t.Context(),
		&mcp.SSEClientTransport{Endpoint: d.info.Address + "/sse/alpha", HTTPClient: &http.Client{Transport: bearerTransport(d.client.Token)}}, nil)
	if err != nil {
		t.Fatalf("legacy SSE client: %v", err)
	}
	t.Cleanup(func() { legacy.Close() })
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, d.info.Address+"/api/v1/events", nil)
	req.Header.Set("Authorization", "Bearer "+d.client.Token)
	events, err := http.DefaultClient.Do(req)
	if err != nil || events.StatusCode != http.StatusOK {
		t.Fatalf("event stream: %v %v", err, events)
	}
	defer events.Body.Close()
	if _, err := bufio.NewReader(events.Body).ReadString('\n'); err != nil {
		t.Fatalf("event stream: %v", err)
	}

	type answer struct {
		era string
		res *mcp.CallToolResult
		err error
	}
	answered := make(chan answer, len(callers))
	for era, cs := range callers {
		go func() {
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "sleep", Arguments: map[string]any{"ms": 30000}})
			answered <- answer{era, res, err}
		}()
	}
	journal := filepath.Join(home, daemon.JournalFile)
	testutil.Eventually(t, 10*time.Second, "the calls in the journal", func() bool {
		data, _ := os.ReadFile(journal)
		return bytes.Count(data, []byte(`"tools/call" "sleep"`)) == len(callers)
	})

	stopped := time.Now()
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-d.done:
	case <-time.After(20 * time.Second):
		t.Fatal("the daemon did not exit within 20 s of SIGTERM")
	}
	took := time.Since(stopped)
	t.Logf("the daemon exited %s after SIGTERM", took)
	if took > quitBound {
		t.Errorf("the daemon took %s to exit with calls in flight and streams open, want under %s", took, quitBound)
	}
	if code := d.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("the daemon exited %d", code)
	}

	for range callers {
		var a answer
		select {
		case a = <-answered:
		case <-time.After(10 * time.Second):
			t.Fatal("a call's client got no answer")
		}
		var said string
		if rpcErr, ok := errors.AsType[*jsonrpc.Error](a.err); ok {
			said = rpcErr.Message
		} else if a.err == nil && a.res.IsError && len(a.res.Content) > 0 {
			if tc, ok := a.res.Content[0].(*mcp.TextContent); ok {
				said = tc.Text
			}
		}
		t.Logf("%s call answered: %q", a.era, said)
		if !strings.Contains(said, "Switchboard is shutting down") {
			t.Errorf("%s call: answered %+v, %v; want an error answer saying Switchboard is shutting down", a.era, a.res, a.err)
		}
	}

	d = startDaemon(t, home)
	var page wire.CallPage
	testutil.Eventually(t, 10*time.Second, "the cancelled calls in the history", func() bool {
		page, err = d.client.History(t.Context(), url.Values{"server": {"alpha"}, "tool": {"sleep"}})
		return err == nil && len(page.Calls) == len(callers)
	})
	for _, c := range page.Calls {
		if c.Outcome != record.OutcomeCancelled || !strings.Contains(c.Error, "Switchboard is shutting down") {
			t.Errorf("a call in flight at the stop was recorded as %q (%q), want %q saying Switchboard is shutting down",
				c.Outcome, c.Error, record.OutcomeCancelled)
		}
	}
	if page, err := d.client.History(t.Context(), url.Values{"outcome": {record.OutcomeInterrupted}}); err != nil || len(page.Calls) != 0 {
		t.Errorf("calls recorded as interrupted after a clean stop: %v %+v", err, page.Calls)
	}
}
