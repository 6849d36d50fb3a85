package supervisor_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/supervisor"
	"github.com/switchboardhq/switchboard/supervisor/testmcp"
	"github.com/switchboardhq/switchboard/supervisor/testutil"
)

// TestSessionLeakSoak opens and closes 1,000 client sessions against a
// session-mode server: the pool never holds more processes than its max, and
// none is left behind.
func TestSessionLeakSoak(t *testing.T) {
	const (
		sessions = 1000
		workers  = 16
		poolMax  = 4
	)
	s := newSupervisor(t, fastOptions(t))
	events, cancelEvents := s.Subscribe(8 * sessions)
	defer cancelEvents()
	apply(t, s, testSpec("soak", testmcp.Options{}, supervisor.PoolSpec{Mode: supervisor.ModeSession, Min: 1, Max: poolMax}))
	pool, err := s.Pool("soak")
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	var next, done atomic.Int64
	var peak atomic.Int64
	watch := func() {
		if n := int64(len(pool.Status().Processes)); n > peak.Load() {
			peak.Store(n)
		}
	}
	stopWatch := make(chan struct{})
	var watcher sync.WaitGroup
	watcher.Go(func() {
		for {
			select {
			case <-stopWatch:
				return
			case <-time.After(5 * time.Millisecond):
				watch()
			}
		}
	})

	start := time.Now()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for next.Add(1) <= sessions && ctx.Err() == nil {
				l, err := s.Acquire(ctx, "soak")
				if err != nil {
					t.Errorf("session %d: %v", next.Load(), err)
					return
				}
				res, err := callOn(ctx, l, "echo", map[string]any{"text": "x"})
				l.Release()
				if err != nil || text(res) != "x" {
					t.Errorf("echo in a session: %v", err)
					return
				}
				done.Add(1)
			}
		})
	}
	wg.Wait()
	close(stopWatch)
	watcher.Wait()
	elapsed := time.Since(start)
	if done.Load() != sessions {
		t.Fatalf("%d of %d sessions completed", done.Load(), sessions)
	}

	testutil.Eventually(t, 30*time.Second, "only the spare left", func() bool {
		st := pool.Status()
		return len(st.Processes) == 1 && st.Processes[0].State == "ready"
	})
	spare := pool.Status().Processes[0].PID

	// Replay the events: the live count never exceeds max, and every
	// process but the spare has exited.
	cancelEvents()
	// Starts are counted, not distinct pids: Windows reuses a pid at once.
	live, maxLive, starts := 0, 0, 0
	started := map[int]bool{}
	for ev := range events {
		switch ev.Kind {
		case supervisor.EventStarting:
			live++
			starts++
			started[ev.PID] = true
		case supervisor.EventStopped, supervisor.EventCrashed:
			live--
		}
		maxLive = max(maxLive, live)
	}
	if s.DroppedEvents() != 0 {
		t.Fatalf("%d events dropped; the replay is incomplete", s.DroppedEvents())
	}
	if peak.Load() > poolMax || maxLive > poolMax {
		t.Errorf("pool held %d processes (events: %d), max is %d", peak.Load(), maxLive, poolMax)
	}
	var survivors int
	for pid := range started {
		if pid != spare && alive(pid) {
			survivors++
		}
	}
	if survivors > 0 {
		t.Errorf("%d session processes survived their session", survivors)
	}
	if starts < sessions {
		t.Errorf("%d processes started for %d sessions: sessions shared processes", starts, sessions)
	}
	t.Logf("%d sessions in %s (%.0f sessions/s, %d workers), %d processes started, peak %d live (max %d), %d left alive (the spare)",
		sessions, elapsed.Round(time.Millisecond), float64(sessions)/elapsed.Seconds(), workers, starts, peak.Load(), poolMax, 1)
}
