package supervisor_test

import (
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/supervisor"
	"github.com/switchboardhq/switchboard/supervisor/testmcp"
	"github.com/switchboardhq/switchboard/supervisor/testutil"
)

// Calls one after another on a ready shared process take quick leases
// (no message to the pool's goroutine); a second call while one is held
// goes through the pool, which sees the process loaded and starts another,
// as without quick leases; the status counts quick leases in flight.
func TestQuickLeasesKeepThePoolsRules(t *testing.T) {
	s := newSupervisor(t, fastOptions(t))
	apply(t, s, testSpec("echo", testmcp.Options{}, supervisor.PoolSpec{Mode: supervisor.ModeShared, Min: 1, Max: 2}))
	if _, _, err := call(t.Context(), s, "echo", "echo", map[string]any{"text": "first"}); err != nil {
		t.Fatal(err)
	}
	status(t, s, "echo") // the pool has published the process it started
	const calls = 50
	quick := 0
	for i := range calls {
		l, err := s.Acquire(t.Context(), "echo")
		if err != nil {
			t.Fatalf("lease %d: %v", i, err)
		}
		if supervisor.IsQuick(l) {
			quick++
		}
		_, err = callOn(t.Context(), l, "echo", map[string]any{"text": "again"})
		l.Release()
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if quick != calls {
		t.Errorf("%d of %d calls one after another took a quick lease", quick, calls)
	}
	if st := status(t, s, "echo"); len(st.Processes) != 1 {
		t.Fatalf("calls one at a time started %d processes, want 1", len(st.Processes))
	}

	held, err := s.Acquire(t.Context(), "echo")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	if !supervisor.IsQuick(held) {
		t.Error("the lease on the free ready process was not quick")
	}
	if st := status(t, s, "echo"); len(st.Processes) != 1 || st.Processes[0].InFlight != 1 {
		t.Errorf("status with one quick lease held: %+v, want one process with 1 call in flight", st.Processes)
	}
	second, err := s.Acquire(t.Context(), "echo")
	if err != nil {
		t.Fatal(err)
	}
	if supervisor.IsQuick(second) {
		t.Error("a second lease on a busy process of a pool that can grow was quick")
	}
	testutil.Eventually(t, 20*time.Second, "a second process for the overlapping calls", func() bool {
		return len(status(t, s, "echo").Processes) == 2
	})
	if _, err := callOn(t.Context(), second, "echo", map[string]any{"text": "x"}); err != nil {
		t.Fatal(err)
	}
	second.Release()
}

// A pool at its max has nothing to start: concurrent calls all take quick
// leases, on the least loaded process.
func TestQuickLeasesAtMax(t *testing.T) {
	s := newSupervisor(t, fastOptions(t))
	apply(t, s, testSpec("echo", testmcp.Options{}, supervisor.PoolSpec{Mode: supervisor.ModeShared, Min: 1, Max: 1}))
	if _, _, err := call(t.Context(), s, "echo", "echo", map[string]any{"text": "first"}); err != nil {
		t.Fatal(err)
	}
	status(t, s, "echo") // the pool has published the process it started
	var leases []*supervisor.Lease
	quick := 0
	for range 3 {
		l, err := s.Acquire(t.Context(), "echo")
		if err != nil {
			t.Fatal(err)
		}
		if supervisor.IsQuick(l) {
			quick++
		}
		leases = append(leases, l)
	}
	if quick != 3 {
		t.Errorf("%d of 3 leases held at once on a full pool were quick", quick)
	}
	if st := status(t, s, "echo"); len(st.Processes) != 1 || st.Processes[0].InFlight != 3 {
		t.Errorf("status: %+v, want one process with 3 calls in flight", st.Processes)
	}
	for _, l := range leases {
		if _, err := callOn(t.Context(), l, "echo", map[string]any{"text": "x"}); err != nil {
			t.Error(err)
		}
		l.Release()
	}
}

// A process that a new spec retires finishes the quick lease it holds,
// and is stopped once it is given back; one idle past its timeout stops,
// but not while a quick lease holds it.
func TestQuickLeaseHoldsProcessUntilReleased(t *testing.T) {
	const idle = 300 * time.Millisecond
	s := newSupervisor(t, fastOptions(t))
	spec := testSpec("echo", testmcp.Options{}, supervisor.PoolSpec{Mode: supervisor.ModeShared, Min: 0, Max: 2, IdleTimeout: idle})
	apply(t, s, spec)
	_, oldPID, err := call(t.Context(), s, "echo", "echo", map[string]any{"text": "first"})
	if err != nil {
		t.Fatal(err)
	}
	status(t, s, "echo") // the pool has published the process it started
	held, err := s.Acquire(t.Context(), "echo")
	if err != nil {
		t.Fatal(err)
	}
	if !supervisor.IsQuick(held) || held.PID() != oldPID {
		t.Fatalf("the lease on the ready process (pid %d) was not quick (pid %d)", oldPID, held.PID())
	}

	// Held, and called on, for several idle timeouts: the process keeps
	// running.
	deadline := time.Now().Add(3 * idle)
	for time.Now().Before(deadline) {
		if _, err := callOn(t.Context(), held, "echo", map[string]any{"text": "held"}); err != nil {
			t.Fatalf("a call on a held quick lease: %v", err)
		}
		if !alive(oldPID) {
			t.Fatal("the idle timeout stopped a process a quick lease holds")
		}
	}

	// A new spec: the old process retires, but not under the held lease.
	spec.Env["SWITCHBOARD_TEST_GEN"] = "2"
	apply(t, s, spec)
	if _, newPID, err := call(t.Context(), s, "echo", "echo", map[string]any{"text": "new"}); err != nil || newPID == oldPID {
		t.Fatalf("a call after the new spec: pid %d (old %d), %v", newPID, oldPID, err)
	}
	if _, err := callOn(t.Context(), held, "echo", map[string]any{"text": "still"}); err != nil || !alive(oldPID) {
		t.Fatalf("the retired process under a held lease: alive %v, call %v", alive(oldPID), err)
	}
	held.Release()
	testutil.Eventually(t, 10*time.Second, "the retired process to stop once released", func() bool { return !alive(oldPID) })
	testutil.Eventually(t, 10*time.Second, "the idle process to stop", func() bool {
		return len(status(t, s, "echo").Processes) == 0
	})
}
