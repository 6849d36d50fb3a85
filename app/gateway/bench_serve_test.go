package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app/internal/testutil"
	"github.com/switchboardhq/switchboard/app/tokens"
)

// The daemon benchmark (make bench-serve, docs/benchmarks.md, issue 33):
// the same loads as the gateway benchmark, against the real `switchboard
// serve` as shipped (history on, its HTTP stack, connection limits, token
// checks, session guard, journal), beside the stdio floor, the gateway
// alone (a process of this test binary, history on, as in
// BenchmarkGatewayTable) and the fastest Go peer (TBXark's mcp-proxy),
// interleaved, in one run:
//
//	go test -run '^$' -bench '^BenchmarkServeTable$' -benchtime 1x ./app/gateway/
//
// Every one of them has the same backend, the minimal echo server of
// bench_echo_test.go (this test binary, benchEchoEnv), and the same load
// side (bench_raw_test.go, GOMAXPROCS=1, raw HTTP).

// serveBinaryEnv names a switchboard binary to run (make bench-serve
// passes the one `make build` made); unset, the benchmark builds one.
const serveBinaryEnv = "SWITCHBOARD_BENCH_SERVE"

// serveBeforeEnv names another switchboard binary (an earlier build) to
// run beside the one measured, as the column "before": on a shared
// machine, a change's effect is only seen against the old build measured
// in the same run, interleaved.
const serveBeforeEnv = "SWITCHBOARD_BENCH_SERVE_BEFORE"

// peerBinaryEnv names TBXark's mcp-proxy; unset, the one in
// ../shared/bench/peers (see its README) if it is there, else no peer.
const peerBinaryEnv = "SWITCHBOARD_BENCH_PEER"

// defaultPeerBinary is where the team keeps the peer's binary.
const defaultPeerBinary = "/work/shared/bench/peers/tbxark-mcp-proxy"

// benchRowsEnv and benchTargetsEnv, comma-separated, keep only those rows
// (echo-c1, echo-c16, big256k-c4, resource256k-c4, setup, setup-catalog)
// and columns (floor, gateway, serve, peer): for profiling the daemon
// under one load,
//
//	SWITCHBOARD_BENCH_PROFILE=/tmp/p SWITCHBOARD_BENCH_ROWS=echo-c1 SWITCHBOARD_BENCH_TARGETS=serve make bench-serve
const (
	benchRowsEnv    = "SWITCHBOARD_BENCH_ROWS"
	benchTargetsEnv = "SWITCHBOARD_BENCH_TARGETS"
)

// chosen reports whether name is in the comma-separated list of env, or
// env is unset.
func chosen(env, name string) bool {
	v := os.Getenv(env)
	return v == "" || slices.Contains(strings.Split(v, ","), name)
}

// maxWindowCalls bounds the calls of one worker in one window, whatever
// the window's length.
const maxWindowCalls = 1 << 22

// serveStopTimeout bounds a daemon's or peer's exit after SIGTERM, before
// it is killed.
const serveStopTimeout = 30 * time.Second

const (
	targetGateway = "gateway"
	targetServe   = "serve"
	targetBefore  = "before"
	targetPeer    = "peer"
)

// buildServe returns the switchboard binary to run: serveBinaryEnv's, or
// one built now as `make build` builds it (without the dashboard's
// assets, which no call touches).
func buildServe(tb testing.TB) string {
	tb.Helper()
	if p := os.Getenv(serveBinaryEnv); p != "" {
		return p
	}
	bin := filepath.Join(tb.TempDir(), "switchboard")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", bin, "github.com/switchboardhq/switchboard")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		tb.Fatalf("building switchboard: %v\n%s", err, out)
	}
	return bin
}

