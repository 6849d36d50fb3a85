//go:build linux

package e2e

import (
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/app/daemon"
	"github.com/switchboardhq/switchboard/app/internal/testutil"
)

// TestBridgeAsClaudeDesktopRunsIt launches `switchboard connect` the way
// Claude Desktop does (a command with stdin/stdout), with no daemon running:
// the bridge starts one; then the daemon is killed and the same client
// session keeps working once the bridge has started another.
func TestBridgeAsClaudeDesktopRunsIt(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	writeConfig(t, home, "alpha")
	t.Cleanup(func() { stopDaemonOf(t, home) })

	cs, _ := startBridge(t, home)

	first, err := daemon.ReadInfo(home)
	if err != nil {
		t.Fatalf("the bridge did not start the daemon: %v", err)
	}
	echo := func() (string, error) {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": "through the bridge"}})
		if err != nil {
			return "", err
		}
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		if res.IsError {
			return "", errString(b.String())
		}
		return b.String(), nil
	}
	if got, err := echo(); err != nil || got != "through the bridge" {
		t.Fatalf("echo through the bridge: %q %v", got, err)
	}

	syscall.Kill(first.PID, syscall.SIGKILL)
	testutil.Eventually(t, 5*time.Second, "the daemon to die", func() bool { return !alive(first.PID) })

	// The next call, made after the daemon died, succeeds in the same
	// client session: the bridge starts a new daemon and reconnects.
	got, err := echo()
	if err != nil || got != "through the bridge" {
		t.Fatalf("echo after the daemon restart: %q %v", got, err)
	}
	second, err := daemon.ReadInfo(home)
	if err != nil || second.PID == first.PID {
		t.Fatalf("no new daemon: %+v %v", second, err)
	}
}

type errString string

func (e errString) Error() string { return string(e) }

// stopDaemonOf stops the daemon running for home, if any, and waits for it.
func stopDaemonOf(t *testing.T, home string) {
	info, err := daemon.ReadInfo(home)
	if err != nil {
		return
	}
	syscall.Kill(info.PID, syscall.SIGTERM)
	testutil.Eventually(t, 30*time.Second, "the daemon to stop", func() bool { return !alive(info.PID) })
}

// startBridge runs `switchboard connect` for home as Claude Desktop
// launches it, with env added to the test's environment, and opens an MCP
// session through it as "claude-ai". The session ends with the test, and
// the bridge's stderr is logged if the test failed.
func startBridge(t *testing.T, home string, env ...string) (*mcp.ClientSession, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(binary, "connect", "--log-level", "info")
	cmd.Env = append(testEnv(t, home), env...)
	stderr := &testutil.SyncBuffer{}
	cmd.Stderr = stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "claude-ai", Version: "0.1"}, nil).
		Connect(t.Context(), &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	t.Cleanup(func() {
		cs.Close()
		if t.Failed() {
			t.Logf("bridge stderr:\n%s", stderr.String())
		}
	})
	return cs, cmd
}
