package supervisor_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/supervisor"
	"github.com/switchboardhq/switchboard/supervisor/testmcp"
	"github.com/switchboardhq/switchboard/supervisor/testutil"
)

func TestEchoAndLazyStart(t *testing.T) {
	s := newSupervisor(t, fastOptions(t))
	apply(t, s, testSpec("echo", testmcp.Options{}, supervisor.PoolSpec{}))
	if st := status(t, s, "echo"); len(st.Processes) != 0 || st.State != supervisor.StateStopped {
		t.Fatalf("lazy pool started early: %+v", st)
	}
	res, _, err := call(t.Context(), s, "echo", "echo", map[string]any{"text": "hello"})
	if err != nil {
		t.Fatal(err)
	}
	if got := text(res); got != "hello" {
		t.Errorf("echo = %q, want hello", got)
	}
	p, _ := s.Pool("echo")
	if init := p.InitializeResult(); init == nil || init.ServerInfo.Name != "testmcp" || init.ProtocolVersion == "" {
		t.Errorf("initialize result not kept: %+v", init)
	}
	if st := status(t, s, "echo"); st.State != supervisor.StateRunning || len(st.Processes) != 1 {
		t.Errorf("after first call: %+v", st)
	}
}

func TestSharedPoolScalesUpAndDown(t *testing.T) {
	s := newSupervisor(t, fastOptions(t))
	apply(t, s, testSpec("busy", testmcp.Options{}, supervisor.PoolSpec{
		Mode: supervisor.ModeShared, Min: 0, Max: 3, IdleTimeout: 300 * time.Millisecond}))

	// Workers keep every process busy; each all-busy moment adds a process,
	// up to max, and later calls spread over them.
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	var mu sync.Mutex
	seen := map[int]bool{}
	for range 6 {
		wg.Go(func() {
			for range 8 {
				_, pid, err := call(ctx, s, "busy", "sleep", map[string]any{"ms": 100})
				if err != nil {
					t.Errorf("sleep: %v", err)
					return
				}
				mu.Lock()
				seen[pid] = true
				mu.Unlock()
			}
		})
	}
	testutil.Eventually(t, 20*time.Second, "three processes", func() bool {
		st := status(t, s, "busy")
		if len(st.Processes) > 3 {
			t.Fatalf("pool grew beyond max: %d processes", len(st.Processes))
		}
		return len(st.Processes) == 3
	})
	wg.Wait()
	if len(seen) < 2 {
		t.Errorf("calls went to %d process(es), want them spread over several", len(seen))
	}
	testutil.Eventually(t, 10*time.Second, "idle processes to stop", func() bool {
		st := status(t, s, "busy")
		return len(st.Processes) == 0 && st.State == supervisor.StateStopped
	})
	for pid := range seen {
		if alive(pid) {
			t.Errorf("idle-stopped process %d is still alive", pid)
		}
	}
}

