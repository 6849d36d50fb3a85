package supervisor_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/supervisor"
	"github.com/switchboardhq/switchboard/supervisor/testmcp"
	"github.com/switchboardhq/switchboard/supervisor/testutil"
)

// stdoutLines returns the lines logged as the server's stdout output.
func stdoutLines(st supervisor.PoolStatus) []string {
	var out []string
	for _, l := range st.Logs {
		if l.Stream == "stdout" {
			out = append(out, l.Text)
		}
	}
	return out
}

// TestStdoutShapesDoNotEndTheSession prints every shape real servers print
// on stdout mid-session: each is logged as output, and the same process
// keeps answering, promptly, with no restart.
func TestStdoutShapesDoNotEndTheSession(t *testing.T) {
	opts := fastOptions(t)
	opts.MaxMessageSize = 1 << 20
	s := newSupervisor(t, opts)
	apply(t, s, testSpec("chatty", testmcp.Options{}, supervisor.PoolSpec{}))
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	_, pid, err := call(ctx, s, "chatty", "echo", map[string]any{"text": "first"})
	if err != nil {
		t.Fatal(err)
	}

	overLong := `{"jsonrpc":"2.0","id":99,"result":{"x":"` + strings.Repeat("z", 2<<20) + `"}}`
	shapes := []struct {
		name, text string
		logged     []string // the lines expected in the log
	}{
		{"JSON that is not JSON-RPC", `{"foo":1}` + "\n", []string{`{"foo":1}`}},
		{"an array of numbers", "[1,2,3]\n", []string{"[1,2,3]"}},
		{"node console.log of an object", "{ a: 1 }\n", []string{"{ a: 1 }"}},
		{"python print of a dict", "{'a': 1}\n", []string{"{'a': 1}"}},
		{"pretty-printed JSON", "{\n  \"jsonrpc\": \"2.0\",\n  \"id\": 5\n}\n", []string{"{", `"jsonrpc": "2.0",`, `"id": 5`, "}"}},
		{"a log line in brackets", "[INFO] server started\n", []string{"[INFO] server started"}},
		{"a truncated message", `{"jsonrpc":"2.0","id":` + "\n", []string{`{"jsonrpc":"2.0","id":`}},
		{"a response to no request", `{"jsonrpc":"2.0","id":12345,"result":{}}` + "\n", nil},
		{"an over-long line", overLong + "\n", []string{overLong[:4096] + "… (line cut: longer than the 1048576-byte message limit)"}},
	}
	for _, sh := range shapes {
		t.Run(sh.name, func(t *testing.T) {
			before := status(t, s, "chatty").NonProtocolLines
			if _, _, err := call(ctx, s, "chatty", "print", map[string]any{"text": sh.text}); err != nil {
				t.Fatalf("print: %v", err)
			}
			start := time.Now()
			res, got, err := call(ctx, s, "chatty", "echo", map[string]any{"text": "still here"})
			if err != nil || text(res) != "still here" {
				t.Fatalf("echo after the output: %v, %v", res, err)
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("the next call took %s", took)
			}
			if got != pid {
				t.Errorf("the call went to pid %d, want the same process %d", got, pid)
			}
			st := status(t, s, "chatty")
			if st.Restarts != 0 || len(st.Processes) != 1 {
				t.Fatalf("the process was restarted: restarts %d, processes %v", st.Restarts, pids(st))
			}
			logged := stdoutLines(st)
			for _, want := range sh.logged {
				found := false
				for _, l := range logged {
					found = found || l == strings.TrimSpace(want)
				}
				if !found {
					t.Errorf("line %.80q not logged; stdout log ends %q", want, logged[max(0, len(logged)-5):])
				}
			}
			if n := st.NonProtocolLines - before; n != int64(len(sh.logged)) {
				t.Errorf("counted %d non-protocol lines, want %d", n, len(sh.logged))
			}
		})
	}
}

// TestBannerBeforeInitialize starts a server that prints log lines and
// console output on stdout before it answers initialize.
func TestBannerBeforeInitialize(t *testing.T) {
	s := newSupervisor(t, fastOptions(t))
	banner := "[INFO] Starting server…\n{ version: '1.2.3' }\n{\"level\":\"info\",\"msg\":\"listening on stdio\"}\n"
	apply(t, s, testSpec("banner", testmcp.Options{Banner: banner}, supervisor.PoolSpec{}))
	res, _, err := call(t.Context(), s, "banner", "echo", map[string]any{"text": "up"})
	if err != nil || text(res) != "up" {
		t.Fatalf("echo: %v %v", res, err)
	}
	st := status(t, s, "banner")
	got := stdoutLines(st)
	want := []string{"[INFO] Starting server…", "{ version: '1.2.3' }", `{"level":"info","msg":"listening on stdio"}`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("stdout log = %q, want %q", got, want)
	}
	if st.Restarts != 0 || st.NonProtocolLines != 3 {
		t.Errorf("restarts %d, non-protocol lines %d; want 0 and 3", st.Restarts, st.NonProtocolLines)
	}
}

