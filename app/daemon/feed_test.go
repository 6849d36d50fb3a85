package daemon

import (
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app/events"
	"github.com/switchboardhq/switchboard/app/history"
	"github.com/switchboardhq/switchboard/app/record"
	"github.com/switchboardhq/switchboard/supervisor"
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

// TestSupervisorEventsEnterTheApp: forward converts each supervisor event
// to the app's (record.Event) without changing what is kept or shown: the
// history stores the supervisor's kind and state strings, and the feed's
// "state" events have the JSON the supervisor's event had, byte for byte.
func TestSupervisorEventsEnterTheApp(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	lifecycle := []supervisor.Event{
		{Time: t0, Server: "files", Kind: supervisor.EventStarting, PID: 7},
		{Time: t0, Server: "files", Kind: supervisor.EventReady, PID: 7},
		{Time: t0, Server: "files", Kind: supervisor.EventStopping, PID: 7},
		{Time: t0, Server: "files", Kind: supervisor.EventStopped, PID: 7, Exit: "signal: terminated"},
		{Time: t0, Server: "files", Kind: supervisor.EventCrashed, PID: 7, Exit: "exit status 1", Message: "boom"},
		{Time: t0, Server: "files", Kind: supervisor.EventBackoff, Delay: 2 * time.Second},
		{Time: t0, Server: "files", Kind: supervisor.EventFailing, State: supervisor.StateFailing, Message: "crashed 5 times"},
		{Time: t0, Server: "files", Kind: supervisor.EventState, State: supervisor.StateRunning},
	}
	evs := make(chan *supervisor.Event, len(lifecycle)+2)
	for i := range lifecycle {
		evs <- &lifecycle[i]
	}
	evs <- &supervisor.Event{Time: t0, Server: "files", Kind: supervisor.EventLog, PID: 7, Stream: "stderr", Message: "listening"}
	evs <- &supervisor.Event{Time: t0, Server: "files", Kind: supervisor.EventUsage,
		Usage: &supervisor.Usage{CPUPercent: 12.5, RSSBytes: 1 << 20, Processes: 3}}
	close(evs)

	ctx := t.Context()
	bus := events.New(0)
	defer bus.Close()
	sub := bus.Subscribe(0, 64)
	defer sub.Close()
	hist, err := history.Open(ctx, filepath.Join(t.TempDir(), "history.db"), history.Options{RetentionInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer hist.Close(context.Background())
	forward(slog.Default(), evs, hist, bus, &droppedFeed{log: slog.Default(), bus: bus})
	if err := hist.Flush(ctx); err != nil {
		t.Fatal(err)
	}

	var states []string
	for range len(lifecycle) + 2 {
		select {
		case ev := <-sub.C():
			if ev.Type == events.TypeState {
				states = append(states, string(ev.Data))
			}
		default:
			t.Fatalf("the feed has %d state events, want %d", len(states), len(lifecycle))
		}
	}
	stored, err := hist.Events(ctx, "files", t0.Add(-time.Second), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(states) != len(lifecycle) || len(stored) != len(lifecycle) {
		t.Fatalf("%d state events on the feed and %d in the history, want %d", len(states), len(stored), len(lifecycle))
	}
	for i, sev := range lifecycle {
		want, err := json.Marshal(sev)
		if err != nil {
			t.Fatal(err)
		}
		if states[i] != string(want) {
			t.Errorf("state event %d on the feed:\n got  %s\n want %s", i, states[i], want)
		}
		if got := stored[i]; string(got.Kind) != string(sev.Kind) || got.State != string(sev.State) {
			t.Errorf("stored event %d: kind %q, state %q; want %q, %q", i, got.Kind, got.State, sev.Kind, sev.State)
		}
	}
	if logs, err := hist.Logs(ctx, "files", t0.Add(-time.Second), 0); err != nil || len(logs) != 1 || logs[0].Text != "listening" {
		t.Errorf("stored logs = %+v, %v; want the one line", logs, err)
	}
	if samples, err := hist.Samples(ctx, "files", t0.Add(-time.Second), t0.Add(time.Second)); err != nil || len(samples) != 1 || samples[0].RSSBytes != 1<<20 {
		t.Errorf("stored samples = %+v, %v; want the one sample", samples, err)
	}
}

// The app's kinds of the supervisor's events are the supervisor's strings.
func TestAppEventKinds(t *testing.T) {
	for _, k := range []struct {
		sup supervisor.EventKind
		app record.EventKind
	}{
		{supervisor.EventStarting, record.EventStarting},
		{supervisor.EventReady, record.EventReady},
		{supervisor.EventStopping, record.EventStopping},
		{supervisor.EventStopped, record.EventStopped},
		{supervisor.EventCrashed, record.EventCrashed},
		{supervisor.EventBackoff, record.EventBackoff},
		{supervisor.EventFailing, record.EventFailing},
		{supervisor.EventState, record.EventState},
		{supervisor.EventLog, record.EventLog},
		{supervisor.EventUsage, record.EventUsage},
	} {
		if got := appEvent(&supervisor.Event{Kind: k.sup}).Kind; got != k.app {
			t.Errorf("appEvent of a %q event has kind %q, want %q", k.sup, got, k.app)
		}
	}
}
