package gateway_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/app/gateway"
	"github.com/switchboardhq/switchboard/app/internal/testutil"
	"github.com/switchboardhq/switchboard/supervisor"
	"github.com/switchboardhq/switchboard/supervisor/testmcp"
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

// TestCallWatcherSeesProgress: the progress a server reports for a call
// whose client asked for it reaches the CallWatcher too, named as the
// call's CallStarted (server, name, start), at most one every 100 ms.
func TestCallWatcherSeesProgress(t *testing.T) {
	f := newFixture(t, gateway.ServerConfig{Name: "alpha"})
	cs := f.connect(t, "/mcp", "2025-11-25", nil)
	f.waitTools(t, cs, "alpha__sleep")

	params := &mcp.CallToolParams{Name: "alpha__sleep", Arguments: map[string]any{"ms": 700}}
	params.SetProgressToken("watched")
	start := time.Now()
	if _, err := cs.CallTool(t.Context(), params); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	started := f.rec.allStarted()
	if len(started) != 1 {
		t.Fatalf("%d calls started, want 1: %+v", len(started), started)
	}
	got := f.rec.allProgress()
	if len(got) < 2 {
		t.Fatalf("%d progress notifications watched for a 700 ms sleep reporting every 100 ms, want several", len(got))
	}
	if max := int(took/(100*time.Millisecond)) + 2; len(got) > max {
		t.Errorf("%d progress notifications watched in %s, want at most %d (one per 100 ms)", len(got), took, max)
	}
	for _, p := range got {
		if p.call.Server != "alpha" || p.call.Name != "alpha__sleep" || !p.call.Start.Equal(started[0].Start) || p.call.Arguments != nil {
			t.Errorf("progress of call %+v, want the started call %+v", p.call, started[0])
		}
		if p.Total != 700 || p.Progress <= 0 || p.Progress > 700 || !strings.HasPrefix(p.Message, "slept ") {
			t.Errorf("progress %+v", p.CallProgress)
		}
	}

	// Without a progress token the server sends none, and nothing is watched.
	before := len(f.rec.allProgress())
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__sleep", Arguments: map[string]any{"ms": 250}}); err != nil {
		t.Fatal(err)
	}
	if n := len(f.rec.allProgress()); n != before {
		t.Errorf("%d progress notifications watched for a call without a progress token", n-before)
	}
}

// TestListedIsToldOfEachListing: Options.Listed hears of a server once its
// tools are listed, so that the pages can show them without polling.
func TestListedIsToldOfEachListing(t *testing.T) {
	var mu sync.Mutex
	var listed []string
	spec := supervisor.Spec{Name: "alpha", Command: os.Args[0], Env: testEnv(testmcp.Options{Name: "alpha"})}
	f := newTunedFixture(t, "", func(_ *supervisor.Options, o *gateway.Options) {
		o.Listed = func(server string) {
			mu.Lock()
			defer mu.Unlock()
			listed = append(listed, server)
		}
	}, []supervisor.Spec{spec}, gateway.ServerConfig{Name: "alpha"})
	if f.gw.Tools("alpha") != nil {
		t.Fatal("tools of a server not listed yet are not nil")
	}
	cs := f.connect(t, "/mcp/alpha", "2025-11-25", nil)
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}}); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, "Listed told of alpha", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return slices.Contains(listed, "alpha")
	})
	if len(f.gw.Tools("alpha")) == 0 {
		t.Error("Listed was told before Tools had the server's tools")
	}
}
