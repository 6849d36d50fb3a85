package supervisor

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/supervisor/testutil"
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

// TestAllChildren checks the /proc map against processes whose parent
// is known: this test's children.
func TestAllChildren(t *testing.T) {
	cmd := exec.Command("sleep", "600")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	children := allChildren(context.Background())
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

// TestChildrenByParent: the trees read from the threads' children files
// are the trees of the full scan, grandchildren and children started by
// another thread than the main one included, and hold nothing else.
func TestChildrenByParent(t *testing.T) {
	if !listsThreadChildren() {
		t.Skip("this kernel lists no thread's children: childrenByParent scans, as TestAllChildren checks")
	}
	// A shell with two children, a sleep and a shell, whose sleep is the
	// grandchild; the shell prints its children's pids, the inner one the
	// grandchild's into a file.
	grandchildFile := filepath.Join(t.TempDir(), "grandchild")
	sh := exec.Command("sh", "-c", `sleep 600 & a=$!; sh -c 'sleep 600 & echo $!; wait' > "$0" & b=$!; echo $a $b; wait`, grandchildFile)
	sh.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := sh.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { syscall.Kill(-sh.Process.Pid, syscall.SIGKILL); sh.Wait() }()
	var a, b, c int32
	if _, err := fmt.Fscan(out, &a, &b); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, "the grandchild's pid in "+grandchildFile, func() bool {
		data, err := os.ReadFile(grandchildFile)
		if err != nil {
			return false
		}
		_, err = fmt.Sscan(string(data), &c)
		return err == nil
	})
	// A child started by a thread of this process other than the main one,
	// which lives until the test ends (at its end the kernel would hand
	// the child to another thread).
	other, checked := make(chan *exec.Cmd), make(chan struct{})
	defer close(checked)
	go func() {
		runtime.LockOSThread() // a thread of its own, which dies with the goroutine
		cmd := exec.Command("sleep", "600")
		if cmd.Start() != nil {
			cmd = nil
		}
		other <- cmd
		<-checked
	}()
	byThread := <-other
	if byThread == nil {
		t.Fatal("starting a sleep from another thread failed")
	}
	defer func() { byThread.Process.Kill(); byThread.Wait() }()

	tree := func(children map[int32][]int32, root int32) []int32 {
		var pids []int32
		for queue := []int32{root}; len(queue) > 0; queue = queue[1:] {
			pids = append(pids, queue[0])
			queue = append(queue, children[queue[0]]...)
		}
		slices.Sort(pids)
		return pids
	}
	root := int32(sh.Process.Pid)
	want := []int32{root, a, b, c}
	slices.Sort(want)
	ctx := context.Background()
	if got := tree(childrenByParent(ctx, []int32{root}), root); !slices.Equal(got, want) {
		t.Errorf("the shell's tree from the children files: %v, want %v", got, want)
	}
	if got := tree(allChildren(ctx), root); !slices.Equal(got, want) {
		t.Errorf("the shell's tree from the scan: %v, want %v", got, want)
	}
	me := int32(os.Getpid())
	if !slices.Contains(childrenByParent(ctx, []int32{me})[me], int32(byThread.Process.Pid)) {
		t.Errorf("a child started by another thread (pid %d) is not among this process's children", byThread.Process.Pid)
	}
	if got := childrenByParent(ctx, []int32{a}); len(got) != 1 || len(got[a]) != 0 {
		t.Errorf("a sleep's tree: %v, want the sleep alone", got)
	}
}

// BenchmarkChildrenByParent: finding a tree of a few processes from the
// threads' children files, against the scan of every process.
func BenchmarkChildrenByParent(b *testing.B) {
	roots := []int32{int32(os.Getpid())}
	for range 4 {
		cmd := exec.Command("sleep", "600")
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	}
	entries, _ := os.ReadDir("/proc")
	b.Logf("%d entries in /proc", len(entries))
	ctx := context.Background()
	b.Run("children-files", func(b *testing.B) {
		for b.Loop() {
			childrenByParent(ctx, roots)
		}
	})
	b.Run("scan", func(b *testing.B) {
		for b.Loop() {
			allChildren(ctx)
		}
	})
}

func openDescriptors(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(fds)
}