// startServe runs `switchboard serve` on a data directory of its own
// whose config has one server, echo (the echo server, a pool of four
// processes), with its runtime stats on; profile, when not empty, is a
// directory that the daemon writes serve-cpu.pprof and serve-allocs.pprof
// into when it stops; tools, when not empty, is a corpus the echo server
// lists too (benchEchoToolsEnv). It waits until /mcp/echo lists the echo
// tool.
func startServe(tb testing.TB, client *http.Client, binary, profile, tools string) *benchGateway {
	tb.Helper()
	home := filepath.Join(tb.TempDir(), "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		tb.Fatal(err)
	}
	config := map[string]any{"version": 1, "listen": "127.0.0.1:0", "servers": map[string]any{
		"echo": map[string]any{"command": os.Args[0], "env": map[string]string{benchEchoEnv: "1", benchEchoToolsEnv: tools},
			"pool": map[string]any{"min": 4, "max": 4}},
	}}
	data, _ := json.Marshal(config)
	if err := os.WriteFile(filepath.Join(home, "config.json"), data, 0o600); err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(binary, "serve")
	cmd.Env = slices.DeleteFunc(os.Environ(), func(e string) bool {
		k, _, _ := strings.Cut(e, "=")
		return k == "HOME" || k == "SWITCHBOARD_HOME" || k == "XDG_DATA_HOME" || k == "XDG_CONFIG_HOME" ||
			k == "SWITCHBOARD_CPUPROFILE" || k == "SWITCHBOARD_ALLOCPROFILE" || k == "GOMAXPROCS"
	})
	cmd.Env = append(cmd.Env, "HOME="+tb.TempDir(), "SWITCHBOARD_HOME="+home, "SWITCHBOARD_RUNTIME_STATS=1")
	if profile != "" {
		if err := os.MkdirAll(profile, 0o755); err != nil {
			tb.Fatal(err)
		}
		cmd.Env = append(cmd.Env, "SWITCHBOARD_CPUPROFILE="+filepath.Join(profile, "serve-cpu.pprof"),
			"SWITCHBOARD_ALLOCPROFILE="+filepath.Join(profile, "serve-allocs.pprof"))
	}
	var out testutil.SyncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	exited := stopOnCleanup(tb, cmd, "switchboard serve", &out)
	var info struct {
		PID     int    `json:"pid"`
		Address string `json:"address"`
	}
	testutil.Eventually(tb, 60*time.Second, "daemon.json of the daemon started", func() bool {
		if !running(tb, exited, "switchboard serve") {
			return false
		}
		data, err := os.ReadFile(filepath.Join(home, "daemon.json"))
		return err == nil && json.Unmarshal(data, &info) == nil && info.PID == cmd.Process.Pid
	})
	store, err := tokens.Open(filepath.Join(home, "tokens.json"))
	if err != nil {
		tb.Fatal(err)
	}
	tok, err := store.Ensure("cli")
	if err != nil {
		tb.Fatal(err)
	}
	gw := &benchGateway{url: info.Address, pid: info.PID, path: "/mcp/echo", auth: tok.Secret, stats: statsRuntime}
	waitListing(tb, client, gw, exited, "the daemon")
	return gw
}

// startPeer runs TBXark's mcp-proxy with the echo server behind it
// (README in ../shared/bench/peers), or returns nil when there is none;
// tools is as for startServe.
func startPeer(tb testing.TB, client *http.Client, tools string) *benchGateway {
	tb.Helper()
	binary := os.Getenv(peerBinaryEnv)
	if binary == "" {
		if _, err := os.Stat(defaultPeerBinary); err != nil {
			tb.Logf("no peer: %s is not there and %s is unset", defaultPeerBinary, peerBinaryEnv)
			return nil
		}
		binary = defaultPeerBinary
	}
	// A free loopback port: the peer takes an address, not a listener.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	config := map[string]any{
		"mcpProxy": map[string]any{"baseURL": "http://" + addr, "addr": addr, "name": "p", "version": "1",
			"type": "streamable-http", "options": map[string]any{"logEnabled": false}},
		"mcpServers": map[string]any{"echo": map[string]any{"command": os.Args[0], "args": []string{},
			"env": map[string]string{benchEchoEnv: "1", benchEchoToolsEnv: tools}}},
	}
	data, _ := json.Marshal(config)
	path := filepath.Join(tb.TempDir(), "peer.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(binary, "--config", path)
	cmd.Env = slices.DeleteFunc(os.Environ(), func(e string) bool { return strings.HasPrefix(e, "GOMAXPROCS=") })
	cmd.Env = append(cmd.Env, benchEchoEnv+"=1", benchEchoToolsEnv+"="+tools) // should the peer not pass the config's env
	var out testutil.SyncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	exited := stopOnCleanup(tb, cmd, "the peer", &out)
	gw := &benchGateway{url: "http://" + addr, pid: cmd.Process.Pid, path: "/echo/mcp", stats: statsNone}
	waitListing(tb, client, gw, exited, "the peer")
	return gw
}

