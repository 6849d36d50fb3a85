//go:build unix

package testmcp_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/supervisor/testmcp"
	"github.com/switchboardhq/switchboard/supervisor/testutil"
)

// processAlive reports whether pid exists (a zombie counts as alive).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

func checkSameGroup(t *testing.T, parent, child int) {
	t.Helper()
	pg, err1 := syscall.Getpgid(parent)
	cg, err2 := syscall.Getpgid(child)
	if err1 != nil || err2 != nil {
		t.Fatalf("getpgid: %v, %v", err1, err2)
	}
	if pg != cg {
		t.Errorf("grandchild process group %d, server's %d", cg, pg)
	}
}

// stopped reports whether pid (our child) is stopped, using wait4(WUNTRACED|WNOHANG),
// which does not reap a live process.
func stopped(t *testing.T, pid int) bool {
	t.Helper()
	var ws syscall.WaitStatus
	got, err := syscall.Wait4(pid, &ws, syscall.WUNTRACED|syscall.WNOHANG, nil)
	if err != nil {
		t.Fatalf("wait4: %v", err)
	}
	if got == pid && ws.Exited() {
		t.Fatalf("process %d exited", pid)
	}
	return got == pid && ws.Stopped()
}

func TestFreeze(t *testing.T) {
	cmd, _ := serverCmd(testmcp.Options{})
	cs := connect(t, cmd, nil)
	pid := cmd.Process.Pid
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGCONT) })

	type result struct {
		res *mcp.CallToolResult
		err error
	}
	freezeDone := make(chan result, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "freeze"})
		freezeDone <- result{res, err}
	}()
	testutil.Eventually(t, timeout, "the server to stop", func() bool { return stopped(t, pid) })

	// A stopped server answers nothing, pings included.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := cs.Ping(ctx, nil); err == nil {
		t.Error("a frozen server answered a ping")
	}
	// Nor did it answer the freeze on its way to the stop: the ping's wait
	// gave such an answer time to arrive.
	select {
	case r := <-freezeDone:
		t.Fatalf("freeze answered before SIGCONT: %v %+v", r.err, r.res)
	default:
	}

	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-freezeDone:
		if r.err != nil || r.res.IsError || resultText(r.res) != "resumed" {
			t.Errorf("freeze after SIGCONT: %v %+v", r.err, r.res)
		}
	case <-time.After(timeout):
		t.Fatal("freeze did not return after SIGCONT")
	}
}

func TestIgnoreSIGTERM(t *testing.T) {
	cmd, _ := serverCmd(testmcp.Options{IgnoreSIGTERM: true})
	cs := connect(t, cmd, nil)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// An ignored signal is discarded when sent; the server keeps answering.
	if got := resultText(callTool(t, cs, "echo", map[string]any{"text": "alive"})); got != "alive" {
		t.Errorf("echo = %q", got)
	}
}

func TestIgnoreStdinEOF(t *testing.T) {
	r := startRaw(t, testmcp.Options{IgnoreStdinEOF: true})
	r.initialize()
	r.stdin.Close()
	testutil.Eventually(t, timeout, "the server to notice stdin EOF", func() bool {
		return strings.Contains(r.stderr.String(), "ignoring stdin EOF")
	})
	select {
	case <-r.done:
		t.Fatal("server exited after stdin EOF")
	default:
	}
	if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := r.waitExit(); code != 0 {
		t.Errorf("exit code after SIGTERM = %d, want 0", code)
	}
}

func TestSpawnSignals(t *testing.T) {
	cmd, _ := serverCmd(testmcp.Options{})
	cs := connect(t, cmd, nil)
	spawn := func(ignoreTerm bool) int {
		var out struct{ Pid int }
		structured(t, callTool(t, cs, "spawn", map[string]any{"ignoreTerm": ignoreTerm}), &out)
		killOnCleanup(t, out.Pid)
		return out.Pid
	}

	plain := spawn(false)
	if err := syscall.Kill(plain, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, timeout, "the grandchild to die of SIGTERM", func() bool { return !processAlive(plain) })

	stubborn := spawn(true)
	if runtime.GOOS == "linux" {
		if !sigIgnored(t, stubborn, syscall.SIGTERM) {
			t.Error("grandchild does not ignore SIGTERM")
		}
	}
	if err := syscall.Kill(stubborn, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if !processAlive(stubborn) {
		t.Error("grandchild died of an ignored SIGTERM")
	}
	if err := syscall.Kill(stubborn, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, timeout, "the grandchild to die of SIGKILL", func() bool { return !processAlive(stubborn) })
}

// sigIgnored reads the ignored-signal mask from /proc (Linux only).
func sigIgnored(t *testing.T, pid int, sig syscall.Signal) bool {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "SigIgn:"); ok {
			mask, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			if err != nil {
				t.Fatal(err)
			}
			return mask&(1<<(uint(sig)-1)) != 0
		}
	}
	t.Fatal("no SigIgn in /proc status")
	return false
}
