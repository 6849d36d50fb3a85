package daemon

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/app/gateway"
	"github.com/switchboardhq/switchboard/app/history"
	"github.com/switchboardhq/switchboard/app/internal/testutil"
	"github.com/switchboardhq/switchboard/app/record"
	"github.com/switchboardhq/switchboard/supervisor"
	"github.com/switchboardhq/switchboard/supervisor/testmcp"
)

func TestMain(m *testing.M) {
	testmcp.RunIfRequested()
	supervisor.RunReaperIfRequested()
	runGuardDaemonIfRequested()
	os.Exit(m.Run())
}

// benchStack is a gateway in front of one test MCP server, as the daemon
// composes them, with or without the history recording its calls.
type benchStack struct {
	srv  *httptest.Server
	sup  *supervisor.Supervisor
	gw   *gateway.Gateway
	hist *history.Store
	cs   *mcp.ClientSession
}

func newBenchStack(b *testing.B, record bool) *benchStack {
	b.Helper()
	ctx := context.Background()
	st := &benchStack{}
	var opts gateway.Options
	if record && os.Getenv("SWITCHBOARD_BENCH_RECORDER") == "noop" {
		opts.Recorder = noopRecorder{}
		record = false
	}
	if record {
		// As the daemon composes them: calls journaled when they start.
		j, _, err := history.OpenJournal(filepath.Join(b.TempDir(), JournalFile), nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { j.Close() })
		h, err := history.Open(ctx, filepath.Join(b.TempDir(), "history.db"), history.Options{RetentionInterval: -1, Journal: j})
		if err != nil {
			b.Fatal(err)
		}
		st.hist, opts.Recorder, opts.Journal = h, h, j
	}
	// As the daemon composes them: the supervisor, the gateway over it, and
	// the gateway's hooks into the supervisor.
	sup, err := supervisor.New(ctx, supervisor.Options{StateDir: b.TempDir(), Env: append(os.Environ(), testmcp.Env(testmcp.Options{})...)})
	if err != nil {
		b.Fatal(err)
	}
	st.sup = sup
	opts.Backends = gateway.FromSupervisor(sup)
	st.gw = gateway.New(opts)
	if err := sup.SetHooks(supervisor.Hooks{NewClient: st.gw.NewClient, WrapTransport: st.gw.WrapTransport, Prepare: st.gw.Prepare}); err != nil {
		b.Fatal(err)
	}
	exe, _ := os.Executable()
	spec := supervisor.Spec{Name: "echo", Command: exe, Env: map[string]string{"GORACE": "atexit_sleep_ms=0"},
		Pool: supervisor.PoolSpec{Min: 4, Max: 4}}
	if err := sup.Apply(ctx, []supervisor.Spec{spec}); err != nil {
		b.Fatal(err)
	}
	st.gw.Sync([]gateway.ServerConfig{{Name: "echo"}})
	st.srv = httptest.NewServer(st.gw.Handler())
	st.cs, err = mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: st.srv.URL + "/mcp/echo"}, nil)
	if err != nil {
		b.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for st.call(ctx) != nil {
		if time.Now().After(deadline) {
			b.Fatal("the echo server did not answer within 30 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	return st
}

func (st *benchStack) call(ctx context.Context) error {
	res, err := st.cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello, history"}})
	if err == nil && res.IsError {
		err = fmt.Errorf("echo failed")
	}
	return err
}

func (st *benchStack) close(b *testing.B) {
	st.cs.Close()
	st.srv.Close()
	st.gw.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := st.sup.Close(ctx); err != nil {
		b.Error(err)
	}
	if st.hist != nil {
		if err := st.hist.Close(ctx); err != nil {
			b.Error(err)
		}
	}
}

// BenchmarkHistoryOnOff measures what recording every call costs a call:
// the same gateway and echo server (4 pooled processes), once without a
// recorder and once recording into a real history database, interleaved in
// the same run so that the machine's noise hits both alike. Each iteration
// is one call on each; every 64 iterations, 16 concurrent callers make 256
// calls on each, for throughput. Reported: p50 per mode, calls/s at
// concurrency 16 per mode, and the on/off ratios (target: within 5%), for
// throughput also the median of the burst-by-burst ratios. Also every 64
// iterations, 128 calls one after another on each; over these and the
// bursts of 16 callers, the process's CPU per call per mode, the history's
// commit of the calls included (a Flush at the end of each): "history-c1"
// and "history-c16" are what recording costs a call in CPU (on less off;
// target: 10 µs), also as the median of the burst-by-burst differences.
// SWITCHBOARD_BENCH_AA=1 runs it with history off on both sides: the
// ratios then show the benchmark's own bias and noise.
// SWITCHBOARD_BENCH_RECORDER=noop gives the "on" side a recorder that
// drops every call: what the gateway's recording costs, without the store.
func BenchmarkHistoryOnOff(b *testing.B) {
	ctx := context.Background()
	off, on := newBenchStack(b, false), newBenchStack(b, os.Getenv("SWITCHBOARD_BENCH_AA") == "")
	defer off.close(b)
	defer on.close(b)
	stacks := []*benchStack{off, on}
	lat := [2][]time.Duration{}
	busy := [2]time.Duration{}
	calls := [2]int{}
	var bursts [2][]time.Duration
	// cpu[c][i] is the process's CPU in the bursts of mode i at
	// concurrency 1 (c=0) and 16 (c=1), the history's commit of their
	// calls included; cpuCalls[c][i] their calls.
	var cpu, cpuCalls [2][2]float64
	var cpuPaired [2][]float64 // on less off, µs per call, burst by burst
	_, haveCPU := testutil.ProcessCPU()

	// measured returns the process's CPU that f and then committing the
	// history's queue (when mode i has one) took.
	measured := func(i int, f func()) time.Duration {
		cpu0, _ := testutil.ProcessCPU()
		f()
		if h := stacks[i].hist; h != nil {
			if err := h.Flush(ctx); err != nil {
				b.Fatal(err)
			}
		}
		cpu1, _ := testutil.ProcessCPU()
		return cpu1 - cpu0
	}
	burst := func(i int) time.Duration {
		const conc, per = 16, 16
		var wg sync.WaitGroup
		d := measured(i, func() {
			start := time.Now()
			for range conc {
				wg.Go(func() {
					for range per {
						if err := stacks[i].call(ctx); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			busy[i] += time.Since(start)
			bursts[i] = append(bursts[i], time.Since(start))
		})
		cpu[1][i] += float64(d.Microseconds())
		cpuCalls[1][i] += conc * per
		calls[i] += conc * per
		return d
	}
	// serial is the c=1 counterpart of burst, for the CPU per call only.
	const serialCalls = 128
	serial := func(i int) time.Duration {
		const per = serialCalls
		d := measured(i, func() {
			for range per {
				if err := stacks[i].call(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
		cpu[0][i] += float64(d.Microseconds())
		cpuCalls[0][i] += per
		return d
	}

	b.ResetTimer()
	for n := 0; b.Loop(); n++ {
		for k := range 2 {
			i := (n + k) % 2 // alternate which mode goes first
			start := time.Now()
			if err := stacks[i].call(ctx); err != nil {
				b.Fatal(err)
			}
			lat[i] = append(lat[i], time.Since(start))
		}
		if n%64 == 63 {
			k := n / 64 // n itself is always odd here
			var d [2]time.Duration
			d[k%2] = burst(k % 2)
			d[(k+1)%2] = burst((k + 1) % 2)
			cpuPaired[1] = append(cpuPaired[1], float64((d[1]-d[0]).Microseconds())/256)
			d[k%2] = serial(k % 2)
			d[(k+1)%2] = serial((k + 1) % 2)
			cpuPaired[0] = append(cpuPaired[0], float64((d[1]-d[0]).Microseconds())/serialCalls)
		}
	}
	b.StopTimer()
	if calls[0] == 0 {
		burst(0)
		burst(1)
		serial(0)
		serial(1)
	}

	p50 := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2].Microseconds())
	}
	offP50, onP50 := p50(lat[0]), p50(lat[1])
	offRate, onRate := float64(calls[0])/busy[0].Seconds(), float64(calls[1])/busy[1].Seconds()
	b.ReportMetric(offP50, "off-p50-µs")
	b.ReportMetric(onP50, "on-p50-µs")
	b.ReportMetric(onP50/offP50, "on/off-p50")
	b.ReportMetric(offRate, "off-c16-calls/s")
	b.ReportMetric(onRate, "on-c16-calls/s")
	b.ReportMetric(onRate/offRate, "on/off-c16")
	// The same ratio burst by burst: each "on" burst against the "off" one
	// next to it in time. Its median is not moved by a neighbour on the
	// machine slowing a few bursts, which can move the ratio of the sums
	// by several percent.
	paired := make([]float64, len(bursts[0]))
	for j := range paired {
		paired[j] = bursts[0][j].Seconds() / bursts[1][j].Seconds()
	}
	slices.Sort(paired)
	b.ReportMetric(paired[len(paired)/2], "on/off-c16-paired-median")
	if haveCPU {
		// The process's CPU per call (the echo servers are other
		// processes): what recording costs a call is on less off.
		for c, name := range []string{"c1", "c16"} {
			off, on := cpu[c][0]/cpuCalls[c][0], cpu[c][1]/cpuCalls[c][1]
			b.ReportMetric(off, "off-"+name+"-cpu-µs/call")
			b.ReportMetric(on, "on-"+name+"-cpu-µs/call")
			b.ReportMetric(on-off, "history-"+name+"-cpu-µs/call")
			// The same burst by burst, its median less moved by a
			// neighbour on the machine taking a core for a while.
			if p := cpuPaired[c]; len(p) > 0 {
				slices.Sort(p)
				b.ReportMetric(p[len(p)/2], "history-"+name+"-cpu-µs/call-paired-median")
			}
		}
	}
	b.ReportMetric(0, "ns/op")

	// The recorded history holds the calls (nothing was dropped).
	if on.hist == nil {
		return
	}
	if err := on.hist.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	page, err := on.hist.Calls(ctx, history.CallQuery{Limit: 1})
	if err != nil || len(page.Calls) == 0 || on.hist.Dropped() != 0 || !strings.Contains(page.Calls[0].Name, "echo") {
		b.Fatalf("history after the benchmark: %v %+v, dropped %d", err, page, on.hist.Dropped())
	}
}

// noopRecorder drops every call.
type noopRecorder struct{}

func (noopRecorder) RecordCall(record.Call) {}