// stopOnCleanup ends cmd when the benchmark ends: SIGTERM (the daemon
// writes its profiles then), and SIGKILL if it has not exited within
// serveStopTimeout. The channel it returns is closed when cmd has exited,
// so that a wait for it to be ready can stop at once if it never will.
func stopOnCleanup(tb testing.TB, cmd *exec.Cmd, what string, out *testutil.SyncBuffer) <-chan struct{} {
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	tb.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		timer := time.NewTimer(serveStopTimeout)
		defer timer.Stop()
		select {
		case <-exited:
		case <-timer.C:
			cmd.Process.Kill()
			<-exited
			tb.Logf("%s did not stop within %v of SIGTERM: killed", what, serveStopTimeout)
		}
		if tb.Failed() {
			tb.Logf("output of %s:\n%s", what, out.String())
		}
	})
	return exited
}

// running reports whether the process whose exit closes exited still runs,
// and fails tb (naming what) if it does not.
func running(tb testing.TB, exited <-chan struct{}, what string) bool {
	tb.Helper()
	select {
	case <-exited:
		tb.Fatalf("%s exited before it was ready", what)
		return false
	default:
		return true
	}
}

// waitListing waits until gw's endpoint lists the echo server's tools,
// and fails at once if its process (whose exit closes exited) ends.
func waitListing(tb testing.TB, client *http.Client, gw *benchGateway, exited <-chan struct{}, what string) {
	tb.Helper()
	var scratch bytes.Buffer
	testutil.Eventually(tb, 60*time.Second, what+" lists the echo server's tools", func() bool {
		if !running(tb, exited, what) {
			return false
		}
		s, err := openHTTPSession(client, gw.endpoint(), gw.auth, &scratch)
		if err != nil {
			return false
		}
		defer s.close()
		_, result, err := s.request(nil, &scratch, 2, "tools/list", `{}`)
		return err == nil && bytes.Contains(result, []byte(`"name":"echo"`))
	})
}

