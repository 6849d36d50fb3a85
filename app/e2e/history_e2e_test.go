package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/internal/testutil"
	"github.com/switchboardhq/switchboard/app/record"
)

// tsHarness is the official TypeScript SDK client the gateway's tests use
// (installed by `make node-deps`).
const tsHarness = "../gateway/testdata/node" // from app/e2e, where go test runs

// TestTSClientCallsInHistoryAndEvents: calls made by the official
// TypeScript SDK client through the daemon's gateway — one that works, one
// the tool rejects, one the client gives up on, one that crashes the server
// — are in /api/v1/history and on /api/v1/events with the client's name,
// the server, the tool, the outcome and a duration.
func TestTSClientCallsInHistoryAndEvents(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node not found: install Node.js 20 (the CI installs it): %v", err)
	}
	if _, err := os.Stat(filepath.Join(tsHarness, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		t.Fatalf("the TypeScript SDK is not installed in %s: run `make node-deps`", tsHarness)
	}
	home := filepath.Join(t.TempDir(), "home")
	writeConfig(t, home, "alpha")
	d := startDaemon(t, home)
	d.waitRunning(t, "alpha")

	// Follow the feed from before anything happened (an old id gets the
	// whole ring), so no call event can slip by before we subscribe.
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	var mu sync.Mutex
	feed := map[string]wire.Call{} // by tool name
	followed := make(chan error, 1)
	go func() {
		followed <- d.client.Events(ctx, 1, []string{wire.TypeCall}, func(ev wire.Event) error {
			if ev.Type != wire.TypeCall {
				return nil // the reset that an old id gets
			}
			var c wire.Call
			if err := json.Unmarshal(ev.Data, &c); err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			feed[c.Name] = c
			return nil
		})
	}()

	scenario, _ := json.Marshal(map[string]any{
		"transport":  "streamable",
		"url":        d.info.Address + "/mcp",
		"token":      d.client.Token,
		"clientInfo": map[string]string{"name": "ts-e2e", "version": "9.9"},
		"steps": []map[string]any{
			{"op": "callTool", "id": "ok", "name": "alpha__echo", "args": map[string]any{"text": "hi"}},
			{"op": "callTool", "id": "rejected", "name": "alpha__echo", "args": map[string]any{"text": 5}},
			{"op": "callTool", "id": "given-up", "name": "alpha__hang", "args": map[string]any{}, "timeoutMs": 500},
			{"op": "callTool", "id": "crash", "name": "alpha__crash", "args": map[string]any{"code": 3}},
		},
	})
	cmd := exec.CommandContext(ctx, node, filepath.Join(tsHarness, "client.mjs"), string(scenario))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("TS client: %v\n%s", err, out)
	}
	var report struct {
		Connected bool `json:"connected"`
		Steps     []struct {
			ID string `json:"id"`
			OK bool   `json:"ok"`
		} `json:"steps"`
	}
	if err := json.Unmarshal(out, &report); err != nil || !report.Connected || len(report.Steps) != 4 {
		t.Fatalf("TS client report: %v\n%s", err, out)
	}

	want := map[string]string{ // tool → outcome
		"alpha__echo":  wire.OutcomeOK,
		"alpha__hang":  record.OutcomeCancelled,
		"alpha__crash": record.OutcomeUnavailable,
	}
	var calls []wire.Call
	testutil.Eventually(t, 20*time.Second, "the TS client's calls in the history", func() bool {
		page, err := d.client.History(t.Context(), url.Values{"client": {"ts-e2e"}})
		calls = page.Calls
		return err == nil && len(page.Calls) == 4
	})
	byOutcome := map[string]wire.Call{}
	for _, c := range calls {
		if c.ClientName != "ts-e2e" || c.ClientVersion != "9.9" || c.ClientLabel != "cli" || c.Server != "alpha" ||
			c.Method != "tools/call" || c.Duration <= 0 {
			t.Errorf("recorded call: %+v", c)
		}
		byOutcome[c.Outcome] = c
	}
	for tool, outcome := range want {
		if c, ok := byOutcome[outcome]; !ok || c.Name != tool {
			t.Errorf("no %s call of %s in the history: %+v", outcome, tool, calls)
		}
	}
	// The echo with a number for its text: the server refuses it, as a tool
	// error or a protocol error depending on how it validates input.
	if c := byOutcome[record.OutcomeToolError]; c.Name == "" {
		if c = byOutcome[record.OutcomeProtocol]; c.Name != "alpha__echo" || c.Error == "" {
			t.Errorf("the rejected echo is not recorded as an error: %+v", calls)
		}
	}
	if c := byOutcome[record.OutcomeUnavailable]; c.Error == "" {
		t.Errorf("the crash has no error text: %+v", c)
	}

	// The same calls reached the live feed, with their history ids.
	testutil.Eventually(t, 20*time.Second, "the calls on /api/v1/events", func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range calls {
			got, ok := feed[c.Name]
			if !ok {
				return false
			}
			if c.Name == "alpha__echo" {
				continue // two calls by that name; the map kept the later one
			}
			if got.ID != c.ID || got.Outcome != c.Outcome || got.ClientName != "ts-e2e" || got.Duration != c.Duration {
				t.Errorf("event %+v differs from the history's %+v", got, c)
				return true
			}
		}
		return true
	})
	cancel()
	if err := <-followed; !errors.Is(err, context.Canceled) {
		t.Errorf("following events: %v", err)
	}
}