// TestFirstStartFailureFollowsCrashRules asks once for a server that
// cannot start: the pool retries with growing backoff, becomes failing
// after CrashLimit failures, and tries again after the cool-down.
func TestFirstStartFailureFollowsCrashRules(t *testing.T) {
	opts := fastOptions(t)
	opts.CrashLimit = 5
	opts.BackoffInitial = 50 * time.Millisecond
	opts.BackoffMax = time.Second
	opts.FailingCoolDown = 2 * time.Second
	s := newSupervisor(t, opts)
	events, cancel := s.Subscribe(1000)
	defer cancel()
	apply(t, s, testSpec("broken", testmcp.Options{FailStart: true}, supervisor.PoolSpec{}))

	_, _, err := call(t.Context(), s, "broken", "echo", map[string]any{"text": "x"})
	var se *supervisor.StartError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "exit status 3") ||
		!strings.Contains(err.Error(), "failing to start on purpose") {
		t.Fatalf("first call: %v, want the start error with its stderr", err)
	}

	var delays []time.Duration
	var crashes, startsAfterFailing int
	failing := false
	deadline := time.After(30 * time.Second)
	for startsAfterFailing == 0 {
		select {
		case ev := <-events:
			switch ev.Kind {
			case supervisor.EventCrashed:
				crashes++
			case supervisor.EventBackoff:
				delays = append(delays, ev.Delay)
			case supervisor.EventFailing:
				failing = true
				if crashes != 5 {
					t.Errorf("failing after %d failed starts, want 5", crashes)
				}
			case supervisor.EventStarting:
				if failing {
					startsAfterFailing++
				}
			}
		case <-deadline:
			t.Fatalf("no start after the cool-down: %d crashes, failing %v, delays %v", crashes, failing, delays)
		}
	}
	want := []time.Duration{50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond}
	if len(delays) < len(want) {
		t.Fatalf("backoff delays %v, want %v", delays, want)
	}
	for i, d := range want {
		if delays[i] != d {
			t.Errorf("backoff delays %v, want %v first", delays, want)
			break
		}
	}
	// A Stop ends the retries.
	if err := s.Stop(t.Context(), "broken"); err != nil {
		t.Fatal(err)
	}
	if st := status(t, s, "broken"); st.State != supervisor.StateStopped {
		t.Errorf("after Stop: %s", st.State)
	}
}

// TestInitializeErrorIsKept: a server that refuses initialize with an
// error of its own gets that text in the start error, not only its status.
func TestInitializeErrorIsKept(t *testing.T) {
	s := newSupervisor(t, fastOptions(t))
	apply(t, s, testSpec("refuses", testmcp.Options{InitError: "API_KEY is not set"}, supervisor.PoolSpec{}))
	_, _, err := call(t.Context(), s, "refuses", "echo", nil)
	if err == nil || !strings.Contains(err.Error(), "API_KEY is not set") || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("err = %v, want the server's own message and its exit status", err)
	}
}

// TestStartOnRunningServerReturnsAtOnce: Start on a pool with a ready
// process answers at once.
func TestStartOnRunningServerReturnsAtOnce(t *testing.T) {
	s := newSupervisor(t, fastOptions(t))
	apply(t, s, testSpec("up", testmcp.Options{}, supervisor.PoolSpec{Min: 1}))
	testutil.Eventually(t, 20*time.Second, "a running process", func() bool { return status(t, s, "up").State == supervisor.StateRunning })
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	start := time.Now()
	if err := s.Start(ctx, "up"); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("Start on a running server took %s", took)
	}
}