// readRuntimeStats reads the daemon's /debug/runtime.
func readRuntimeStats(client *http.Client, base, auth string) (benchStats, error) {
	req, err := http.NewRequest(http.MethodGet, base+"/debug/runtime", nil)
	if err != nil {
		return benchStats{}, err
	}
	req.Header.Set("Authorization", "Bearer "+auth)
	resp, err := client.Do(req)
	if err != nil {
		return benchStats{}, fmt.Errorf("GET /debug/runtime: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return benchStats{}, fmt.Errorf("GET /debug/runtime: status %d: %s", resp.StatusCode, body)
	}
	var v struct {
		AllocBytes   uint64 `json:"allocBytes"`
		AllocObjects uint64 `json:"allocObjects"`
		GCCycles     uint64 `json:"gcCycles"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		return benchStats{}, fmt.Errorf("GET /debug/runtime: %w", err)
	}
	return benchStats{bytes: v.AllocBytes, objects: v.AllocObjects, cycles: v.GCCycles}, nil
}

// processTree returns pid and every process below it (from /proc).
func processTree(pid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return []int{pid}
	}
	children := map[int][]int{}
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone
		}
		_, rest, ok := strings.Cut(string(data), ") ")
		f := strings.Fields(rest)
		if !ok || len(f) < 2 {
			continue
		}
		if ppid, err := strconv.Atoi(f[1]); err == nil {
			children[ppid] = append(children[ppid], child)
		}
	}
	tree := []int{pid}
	for i := 0; i < len(tree) && i < 4096; i++ {
		tree = append(tree, children[tree[i]]...)
	}
	return tree
}

// loadAverage is the machine's 1-minute load average, or -1.
func loadAverage() float64 {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	f := strings.Fields(string(data))
	if len(f) == 0 {
		return -1
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return -1
	}
	return v
}

// BenchmarkServeTable measures issue 33's table (docs/benchmarks.md) and
// prints it in markdown. It runs once whatever b.N.
func BenchmarkServeTable(b *testing.B) {
	repeats, window := benchTableRuns()
	profile := os.Getenv(benchProfileEnv)
	binary := buildServe(b)
	client := newBenchHTTPClient()
	defer client.CloseIdleConnections()

	floor := startFloor(b, 4)
	serve := startServe(b, client, binary, profile, "")
	targets := map[string]benchTarget{
		targetFloor: {name: targetFloor, floor: floor},
		targetServe: {name: targetServe, gw: serve},
	}
	names := []string{targetFloor}
	if chosen(benchTargetsEnv, targetGateway) {
		gw := startBenchGateway(b, client, "table", fastPathEnv+"=", benchRecorderEnv+"=history:"+b.TempDir())
		targets[targetGateway] = benchTarget{name: targetGateway, gw: &gw}
		names = append(names, targetGateway)
	}
	if before := os.Getenv(serveBeforeEnv); before != "" && chosen(benchTargetsEnv, targetBefore) {
		targets[targetBefore] = benchTarget{name: targetBefore, gw: startServe(b, client, before, "", "")}
		names = append(names, targetBefore)
	}
	names = append(names, targetServe)
	if chosen(benchTargetsEnv, targetPeer) {
		if peer := startPeer(b, client, ""); peer != nil {
			targets[targetPeer] = benchTarget{name: targetPeer, gw: peer}
			names = append(names, targetPeer)
		}
	}
	idleRSS := processRSS(serve.pid)

	// The setup of a session whose server lists real tools (the catalog's
	// 128, besides echo and big): its own daemons, as listing them is
	// the rest of the table's load only here.
	catalog := map[string]benchTarget{}
	if chosen(benchRowsEnv, "setup-catalog") {
		tools := catalogTools(b)
		catalog[targetServe] = benchTarget{name: targetServe, gw: startServe(b, client, binary, "", tools)}
		if _, ok := targets[targetBefore]; ok {
			catalog[targetBefore] = benchTarget{name: targetBefore, gw: startServe(b, client, os.Getenv(serveBeforeEnv), "", tools)}
		}
		if _, ok := targets[targetPeer]; ok {
			if peer := startPeer(b, client, tools); peer != nil {
				catalog[targetPeer] = benchTarget{name: targetPeer, gw: peer}
			}
		}
	}

	prev := runtime.GOMAXPROCS(1) // the load generator gets one core
	defer runtime.GOMAXPROCS(prev)
	rows := []struct {
		name     string
		conc     int
		sessions int
		call     benchCall
	}{
		{"echo-c1", 1, 1, echoCall()},
		{"echo-c16", 16, 4, echoCall()},
		{"big256k-c4", 4, 4, bigCall(256)},
		{"resource256k-c4", 4, 4, resourceCall(256)},
	}
	results := benchResults{}
	began := time.Now()
	loads := []float64{loadAverage()}
	names = slices.DeleteFunc(names, func(n string) bool { return !chosen(benchTargetsEnv, n) })
	for rep := range repeats {
		for _, row := range rows {
			if !chosen(benchRowsEnv, row.name) {
				continue
			}
			// Interleaved, and in a different order each repeat.
			order := slices.Clone(names)
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
		setups(b, client, results, "setup", names, targets, rep, window)
		setups(b, client, results, "setup-catalog", names, catalog, rep, window)
		loads = append(loads, loadAverage())
	}
	printServeTable(os.Stdout, results, names, repeats, window, time.Since(began), idleRSS, loads)
}

// setups measures one repeat of a setup row: one worker per target of
// names found in targets (the floor has no sessions), interleaved, in a
// different order each repeat.
func setups(b *testing.B, client *http.Client, results benchResults, row string, names []string, targets map[string]benchTarget, rep int, window time.Duration) {
	if !chosen(benchRowsEnv, row) {
		return
	}
	order := slices.DeleteFunc(slices.Clone(names), func(n string) bool { _, ok := targets[n]; return n == targetFloor || !ok })
	for range rep * min(len(order), 1) {
		order = append(order[1:], order[0])
	}
	for _, name := range order {
		t := targets[name]
		var lat []time.Duration
		w := measure(b, client, t, []worker{setupWorker(client, t.gw.endpoint(), t.gw.auth, &lat)}, window/2)
		slices.Sort(lat)
		w.p50 = lat[len(lat)/2] // the setups of the warm-up and the window: both are warm
		results.add(row, name, w)
	}
}

// printServeTable writes the table in markdown: each cell is the median
// of the repeats, then every repeat in brackets, in the order run; the
// last column is the machine's load average at the end of each repeat's
// window of the daemon.
func printServeTable(out io.Writer, r benchResults, columns []string, repeats int, window, took time.Duration, idleRSS float64, loads []float64) {
	uptime, _ := exec.Command("uptime").Output()
	fmt.Fprintf(out, "\n### Daemon benchmark: %d interleaved repeats of %v windows, %v in all\n\n", repeats, window, took.Round(time.Second))
	fmt.Fprintf(out, "Load generator GOMAXPROCS=1 (raw HTTP, no SDK), %d CPUs, %s/%s, %s; backend: the minimal Go stdio echo server (app/gateway/bench_echo_test.go), a pool of 4 processes.\n",
		runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version())
	fmt.Fprintf(out, "Machine load (uptime) at the end: %s; 1-minute load average at the start and after each repeat: %s\n",
		strings.TrimSpace(string(uptime)), joinFloats(loads, "%.2f"))
	fmt.Fprintf(out, "Columns: floor = raw newline JSON-RPC on the echo server's pipes; gateway = the gateway alone in a process (fast path, history recorded into SQLite + journal); "+
		"serve = `switchboard serve` as shipped, /mcp/echo, history on, token checked; before = the same of the build in "+serveBeforeEnv+" (when set); peer = TBXark's mcp-proxy (/echo/mcp, no history, no auth).\n")
	fmt.Fprintf(out, "Each cell: median (every repeat); load = the 1-minute load average at the end of each repeat's serve window.\n\n")
	header := "| row |"
	for _, c := range columns {
		header += " " + c + " |"
	}
	fmt.Fprintln(out, header+" serve − gateway | serve / before | serve / peer | load | target (issue 33) |")
	fmt.Fprintln(out, "| --- |"+strings.Repeat(" ---: |", len(columns)+4)+" --- |")

	us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
	cell := func(v []float64, format string) string {
		if len(v) == 0 {
			return "—"
		}
		return fmt.Sprintf(format, median(v)) + " (" + joinFloats(v, format) + ")"
	}
	pairwise := func(a, b []float64, f func(a, b float64) float64) []float64 {
		var v []float64
		for i := range min(len(a), len(b)) {
			v = append(v, f(a[i], b[i]))
		}
		return v
	}
	line := func(name, row string, f func(benchWindow) float64, format, target string, skip ...string) {
		v := map[string][]float64{}
		var load []float64
		for _, t := range columns {
			if slices.Contains(skip, t) {
				continue
			}
			for _, w := range r[row][t] {
				v[t] = append(v[t], f(w))
				if t == targetServe {
					load = append(load, w.load)
				}
			}
		}
		fmt.Fprintf(out, "| %s |", name)
		for _, c := range columns {
			fmt.Fprintf(out, " %s |", cell(v[c], format))
		}
		fmt.Fprintf(out, " %s | %s | %s | %s | %s |\n",
			cell(pairwise(v[targetServe], v[targetGateway], func(a, b float64) float64 { return a - b }), format),
			cell(pairwise(v[targetServe], v[targetBefore], func(a, b float64) float64 { return a / b }), "%.3f"),
			cell(pairwise(v[targetServe], v[targetPeer], func(a, b float64) float64 { return a / b }), "%.2f"),
			joinFloats(load, "%.2f"), target)
	}
	rate := func(w benchWindow) float64 { return w.rate() }
	p50 := func(w benchWindow) float64 { return us(w.p50) }
	p95 := func(w benchWindow) float64 { return us(w.p95) }
	treeCPU := func(w benchWindow) float64 { return us(w.treeCPU) / float64(w.calls) }
	ownCPU := func(w benchWindow) float64 { return us(w.cpu) / float64(w.calls) }
	kib := func(w benchWindow) float64 { return float64(w.alloc) / 1024 / float64(w.calls) }
	objects := func(w benchWindow) float64 { return float64(w.objects) / float64(w.calls) }
	rss := func(w benchWindow) float64 { return w.rss }
	anon := func(w benchWindow) float64 { return w.anon }
	noAlloc := []string{targetFloor, targetPeer}

	line("echo c=1, 1 session: p50 µs", "echo-c1", p50, "%.0f", "serve < peer")
	line("echo c=1: p95 µs", "echo-c1", p95, "%.0f", "")
	line("echo c=1: calls/s", "echo-c1", rate, "%.0f", "")
	line("echo c=16, 4 sessions: calls/s", "echo-c16", rate, "%.0f", "serve > peer")
	line("256 KiB results, c=4: calls/s", "big256k-c4", rate, "%.0f", "serve ≥ 2 × peer")
	line("256 KiB resource reads, c=4: calls/s", "resource256k-c4", rate, "%.0f", "")
	line("session setup p50 µs (initialize + initialized + tools/list)", "setup", p50, "%.0f", "serve < peer", targetFloor)
	line("session setup p50 µs, the server listing the catalog's 128 tools too", "setup-catalog", p50, "%.0f", "", targetFloor)
	line("server CPU µs per echo call, c=1 (process tree; floor: the echo servers)", "echo-c1", treeCPU, "%.0f", "serve ≤ 200")
	line("server CPU µs per echo call, c=16 (process tree)", "echo-c16", treeCPU, "%.0f", "serve ≤ 80")
	line("server CPU µs per 256 KiB call, c=4 (process tree)", "big256k-c4", treeCPU, "%.0f", "")
	line("server CPU µs per 256 KiB resource read, c=4 (process tree)", "resource256k-c4", treeCPU, "%.0f", "")
	line("CPU µs per echo call, c=1, the process called alone (no children)", "echo-c1", ownCPU, "%.0f", "")
	line("CPU µs per echo call, c=16, the process called alone", "echo-c16", ownCPU, "%.0f", "")
	line("allocated KiB per echo call, c=1 (the process called)", "echo-c1", kib, "%.1f", "", noAlloc...)
	line("allocated objects per echo call, c=1", "echo-c1", objects, "%.0f", "", noAlloc...)
	line("allocated KiB per echo call, c=16", "echo-c16", kib, "%.1f", "", noAlloc...)
	line(fmt.Sprintf("RSS MiB, peak under c=16 (children excluded; serve idle: %.1f)", idleRSS), "echo-c16", rss, "%.1f", "serve ≤ 40", targetFloor)
	line("RSS MiB of anonymous memory (RssAnon: the heap and stacks, not the binary's pages), peak under c=16", "echo-c16", anon, "%.1f", "", targetFloor)
	fmt.Fprintln(out)
}

func joinFloats(v []float64, format string) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmt.Sprintf(format, x)
	}
	return strings.Join(parts, " / ")
}
