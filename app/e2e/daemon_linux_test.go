//go:build linux

package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app/daemon"
	"github.com/switchboardhq/switchboard/app/internal/testutil"
)

// TestKilledDaemonLeavesNoProcess kills the daemon with SIGKILL and checks
// that every process it started, grandchildren included, is gone 2 s later;
// then it kills the reaper too, and checks that the next daemon sweeps the
// survivors from the registry.
func TestKilledDaemonLeavesNoProcess(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	writeConfig(t, home, "alpha", "beta")

	d := startDaemon(t, home)
	d.waitRunning(t, "alpha", "beta")
	tree := descendants(d.cmd.Process.Pid)
	// daemon → reaper, and per server sh → {sleep, test server}: at least 7.
	if len(tree) < 7 {
		t.Fatalf("daemon has %d descendants %v, want the reaper and 3 per server", len(tree), tree)
	}
	d.cmd.Process.Signal(syscall.SIGKILL)
	<-d.done
	killedAt := time.Now()
	testutil.Eventually(t, 2*time.Second, "every descendant to exit", func() bool { return len(living(tree)) == 0 })
	t.Logf("all %d descendants gone %s after SIGKILL", len(tree), time.Since(killedAt).Round(time.Millisecond))

	// Now lose the reaper too: the servers' direct children die with the
	// daemon (parent-death signal), their grandchildren live on...
	d = startDaemon(t, home)
	d.waitRunning(t, "alpha", "beta")
	tree = descendants(d.cmd.Process.Pid)
	reaper := reaperOf(t, d.cmd.Process.Pid)
	syscall.Kill(reaper, syscall.SIGKILL)
	testutil.Eventually(t, 5*time.Second, "the reaper to die", func() bool { return !alive(reaper) })
	d.cmd.Process.Signal(syscall.SIGKILL)
	<-d.done
	testutil.Eventually(t, 5*time.Second, "the daemon's direct children to die", func() bool {
		return len(living(tree)) < len(tree)-3
	})
	survivors := living(tree)
	if len(survivors) == 0 {
		t.Fatal("nothing survived the loss of daemon and reaper; the sweep has nothing to show")
	}

	// ...until the next daemon sweeps them.
	d = startDaemon(t, home)
	testutil.Eventually(t, 10*time.Second, "the sweep to stop the survivors", func() bool { return len(living(survivors)) == 0 })
	if !strings.Contains(d.out.String(), "left behind by an earlier daemon") {
		t.Errorf("the daemon did not report the sweep:\n%s", d.out.String())
	}
	d.waitRunning(t, "alpha", "beta")

	// A clean stop leaves nothing either.
	tree = descendants(d.cmd.Process.Pid)
	d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.done:
	case <-time.After(30 * time.Second):
		t.Fatal("daemon did not exit on SIGTERM")
	}
	if code := d.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("daemon exited %d on SIGTERM", code)
	}
	if left := living(tree); len(left) > 0 {
		t.Errorf("processes left after a clean stop: %v", left)
	}
	if _, err := os.Stat(filepath.Join(home, daemon.InfoFile)); !os.IsNotExist(err) {
		t.Errorf("daemon.json left after a clean stop: %v", err)
	}
}

// descendants lists every process below pid, read from /proc.
func descendants(pid int) []int {
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, ok := parentOf(p); ok {
			children[ppid] = append(children[ppid], p)
		}
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = append(queue[1:], children[p]...)
		if p != pid {
			out = append(out, p)
		}
	}
	return out
}

func parentOf(pid int) (int, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	f := strings.Fields(string(b[i+2:]))
	if len(f) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(f[1])
	return ppid, err == nil
}

// reaperOf finds the daemon's direct child that runs the switchboard binary.
func reaperOf(t *testing.T, daemonPID int) int {
	t.Helper()
	for _, p := range descendants(daemonPID) {
		ppid, _ := parentOf(p)
		exe, _ := os.Readlink("/proc/" + strconv.Itoa(p) + "/exe")
		if ppid == daemonPID && exe == binary {
			return p
		}
	}
	t.Fatal("no reaper found among the daemon's children")
	return 0
}

// alive reports whether pid is a live process; zombies count as dead.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i > 0 && i+2 < len(b) && b[i+2] != 'Z' && b[i+2] != 'X'
}

func living(pids []int) []int {
	var out []int
	for _, p := range pids {
		if alive(p) {
			out = append(out, p)
		}
	}
	return out
}