// TestColdStartSpawnsOneProcess: with max 3, one call at a time runs on
// one process; overlapping calls bring more.
func TestColdStartSpawnsOneProcess(t *testing.T) {
	s := newSupervisor(t, fastOptions(t))
	events, cancel := s.Subscribe(1000)
	defer cancel()
	apply(t, s, testSpec("cold", testmcp.Options{}, supervisor.PoolSpec{Max: 3}))
	for range 3 {
		if _, _, err := call(t.Context(), s, "cold", "sleep", map[string]any{"ms": 200}); err != nil {
			t.Fatal(err)
		}
	}
	var spawned int
	for len(events) > 0 {
		if (<-events).Kind == supervisor.EventStarting {
			spawned++
		}
	}
	if st := status(t, s, "cold"); spawned != 1 || len(st.Processes) != 1 {
		t.Fatalf("sequential calls spawned %d processes (%d live), want 1", spawned, len(st.Processes))
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if _, _, err := call(t.Context(), s, "cold", "sleep", map[string]any{"ms": 1500}); err != nil {
				t.Error(err)
			}
		})
	}
	testutil.Eventually(t, 20*time.Second, "more processes under load", func() bool { return len(status(t, s, "cold").Processes) > 1 })
	wg.Wait()
}

// TestCallDuringCrashRestartWaits: a call made right after a process
// crashed waits for the restart and succeeds.
func TestCallDuringCrashRestartWaits(t *testing.T) {
	for _, min := range []int{0, 1} {
		t.Run(fmt.Sprintf("min %d", min), func(t *testing.T) { testCallDuringCrashRestart(t, min) })
	}
}

func testCallDuringCrashRestart(t *testing.T, min int) {
	opts := fastOptions(t)
	opts.BackoffInitial = 300 * time.Millisecond
	s := newSupervisor(t, opts)
	apply(t, s, testSpec("phoenix", testmcp.Options{}, supervisor.PoolSpec{Min: min}))
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	_, oldPID, err := call(ctx, s, "phoenix", "pid", nil)
	if err != nil {
		t.Fatal(err)
	}
	for round := range 3 {
		if _, _, err := call(ctx, s, "phoenix", "crash", map[string]any{"stderr": "going down"}); !isExitError(err) {
			t.Fatalf("round %d: crash call: %v", round, err)
		}
		res, pid, err := call(ctx, s, "phoenix", "echo", map[string]any{"text": "back"})
		if err != nil || text(res) != "back" {
			t.Fatalf("round %d: a call during the restart failed: %v", round, err)
		}
		if pid == oldPID {
			t.Fatalf("round %d: answered by the crashed pid %d", round, pid)
		}
		oldPID = pid
	}
}

// TestOverLongResultFailsItsCall: a result over the message limit is
// dropped, and its call fails at once with the reason; the process stays.
func TestOverLongResultFailsItsCall(t *testing.T) {
	opts := fastOptions(t)
	opts.MaxMessageSize = 1 << 20
	s := newSupervisor(t, opts)
	apply(t, s, testSpec("huge", testmcp.Options{}, supervisor.PoolSpec{}))
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	start := time.Now()
	_, pid, err := call(ctx, s, "huge", "big", map[string]any{"kb": 2048})
	if err == nil || !strings.Contains(err.Error(), "longer than the 1048576-byte message limit") {
		t.Fatalf("over-long result: %v", err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the call failed after %s, want at once", took)
	}
	res, again, err := call(ctx, s, "huge", "big", map[string]any{"kb": 512})
	if err != nil || len(text(res)) != 512<<10 || again != pid {
		t.Fatalf("a result within the limit after that: %v (pid %d, was %d)", err, again, pid)
	}
}

// TestTruncatedResponseFailsItsCall: a response cut short (then a newline)
// fails its call at once instead of at its timeout, and the next call on
// the same process works.
func TestTruncatedResponseFailsItsCall(t *testing.T) {
	s := newSupervisor(t, fastOptions(t))
	apply(t, s, testSpec("cut", testmcp.Options{}, supervisor.PoolSpec{}))
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	start := time.Now()
	_, pid, err := call(ctx, s, "cut", "truncated", nil)
	if err == nil || !strings.Contains(err.Error(), "not a valid JSON-RPC message") {
		t.Fatalf("truncated response: %v", err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the call failed after %s, want at once", took)
	}
	res, again, err := call(ctx, s, "cut", "echo", map[string]any{"text": "next"})
	if err != nil || text(res) != "next" || again != pid {
		t.Fatalf("the next call: %v %v (pid %d, was %d)", res, err, again, pid)
	}
	if st := status(t, s, "cut"); st.Restarts != 0 || st.NonProtocolLines != 1 {
		t.Errorf("restarts %d, non-protocol lines %d; want 0 and 1", st.Restarts, st.NonProtocolLines)
	}
}
