package e2e

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app/daemon"
	"github.com/switchboardhq/switchboard/app/tokens"
	"github.com/switchboardhq/switchboard/supervisor"
)

// TestQuitVerb: `switchboard quit` stops a running daemon the way the
// tray's Quit does (every server's processes gone, the daemon exits 0 and
// the verb returns once it has), says so when there is none, and the
// route it calls is not open to an MCP client's token.
func TestQuitVerb(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	if code, out, errOut := cli(t, home, "quit"); code != exitOK || !strings.Contains(out, "Switchboard is not running for "+home) {
		t.Errorf("quit with no daemon: %d %q %q", code, out, errOut)
	}

	writeConfig(t, home, "alpha")
	d := startDaemon(t, home)
	d.waitRunning(t, "alpha")
	pids := pidsByServer(t, d)["alpha"]
	if len(pids) == 0 {
		t.Fatal("alpha has no process")
	}

	// An MCP client's token may call tools, not stop the daemon.
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, d.info.Address+"/api/v1/quit", nil)
	store, err := tokens.Open(filepath.Join(home, daemon.TokensFile))
	if err != nil {
		t.Fatal(err)
	}
	agent, err := store.EnsureClient("cursor")
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+agent.Secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("POST /api/v1/quit with a client token = %d, want 403", resp.StatusCode)
	}

	start := time.Now()
	code, out, errOut := cli(t, home, "quit")
	took := time.Since(start)
	if code != exitOK || !strings.Contains(out, "Switchboard stopped.") {
		t.Fatalf("quit: %d %q %q", code, out, errOut)
	}
	t.Logf("quit returned after %s", took)
	// Exited is what quit waits for: the process may still be a zombie
	// until this test's Wait reaps it, which it does on its own goroutine.
	if supervisor.ProcessAlive(d.cmd.Process.Pid) {
		t.Fatal("quit returned before the daemon exited")
	}
	select {
	case <-d.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the daemon, exited, was not reaped within 10 s")
	}
	if code := d.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("the daemon exited %d after quit", code)
	}
	for _, pid := range pids {
		if supervisor.ProcessAlive(pid) {
			t.Errorf("alpha's process %d is still alive after quit", pid)
		}
	}
	if code, out, _ := cli(t, home, "quit"); code != exitOK || !strings.Contains(out, "not running") {
		t.Errorf("quit after quit: %d %q", code, out)
	}
}
