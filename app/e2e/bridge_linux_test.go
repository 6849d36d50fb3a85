//go:build linux

package e2e

import (
	"bufio"
	"errors"
	"io"
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
		return testutil.CallText(t.Context(), cs, "alpha__echo", map[string]any{"text": "through the bridge"})
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

// TestBridgeToUnknownServerOrProfile: `switchboard connect SERVER` or
// `--profile P` naming what Switchboard does not serve answers the client's
// initialize at once with the daemon's reason, and exits non-zero with it
// on stderr once the client leaves, instead of retrying for 30 s.
func TestBridgeToUnknownServerOrProfile(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	writeConfig(t, home, "alpha")
	t.Cleanup(func() { stopDaemonOf(t, home) })
	for _, tc := range []struct {
		args   []string
		reason string
	}{
		{[]string{"nosuch"}, `unknown server \"nosuch\"`},
		{[]string{"--profile", "nosuch"}, `unknown profile \"nosuch\"`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			start := time.Now()
			cmd := exec.Command(binary, append([]string{"connect"}, tc.args...)...)
			cmd.Env = testEnv(t, home)
			stderr := &testutil.SyncBuffer{}
			cmd.Stderr = stderr
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cmd.Process.Kill() })
			io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`+"\n")
			answer := make(chan string, 1)
			go func() {
				line, _ := bufio.NewReader(stdout).ReadString('\n')
				answer <- line
			}()
			select {
			case line := <-answer:
				if !strings.Contains(line, `"error"`) || !strings.Contains(line, tc.reason) {
					t.Errorf("initialize answered %s; want an error naming %s", line, tc.reason)
				}
			case <-time.After(15 * time.Second):
				t.Fatalf("no answer to initialize\n%s", stderr.String())
			}
			stdin.Close()
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			select {
			case err := <-exited:
				var exit *exec.ExitError
				if !errors.As(err, &exit) || exit.ExitCode() == 0 {
					t.Errorf("the bridge exited with %v, want a non-zero status", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the bridge did not exit when its client left")
			}
			if want := strings.ReplaceAll(tc.reason, `\"`, `"`); !strings.Contains(stderr.String(), want) {
				t.Errorf("stderr does not name %s:\n%s", want, stderr.String())
			}
			if d := time.Since(start); d > 20*time.Second {
				t.Errorf("took %s", d)
			}
		})
	}
}

// TestBridgeTokenRevokedDuringSession: the token of a running `switchboard
// connect` is revoked. The client's next call fails with the refusal and
// how to get a new token (not a connection being re-established), and the
// bridge exits non-zero with the reason on stderr when the client leaves.
func TestBridgeTokenRevokedDuringSession(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	writeConfig(t, home, "alpha")
	t.Cleanup(func() { stopDaemonOf(t, home) })
	cmd := exec.Command(binary, "connect", "--client", "mybridge")
	cmd.Env = testEnv(t, home)
	stderr := &testutil.SyncBuffer{}
	cmd.Stderr = stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "claude-ai", Version: "0.1"}, nil).
		Connect(t.Context(), &mcp.CommandTransport{Command: cmd, TerminateDuration: 10 * time.Second}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	echo := func() (string, error) {
		return testutil.CallText(t.Context(), cs, "alpha__echo", map[string]any{"text": "hi"})
	}
	if got, err := echo(); err != nil || got != "hi" {
		t.Fatalf("echo through the bridge: %q %v\n%s", got, err, stderr.String())
	}
	if code, out, errOut := cli(t, home, "tokens", "revoke", "mybridge"); code != exitOK {
		t.Fatalf("revoke: %d %s%s", code, out, errOut)
	}
	_, err = echo()
	if err == nil || !strings.Contains(err.Error(), "Switchboard refused the bridge") || !strings.Contains(err.Error(), "switchboard clients connect") ||
		strings.Contains(err.Error(), "re-established") {
		t.Errorf("the call after the revocation: %v; want the refusal and how to get a new token", err)
	}
	cs.Close()
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() == 0 {
		t.Errorf("the bridge exited with %v, want a non-zero status", cmd.ProcessState)
	}
	if !strings.Contains(stderr.String(), "Switchboard refused the bridge") {
		t.Errorf("stderr does not give the refusal:\n%s", stderr.String())
	}
}
