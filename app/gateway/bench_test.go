package gateway_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/app/gateway"
	"github.com/switchboardhq/switchboard/app/history"
	"github.com/switchboardhq/switchboard/app/internal/testutil"
	"github.com/switchboardhq/switchboard/app/record"
	"github.com/switchboardhq/switchboard/supervisor"
)

// The gateway benchmark (make bench-gateway, docs/benchmarks.md) compares
// tools/call through the gateway with the same calls made straight on the
// same server's stdio pipes — the floor — in one run, repeats interleaved:
//
//	go test -run '^$' -bench '^BenchmarkGatewayTable$' -benchtime 1x ./app/gateway/
//
// Every process is this test binary re-run: the backend is the minimal
// echo server of bench_echo_test.go (benchEchoEnv), the gateway runs in a
// process of its own (benchGatewayEnv), like the daemon, so that its CPU
// time, allocations and RSS are its own (its servers are its children and
// count for neither), and the load generator — this process — is held to
// one core (GOMAXPROCS=1). The load side is raw (bench_raw_test.go): no SDK.
//
// Note on the import of app/history: the gateway must not depend on it
// (app/deps_test.go), but that rule is about the gateway's packages as
// built (go list's Deps, which hold no test imports); this external test
// package imports it so that "history on" is the real store the daemon
// records into.

// benchGatewayEnv makes this test binary a gateway process: "table" (the
// benchmark's: four pooled processes of the echo server, four idle servers
// beside them) or "guard" (TestEchoCallAllocations': one process); or,
// "http-echo", the HTTP echo server (runBenchHTTPEcho). It prints
// "listening <addr>" and exits when its stdin closes.
const benchGatewayEnv = "SWITCHBOARD_BENCH_GATEWAY"

// benchRecorderEnv says what a gateway process records its calls into:
// "history:<dir>", a real history store and call journal in dir, as the
// daemon records; "count", a Recorder that counts them (what the gateway
// itself spends on recording); anything else, nothing (no Recorder).
const benchRecorderEnv = "SWITCHBOARD_BENCH_RECORDER"

// fastPathEnv switches the gateway's fast path: "0" is off, unset the
// default (on). The benchmark passes it to the gateway processes only.
const fastPathEnv = "SWITCHBOARD_FASTPATH"

// benchProfileEnv, when set to a directory, makes a gateway process write
// gateway-<pid>-cpu.pprof (the whole run) and gateway-<pid>-heap.pprof
// (allocations, at exit) there, so that the gateway's own costs can be
// profiled apart from the load generator's:
//
//	SWITCHBOARD_BENCH_PROFILE=/tmp/p make bench-gateway
//	go tool pprof -top /tmp/p/gateway-<pid>-cpu.pprof
const benchProfileEnv = "SWITCHBOARD_BENCH_PROFILE"

// benchGOGCEnv, when set, is the GC percentage of the gateway processes
// (not of the load generator nor the servers), for measuring what GC
// tuning would give the daemon.
const benchGOGCEnv = "SWITCHBOARD_BENCH_GOGC"

// benchRepeatsEnv and benchWindowEnv override the table's repeats (3) and
// the length of each measurement window (2s).
const (
	benchRepeatsEnv = "SWITCHBOARD_BENCH_REPEATS"
	benchWindowEnv  = "SWITCHBOARD_BENCH_WINDOW"
)

// runBenchGatewayIfRequested runs the echo server or a gateway process and
// exits, when this binary was started as one (TestMain calls it).
func runBenchGatewayIfRequested() {
	if os.Getenv(benchEchoEnv) != "" { // before the gateway: its children inherit its env
		runBenchEcho()
	}
	switch mode := os.Getenv(benchGatewayEnv); mode {
	case "":
	case "http-echo":
		os.Exit(runBenchHTTPEcho())
	default:
		os.Exit(runBenchGateway(mode))
	}
}