func TestSessionPoolLeasesAndReleases(t *testing.T) {
	s := newSupervisor(t, fastOptions(t))
	apply(t, s, testSpec("sess", testmcp.Options{}, supervisor.PoolSpec{Mode: supervisor.ModeSession, Min: 1, Max: 2}))

	testutil.Eventually(t, 20*time.Second, "a pre-started spare", func() bool {
		st := status(t, s, "sess")
		return len(st.Processes) == 1 && st.Processes[0].State == "ready"
	})
	spare := status(t, s, "sess").Processes[0].PID

	a, err := s.Acquire(t.Context(), "sess")
	if err != nil {
		t.Fatal(err)
	}
	if a.PID() != spare {
		t.Errorf("lease got pid %d, want the spare %d", a.PID(), spare)
	}
	res, err := callOn(t.Context(), a, "pid", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := structuredPID(t, res); got != a.PID() {
		t.Errorf("pid tool = %d, lease pid = %d", got, a.PID())
	}
	b, err := s.Acquire(t.Context(), "sess")
	if err != nil {
		t.Fatal(err)
	}
	if b.PID() == a.PID() {
		t.Fatal("two sessions share one process in session mode")
	}

	// Over the cap: waits up to the deadline, then a clear error.
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	if _, err := s.Acquire(ctx, "sess"); err == nil || !strings.Contains(err.Error(), "leased") {
		t.Fatalf("third lease over max 2: err = %v, want one saying all processes are leased", err)
	}

	// Releasing a lease stops its process; a waiting session then gets one.
	got := make(chan *supervisor.Lease, 1)
	go func() {
		l, err := s.Acquire(t.Context(), "sess")
		if err != nil {
			t.Errorf("waiting lease: %v", err)
		}
		got <- l
	}()
	a.Release()
	testutil.Eventually(t, 10*time.Second, "released process to exit", func() bool { return !alive(a.PID()) })
	c := <-got
	if c == nil {
		t.FailNow()
	}
	if c.PID() == a.PID() || c.PID() == b.PID() {
		t.Errorf("waiting session got a used process %d", c.PID())
	}
	b.Release()
	c.Release()
	testutil.Eventually(t, 10*time.Second, "one spare left", func() bool {
		st := status(t, s, "sess")
		return len(st.Processes) == 1 && !st.Processes[0].Leased
	})
}

func TestCrashFailsInFlightCallsThenRestarts(t *testing.T) {
	s := newSupervisor(t, fastOptions(t))
	apply(t, s, testSpec("crashy", testmcp.Options{}, supervisor.PoolSpec{Min: 1, Max: 1}))

	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	hung := make(chan error, 1)
	started := time.Now()
	go func() {
		_, _, err := call(ctx, s, "crashy", "hang", nil)
		hung <- err
	}()
	testutil.Eventually(t, 20*time.Second, "the hanging call to be in flight", func() bool {
		st := status(t, s, "crashy")
		return len(st.Processes) == 1 && st.Processes[0].InFlight == 1
	})
	oldPID := status(t, s, "crashy").Processes[0].PID

	_, _, err := call(ctx, s, "crashy", "crash", map[string]any{"code": 7, "stderr": "boom: disk on fire"})
	for _, e := range []error{err, <-hung} {
		if !isExitError(e) {
			t.Fatalf("in-flight call error = %v, want an ExitError", e)
		}
		msg := e.Error()
		for _, want := range []string{`"crashy"`, "exit status 7", "boom: disk on fire"} {
			if !strings.Contains(msg, want) {
				t.Errorf("crash error %q does not mention %q", msg, want)
			}
		}
	}
	if waited := time.Since(started); waited > 15*time.Second {
		t.Errorf("in-flight calls failed after %s, want promptly", waited)
	}

	res, pid, err := call(ctx, s, "crashy", "echo", map[string]any{"text": "again"})
	if err != nil {
		t.Fatalf("call after the crash: %v", err)
	}
	if text(res) != "again" || pid == oldPID {
		t.Errorf("after restart: %q from pid %d (crashed pid %d)", text(res), pid, oldPID)
	}
	if st := status(t, s, "crashy"); st.Restarts != 1 || !strings.Contains(st.LastError, "exit status 7") {
		t.Errorf("status after crash: restarts %d, last error %q", st.Restarts, st.LastError)
	}
}

// TestProcessEndEndsTheCall: a call that the process's transport never
// fails (its stdout kept open by a grandchild, say) still ends when its
// process does, with why: the process's end cancels the context the call
// runs on, Do's own or, with DoCancel, the caller's (the gateway's fast
// path makes one for each call).
func TestProcessEndEndsTheCall(t *testing.T) {
	for _, v := range []struct {
		name string
		do   func(l *supervisor.Lease, ctx context.Context, cancel context.CancelCauseFunc, fn func(context.Context, *mcp.ClientSession) error) error
		// callerEnded: the caller's context ends with the exit too.
		callerEnded bool
	}{
		{"Do", func(l *supervisor.Lease, ctx context.Context, _ context.CancelCauseFunc, fn func(context.Context, *mcp.ClientSession) error) error {
			return l.Do(ctx, fn)
		}, false},
		{"DoCancel", (*supervisor.Lease).DoCancel, true},
	} {
		t.Run(v.name, func(t *testing.T) {
			s := newSupervisor(t, fastOptions(t))
			apply(t, s, testSpec("crashy", testmcp.Options{}, supervisor.PoolSpec{Min: 1, Max: 1}))
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			l, err := s.Acquire(ctx, "crashy")
			if err != nil {
				t.Fatal(err)
			}
			defer l.Release()
			callCtx, callCancel := context.WithCancelCause(ctx)
			defer callCancel(nil)
			ended := make(chan error, 1)
			go func() {
				ended <- v.do(l, callCtx, callCancel, func(ctx context.Context, _ *mcp.ClientSession) error {
					<-ctx.Done() // only the context can end this call
					return context.Cause(ctx)
				})
			}()
			if _, _, err := call(ctx, s, "crashy", "crash", map[string]any{"code": 7}); !isExitError(err) {
				t.Fatalf("the crash call: %v, want an ExitError", err)
			}
			var got error
			select {
			case got = <-ended:
			case <-time.After(10 * time.Second):
				t.Fatal("the call did not end with its process")
			}
			if !isExitError(got) || !strings.Contains(got.Error(), "exit status 7") {
				t.Errorf("the call ended with %v, want the process's exit", got)
			}
			if cause := context.Cause(callCtx); isExitError(cause) != v.callerEnded {
				t.Errorf("the caller's context's cause is %v; want it ended by the exit: %v", cause, v.callerEnded)
			}
		})
	}
}

func TestCrashLoopMakesServerFailing(t *testing.T) {
	opts := fastOptions(t)
	opts.CrashLimit = 3
	s := newSupervisor(t, opts)
	events, cancel := s.Subscribe(1000)
	defer cancel()
	apply(t, s, testSpec("loop", testmcp.Options{FailStart: true}, supervisor.PoolSpec{Min: 1}))

	testutil.Eventually(t, 20*time.Second, "failing state", func() bool {
		return status(t, s, "loop").State == supervisor.StateFailing
	})
	_, _, err := call(t.Context(), s, "loop", "echo", map[string]any{"text": "x"})
	if !errors.Is(err, supervisor.ErrFailing) || !strings.Contains(err.Error(), "start it again") {
		t.Fatalf("call to a failing server: %v", err)
	}
	var kinds []supervisor.EventKind
	for len(events) > 0 {
		kinds = append(kinds, (<-events).Kind)
	}
	for _, want := range []supervisor.EventKind{supervisor.EventStarting, supervisor.EventCrashed, supervisor.EventBackoff, supervisor.EventFailing} {
		if !slices.Contains(kinds, want) {
			t.Errorf("events %v lack %q", kinds, want)
		}
	}

	// Starting it by hand clears the failing state (and fails again here,
	// since the server cannot start, with its own error).
	ctx, cancelStart := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancelStart()
	err = s.Start(ctx, "loop")
	var se *supervisor.StartError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("Start of a server that cannot start: %v", err)
	}

	// Stopped by hand, it is stopped, not failed: the pages and the tray
	// show a failure only when nobody stopped the server since, and a
	// state event tells them (the state was stopped already).
	for len(events) > 0 {
		<-events
	}
	if err := s.Stop(t.Context(), "loop"); err != nil {
		t.Fatal(err)
	}
	if st := status(t, s, "loop"); st.State != supervisor.StateStopped || st.LastError != "" {
		t.Errorf("after Stop: state %s, last error %q; want stopped with no error", st.State, st.LastError)
	}
	testutil.Eventually(t, 5*time.Second, "a state event after Stop", func() bool {
		for len(events) > 0 {
			if ev := <-events; ev.Kind == supervisor.EventState && ev.State == supervisor.StateStopped {
				return true
			}
		}
		return false
	})
}

