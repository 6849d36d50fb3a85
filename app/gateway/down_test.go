package gateway_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/app/gateway"
	"github.com/switchboardhq/switchboard/app/internal/testutil"
	"github.com/switchboardhq/switchboard/app/record"
	"github.com/switchboardhq/switchboard/supervisor"
	"github.com/switchboardhq/switchboard/supervisor/testmcp"
)

// lazySpec is the test server under name with pool min 0.
func lazySpec(name string, o testmcp.Options, pool supervisor.PoolSpec) supervisor.Spec {
	o.Name = name
	return supervisor.Spec{Name: name, Command: os.Args[0], Env: testEnv(o), Pool: pool, StartTimeout: 20 * time.Second}
}

func withLists(dir string) func(*supervisor.Options, *gateway.Options) {
	return func(_ *supervisor.Options, g *gateway.Options) { g.ListsDir = dir }
}

func poolStatus(t *testing.T, f *fixture, name string) supervisor.PoolStatus {
	t.Helper()
	st, err := f.sup.Status(name)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func callTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	return res
}

// lastCall waits for the recorder to hold a call of tool and returns it.
func lastCall(t *testing.T, f *fixture, tool string) record.Call {
	t.Helper()
	var last record.Call
	testutil.Eventually(t, 10*time.Second, "a recorded call of "+tool, func() bool {
		calls := f.rec.all()
		for i := len(calls) - 1; i >= 0; i-- {
			if calls[i].Name == tool {
				last = calls[i]
				return true
			}
		}
		return false
	})
	return last
}

// TestLazyServerWithKeptLists: a server never listed starts once to learn
// its tools and stops after its idle timeout; the next gateway (a daemon
// restart) serves the kept list with no process until the first call,
// which starts exactly one.
func TestLazyServerWithKeptLists(t *testing.T) {
	lists := t.TempDir()
	first := newTunedFixture(t, "", withLists(lists),
		[]supervisor.Spec{lazySpec("lazy", testmcp.Options{}, supervisor.PoolSpec{Max: 3, IdleTimeout: 300 * time.Millisecond})},
		gateway.ServerConfig{Name: "lazy"})
	cs := first.connect(t, "/mcp", "2025-11-25", nil)
	first.waitTools(t, cs, "lazy__echo")
	if _, err := os.Stat(filepath.Join(lists, "lazy.json")); err != nil {
		t.Fatalf("the list was not kept: %v", err)
	}
	testutil.Eventually(t, 10*time.Second, "the learning process to idle out", func() bool {
		st := poolStatus(t, first, "lazy")
		return len(st.Processes) == 0 && st.State == supervisor.StateStopped
	})
	if st := poolStatus(t, first, "lazy"); st.Restarts != 0 {
		t.Errorf("restarts %d while learning", st.Restarts)
	}

	// The next run: a long idle timeout, so any start would still show.
	second := newTunedFixture(t, "", withLists(lists),
		[]supervisor.Spec{lazySpec("lazy", testmcp.Options{}, supervisor.PoolSpec{Max: 3, IdleTimeout: time.Minute})},
		gateway.ServerConfig{Name: "lazy"})
	events, stop := second.sup.Subscribe(100)
	defer stop()
	agg := second.connect(t, "/mcp", "2025-11-25", nil)
	second.waitTools(t, agg, "lazy__echo", "lazy__sleep")
	one := second.connect(t, "/mcp/lazy", "2025-11-25", nil)
	second.waitTools(t, one, "echo")
	if st := poolStatus(t, second, "lazy"); len(st.Processes) != 0 || st.State != supervisor.StateStopped {
		t.Fatalf("the server started before its first call: %+v", st)
	}
	if got := second.gw.Tools("lazy"); len(got) == 0 {
		t.Error("the API sees no tools of the down server")
	}

	if res := callTool(t, agg, "lazy__echo", map[string]any{"text": "first use"}); res.IsError || text(res) != "first use" {
		t.Fatalf("first call: %+v", res)
	}
	var spawned int
	for len(events) > 0 {
		if (<-events).Kind == supervisor.EventStarting {
			spawned++
		}
	}
	if st := poolStatus(t, second, "lazy"); spawned != 1 || len(st.Processes) != 1 {
		t.Errorf("first use spawned %d processes (%d live), want exactly 1", spawned, len(st.Processes))
	}

	// A server that leaves (uninstalled, disabled) leaves no kept list.
	// (Its endpoint's sessions are closed first: once it has left, their
	// DELETE finds no endpoint.)
	one.Close()
	second.gw.Sync(nil)
	if _, err := os.Stat(filepath.Join(lists, "lazy.json")); !os.IsNotExist(err) {
		t.Errorf("the kept list of a removed server is still there: %v", err)
	}
}