func runBenchGateway(mode string) int {
	if v, err := strconv.Atoi(os.Getenv(benchGOGCEnv)); err == nil {
		debug.SetGCPercent(v)
	}
	stopProfile := startBenchProfile()
	defer stopProfile()
	ctx := context.Background()
	fail := func(what string, err error) int {
		fmt.Printf("error: %s: %v\n", what, err)
		return 1
	}

	opts := gateway.Options{Version: "bench", Logger: slog.New(slog.DiscardHandler)}
	stats := benchStatsSource{}
	recorder := os.Getenv(benchRecorderEnv)
	if dir, ok := strings.CutPrefix(recorder, "history:"); ok {
		journal, _, err := history.OpenJournal(filepath.Join(dir, "journal"), opts.Logger)
		if err != nil {
			return fail("call journal", err)
		}
		defer journal.Close()
		hist, err := history.Open(ctx, filepath.Join(dir, "history.db"), history.Options{Journal: journal, Logger: opts.Logger})
		if err != nil {
			return fail("history", err)
		}
		defer hist.Close(ctx)
		opts.Recorder, opts.Journal = hist, journal
		stats.dropped = hist.Dropped
	} else if recorder == "count" {
		rec := &countingRecorder{}
		opts.Recorder = rec
		stats.recorded = func() uint64 { return uint64(rec.calls.Load()) }
	}

	var gw *gateway.Gateway
	sup, err := supervisor.New(ctx, supervisor.Options{Env: os.Environ(), SampleInterval: -1, HealthInterval: -1,
		NewClient:     func(s string) *mcp.Client { return gw.NewClient(s) },
		Prepare:       func(ctx context.Context, s string, cs *mcp.ClientSession) error { return gw.Prepare(ctx, s, cs) },
		WrapTransport: func(s string, t mcp.Transport) mcp.Transport { return gw.WrapTransport(s, t) }})
	if err != nil {
		return fail("supervisor", err)
	}
	defer sup.Close(ctx)
	opts.Backends = gateway.FromSupervisor(sup)
	gw = gateway.New(opts)
	defer gw.Close()

	echoEnv := map[string]string{benchEchoEnv: "1"}
	pool := 4
	if mode == "guard" {
		pool = 1
	}
	specs := []supervisor.Spec{{Name: "fast", Command: os.Args[0], Env: echoEnv, Pool: supervisor.PoolSpec{Min: pool, Max: pool}}}
	configs := []gateway.ServerConfig{{Name: "fast"}}
	for i := range 4 {
		if mode == "guard" {
			break
		}
		// The daemon serves several servers; these four take no calls.
		name := fmt.Sprintf("idle%d", i)
		specs = append(specs, supervisor.Spec{Name: name, Command: os.Args[0], Env: echoEnv, Pool: supervisor.PoolSpec{Min: 1}})
		configs = append(configs, gateway.ServerConfig{Name: name})
	}
	if err := sup.Apply(ctx, specs); err != nil {
		return fail("starting the servers", err)
	}
	gw.Sync(configs)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fail("listen", err)
	}
	srv := &http.Server{Handler: withBenchStats(gw.Handler(), stats)}
	go srv.Serve(ln)
	defer srv.Close()
	fmt.Println("listening", ln.Addr())
	io.Copy(io.Discard, os.Stdin) // until stdin closes
	return 0
}

// startBenchProfile starts the CPU profile when benchProfileEnv asks for
// one and returns what writes the profiles at exit.
func startBenchProfile() func() {
	dir := os.Getenv(benchProfileEnv)
	if dir == "" {
		return func() {}
	}
	prefix := filepath.Join(dir, fmt.Sprintf("gateway-%d-", os.Getpid()))
	cpu, err := os.Create(prefix + "cpu.pprof")
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench profile:", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(cpu); err != nil {
		fmt.Fprintln(os.Stderr, "bench profile:", err)
		cpu.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		cpu.Close()
		heap, err := os.Create(prefix + "heap.pprof")
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench profile:", err)
			return
		}
		defer heap.Close()
		if err := pprof.Lookup("allocs").WriteTo(heap, 0); err != nil {
			fmt.Fprintln(os.Stderr, "bench profile:", err)
		}
	}
}

// countingRecorder counts the calls recorded, doing nothing else.
type countingRecorder struct{ calls atomic.Int64 }

func (r *countingRecorder) RecordCall(record.Call) { r.calls.Add(1) }

// benchStatsPath serves a gateway process's allocation and GC counters,
// which unlike latency hardly move when other work shares the machine,
// and what its recorder did.
const benchStatsPath = "/bench/stats"

// benchStatsSource is what a gateway process knows of its recorder: calls
// recorded (the guard's counter) and records dropped (the history store).
type benchStatsSource struct{ recorded, dropped func() uint64 }