func TestStopKillsGrandchildren(t *testing.T) {
	s := newSupervisor(t, fastOptions(t))
	apply(t, s, testSpec("parent", testmcp.Options{IgnoreSIGTERM: true, IgnoreStdinEOF: true}, supervisor.PoolSpec{}))
	var kids []int
	for _, ignoreTerm := range []bool{false, true} {
		res, _, err := call(t.Context(), s, "parent", "spawn", map[string]any{"ignoreTerm": ignoreTerm})
		if err != nil {
			t.Fatal(err)
		}
		kids = append(kids, structuredPID(t, res))
	}
	leader := status(t, s, "parent").Processes[0].PID
	for _, pid := range kids {
		if !alive(pid) {
			t.Fatalf("grandchild %d is not running", pid)
		}
	}
	start := time.Now()
	if err := s.Stop(t.Context(), "parent"); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("stop took %s, want it bounded by the grace periods", took)
	}
	for _, pid := range append(kids, leader) {
		if alive(pid) {
			t.Errorf("process %d survived Stop", pid)
		}
	}
	if st := status(t, s, "parent"); st.State != supervisor.StateStopped || len(st.Processes) != 0 {
		t.Errorf("after Stop: %+v", st)
	}
	if _, _, err := call(t.Context(), s, "parent", "echo", map[string]any{"text": "x"}); !errors.Is(err, supervisor.ErrStopped) {
		t.Errorf("call to a stopped server: %v, want ErrStopped", err)
	}
}

