package gateway_test

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/app/gateway"
	"github.com/switchboardhq/switchboard/app/internal/testutil"
)

// TestCallWatcherSeesCallsWhileTheyRun: a Recorder that is a CallWatcher
// hears of a call once its server is known, before it ends, on the
// aggregated endpoint and on a server's own.
func TestCallWatcherSeesCallsWhileTheyRun(t *testing.T) {
	f := newFixture(t, gateway.ServerConfig{Name: "alpha"})
	cs := f.connect(t, "/mcp", "2025-11-25", nil)
	f.waitTools(t, cs, "alpha__sleep")

	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__sleep", Arguments: map[string]any{"ms": 1500}})
		done <- err
	}()
	testutil.Eventually(t, 10*time.Second, "a CallStarted while the call runs", func() bool { return len(f.rec.allStarted()) > 0 })
	started := f.rec.allStarted()[0]
	for _, c := range f.rec.all() {
		if c.Name == "alpha__sleep" {
			t.Fatalf("the call was recorded as ended before its sleep: %+v", c)
		}
	}
	if started.Server != "alpha" || started.Name != "alpha__sleep" || started.Endpoint != "" || started.Outcome != "" ||
		started.Start.IsZero() || started.Arguments != nil || started.ClientLabel != "test-client" {
		t.Errorf("started call: %+v", started)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	var ended bool
	for _, c := range f.rec.all() {
		if c.Name == "alpha__sleep" && c.Start.Equal(started.Start) && c.Outcome == "ok" {
			ended = true
		}
	}
	if !ended {
		t.Errorf("no recorded end with the start's time %s: %+v", started.Start, f.rec.all())
	}

	// On the server's own endpoint too, once per call.
	own := f.connect(t, "/mcp/alpha", "2025-11-25", nil)
	if _, err := own.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}}); err != nil {
		t.Fatal(err)
	}
	var echo int
	for _, c := range f.rec.allStarted() {
		if c.Name == "echo" && c.Endpoint == "alpha" && c.Server == "alpha" {
			echo++
		}
	}
	if echo != 1 {
		t.Errorf("%d CallStarted for one echo on /mcp/alpha: %+v", echo, f.rec.allStarted())
	}
}
