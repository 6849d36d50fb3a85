//go:build linux

package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/daemon"
	"github.com/switchboardhq/switchboard/app/history"
	"github.com/switchboardhq/switchboard/app/internal/testutil"
	"github.com/switchboardhq/switchboard/app/internal/testutil/sqlitedamage"
	"github.com/switchboardhq/switchboard/app/record"
)

// TestCallsInFlightAtKill9AreInterrupted kills the daemon (SIGKILL, by its
// pid) with three calls in flight; the next daemon records the three as
// interrupted, with their client, server, tool, arguments and start.
func TestCallsInFlightAtKill9AreInterrupted(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	writeConfig(t, home, "alpha")
	d := startDaemon(t, home)
	d.waitRunning(t, "alpha")
	cs := mcpSession(t, d, "/mcp/alpha")

	before := time.Now()
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Go(func() {
			// Fails when the daemon dies: that is the point.
			cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "sleep",
				Arguments: map[string]any{"ms": 60000 + i}})
		})
	}
	defer wg.Wait()
	defer cs.Close() // ends the calls wg waits for, also when a wait below fails
	journal := filepath.Join(home, daemon.JournalFile)
	var data []byte
	defer func() {
		if t.Failed() {
			t.Logf("the journal:\n%s", data)
		}
	}()
	testutil.Eventually(t, 10*time.Second, "the three calls in the journal", func() bool {
		data, _ = os.ReadFile(journal)
		return bytes.Count(data, []byte(`"tools/call" "sleep"`)) == 3
	})
	if err := syscall.Kill(d.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-d.done
	cs.Close()

	d = startDaemon(t, home)
	var page wire.CallPage
	testutil.Eventually(t, 10*time.Second, "the interrupted calls in the history", func() bool {
		var err error
		page, err = d.client.History(t.Context(), url.Values{"outcome": {record.OutcomeInterrupted}})
		return err == nil && len(page.Calls) == 3
	})
	seen := map[string]bool{}
	for _, c := range page.Calls {
		full, err := d.client.Call(t.Context(), c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if full.Server != "alpha" || full.Name != "sleep" || full.Method != "tools/call" || full.ClientName != "crash-test" ||
			full.ClientLabel != "cli" || full.Endpoint != "alpha" || full.Start.Before(before.Add(-time.Second)) ||
			!strings.Contains(full.Error, "daemon was killed or crashed") {
			t.Errorf("interrupted call: %+v", full)
		}
		seen[string(full.Arguments)] = true
	}
	for _, want := range []string{`{"ms":60000}`, `{"ms":60001}`, `{"ms":60002}`} {
		if !seen[want] {
			t.Errorf("no interrupted call with arguments %s; have %v", want, seen)
		}
	}
	// A clean stop after that leaves nothing to record.
	code, out, _ := cli(t, home, "history", "--outcome", "interrupted")
	if code != exitOK || strings.Count(out, "sleep") != 3 {
		t.Errorf("switchboard history --outcome interrupted:\n%s", out)
	}
}

// TestInterruptedCallKeepsItsDuration kills the daemon (SIGKILL) while a
// call has run for a few seconds; the next daemon records it as
// interrupted with the time it had run (to the journal's last touch, at
// most history.AliveInterval short), not 0 and not until the next start.
func TestInterruptedCallKeepsItsDuration(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	writeConfig(t, home, "alpha")
	d := startDaemon(t, home)
	d.waitRunning(t, "alpha")
	cs := mcpSession(t, d, "/mcp/alpha")

	var wg sync.WaitGroup
	wg.Go(func() {
		// Fails when the daemon dies: that is the point.
		cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "sleep", Arguments: map[string]any{"ms": 60000}})
	})
	defer wg.Wait()
	defer cs.Close()
	journal := filepath.Join(home, daemon.JournalFile)
	var begun time.Time
	testutil.Eventually(t, 10*time.Second, "the call in the journal", func() bool {
		data, _ := os.ReadFile(journal)
		if !bytes.Contains(data, []byte(`"tools/call" "sleep"`)) {
			return false
		}
		begun = time.Now()
		return true
	})
	// The call runs on; the journal's time moves on with it.
	ran := 3 * time.Second
	testutil.Eventually(t, 20*time.Second, "the call to have run 3 s", func() bool {
		fi, err := os.Stat(journal)
		return err == nil && fi.ModTime().Sub(begun) >= ran
	})
	if err := syscall.Kill(d.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	<-d.done
	cs.Close()

	d = startDaemon(t, home)
	restarted := time.Now()
	var page wire.CallPage
	testutil.Eventually(t, 10*time.Second, "the interrupted call in the history", func() bool {
		var err error
		page, err = d.client.History(t.Context(), url.Values{"outcome": {record.OutcomeInterrupted}})
		return err == nil && len(page.Calls) == 1
	})
	c := page.Calls[0]
	upTo := killed.Sub(c.Start) // how long it had run when the daemon died
	if c.Duration < ran || c.Duration > upTo || c.Duration < upTo-history.AliveInterval-250*time.Millisecond {
		t.Errorf("interrupted call's duration %v; it ran %v (the next daemon started %v after it began; the journal is touched every %v)",
			c.Duration, upTo, restarted.Sub(c.Start), history.AliveInterval)
	}
	t.Logf("ran %v before the kill; recorded %v; next start %v after it began", upTo.Round(time.Millisecond),
		c.Duration.Round(time.Millisecond), restarted.Sub(c.Start).Round(time.Millisecond))
}

// TestDamagedHistoryAfterCleanStopMovedAside: a history.db damaged while
// the daemon was stopped cleanly (garbage in two pages of its calls) is
// found by the check the next daemon runs in the background: the file is
// moved aside, the log says so at ERROR, and new calls go to a fresh one.
func TestDamagedHistoryAfterCleanStopMovedAside(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	writeConfig(t, home, "alpha")
	path := filepath.Join(home, daemon.HistoryFile)
	// A history with enough calls that its pages hold rows.
	hist, err := history.Open(t.Context(), path, history.Options{RetentionInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3000 {
		hist.RecordCall(record.Call{Start: time.Now(), Duration: time.Millisecond, Server: "alpha", Method: "tools/call",
			Name: "old", Outcome: record.OutcomeOK, Arguments: []byte(fmt.Sprintf(`{"seq":%d,"path":"/some/long/path"}`, i))})
	}
	if err := hist.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, home)
	d.waitRunning(t, "alpha")
	stopDaemon(t, d) // a clean stop: the next start has no reason of its own to check
	if _, err := os.Stat(path + ".open"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the open marker after a clean stop: %v", err)
	}
	sqlitedamage.LeafPages(t, path, "calls", 2)

	d = startDaemon(t, home)
	testutil.Eventually(t, 30*time.Second, "the damaged history moved aside", func() bool {
		m, _ := filepath.Glob(path + ".corrupt-*")
		return len(m) > 0 && strings.Contains(d.out.String(), "level=ERROR") && strings.Contains(d.out.String(), "was corrupt")
	})
	cs := mcpSession(t, d, "/mcp/alpha")
	if _, err := testutil.CallText(t.Context(), cs, "echo", map[string]any{"text": "fresh"}); err != nil {
		t.Fatal(err)
	}
	var page wire.CallPage
	testutil.Eventually(t, 10*time.Second, "the new call in a fresh history", func() bool {
		page, err = d.client.History(t.Context(), url.Values{})
		return err == nil && len(page.Calls) > 0
	})
	if len(page.Calls) != 1 || page.Calls[0].Name != "echo" {
		t.Errorf("the history after the damaged one was moved aside: %+v, want the one new call", page.Calls)
	}
}