func TestStdoutJunkIsTolerated(t *testing.T) {
	s := newSupervisor(t, fastOptions(t))
	apply(t, s, testSpec("noisy", testmcp.Options{StartupJunk: true}, supervisor.PoolSpec{}))
	if _, _, err := call(t.Context(), s, "noisy", "junk", map[string]any{"lines": 5}); err != nil {
		t.Fatal(err)
	}
	res, _, err := call(t.Context(), s, "noisy", "echo", map[string]any{"text": "still here"})
	if err != nil || text(res) != "still here" {
		t.Fatalf("echo after junk: %v %v", res, err)
	}
	var junk int
	for _, l := range status(t, s, "noisy").Logs {
		if l.Stream == "stdout" && strings.Contains(l.Text, "not json") {
			junk++
		}
	}
	if junk < 5 {
		t.Errorf("logged %d junk stdout lines, want the startup junk and 5 more", junk)
	}
}

func TestMissingCommandSaysWhatWasSearched(t *testing.T) {
	opts := fastOptions(t)
	opts.Env = []string{"PATH=/nonexistent/bin:/also/missing"}
	s := newSupervisor(t, opts)
	apply(t, s, supervisor.Spec{Name: "ghost", Command: "no-such-mcp-server"})
	_, _, err := call(t.Context(), s, "ghost", "echo", nil)
	want := "command not found: no-such-mcp-server (searched PATH: /nonexistent/bin:/also/missing)"
	if err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, supervisor.ErrCommandNotFound) {
		t.Fatalf("err = %v, want it to contain %q", err, want)
	}
}

func TestUnresponsiveProcessIsRestarted(t *testing.T) {
	opts := fastOptions(t)
	opts.HealthInterval = 100 * time.Millisecond
	opts.HealthTimeout = time.Second
	s := newSupervisor(t, opts)
	apply(t, s, testSpec("frozen", testmcp.Options{}, supervisor.PoolSpec{Min: 1}))
	testutil.Eventually(t, 20*time.Second, "ready", func() bool { return status(t, s, "frozen").State == supervisor.StateRunning })
	old := status(t, s, "frozen").Processes[0].PID

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	_, _, err := call(ctx, s, "frozen", "freeze", nil) // stops itself: never answers
	if err == nil {
		t.Fatal("freeze answered")
	}
	testutil.Eventually(t, 20*time.Second, "a replacement process", func() bool {
		st := status(t, s, "frozen")
		return st.State == supervisor.StateRunning && len(st.Processes) == 1 && st.Processes[0].PID != old
	})
	if alive(old) {
		t.Errorf("frozen process %d still alive", old)
	}
	if st := status(t, s, "frozen"); !strings.Contains(st.LastError, "pings") {
		t.Errorf("last error %q does not say the process stopped answering pings", st.LastError)
	}
}

