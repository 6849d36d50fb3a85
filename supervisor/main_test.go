package supervisor_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/switchboardhq/switchboard/supervisor"
	"github.com/switchboardhq/switchboard/supervisor/confine"
	"github.com/switchboardhq/switchboard/supervisor/testmcp"
)

// TestMain re-runs this test binary as the test MCP server, or as the
// reaper, when the environment asks for it.
func TestMain(m *testing.M) {
	confine.RunIfRequested()
	testmcp.RunIfRequested()
	supervisor.RunReaperIfRequested()
	goleak.VerifyTestMain(m)
}

// fastOptions keep the timings of tests short.
func fastOptions(t *testing.T) supervisor.Options {
	return supervisor.Options{
		StateDir:       t.TempDir(),
		Env:            os.Environ(), // no login shell: tests must not depend on the user's profile
		StopGrace:      500 * time.Millisecond,
		BackoffInitial: 20 * time.Millisecond,
		BackoffMax:     100 * time.Millisecond,
		SampleInterval: -1,
		HealthInterval: -1,
	}
}

func newSupervisor(t *testing.T, opts supervisor.Options) *supervisor.Supervisor {
	t.Helper()
	s, err := supervisor.New(t.Context(), opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := s.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// testSpec is a server that runs this test binary as the test MCP server.
func testSpec(name string, o testmcp.Options, pool supervisor.PoolSpec) supervisor.Spec {
	// A -race binary sleeps a second on exit unless told not to.
	env := map[string]string{"GORACE": "atexit_sleep_ms=0"}
	for _, kv := range testmcp.Env(o) {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	return supervisor.Spec{Name: name, Command: os.Args[0], Env: env, Pool: pool, StartTimeout: 20 * time.Second}
}

func apply(t *testing.T, s *supervisor.Supervisor, specs ...supervisor.Spec) {
	t.Helper()
	if err := s.Apply(t.Context(), specs); err != nil {
		t.Fatalf("Apply: %v", err)
	}
}

// call runs one tool call on a freshly acquired lease (shared mode).
func call(ctx context.Context, s *supervisor.Supervisor, server, tool string, args map[string]any) (*mcp.CallToolResult, int, error) {
	l, err := s.Acquire(ctx, server)
	if err != nil {
		return nil, 0, err
	}
	defer l.Release()
	res, err := callOn(ctx, l, tool, args)
	return res, l.PID(), err
}

func callOn(ctx context.Context, l *supervisor.Lease, tool string, args map[string]any) (*mcp.CallToolResult, error) {
	var res *mcp.CallToolResult
	err := l.Do(ctx, func(ctx context.Context, cs *mcp.ClientSession) error {
		var err error
		res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		return err
	})
	if err == nil && res.IsError {
		err = fmt.Errorf("tool %s: %s", tool, text(res))
	}
	return res, err
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// structuredPID reads {"pid": N} from a tool result.
func structuredPID(t *testing.T, res *mcp.CallToolResult) int {
	t.Helper()
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var v struct{ PID int }
	if err := json.Unmarshal(raw, &v); err != nil || v.PID == 0 {
		if n, err := strconv.Atoi(strings.TrimSpace(text(res))); err == nil {
			return n
		}
		t.Fatalf("no pid in %s", raw)
	}
	return v.PID
}

func status(t *testing.T, s *supervisor.Supervisor, name string) supervisor.PoolStatus {
	t.Helper()
	p, err := s.Pool(name)
	if err != nil {
		t.Fatal(err)
	}
	return p.Status()
}

func pids(st supervisor.PoolStatus) []int {
	var out []int
	for _, p := range st.Processes {
		out = append(out, p.PID)
	}
	return out
}

// alive reports whether pid is a live process (zombies count as dead: where
// PID 1 does not reap, killed orphans linger as zombies). It is the
// supervisor's own check, so it holds on every OS: a read of /proc under
// Wine answered for whichever Linux process had that number.
func alive(pid int) bool { return supervisor.ProcessAlive(pid) }

func isExitError(err error) bool {
	_, ok := errors.AsType[*supervisor.ExitError](err)
	return ok
}