func withBenchStats(next http.Handler, src benchStatsSource) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != benchStatsPath {
			next.ServeHTTP(w, r)
			return
		}
		samples := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}, {Name: "/gc/heap/allocs:objects"}, {Name: "/gc/cycles/total:gc-cycles"}}
		metrics.Read(samples)
		var recorded, dropped uint64
		if src.recorded != nil {
			recorded = src.recorded()
		}
		if src.dropped != nil {
			dropped = src.dropped()
		}
		fmt.Fprintf(w, "%d %d %d %d %d\n", samples[0].Value.Uint64(), samples[1].Value.Uint64(), samples[2].Value.Uint64(), recorded, dropped)
	})
}

// benchStats are a gateway process's counters.
type benchStats struct{ bytes, objects, cycles, recorded, dropped uint64 }

func readBenchStats(client *http.Client, base string) (benchStats, error) {
	resp, err := client.Get(base + benchStatsPath)
	if err != nil {
		return benchStats{}, err
	}
	defer resp.Body.Close()
	var st benchStats
	_, err = fmt.Fscan(resp.Body, &st.bytes, &st.objects, &st.cycles, &st.recorded, &st.dropped)
	return st, err
}

// A benchGateway is a process serving MCP over HTTP: its base URL and pid,
// the path of the echo server's endpoint ("": /mcp/fast, a gateway
// process's), the bearer token its requests carry ("": none), and where
// its allocation counters come from.
type benchGateway struct {
	url   string
	pid   int
	path  string
	auth  string
	stats benchStatsKind
}

// benchStatsKind is where a process's allocation counters are read.
type benchStatsKind int

const (
	statsBench   benchStatsKind = iota // benchStatsPath (this test binary's processes)
	statsRuntime                       // the daemon's /debug/runtime (SWITCHBOARD_RUNTIME_STATS=1)
	statsNone                          // nowhere (a peer)
)

// endpoint is the URL of the echo server's MCP endpoint.
func (g *benchGateway) endpoint() string {
	if g.path == "" {
		return g.url + "/mcp/fast"
	}
	return g.url + g.path
}

// readStats reads the process's counters; ok is false when it has none.
func (g *benchGateway) readStats(client *http.Client) (st benchStats, ok bool, err error) {
	switch g.stats {
	case statsNone:
		return benchStats{}, false, nil
	case statsRuntime:
		st, err = readRuntimeStats(client, g.url, g.auth)
		return st, err == nil, err
	default:
		st, err = readBenchStats(client, g.url)
		return st, err == nil, err
	}
}

// startBenchGateway starts a gateway process in mode with env added to
// this process's (an entry "KEY=" without value removes KEY), and waits
// until it lists the echo server's tools at /mcp/fast.
func startBenchGateway(tb testing.TB, client *http.Client, mode string, env ...string) benchGateway {
	tb.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), benchGatewayEnv+"="+mode)
	for _, kv := range env {
		if k, v, _ := strings.Cut(kv, "="); v == "" {
			cmd.Env = slices.DeleteFunc(cmd.Env, func(e string) bool { return strings.HasPrefix(e, k+"=") })
		} else {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { stdin.Close(); cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "listening ") {
		tb.Fatalf("gateway process: %q %v", line, err)
	}
	gw := benchGateway{url: "http://" + strings.TrimSpace(strings.TrimPrefix(line, "listening ")), pid: cmd.Process.Pid}
	var scratch bytes.Buffer
	testutil.Eventually(tb, 30*time.Second, "the gateway lists the echo server's tools", func() bool {
		s, err := openHTTPSession(client, gw.endpoint(), "", &scratch)
		if err != nil {
			return false
		}
		defer s.close()
		_, result, err := s.request(nil, &scratch, 2, "tools/list", `{}`)
		return err == nil && bytes.Contains(result, []byte(`"name":"echo"`))
	})
	return gw
}

// processCPU returns the user and system CPU time of process pid so far
// (not of its children), or 0 where /proc cannot tell.
func processCPU(pid int) time.Duration {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// The fields after the command (which is in parentheses and may hold
	// spaces): state is field 3, utime 14, stime 15, in clock ticks.
	_, rest, ok := strings.Cut(string(data), ") ")
	if !ok {
		return 0
	}
	f := strings.Fields(rest)
	if len(f) < 13 {
		return 0
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0
	}
	const ticksPerSecond = 100 // USER_HZ, 100 on every Linux the tests run on
	return time.Duration(utime+stime) * time.Second / ticksPerSecond
}

// processRSS returns the resident size of process pid (not of its
// children) in MiB, or 0 where /proc cannot tell.
func processRSS(pid int) float64 {
	rss, _ := processMemory(pid)
	return rss
}

// processMemory returns the resident size of process pid (not of its
// children) and the anonymous part of it (its heap and stacks, without
// the pages of its binary and other files it maps), in MiB, or 0 where
// /proc cannot tell.
func processMemory(pid int) (rss, anon float64) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, 0
	}
	mib := func(kb string) float64 {
		n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(kb), "kB")))
		return float64(n) / 1024
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if kb, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			rss = mib(kb)
		} else if kb, ok := strings.CutPrefix(line, "RssAnon:"); ok {
			anon = mib(kb)
		}
	}
	return rss, anon
}