func TestApplyTouchesOnlyChangedServers(t *testing.T) {
	s := newSupervisor(t, fastOptions(t))
	a := testSpec("a", testmcp.Options{}, supervisor.PoolSpec{Min: 1})
	b := testSpec("b", testmcp.Options{}, supervisor.PoolSpec{Min: 1})
	gone := testSpec("gone", testmcp.Options{}, supervisor.PoolSpec{Min: 1})
	apply(t, s, a, b, gone)
	ready := func(name string) func() bool {
		return func() bool { st := status(t, s, name); return st.State == supervisor.StateRunning }
	}
	for _, n := range []string{"a", "b", "gone"} {
		testutil.Eventually(t, 20*time.Second, n+" ready", ready(n))
	}
	pidA, pidB, pidGone := pids(status(t, s, "a")), pids(status(t, s, "b")), pids(status(t, s, "gone"))

	b.Env["EXTRA"] = "changed"
	apply(t, s, a, b)
	testutil.Eventually(t, 20*time.Second, "b replaced", func() bool {
		st := status(t, s, "b")
		return st.State == supervisor.StateRunning && len(st.Processes) == 1 && !slices.Equal(pids(st), pidB)
	})
	if got := pids(status(t, s, "a")); !slices.Equal(got, pidA) {
		t.Errorf("unchanged server a: pids %v, want %v kept", got, pidA)
	}
	if _, err := s.Pool("gone"); !errors.Is(err, supervisor.ErrUnknownServer) {
		t.Errorf("removed server still there: %v", err)
	}
	if alive(pidGone[0]) || alive(pidB[0]) {
		t.Error("processes of removed or replaced servers survived")
	}
	res, _, err := call(t.Context(), s, "b", "env", map[string]any{"name": "EXTRA"})
	if err != nil || text(res) != "changed" {
		t.Errorf("new b does not run with the new env: %v %v", text(res), err)
	}
}

func TestEnvAndWorkingDirectory(t *testing.T) {
	s := newSupervisor(t, fastOptions(t))
	spec := testSpec("env", testmcp.Options{}, supervisor.PoolSpec{})
	spec.Env["GREETING"] = "hi there"
	spec.Dir = t.TempDir()
	apply(t, s, spec)
	res, _, err := call(t.Context(), s, "env", "env", map[string]any{"name": "GREETING"})
	if err != nil || text(res) != "hi there" {
		t.Errorf("env: %q %v", text(res), err)
	}
	res, _, err = call(t.Context(), s, "env", "cwd", nil)
	if err != nil || text(res) != spec.Dir {
		t.Errorf("cwd: %q %v, want %q", text(res), err, spec.Dir)
	}
}

func TestUsageIsSampled(t *testing.T) {
	opts := fastOptions(t)
	opts.SampleInterval = 50 * time.Millisecond
	s := newSupervisor(t, opts)
	events, cancel := s.Subscribe(100)
	defer cancel()
	apply(t, s, testSpec("measured", testmcp.Options{}, supervisor.PoolSpec{Min: 1}))
	if _, _, err := call(t.Context(), s, "measured", "spawn", nil); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 20*time.Second, "a usage sample with the grandchild", func() bool {
		st := status(t, s, "measured")
		return st.Usage != nil && st.Usage.Processes >= 2 && st.Usage.RSSBytes > 0 &&
			len(st.Processes) == 1 && st.Processes[0].Usage != nil
	})
	deadline := time.After(10 * time.Second)
	for {
		select {
		case ev := <-events:
			if ev.Kind == supervisor.EventUsage && ev.Server == "measured" && ev.Usage != nil {
				return
			}
		case <-deadline:
			t.Fatal("no usage event published")
		}
	}
}

func TestSlowStartHoldsCallsUntilReady(t *testing.T) {
	s := newSupervisor(t, fastOptions(t))
	apply(t, s, testSpec("slow", testmcp.Options{StartDelay: 300 * time.Millisecond}, supervisor.PoolSpec{}))
	res, _, err := call(t.Context(), s, "slow", "echo", map[string]any{"text": "worth the wait"})
	if err != nil || text(res) != "worth the wait" {
		t.Fatalf("call to a slow starter: %v %v", res, err)
	}
}

func TestStartTimeoutIsAClearError(t *testing.T) {
	s := newSupervisor(t, fastOptions(t))
	spec := testSpec("sluggish", testmcp.Options{StartDelay: time.Minute}, supervisor.PoolSpec{})
	spec.StartTimeout = 300 * time.Millisecond
	apply(t, s, spec)
	_, _, err := call(t.Context(), s, "sluggish", "echo", nil)
	if err == nil || !strings.Contains(err.Error(), "no answer to initialize within 300ms") {
		t.Fatalf("err = %v", err)
	}
}

