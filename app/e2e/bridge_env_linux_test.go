//go:build linux

package e2e

import (
	"bytes"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/app/api/client"
	"github.com/switchboardhq/switchboard/app/daemon"
	"github.com/switchboardhq/switchboard/app/internal/testutil"
	"github.com/switchboardhq/switchboard/app/tokens"
)

// TestBridgeKeepsSwitchboardEnvFromDaemonAndServers starts `switchboard
// connect` as a client would, with its token in SWITCHBOARD_TOKEN and other
// SWITCHBOARD_* variables set, and no daemon running. The daemon the bridge
// starts, and the server processes that daemon runs, must have none of them
// in /proc/<pid>/environ (the servers keep only the variables their config
// entry sets); the daemon still uses the bridge's data directory. A call
// whose arguments hold credentials is then stored with them redacted, in a
// 0600 history.db inside a data directory made 0700.
func TestBridgeKeepsSwitchboardEnvFromDaemonAndServers(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	writeConfig(t, home, "alpha")
	t.Cleanup(func() { stopDaemonOf(t, home) })
	if err := os.Chmod(home, 0o755); err != nil { // as an older version or a user may have left it
		t.Fatal(err)
	}
	store, err := tokens.Open(filepath.Join(home, daemon.TokensFile))
	if err != nil {
		t.Fatal(err)
	}
	clientTok, err := store.Ensure("claude-desktop")
	if err != nil {
		t.Fatal(err)
	}

	cs, cmd := startBridge(t, home, "SWITCHBOARD_TOKEN="+clientTok.Secret, "SWITCHBOARD_SOMETHING_ELSE=1")
	info, err := daemon.ReadInfo(home)
	if err != nil {
		t.Fatalf("the bridge did not start a daemon for %s: %v", home, err)
	}

	// The bridge's own environment has them (the check below means something).
	if env := environ(t, cmd.Process.Pid); env["SWITCHBOARD_TOKEN"] != clientTok.Secret {
		t.Fatalf("the bridge's environment lacks SWITCHBOARD_TOKEN: %v", env)
	}
	for k := range environ(t, info.PID) {
		if strings.HasPrefix(k, "SWITCHBOARD_") {
			t.Errorf("the daemon (pid %d) has %s in its environment", info.PID, k)
		}
	}
	cliTok, err := store.Ensure("cli")
	if err != nil {
		t.Fatal(err)
	}
	c := &client.Client{BaseURL: info.Address, Token: cliTok.Secret}
	var pids []int
	testutil.Eventually(t, 30*time.Second, "alpha's processes", func() bool {
		v, err := c.Server(t.Context(), "alpha")
		if err != nil || len(v.Processes) == 0 {
			return false
		}
		pids = pids[:0]
		for _, p := range v.Processes {
			pids = append(pids, p.PID)
			pids = append(pids, childrenOf(p.PID)...) // sh runs the server and a sleep
		}
		return len(pids) >= 3
	})
	for _, pid := range pids {
		for k := range environ(t, pid) {
			if strings.HasPrefix(k, "SWITCHBOARD_") && !strings.HasPrefix(k, "SWITCHBOARD_TESTMCP") {
				t.Errorf("server process %d has %s in its environment", pid, k)
			}
		}
	}

	// A stored call whose arguments held a GitHub token and an OpenAI key.
	const ghp, sk = "ghp_16C7e42F292c6912E7710c838347Ae178B4a", "sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56_Qr78-St90"
	text := fmt.Sprintf("use %s and %s", ghp, sk)
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": text}}); err != nil {
		t.Fatal(err)
	}
	var stored []byte
	testutil.Eventually(t, 10*time.Second, "the call in the history", func() bool {
		page, err := c.History(t.Context(), url.Values{"server": {"alpha"}})
		if err != nil {
			t.Logf("history: %v", err)
		}
		for _, call := range page.Calls {
			if call.Method == "tools/call" {
				full, err := c.Call(t.Context(), call.ID)
				stored = append(full.Arguments, full.ResponsePreview...)
				return err == nil
			}
		}
		return false
	})
	if bytes.Contains(stored, []byte("ghp_")) || bytes.Contains(stored, []byte("sk-proj")) || !bytes.Contains(stored, []byte(`"use [redacted] and [redacted]"`)) {
		t.Errorf("stored arguments and preview: %s", stored)
	}

	// The data directory was tightened; the history's files are private.
	for path, want := range map[string]os.FileMode{home: 0o700, filepath.Join(home, daemon.HistoryFile): 0o600,
		filepath.Join(home, daemon.HistoryFile) + "-wal": 0o600, filepath.Join(home, daemon.HistoryFile) + "-shm": 0o600} {
		info, err := os.Stat(path)
		if err != nil {
			t.Errorf("%s: %v", path, err)
		} else if info.Mode().Perm() != want {
			t.Errorf("%s has mode %o, want %o", path, info.Mode().Perm(), want)
		}
	}
}

// environ reads /proc/<pid>/environ.
func environ(t *testing.T, pid int) map[string]string {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		t.Fatalf("environment of %d: %v", pid, err)
	}
	env := map[string]string{}
	for kv := range strings.SplitSeq(string(data), "\x00") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	return env
}

// childrenOf lists the children of pid (Linux: /proc/<pid>/task/*/children).
func childrenOf(pid int) []int {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	var out []int
	for _, f := range tasks {
		data, _ := os.ReadFile(f)
		for _, field := range strings.Fields(string(data)) {
			if n, err := strconv.Atoi(field); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}
