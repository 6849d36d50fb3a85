package daemon

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app/events"
	"github.com/switchboardhq/switchboard/app/history"
	"github.com/switchboardhq/switchboard/app/record"
)

// TestDroppedRecordsReachTheFeed: a call the history had to drop is on the
// live feed with the next batch that commits, once, without waiting for a
// supervisor event.
func TestDroppedRecordsReachTheFeed(t *testing.T) {
	ctx := t.Context()
	bus := events.New(0)
	defer bus.Close()
	sub := bus.Subscribe(0, 64)
	defer sub.Close()

	dropped := &droppedFeed{log: slog.Default(), bus: bus}
	// A queue of one, and a writer that waits an hour for a batch to
	// fill: the second call is dropped.
	hist, err := history.Open(ctx, filepath.Join(t.TempDir(), "history.db"), history.Options{
		QueueSize: 1, BatchDelay: time.Hour, RetentionInterval: -1,
		OnCommit: func(_ []history.Call, n uint64) { dropped.check(n) }})
	if err != nil {
		t.Fatal(err)
	}
	defer hist.Close(context.Background())
	call := record.Call{Start: time.Now(), Method: "tools/call", Server: "alpha", Name: "echo", Outcome: record.OutcomeOK}
	hist.RecordCall(call)
	hist.RecordCall(call)
	if err := hist.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// OnCommit ran before Flush returned: the count is on the feed already.
	select {
	case ev := <-sub.C():
		if ev.Type != events.TypeDropped || string(ev.Data) != `{"count":1}` {
			t.Errorf("event = %s %s, want dropped {\"count\":1}", ev.Type, ev.Data)
		}
	default:
		t.Fatal("no dropped event after the commit")
	}
	dropped.check(hist.Dropped()) // no change since: nothing more
	dropped.check(0)              // an older count that arrives late is not news
	bus.Close()                   // ends the subscription once the rest is read
	for ev := range sub.C() {
		t.Errorf("another event: %s %s", ev.Type, ev.Data)
	}
}