func TestInvalidSpecsChangeNothing(t *testing.T) {
	s := newSupervisor(t, fastOptions(t))
	apply(t, s, testSpec("keep", testmcp.Options{}, supervisor.PoolSpec{}))
	for _, bad := range []supervisor.Spec{
		{Name: "", Command: "x"},
		{Name: "nocmd"},
		{Name: "mode", Command: "x", Pool: supervisor.PoolSpec{Mode: "weird"}},
		{Name: "minmax", Command: "x", Pool: supervisor.PoolSpec{Min: 3, Max: 2}},
	} {
		if err := s.Apply(t.Context(), []supervisor.Spec{bad}); err == nil {
			t.Errorf("Apply(%+v) accepted", bad)
		}
	}
	if _, err := s.Pool("keep"); err != nil {
		t.Errorf("a refused Apply removed a server: %v", err)
	}
}

// TestRestartEventsOnce: a Restart of a real process tells its story once:
// the old process stopping and stopped, the new one starting and ready, one
// event each (the lifecycle history is made of them).
func TestRestartEventsOnce(t *testing.T) {
	s := newSupervisor(t, fastOptions(t))
	apply(t, s, testSpec("again", testmcp.Options{}, supervisor.PoolSpec{Min: 1}))
	testutil.Eventually(t, 20*time.Second, "a ready process", func() bool {
		st := status(t, s, "again")
		return st.State == supervisor.StateRunning && len(st.Processes) == 1
	})
	old := status(t, s, "again").Processes[0].PID
	events, cancel := s.Subscribe(1000)
	defer cancel()
	ctx, cancelRestart := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancelRestart()
	if err := s.Restart(ctx, "again"); err != nil {
		t.Fatal(err)
	}
	// Restart returns once the new process is ready; the old one may still
	// be exiting: wait for its stopped event, with a deadline.
	count := map[supervisor.EventKind]map[int]int{}
	var fresh int
	note := func(ev *supervisor.Event) {
		if ev.Kind == supervisor.EventState || ev.Kind == supervisor.EventLog {
			return
		}
		if count[ev.Kind] == nil {
			count[ev.Kind] = map[int]int{}
		}
		count[ev.Kind][ev.PID]++
		if ev.Kind == supervisor.EventStarting {
			fresh = ev.PID
		}
	}
	deadline := time.After(20 * time.Second)
	for count[supervisor.EventStopped][old] == 0 || count[supervisor.EventReady][fresh] == 0 {
		select {
		case ev := <-events:
			note(ev)
		case <-deadline:
			t.Fatalf("the restart's events did not all come: %v", count)
		}
	}
	// The pool publishes from its one goroutine: once a status read has
	// gone through it, every event of the restart is in the channel.
	status(t, s, "again")
	for len(events) > 0 {
		note(<-events)
	}
	want := map[supervisor.EventKind]map[int]int{
		supervisor.EventStopping: {old: 1}, supervisor.EventStopped: {old: 1},
		supervisor.EventStarting: {fresh: 1}, supervisor.EventReady: {fresh: 1},
	}
	if fresh == 0 || fresh == old {
		t.Fatalf("new process %d, old %d", fresh, old)
	}
	if diff := cmp.Diff(want, count); diff != "" {
		t.Errorf("events of one Restart, by kind and pid (-want +got):\n%s", diff)
	}
}

// TestStopDuringStartIsPrompt: a server closed while its process is being
// started (spawned, assigned to its group, or in initialize) is stopped
// within the stop's grace periods, wherever in the start the stop lands.
func TestStopDuringStartIsPrompt(t *testing.T) {
	opts := fastOptions(t)
	// Two graces (stdin closed, then terminate) and the kill, with room
	// for a loaded machine; a stop that waits on a process nothing kills
	// takes the whole Close timeout.
	limit := 2*opts.StopGrace + 5*time.Second
	for i := range 24 {
		delay := time.Duration(i) * 2 * time.Millisecond
		s, err := supervisor.New(t.Context(), opts)
		if err != nil {
			t.Fatal(err)
		}
		apply(t, s, testSpec("echo", testmcp.Options{}, supervisor.PoolSpec{Min: 1, Max: 1}))
		time.Sleep(delay) // where in the start the stop lands: the point of the test
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		start := time.Now()
		err = s.Close(ctx)
		took := time.Since(start)
		cancel()
		if err != nil || took > limit {
			t.Errorf("Close %v after Apply: took %v (%v), want under %v", delay, took, err, limit)
		}
	}
}
