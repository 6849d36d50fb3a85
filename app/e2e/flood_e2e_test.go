//go:build linux

package e2e

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	_ "modernc.org/sqlite"

	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/daemon"
	"github.com/switchboardhq/switchboard/app/internal/testutil"
	"github.com/switchboardhq/switchboard/supervisor"
)

// procMemory returns a process's VmRSS and VmHWM (peak RSS), in bytes.
func procMemory(t *testing.T, pid int) (rss, hwm int64) {
	t.Helper()
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		k, v, _ := strings.Cut(line, ":")
		f := strings.Fields(v)
		if len(f) != 2 || f[1] != "kB" {
			continue
		}
		n, _ := strconv.ParseInt(f[0], 10, 64)
		switch k {
		case "VmRSS":
			rss = n << 10
		case "VmHWM":
			hwm = n << 10
		}
	}
	return rss, hwm
}

// rssPeak samples a process's VmRSS every 10 ms until stop is called,
// which returns the largest sample.
func rssPeak(t *testing.T, pid int) (stop func() int64) {
	var peak atomic.Int64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			if rss, _ := procMemory(t, pid); rss > peak.Load() {
				peak.Store(rss)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	})
	return func() int64 {
		close(done)
		wg.Wait()
		return peak.Load()
	}
}

const mib = 1 << 20

var droppedRE = regexp.MustCompile(`^switchboard dropped (\d+) log lines`)

// TestStderrFloodKeepsDaemonSmall floods the daemon with 400 MB of stderr
// (8 KiB lines) from a real server process. The daemon's RSS grows by at
// most 64 MiB, the server's calls are answered during the flood, the lines
// dropped are reported by drop records (in the live log stream, in
// `switchboard logs` and in the history), and kept plus dropped lines
// account for every line written.
func TestStderrFloodKeepsDaemonSmall(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	writeConfig(t, home, "alpha")
	d := startDaemon(t, home)
	d.waitRunning(t, "alpha")
	cs := mcpSession(t, d, "/mcp/alpha")
	for range 20 { // warm up the call path before the baseline
		if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "warm"}}); err != nil {
			t.Fatal(err)
		}
	}
	pid := d.cmd.Process.Pid
	baseline, _ := procMemory(t, pid)
	peak := rssPeak(t, pid)

	// The live log stream, as the dashboard and `logs -f` follow it.
	followCtx, stopFollow := context.WithCancel(t.Context())
	var liveMu sync.Mutex
	var liveDropped, liveFlood int
	var following sync.WaitGroup
	following.Go(func() {
		d.client.FollowLogs(followCtx, "alpha", 0, func(l wire.LogLine) {
			liveMu.Lock()
			defer liveMu.Unlock()
			switch {
			case l.Stream == supervisor.StreamDropped:
				liveDropped++
			case strings.HasPrefix(l.Text, "flood "):
				liveFlood++
			}
		})
	})

	const floodMiB, lineBytes = 400, 8192
	start := time.Now()
	floodDone := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "flood",
			Arguments: map[string]any{"mib": floodMiB, "lineBytes": lineBytes, "wait": true}})
		floodDone <- err
	}()
	// Calls during the flood, on another session, are answered.
	other := mcpSession(t, d, "/mcp/alpha")
	answered, slowest := 0, time.Duration(0)
	for flooding := true; flooding; {
		select {
		case err := <-floodDone:
			if err != nil {
				t.Fatalf("flood: %v", err)
			}
			flooding = false
		default:
			callStart := time.Now()
			res, err := other.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "during"}})
			if err != nil || res.IsError {
				t.Fatalf("call during the flood: %v %+v", err, res)
			}
			answered++
			slowest = max(slowest, time.Since(callStart))
		}
	}
	floodTime := time.Since(start)
	const lines = floodMiB * mib / lineBytes

	// Every line is accounted for once the last drop record is out (at
	// most a second after the last line).
	db, err := sql.Open("sqlite", "file:"+filepath.Join(home, daemon.HistoryFile)+"?mode=ro&_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var kept, dropped, records int
	testutil.Eventually(t, 20*time.Second, "kept and dropped lines to add up to the flood", func() bool {
		kept, dropped, records = 0, 0, 0
		rows, err := db.Query(`SELECT stream, text FROM logs WHERE server = 'alpha' AND (stream = ? OR text LIKE 'flood %')`, supervisor.StreamDropped)
		if err != nil {
			return false
		}
		defer rows.Close()
		for rows.Next() {
			var stream, text string
			rows.Scan(&stream, &text)
			if stream == supervisor.StreamDropped {
				m := droppedRE.FindStringSubmatch(text)
				if m == nil {
					t.Fatalf("drop record %q", text)
				}
				n, _ := strconv.Atoi(m[1])
				dropped += n
				records++
			} else {
				kept++
			}
		}
		return kept+dropped == lines
	})
	growth := peak() - baseline
	_, hwm := procMemory(t, pid)
	stopFollow()
	following.Wait()
	t.Logf("flood of %d MiB (%d lines) written in %s; %d calls answered meanwhile (slowest %s)",
		floodMiB, lines, floodTime.Round(time.Millisecond), answered, slowest.Round(time.Millisecond))
	t.Logf("daemon RSS: baseline %.1f MiB, peak sampled %.1f MiB (growth %.1f MiB), VmHWM %.1f MiB",
		float64(baseline)/mib, float64(baseline+growth)/mib, float64(growth)/mib, float64(hwm)/mib)
	t.Logf("history: %d flood lines kept, %d dropped in %d drop records", kept, dropped, records)
	if growth > 64*mib {
		t.Errorf("daemon RSS grew by %.1f MiB during the flood, bound 64 MiB", float64(growth)/mib)
	}
	if answered == 0 {
		t.Error("no call was made during the flood")
	}
	if records == 0 || dropped == 0 {
		t.Error("no drop record in the history")
	}
	liveMu.Lock()
	if liveDropped == 0 || liveFlood == 0 {
		t.Errorf("live log stream: %d drop records, %d flood lines", liveDropped, liveFlood)
	}
	liveMu.Unlock()
	code, out, _ := cli(t, home, "logs", "-n", "2000", "alpha")
	if code != exitOK || !strings.Contains(out, "switchboard dropped ") {
		t.Errorf("switchboard logs shows no drop record:\n%.2000s", out)
	}
}