// --- the table ---

// A benchTarget is what a window of calls is made against: the floor (the
// echo server's processes, straight) or a gateway process.
type benchTarget struct {
	name  string
	floor []*stdioServer
	gw    *benchGateway
}

// A benchWindow is what one measurement window gave.
type benchWindow struct {
	calls    int
	elapsed  time.Duration
	p50, p95 time.Duration
	cpu      time.Duration // of the gateway process, or the floor's servers
	treeCPU  time.Duration // of the gateway process and its descendants, or the floor's servers
	alloc    uint64        // bytes allocated by the gateway process
	objects  uint64        // objects allocated by the gateway process
	hasAlloc bool          // whether alloc and objects were measured
	load     float64       // the machine's 1-minute load average at the end of the window
	rss      float64       // peak RSS of the gateway process, MiB
	anon     float64       // peak of its anonymous part (RssAnon), MiB
	dropped  uint64        // records the history store dropped
}

func (w benchWindow) rate() float64 { return float64(w.calls) / w.elapsed.Seconds() }

// worker makes one call (seq is unique within the worker) and returns
// its error.
type worker func(seq int64) error

// measure runs the workers for a warm-up, then for d, and returns the calls
// made in d and their latencies; it samples the gateway's CPU, allocations
// and RSS around (and during) the window.
func measure(tb testing.TB, client *http.Client, t benchTarget, workers []worker, d time.Duration) benchWindow {
	tb.Helper()
	run := func(d time.Duration, lat *[]time.Duration) int64 {
		var total atomic.Int64
		var failure atomic.Pointer[error]
		deadline := time.Now().Add(d)
		var wg sync.WaitGroup
		lats := make([][]time.Duration, len(workers))
		for i, call := range workers {
			if lat != nil {
				lats[i] = make([]time.Duration, 0, 1<<14)
			}
			wg.Go(func() {
				var seq int64
				for {
					t0 := time.Now()
					if t0.After(deadline) || seq >= maxWindowCalls {
						total.Add(seq)
						return
					}
					seq++
					if err := call(seq); err != nil {
						failure.CompareAndSwap(nil, &err)
						total.Add(seq)
						return
					}
					if lat != nil {
						lats[i] = append(lats[i], time.Since(t0))
					}
				}
			})
		}
		wg.Wait()
		if err := failure.Load(); err != nil {
			tb.Fatalf("%s: %v", t.name, *err)
		}
		if lat != nil {
			*lat = slices.Concat(lats...)
		}
		return total.Load()
	}
	run(d/5, nil) // warm-up

	var w benchWindow
	cpu0, tree0, st0 := t.cpu(), t.treeCPU(), benchStats{}
	if t.gw != nil {
		var err error
		if st0, w.hasAlloc, err = t.gw.readStats(client); err != nil {
			tb.Fatal(err)
		}
	}
	stopRSS := make(chan struct{})
	rssDone := make(chan [2]float64)
	go func() {
		var peak [2]float64 // VmRSS, RssAnon
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			if t.gw != nil {
				rss, anon := processMemory(t.gw.pid)
				peak = [2]float64{max(peak[0], rss), max(peak[1], anon)}
			}
			select {
			case <-stopRSS:
				rssDone <- peak
				return
			case <-tick.C:
			}
		}
	}()
	var lat []time.Duration
	start := time.Now()
	n := run(d, &lat)
	w.elapsed = time.Since(start)
	close(stopRSS)
	peak := <-rssDone
	w.rss, w.anon = peak[0], peak[1]
	w.cpu, w.treeCPU = t.cpu()-cpu0, t.treeCPU()-tree0
	w.load = loadAverage()
	if w.hasAlloc {
		st1, _, err := t.gw.readStats(client)
		if err != nil {
			tb.Fatal(err)
		}
		w.alloc, w.objects, w.dropped = st1.bytes-st0.bytes, st1.objects-st0.objects, st1.dropped-st0.dropped
	}
	w.calls = int(n)
	slices.Sort(lat)
	if len(lat) > 0 {
		w.p50, w.p95 = lat[len(lat)/2], lat[len(lat)*95/100]
	}
	return w
}

