package supervisor

import (
	"context"
	"os"
	"os/exec"
	"runtime/debug"
	"testing"
)

// TestSamplingHoldsNoDescriptors spawns a few hundred processes and runs
// many sampling rounds with the garbage collector off (a handle that only
// a finalizer closes would stay open): the test process's open descriptors
// must not grow. Enumerating processes through gopsutil opened a pidfd per
// process per round.
func TestSamplingHoldsNoDescriptors(t *testing.T) {
	const spawn, rounds = 300, 25
	var roots []int
	for range spawn {
		cmd := exec.Command("sleep", "600")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			cmd.Process.Kill()
			cmd.Wait()
		})
		roots = append(roots, cmd.Process.Pid)
	}
	sm := newSampler()
	ctx := context.Background()
	byServer := map[string][]int{"a": roots[:10], "b": roots[10:20]}
	sm.sample(ctx, byServer) // warm up: gopsutil caches what it reads once

	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	before := openDescriptors(t)
	var last map[string]*Usage
	for range rounds {
		last = sm.sample(ctx, byServer)
	}
	after := openDescriptors(t)
	if after > before+2 {
		t.Errorf("open descriptors went from %d to %d over %d sampling rounds with %d more processes",
			before, after, rounds, spawn)
	}
	t.Logf("open descriptors: %d before, %d after %d rounds", before, after, rounds)
	// The figures still come: ten sleeps per server, each with memory.
	for _, server := range []string{"a", "b"} {
		if u := last[server]; u == nil || u.Processes != 10 || u.RSSBytes == 0 {
			t.Errorf("usage of %s = %+v, want 10 processes with memory", server, u)
		}
	}
}

// TestChildrenByParent checks the /proc map against processes whose parent
// is known: this test's children.
func TestChildrenByParent(t *testing.T) {
	cmd := exec.Command("sleep", "600")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	children := childrenByParent(context.Background())
	found := false
	for _, pid := range children[int32(os.Getpid())] {
		found = found || int(pid) == cmd.Process.Pid
	}
	if !found {
		t.Errorf("pid %d is not listed as a child of %d: %v", cmd.Process.Pid, os.Getpid(), children[int32(os.Getpid())])
	}
	if len(children[0]) == 0 || len(children[1]) == 0 && len(children) < 2 {
		t.Errorf("implausible process map: %d parents", len(children))
	}
}

func openDescriptors(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(fds)
}