// TestCallToADownServerAnswersTheCause: the kept tools of a server that
// cannot start are still listed; a call starts it and answers with the
// server's name and its own error, recorded under the server; once it is
// failing, calls say so.
func TestCallToADownServerAnswersTheCause(t *testing.T) {
	lists := t.TempDir()
	good := newTunedFixture(t, "", withLists(lists),
		[]supervisor.Spec{lazySpec("flaky", testmcp.Options{}, supervisor.PoolSpec{})}, gateway.ServerConfig{Name: "flaky"})
	good.waitTools(t, good.connect(t, "/mcp", "2025-11-25", nil), "flaky__echo")

	// The server breaks (say its API key was removed) and the daemon restarts.
	tune := func(s *supervisor.Options, g *gateway.Options) {
		g.ListsDir = lists
		s.CrashLimit = 2
		s.FailingCoolDown = time.Minute
	}
	f := newTunedFixture(t, "", tune,
		[]supervisor.Spec{lazySpec("flaky", testmcp.Options{InitError: "FLAKY_TOKEN is not set"}, supervisor.PoolSpec{})},
		gateway.ServerConfig{Name: "flaky"})
	cs := f.connect(t, "/mcp", "2025-11-25", nil)
	f.waitTools(t, cs, "flaky__echo")

	res := callTool(t, cs, "flaky__echo", map[string]any{"text": "x"})
	msg := text(res)
	if !res.IsError || !strings.Contains(msg, `"flaky"`) || !strings.Contains(msg, "FLAKY_TOKEN is not set") {
		t.Fatalf("call to the down server: %q, want its name and its own error", msg)
	}
	if c := lastCall(t, f, "flaky__echo"); c.Server != "flaky" || c.Outcome != record.OutcomeUnavailable {
		t.Errorf("recorded as server %q, outcome %q; want flaky, %s", c.Server, c.Outcome, record.OutcomeUnavailable)
	}

	// The pool retries by itself and becomes failing; calls then say so.
	testutil.Eventually(t, 20*time.Second, "failing", func() bool { return poolStatus(t, f, "flaky").State == supervisor.StateFailing })
	res = callTool(t, cs, "flaky__echo", map[string]any{"text": "x"})
	if msg := text(res); !res.IsError || !strings.Contains(msg, `"flaky" is failing`) || !strings.Contains(msg, "FLAKY_TOKEN is not set") {
		t.Errorf("call to the failing server: %q", msg)
	}
}

// TestCallToANeverListedServer: a server whose first start failed has no
// tools to list; a call to one of its tools by name still reaches it and
// answers the real cause, recorded under the server.
func TestCallToANeverListedServer(t *testing.T) {
	tune := func(s *supervisor.Options, _ *gateway.Options) {
		s.CrashLimit = 3
		s.FailingCoolDown = time.Minute
	}
	f := newTunedFixture(t, "", tune,
		[]supervisor.Spec{lazySpec("broken", testmcp.Options{FailStart: true}, supervisor.PoolSpec{})},
		gateway.ServerConfig{Name: "broken"})
	for _, tt := range []struct{ path, tool string }{{"/mcp", "broken__echo"}, {"/mcp/broken", "echo"}} {
		cs := f.connect(t, tt.path, "2025-11-25", nil)
		res := callTool(t, cs, tt.tool, map[string]any{"text": "x"})
		msg := text(res)
		if !res.IsError || !strings.Contains(msg, `"broken"`) || !strings.Contains(msg, "failing to start on purpose") {
			t.Errorf("%s %s: %q, want the server's name and its stderr", tt.path, tt.tool, msg)
		}
		if c := lastCall(t, f, tt.tool); c.Server != "broken" {
			t.Errorf("%s: recorded under server %q", tt.path, c.Server)
		}
	}
}

// TestCallDuringACrashRestart: through the gateway, a call made right after
// the server crashed waits for the restart and succeeds.
func TestCallDuringACrashRestart(t *testing.T) {
	tune := func(s *supervisor.Options, _ *gateway.Options) { s.BackoffInitial = 300 * time.Millisecond }
	f := newTunedFixture(t, "", tune,
		[]supervisor.Spec{lazySpec("phoenix", testmcp.Options{}, supervisor.PoolSpec{Min: 1})},
		gateway.ServerConfig{Name: "phoenix"})
	cs := f.connect(t, "/mcp/phoenix", "2025-11-25", nil)
	f.waitTools(t, cs, "echo")
	if res := callTool(t, cs, "crash", nil); !res.IsError {
		t.Fatalf("crash: %+v", res)
	}
	if res := callTool(t, cs, "echo", map[string]any{"text": "back"}); res.IsError || text(res) != "back" {
		t.Fatalf("call during the restart: %q", text(res))
	}
}

// TestBrokenKeptListIsIgnored: a kept-lists file that cannot be read is
// ignored (the server is listed as a new one) and replaced.
func TestBrokenKeptListIsIgnored(t *testing.T) {
	lists := t.TempDir()
	path := filepath.Join(lists, "mended.json")
	if err := os.WriteFile(path, []byte(`{"version":1,"server":"mended","tools":[{"name":`), 0o600); err != nil {
		t.Fatal(err)
	}
	f := newTunedFixture(t, "", withLists(lists),
		[]supervisor.Spec{lazySpec("mended", testmcp.Options{}, supervisor.PoolSpec{})}, gateway.ServerConfig{Name: "mended"})
	f.waitTools(t, f.connect(t, "/mcp/mended", "2025-11-25", nil), "echo")
	testutil.Eventually(t, 10*time.Second, "the file replaced", func() bool {
		data, err := os.ReadFile(path)
		return err == nil && strings.Contains(string(data), `"name": "echo"`)
	})
}