// treeCPU is the CPU time so far of the gateway process and every
// process below it, or of the floor's servers together.
func (t benchTarget) treeCPU() time.Duration {
	if t.gw == nil {
		return t.cpu()
	}
	var sum time.Duration
	for _, pid := range processTree(t.gw.pid) {
		sum += processCPU(pid)
	}
	return sum
}

// cpu is the CPU time so far of the gateway process, or of the floor's
// servers together.
func (t benchTarget) cpu() time.Duration {
	if t.gw != nil {
		return processCPU(t.gw.pid)
	}
	var sum time.Duration
	for _, s := range t.floor {
		sum += processCPU(s.cmd.Process.Pid)
	}
	return sum
}

// callWorkers returns conc workers making call on t: on the floor, worker
// i uses process i mod 4 (several in flight on a pipe); on a gateway,
// session i mod sessions, opened here and closed at the end of the test.
func callWorkers(tb testing.TB, client *http.Client, t benchTarget, conc, sessions int, call benchCall) ([]worker, func()) {
	var workers []worker
	if t.gw == nil {
		servers := t.floor[:min(conc, len(t.floor))]
		for _, s := range servers {
			s.check.Store(&call.check)
		}
		for i := range conc {
			s := servers[i%len(servers)]
			var buf []byte
			workers = append(workers, func(seq int64) error {
				var err error
				buf, err = s.call(buf, i, seq, call.method, call.params)
				return err
			})
		}
		return workers, func() {}
	}
	var opened []*httpSession
	var scratch bytes.Buffer
	for range sessions {
		s, err := openHTTPSession(client, t.gw.endpoint(), t.gw.auth, &scratch)
		if err != nil {
			tb.Fatalf("%s: %v", t.name, err)
		}
		opened = append(opened, s)
	}
	for i := range conc {
		s := opened[i%len(opened)]
		var buf []byte
		var scratch bytes.Buffer
		workers = append(workers, func(seq int64) error {
			var result []byte
			var err error
			// Ids unique among the calls in flight on the session.
			if buf, result, err = s.request(buf, &scratch, seq*maxSlots+int64(i), call.method, call.params); err != nil {
				return err
			}
			return call.check(result)
		})
	}
	return workers, func() {
		for _, s := range opened {
			s.close()
		}
	}
}

// setupWorker sets one session up: initialize, notifications/initialized
// and tools/list, whose latency it appends to lat, then ends it (DELETE):
// measure's own latencies would include the DELETE.
func setupWorker(client *http.Client, url, auth string, lat *[]time.Duration) worker {
	var scratch bytes.Buffer
	var buf []byte
	return func(int64) error {
		t0 := time.Now()
		s, err := openHTTPSession(client, url, auth, &scratch)
		if err != nil {
			return err
		}
		var result []byte
		if buf, result, err = s.request(buf, &scratch, 2, "tools/list", `{}`); err != nil {
			return err
		}
		if !bytes.Contains(result, []byte(`"name":"echo"`)) {
			return fmt.Errorf("tools/list without echo: %.200s", result)
		}
		*lat = append(*lat, time.Since(t0))
		s.close()
		return nil
	}
}

// The rows' measurements, by row and target, one per repeat.
type benchResults map[string]map[string][]benchWindow

func (r benchResults) add(row, target string, w benchWindow) {
	if r[row] == nil {
		r[row] = map[string][]benchWindow{}
	}
	r[row][target] = append(r[row][target], w)
}

// historyPairs is how many pairs of short windows, history on then off
// (or off then on), each repeat measures at c=16.
const historyPairs = 6

