package daemon

import (
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/app/approvals"
	"github.com/switchboardhq/switchboard/app/events"
	"github.com/switchboardhq/switchboard/app/history"
)

// TestApprovalsReachHistoryAndFeed: the approvals' notices, wired as Run
// wires them, are lifecycle events of their server in the history
// (tool-approved, tool-held) and approval events on the live feed, in the
// order they happened.
func TestApprovalsReachHistoryAndFeed(t *testing.T) {
	ctx := t.Context()
	store, err := approvals.Open(filepath.Join(t.TempDir(), approvals.FileName))
	if err != nil {
		t.Fatal(err)
	}
	hist, err := history.Open(ctx, filepath.Join(t.TempDir(), "history.db"), history.Options{RetentionInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer hist.Close(context.Background())
	bus := events.New(0)
	defer bus.Close()
	sub := bus.Subscribe(0, 64)
	defer sub.Close()
	policy := approvals.NewPolicy(store, approvals.PolicyOptions{Logger: slog.Default(), Report: reportApprovals(slog.Default(), hist, bus)})

	start := time.Now().Add(-time.Second)
	echo := &mcp.Tool{Name: "echo", Description: "Echoes.", InputSchema: map[string]any{"type": "object"}}
	sleep := &mcp.Tool{Name: "sleep", Description: "Sleeps.", InputSchema: map[string]any{"type": "object"}}
	policy.Review("demo", []*mcp.Tool{echo}, true)
	policy.Review("demo", []*mcp.Tool{echo, sleep}, true)
	if _, err := policy.Approve("demo", "sleep", ""); err != nil {
		t.Fatal(err)
	}
	if err := hist.Flush(ctx); err != nil {
		t.Fatal(err)
	}

	stored, err := hist.Events(ctx, "demo", start, 0)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, e := range stored {
		kinds = append(kinds, string(e.Kind))
	}
	if want := []string{"tool-approved", "tool-held", "tool-approved"}; !slices.Equal(kinds, want) {
		t.Errorf("history events = %v, want %v", kinds, want)
	}
	var feed []events.Approval
	for len(feed) < 3 {
		select {
		case ev := <-sub.C():
			var ap events.Approval
			if ev.Type == events.TypeApproval && json.Unmarshal(ev.Data, &ap) == nil {
				feed = append(feed, ap)
			}
		default:
			t.Fatalf("approvals on the feed = %+v, want 3", feed)
		}
	}
	want := []struct{ tool, state, change string }{
		{"", events.ApprovalApproved, ""}, {"sleep", events.ApprovalHeld, "new"}, {"sleep", events.ApprovalApproved, "new"}}
	for i, w := range want {
		if ap := feed[i]; ap.Server != "demo" || ap.Tool != w.tool || ap.State != w.state || ap.Change != w.change || ap.Message != stored[i].Message {
			t.Errorf("feed approval %d = %+v, want tool %q, state %q, change %q and the history's message %q", i, ap, w.tool, w.state, w.change, stored[i].Message)
		}
	}
}
