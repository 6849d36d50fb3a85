//go:build linux

package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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

// quitBound is how long a stop may take with calls in flight and streams
// open: well under a second plus the servers' own stop.
const quitBound = 3 * time.Second

// TestStopAnswersCallsInFlight stops the daemon (SIGTERM, as the tray's Quit
// ends it too) while three clients wait on a 30 s tool call, one in a
// session (2025-11-25), one stateless (2026-07-28), one over the legacy
// HTTP+SSE transport, and other clients hold streams open (a session's GET
// stream, the legacy SSE stream, the API's event and log streams): the
// daemon exits promptly, each call's client gets an answer that says
// Switchboard is shutting down (not a dropped connection), and the next
// daemon shows the calls as cancelled with that reason, not as interrupted.
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
	type answer struct{ client, said, got string }
	answered := make(chan answer, 3)
	for client, cs := range map[string]*mcp.ClientSession{"session": connect("/mcp/alpha", "2025-11-25"), "stateless": connect("/mcp/alpha", "2026-07-28")} {
		go func() {
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "sleep", Arguments: map[string]any{"ms": 30000}})
			a := answer{client: client, got: fmt.Sprintf("%+v, %v", res, err)}
			if rpcErr, ok := errors.AsType[*jsonrpc.Error](err); ok {
				a.said = rpcErr.Message
			} else if err == nil && res.IsError && len(res.Content) > 0 {
				if tc, ok := res.Content[0].(*mcp.TextContent); ok {
					a.said = tc.Text
				}
			}
			answered <- a
		}()
	}
	// A session on /mcp holds the go-sdk's GET stream open (the client
	// opens it after initialization).
	connect("/mcp", "2025-11-25")
	// The legacy client is spoken to by hand: the go-sdk's SSE client drops
	// a message that comes just before its stream ends.
	legacyCall(t, d, func(said, got string) { answered <- answer{"legacy SSE", said, got} })

	// The API's streams: the live feed, and a server's log lines.
	for _, path := range []string{"/api/v1/events", "/api/v1/servers/alpha/logs?follow=1"} {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, d.info.Address+path, nil)
		req.Header.Set("Authorization", "Bearer "+d.client.Token)
		stream, err := http.DefaultClient.Do(req)
		if err != nil || stream.StatusCode != http.StatusOK {
			t.Fatalf("%s: %v %v", path, err, stream)
		}
		defer stream.Body.Close()
		if _, err := bufio.NewReader(stream.Body).ReadString('\n'); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}

	journal := filepath.Join(home, daemon.JournalFile)
	testutil.Eventually(t, 10*time.Second, "the calls in the journal", func() bool {
		data, _ := os.ReadFile(journal)
		return bytes.Count(data, []byte(`"tools/call" "sleep"`)) == cap(answered)
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

	for range cap(answered) {
		var a answer
		select {
		case a = <-answered:
		case <-time.After(10 * time.Second):
			t.Fatal("a call's client got no answer")
		}
		t.Logf("%s call answered: %q", a.client, a.said)
		if !strings.Contains(a.said, "Switchboard is shutting down") {
			t.Errorf("%s call: answered %s; want an error answer saying Switchboard is shutting down", a.client, a.got)
		}
	}

	d = startDaemon(t, home)
	var page wire.CallPage
	testutil.Eventually(t, 10*time.Second, "the cancelled calls in the history", func() bool {
		var err error
		page, err = d.client.History(t.Context(), url.Values{"server": {"alpha"}, "tool": {"sleep"}})
		return err == nil && len(page.Calls) == cap(answered)
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

// legacyCall opens a legacy HTTP+SSE session on /sse/alpha, initializes it
// and calls alpha's sleep tool for 30 s; answer gets what the stream
// carried for the call (its error text, and the message or why there was
// none) once the stream ends.
func legacyCall(t *testing.T, d *daemonProc, answer func(said, got string)) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, d.info.Address+"/sse/alpha", nil)
	req.Header.Set("Authorization", "Bearer "+d.client.Token)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("legacy SSE stream: %v %v", err, resp)
	}
	t.Cleanup(func() { resp.Body.Close() })
	events := bufio.NewReader(resp.Body)
	// next returns the next event's name and data.
	next := func() (string, string, error) {
		var name, data string
		for {
			line, err := events.ReadString('\n')
			if err != nil {
				return "", "", err
			}
			line = strings.TrimRight(line, "\r\n")
			switch {
			case line == "" && data != "":
				return name, data, nil
			case strings.HasPrefix(line, "event:"):
				name = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
			case strings.HasPrefix(line, "data:"):
				data += strings.TrimSpace(strings.TrimPrefix(line, "data:"))
			}
		}
	}
	name, endpoint, err := next()
	if err != nil || name != "endpoint" {
		t.Fatalf("legacy SSE stream: first event %q %q %v, want the endpoint", name, endpoint, err)
	}
	post := func(body string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, d.info.Address+endpoint, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+d.client.Token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("legacy SSE post: %v", err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("legacy SSE post %s: status %d", body, resp.StatusCode)
		}
	}
	post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"legacy","version":"1"}}}`)
	for {
		// Notifications (a list changed) may come first.
		_, data, err := next()
		if err != nil {
			t.Fatalf("legacy SSE initialize: %v", err)
		}
		if strings.Contains(data, `"id":1`) {
			break
		}
	}
	post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":30000}}}`)
	go func() {
		for {
			_, data, err := next()
			if err != nil {
				answer("", fmt.Sprintf("no answer before the stream ended (%v)", err))
				return
			}
			var msg struct {
				ID     int `json:"id"`
				Result struct {
					IsError bool `json:"isError"`
					Content []struct {
						Text string `json:"text"`
					} `json:"content"`
				} `json:"result"`
				Error *struct {
					Message string `json:"message"`
				} `json:"error"`
			}
			if json.Unmarshal([]byte(data), &msg) != nil || msg.ID != 2 {
				continue
			}
			switch {
			case msg.Error != nil:
				answer(msg.Error.Message, data)
			case msg.Result.IsError && len(msg.Result.Content) > 0:
				answer(msg.Result.Content[0].Text, data)
			default:
				answer("", data)
			}
			return
		}
	}()
}