const (
	targetFloor    = "floor"
	targetHTTPEcho = "http-echo"
	targetOn       = "on"
	targetOff      = "off"
	targetCounted  = "on-counted"
	targetNoHist   = "on-nohist"
)

// benchTableRuns is how many interleaved repeats a table benchmark makes
// and how long each window lasts: 3 of 2 s unless benchRepeatsEnv and
// benchWindowEnv say otherwise (BenchmarkGatewayTable, BenchmarkServeTable).
func benchTableRuns() (repeats int, window time.Duration) {
	repeats, window = 3, 2*time.Second
	if n, err := strconv.Atoi(os.Getenv(benchRepeatsEnv)); err == nil && n > 0 {
		repeats = n
	}
	if d, err := time.ParseDuration(os.Getenv(benchWindowEnv)); err == nil && d > 0 {
		window = d
	}
	return repeats, window
}

// startFloor starts n raw stdio echo servers, the table benchmarks' floor,
// each closed when b ends.
func startFloor(b *testing.B, n int) []*stdioServer {
	var floor []*stdioServer
	for range n {
		s, err := startStdioServer()
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(s.close)
		floor = append(floor, s)
	}
	return floor
}

// BenchmarkGatewayTable measures the table of issue 18 (docs/benchmarks.md
// explains each row) and prints it in markdown. It runs once whatever b.N.
func BenchmarkGatewayTable(b *testing.B) {
	repeats, window := benchTableRuns()
	client := newBenchHTTPClient()
	defer client.CloseIdleConnections()

	floor := startFloor(b, 4)
	start := func(env ...string) *benchGateway {
		gw := startBenchGateway(b, client, "table", env...)
		return &gw
	}
	on := start(fastPathEnv+"=", benchRecorderEnv+"=history:"+b.TempDir())
	off := start(fastPathEnv+"=0", benchRecorderEnv+"=history:"+b.TempDir())
	counted := start(fastPathEnv+"=", benchRecorderEnv+"=count")
	noHist := start(fastPathEnv+"=", benchRecorderEnv+"=")
	httpEcho := &benchGateway{}
	*httpEcho = startBenchGateway(b, client, "http-echo")
	targets := map[string]benchTarget{
		targetFloor:    {name: targetFloor, floor: floor},
		targetHTTPEcho: {name: targetHTTPEcho, gw: httpEcho},
		targetOn:       {name: targetOn, gw: on},
		targetOff:      {name: targetOff, gw: off},
		targetCounted:  {name: targetCounted, gw: counted},
		targetNoHist:   {name: targetNoHist, gw: noHist},
	}
	idleRSS := processRSS(on.pid)

	prev := runtime.GOMAXPROCS(1) // the load generator gets one core
	defer runtime.GOMAXPROCS(prev)
	rows := []struct {
		name     string
		conc     int
		sessions int
		call     benchCall
		targets  []string
	}{
		{"echo-c1", 1, 1, echoCall(), []string{targetFloor, targetHTTPEcho, targetOn, targetOff, targetCounted, targetNoHist}},
		{"echo-c16", 16, 4, echoCall(), []string{targetFloor, targetHTTPEcho, targetOn, targetOff, targetCounted, targetNoHist}},
		{"big256k-c4", 4, 4, bigCall(256), []string{targetFloor, targetHTTPEcho, targetOn, targetOff}},
	}
	results := benchResults{}
	began := time.Now()
	for rep := range repeats {
		for _, row := range rows {
			// Interleaved, and in a different order each repeat.
			order := slices.Clone(row.targets)
			for range rep {
				order = append(order[1:], order[0])
			}
			for _, name := range order {
				t := targets[name]
				workers, done := callWorkers(b, client, t, row.conc, row.sessions, row.call)
				results.add(row.name, name, measure(b, client, t, workers, window))
				done()
			}
		}
		for _, name := range []string{targetOn, targetOff} {
			t := targets[name]
			var lat []time.Duration
			w := measure(b, client, t, []worker{setupWorker(client, t.gw.endpoint(), "", &lat)}, window/2)
			slices.Sort(lat)
			w.p50 = lat[len(lat)/2] // the setups of the warm-up and the window: both are warm
			results.add("setup", name, w)
		}
		// History on against off in short windows, alternately: calls/s
		// swing with the machine's load, which changes less between
		// neighbouring windows than over a whole repeat.
		for k := range historyPairs {
			pair := []string{targetOn, targetNoHist}
			if k%2 == 1 {
				slices.Reverse(pair)
			}
			for _, name := range pair {
				t := targets[name]
				workers, done := callWorkers(b, client, t, 16, 4, echoCall())
				results.add("history-pairs", name, measure(b, client, t, workers, window/4))
				done()
			}
		}
	}
	printBenchTable(os.Stdout, results, repeats, window, time.Since(began), idleRSS)
}

// printBenchTable writes the table in markdown: each cell is the median
// of the repeats, then every repeat in brackets, in the order run.
func printBenchTable(out io.Writer, r benchResults, repeats int, window, took time.Duration, idleRSS float64) {
	uptime, _ := exec.Command("uptime").Output()
	fmt.Fprintf(out, "\n### Gateway benchmark: %d interleaved repeats of %v windows, %v in all\n\n", repeats, window, took.Round(time.Second))
	fmt.Fprintf(out, "Load generator GOMAXPROCS=1 (raw clients, no SDK), %d CPUs, %s/%s, %s; backend: the minimal Go stdio echo server (app/gateway/bench_echo_test.go).\n",
		runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version())
	fmt.Fprintf(out, "Machine load (uptime): %s\n", strings.TrimSpace(string(uptime)))
	fmt.Fprintf(out, "Columns: floor = raw newline JSON-RPC on the echo server's pipes; HTTP echo = the same replies served over HTTP by a bare net/http server, no gateway; on = gateway, fast path on (default), history recorded into SQLite "+
		"(+ call journal) as the daemon does; off = the same with %s=0; on, calls counted = fast path on, a Recorder that only counts; "+
		"on, no history = fast path on, no Recorder.\n", fastPathEnv)
	fmt.Fprintf(out, "Each cell: median (every repeat).\n\n")
	columns := []string{targetFloor, targetHTTPEcho, targetOn, targetOff, targetCounted, targetNoHist}
	fmt.Fprintln(out, "| row | floor | HTTP echo | on | off | on, calls counted | on, no history | on / floor | off / floor | on / HTTP echo | target |")
	fmt.Fprintln(out, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")

	us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
	cell := func(v []float64, format string) string {
		if len(v) == 0 {
			return "—"
		}
		parts := make([]string, len(v))
		for i, x := range v {
			parts[i] = fmt.Sprintf(format, x)
		}
		return fmt.Sprintf(format, median(v)) + " (" + strings.Join(parts, " / ") + ")"
	}
	// pairwise applies f to each repeat's a and b.
	pairwise := func(a, b []float64, f func(a, b float64) float64) []float64 {
		var v []float64
		for i := range min(len(a), len(b)) {
			v = append(v, f(a[i], b[i]))
		}
		return v
	}
	ratio := func(a, b float64) float64 { return a / b }
	minus := func(a, b float64) float64 { return a - b }
	percent := func(a, b float64) float64 { return (a/b - 1) * 100 }
	// A line is the row's name, then a value per column (by target), then
	// the ratios of on and off to the floor when withRatios.
	line := func(name string, v map[string][]float64, format string, withRatios bool, target string) {
		fmt.Fprintf(out, "| %s |", name)
		for _, c := range columns {
			fmt.Fprintf(out, " %s |", cell(v[c], format))
		}
		for _, c := range [][2]string{{targetOn, targetFloor}, {targetOff, targetFloor}, {targetOn, targetHTTPEcho}} {
			if withRatios {
				fmt.Fprintf(out, " %s |", cell(pairwise(v[c[0]], v[c[1]], ratio), "%.3f"))
			} else {
				fmt.Fprint(out, " — |")
			}
		}
		fmt.Fprintf(out, " %s |\n", target)
	}
	// values returns a row's figures by target, one per repeat.
	values := func(row string, f func(benchWindow) float64, targets ...string) map[string][]float64 {
		if len(targets) == 0 {
			targets = columns
		}
		m := map[string][]float64{}
		for _, t := range targets {
			for _, w := range r[row][t] {
				m[t] = append(m[t], f(w))
			}
		}
		return m
	}
	// overFloor returns v with each server's figures less the floor's.
	overFloor := func(v map[string][]float64) map[string][]float64 {
		m := map[string][]float64{}
		for t, x := range v {
			if t != targetFloor {
				m[t] = pairwise(x, v[targetFloor], minus)
			}
		}
		return m
	}
	gateways := []string{targetHTTPEcho, targetOn, targetOff, targetCounted, targetNoHist} // the processes with /bench/stats
	rate := func(w benchWindow) float64 { return w.rate() }
	p50 := func(w benchWindow) float64 { return us(w.p50) }
	p95 := func(w benchWindow) float64 { return us(w.p95) }
	cpuPerCall := func(w benchWindow) float64 { return us(w.cpu) / float64(w.calls) }
	kibPerCall := func(w benchWindow) float64 { return float64(w.alloc) / 1024 / float64(w.calls) }

	line("echo c=1, 1 session: p50 µs", values("echo-c1", p50), "%.0f", false, "")
	line("echo c=1: added p50 µs over the floor", overFloor(values("echo-c1", p50)), "%.0f", false, "on ≤ 200")
	line("echo c=1: p95 µs", values("echo-c1", p95), "%.0f", false, "")
	line("echo c=1: calls/s", values("echo-c1", rate), "%.0f", true, "")
	line("echo c=16, 4 sessions, 4 pooled processes: calls/s", values("echo-c16", rate), "%.0f", true, "on / floor ≥ 0.25")
	line("256 KiB results, c=4: calls/s", values("big256k-c4", rate), "%.0f", true, "on / floor ≥ 0.10")
	line("session setup p50 µs (initialize + initialized + tools/list)", values("setup", p50), "%.0f", false, "on ≤ 600")
	line("CPU µs per echo call, c=1 (the process called, not its children; floor: the echo server)", values("echo-c1", cpuPerCall), "%.0f", false, "on ≤ 250")
	line("CPU µs per echo call, c=16 (the same)", values("echo-c16", cpuPerCall), "%.0f", false, "")
	line("CPU µs per 256 KiB call, c=4 (the same)", values("big256k-c4", cpuPerCall), "%.0f", false, "")
	line("allocated KiB per echo call, c=1 (in the process called)", values("echo-c1", kibPerCall, gateways...), "%.1f", false, "on ≤ 16")
	line("allocated KiB per echo call, c=16 (in the process called)", values("echo-c16", kibPerCall, gateways...), "%.1f", false, "")
	line(fmt.Sprintf("RSS MiB, peak under the c=16 load (children excluded; on: %.1f idle)", idleRSS),
		values("echo-c16", func(w benchWindow) float64 { return w.rss }, gateways...), "%.1f", false, "on ≤ 40")
	c16 := values("echo-c16", rate, targetOn, targetCounted, targetNoHist)
	line("history at c=16: calls/s against on, no history, % difference", map[string][]float64{
		targetOn:      pairwise(c16[targetOn], c16[targetNoHist], percent),
		targetCounted: pairwise(c16[targetCounted], c16[targetNoHist], percent),
	}, "%+.1f", false, "on: within ±5 %")
	c16 = values("echo-c16", cpuPerCall, targetOn, targetCounted, targetNoHist)
	// Each repeat's median of its pairs' differences.
	pairs := values("history-pairs", rate, targetOn, targetNoHist)
	var pairDelta []float64
	for rep := range len(pairs[targetOn]) / historyPairs {
		from, to := rep*historyPairs, (rep+1)*historyPairs
		pairDelta = append(pairDelta, median(pairwise(pairs[targetOn][from:to], pairs[targetNoHist][from:to], percent)))
	}
	line(fmt.Sprintf("history at c=16, %d pairs of %v windows a repeat: calls/s against on, no history, %% difference (each repeat's median)", historyPairs, window/4),
		map[string][]float64{targetOn: pairDelta}, "%+.1f", false, "on: within ±5 %")
	line("history at c=16: CPU µs per call over on, no history", map[string][]float64{
		targetOn:      pairwise(c16[targetOn], c16[targetNoHist], minus),
		targetCounted: pairwise(c16[targetCounted], c16[targetNoHist], minus),
	}, "%+.0f", false, "")
	line("history records dropped during the c=16 windows", values("echo-c16", func(w benchWindow) float64 { return float64(w.dropped) }, targetOn, targetOff),
		"%.0f", false, "0")
	fmt.Fprintln(out)
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
