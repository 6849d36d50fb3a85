package gateway_test

import (
	"bufio"
	"context"
	"fmt"
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
	"github.com/switchboardhq/switchboard/app/record"
	"github.com/switchboardhq/switchboard/supervisor"
	"github.com/switchboardhq/switchboard/supervisor/testmcp"
)

// The benchmarks compare tools/call through the gateway with tools/call
// over stdio straight to the same server, in the same run. The gateway runs
// in a process of its own (this test binary, re-run with benchGatewayEnv),
// so that the load generator — this process — can be held to one core
// (GOMAXPROCS=1) without holding the gateway to it too.
//
// Beside the gateway run, in processes of the same kind: "sdk", the least a
// proxy built on the go-sdk does (runBenchSDKProxy), the floor under the
// gateway; "sdk-local" and "sdk-local-json", the go-sdk's HTTP hop alone.
// For each of these processes a run reports, beside calls/s and latency,
// its CPU time, bytes and objects allocated and GC cycles per call: those
// hardly move when other work shares the machine, latency does.
//
//	go test -run '^$' -bench . -benchtime 3s ./app/gateway/

const benchGatewayEnv = "SWITCHBOARD_BENCH_GATEWAY"

// benchProfileEnv, when set to a directory, makes the gateway process write
// gateway-cpu.pprof (the whole run) and gateway-heap.pprof (allocations, at
// exit), and the go-sdk proxy sdk-cpu.pprof and sdk-heap.pprof, there, so
// that the gateway's own costs can be profiled apart from the load
// generator's:
//
//	SWITCHBOARD_BENCH_PROFILE=/tmp/p go test -run '^$' -bench 'ToolsCall/gateway/echo/c1' ./app/gateway/
//	go tool pprof -top /tmp/p/gateway-cpu.pprof
const benchProfileEnv = "SWITCHBOARD_BENCH_PROFILE"

// benchGOGCEnv, when set, is the GC percentage of the gateway and go-sdk
// proxy processes (not of the load generator nor the servers), for
// measuring what GC tuning would give the daemon.
const benchGOGCEnv = "SWITCHBOARD_BENCH_GOGC"

func applyBenchGOGC() {
	if v, err := strconv.Atoi(os.Getenv(benchGOGCEnv)); err == nil {
		debug.SetGCPercent(v)
	}
}

// startBenchProfile starts the CPU profile when benchProfileEnv asks for
// one and returns what writes the profiles at exit.
func startBenchProfile(mode string) func() {
	dir := os.Getenv(benchProfileEnv)
	if dir == "" {
		return func() {}
	}
	cpu, err := os.Create(filepath.Join(dir, mode+"-cpu.pprof"))
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
		heap, err := os.Create(filepath.Join(dir, mode+"-heap.pprof"))
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

// runBenchGatewayIfRequested serves a gateway in front of four pooled
// processes of the test server ("fast", shared, min=max=4) and four idle
// servers, prints its address, and exits when stdin closes.
func runBenchGatewayIfRequested() {
	switch os.Getenv(benchGatewayEnv) {
	case "":
		return
	case "sdk":
		runBenchSDKProxy()
		return
	case "sdk-local", "sdk-local-json":
		runBenchSDKLocal(os.Getenv(benchGatewayEnv) == "sdk-local-json")
		return
	}
	applyBenchGOGC()
	stopProfile := startBenchProfile("gateway")
	ctx := context.Background()
	var gw *gateway.Gateway
	sup, err := supervisor.New(ctx, supervisor.Options{Env: os.Environ(), SampleInterval: -1, HealthInterval: -1,
		NewClient:     func(s string) *mcp.Client { return gw.NewClient(s) },
		Prepare:       func(ctx context.Context, s string, cs *mcp.ClientSession) error { return gw.Prepare(ctx, s, cs) },
		WrapTransport: func(s string, t mcp.Transport) mcp.Transport { return gw.WrapTransport(s, t) }})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	// The daemon always records calls (history queues them), so the
	// gateway here records too, into a counter.
	gw = gateway.New(gateway.Options{Backends: gateway.FromSupervisor(sup), Recorder: &benchRecorder{}, Version: "bench"})
	specs := []supervisor.Spec{{Name: "fast", Command: os.Args[0], Env: benchServerEnv(),
		Pool: supervisor.PoolSpec{Min: 4, Max: 4}}}
	configs := []gateway.ServerConfig{{Name: "fast"}}
	for i := range 4 {
		name := fmt.Sprintf("idle%d", i)
		specs = append(specs, supervisor.Spec{Name: name, Command: os.Args[0], Env: benchServerEnv(), Pool: supervisor.PoolSpec{Min: 1}})
		configs = append(configs, gateway.ServerConfig{Name: name})
	}
	if err := sup.Apply(ctx, specs); err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	gw.Sync(configs)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	srv := &http.Server{Handler: withBenchStats(gw.Handler())}
	go srv.Serve(ln)
	fmt.Println("listening", ln.Addr())
	bufio.NewReader(os.Stdin).ReadString('\n') // until stdin closes
	srv.Close()
	gw.Close()
	sup.Close(ctx)
	stopProfile()
	os.Exit(0)
}

// runBenchSDKProxy serves the least a go-sdk proxy does, for comparison
// with the gateway: one mcp.Server behind the SDK's streamable handler (the
// same options as the gateway's session era) with the test server's tools,
// each calling the same tool on one of four processes of the test server
// over stdio (go-sdk's CommandTransport). The most recently used process is
// taken first, as the supervisor's pool does. No supervisor, no leases, no
// progress routing, no recording: what it costs is the go-sdk's own.
func runBenchSDKProxy() {
	applyBenchGOGC()
	stopProfile := startBenchProfile("sdk")
	ctx := context.Background()
	var (
		mu   sync.Mutex
		idle []*mcp.ClientSession // a stack: the last released is taken first
		free = make(chan struct{}, 4)
		all  []*mcp.ClientSession
	)
	for range 4 {
		cmd := exec.Command(os.Args[0])
		cmd.Env = os.Environ()
		for k, v := range benchServerEnv() {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "sdk-proxy"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		idle = append(idle, cs)
		all = append(all, cs)
		free <- struct{}{}
	}
	front := mcp.NewServer(&mcp.Implementation{Name: "sdk-proxy"}, nil)
	for t, err := range all[0].Tools(ctx, nil) {
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		front.AddTool(t, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			<-free
			mu.Lock()
			cs := idle[len(idle)-1]
			idle = idle[:len(idle)-1]
			mu.Unlock()
			defer func() {
				mu.Lock()
				idle = append(idle, cs)
				mu.Unlock()
				free <- struct{}{}
			}()
			return cs.CallTool(ctx, &mcp.CallToolParams{Name: t.Name, Arguments: req.Params.Arguments})
		})
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	srv := &http.Server{Handler: withBenchStats(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return front }, nil))}
	go srv.Serve(ln)
	fmt.Println("listening", ln.Addr())
	bufio.NewReader(os.Stdin).ReadString('\n') // until stdin closes
	srv.Close()
	for _, cs := range all {
		cs.Close()
	}
	stopProfile()
	os.Exit(0)
}

// benchStatsPath serves the process's allocation and GC counters (see
// readBenchStats), which unlike latency do not move with other work on the
// machine.
const benchStatsPath = "/bench/stats"

func withBenchStats(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != benchStatsPath {
			next.ServeHTTP(w, r)
			return
		}
		samples := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}, {Name: "/gc/heap/allocs:objects"}, {Name: "/gc/cycles/total:gc-cycles"}}
		metrics.Read(samples)
		fmt.Fprintf(w, "%d %d %d\n", samples[0].Value.Uint64(), samples[1].Value.Uint64(), samples[2].Value.Uint64())
	})
}

// benchStats are a process's counters: bytes and objects allocated, GC cycles.
type benchStats struct{ bytes, objects, cycles uint64 }

func readBenchStats(base string) (benchStats, error) {
	resp, err := http.Get(base + benchStatsPath)
	if err != nil {
		return benchStats{}, err
	}
	defer resp.Body.Close()
	var st benchStats
	_, err = fmt.Fscan(resp.Body, &st.bytes, &st.objects, &st.cycles)
	return st, err
}

// runBenchSDKLocal serves echo and big itself behind the go-sdk's
// streamable handler, with no process behind it: what the HTTP hop alone
// costs (with jsonResponse, answered as application/json instead of SSE).
func runBenchSDKLocal(jsonResponse bool) {
	applyBenchGOGC()
	front := mcp.NewServer(&mcp.Implementation{Name: "sdk-local"}, nil)
	type echoArgs struct {
		Text string `json:"text"`
	}
	mcp.AddTool(front, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in echoArgs) (*mcp.CallToolResult, echoArgs, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, in, nil
	})
	type bigArgs struct {
		KB int `json:"kb"`
	}
	mcp.AddTool(front, &mcp.Tool{Name: "big"}, func(_ context.Context, _ *mcp.CallToolRequest, in bigArgs) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat(strings.Repeat("x", 63)+"\n", in.KB*16)}}}, nil, nil
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	srv := &http.Server{Handler: withBenchStats(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return front },
		&mcp.StreamableHTTPOptions{JSONResponse: jsonResponse}))}
	go srv.Serve(ln)
	fmt.Println("listening", ln.Addr())
	bufio.NewReader(os.Stdin).ReadString('\n') // until stdin closes
	srv.Close()
	os.Exit(0)
}

// benchRecorder counts the calls recorded, as cheaply as history queues them.
type benchRecorder struct{ calls atomic.Int64 }

func (r *benchRecorder) RecordCall(record.Call) { r.calls.Add(1) }

func benchServerEnv() map[string]string {
	env := map[string]string{}
	for _, kv := range testmcp.Env(testmcp.Options{Name: "fast"}) {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	return env
}

// benchGateway starts the gateway process ("1") or the go-sdk proxy
// ("sdk") and returns its base URL and pid.
func benchGateway(b *testing.B, mode string) (string, int) {
	b.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), benchGatewayEnv+"="+mode)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { stdin.Close(); cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "listening ") {
		b.Fatalf("gateway process: %q %v", line, err)
	}
	return "http://" + strings.TrimSpace(strings.TrimPrefix(line, "listening ")), cmd.Process.Pid
}

func gatewaySession(b *testing.B, url string) *mcp.ClientSession {
	b.Helper()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	// Wait for the gateway's first listing of the server.
	deadline := time.Now().Add(30 * time.Second)
	for {
		if res, err := cs.ListTools(context.Background(), nil); err == nil && len(res.Tools) > 0 {
			return cs
		}
		if time.Now().After(deadline) {
			b.Fatal("gateway lists no tools")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func directSession(b *testing.B) *mcp.ClientSession {
	b.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = os.Environ()
	for k, v := range benchServerEnv() {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}

// runCalls makes b.N calls of tool with args over sessions (round robin)
// from conc goroutines, and reports calls/s and latency percentiles.
// For a proxy it also reports that process's CPU time per call (user +
// system, from /proc) and what it allocated per call.
func runCalls(b *testing.B, proxy benchProxy, sessions []*mcp.ClientSession, conc int, tool string, args map[string]any) {
	pid := proxy.pid
	cpu0 := processCPU(pid)
	var st0 benchStats
	if proxy.url != "" {
		var err error
		if st0, err = readBenchStats(proxy.url); err != nil {
			b.Fatal(err)
		}
	}
	prev := runtime.GOMAXPROCS(1) // the load generator gets one core
	defer runtime.GOMAXPROCS(prev)
	var next atomic.Int64
	lat := make([]time.Duration, b.N)
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for w := range conc {
		wg.Go(func() {
			cs := sessions[w%len(sessions)]
			for {
				i := next.Add(1) - 1
				if i >= int64(b.N) {
					return
				}
				t0 := time.Now()
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
				lat[i] = time.Since(t0)
				if err != nil || res.IsError {
					b.Errorf("call: %v %v", err, res)
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "calls/s")
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds()), "p95-µs")
	if cpu1 := processCPU(pid); pid > 0 && cpu1 > 0 {
		b.ReportMetric(float64((cpu1-cpu0).Microseconds())/float64(b.N), "cpu-µs/call")
	}
	if proxy.url != "" {
		st1, err := readBenchStats(proxy.url)
		if err != nil {
			b.Fatal(err)
		}
		n := float64(b.N)
		b.ReportMetric(float64(st1.bytes-st0.bytes)/n/1024, "alloc-KiB/call")
		b.ReportMetric(float64(st1.objects-st0.objects)/n, "allocs/call")
		b.ReportMetric(float64(st1.cycles-st0.cycles)/n*1000, "gc/1000calls")
	}
}

// A benchProxy is the gateway or the go-sdk proxy process: its base URL
// and pid.
type benchProxy struct {
	url string
	pid int
}

// processCPU returns the user and system CPU time of process pid so far,
// or 0 where /proc cannot tell.
func processCPU(pid int) time.Duration {
	if pid <= 0 {
		return 0
	}
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

// BenchmarkToolsCall drives tools/call straight to the test server over
// stdio ("direct"), through the gateway ("gateway"), and through the
// go-sdk proxy ("sdk", see runBenchSDKProxy), in the same run. The gateway's
// targets are ratios to direct; sdk is the floor that a gateway built on the
// go-sdk cannot go below, so gateway minus sdk is the gateway's own cost.
func BenchmarkToolsCall(b *testing.B) {
	url, pid := benchGateway(b, "1")
	sdkURL, sdkPID := benchGateway(b, "sdk")
	localURL, localPID := benchGateway(b, "sdk-local")
	jsonURL, jsonPID := benchGateway(b, "sdk-local-json")
	gatewaySession(b, url+"/mcp/fast") // waits for the gateway's first listing
	idleRSS := processRSS(pid)
	echo := map[string]any{"text": "hello"}
	cases := []struct {
		name string
		conc int
		tool string
		args map[string]any
	}{
		{"echo/c1", 1, "echo", echo},
		{"echo/c16", 16, "echo", echo},
		{"big256k/c4", 4, "big", map[string]any{"kb": 256}},
	}
	for _, c := range cases {
		b.Run("direct/"+c.name, func(b *testing.B) {
			n := min(c.conc, 4)
			var sessions []*mcp.ClientSession
			for range n {
				sessions = append(sessions, directSession(b))
			}
			runCalls(b, benchProxy{}, sessions, c.conc, c.tool, c.args)
		})
		b.Run("gateway/"+c.name, func(b *testing.B) {
			cs := gatewaySession(b, url+"/mcp/fast")
			runCalls(b, benchProxy{url, pid}, []*mcp.ClientSession{cs}, c.conc, c.tool, c.args)
		})
		b.Run("sdk/"+c.name, func(b *testing.B) {
			cs := gatewaySession(b, sdkURL)
			runCalls(b, benchProxy{sdkURL, sdkPID}, []*mcp.ClientSession{cs}, c.conc, c.tool, c.args)
		})
		// The go-sdk's HTTP hop alone, answered in SSE (as the gateway
		// does) and in JSON.
		b.Run("sdk-local/"+c.name, func(b *testing.B) {
			cs := gatewaySession(b, localURL)
			runCalls(b, benchProxy{localURL, localPID}, []*mcp.ClientSession{cs}, c.conc, c.tool, c.args)
		})
		b.Run("sdk-local-json/"+c.name, func(b *testing.B) {
			cs := gatewaySession(b, jsonURL)
			runCalls(b, benchProxy{jsonURL, jsonPID}, []*mcp.ClientSession{cs}, c.conc, c.tool, c.args)
		})
	}
	b.Run("gateway/session-setup", func(b *testing.B) { sessionSetup(b, url+"/mcp/fast") })
	b.Run("sdk/session-setup", func(b *testing.B) { sessionSetup(b, sdkURL) })
	// MiB is after every case above; idle-MiB before any, once the
	// gateway had listed its servers.
	b.Run("gateway/rss", func(b *testing.B) {
		for range b.N {
		}
		n := processRSS(pid)
		if n == 0 {
			b.Skip("no /proc")
		}
		b.ReportMetric(n, "MiB")
		b.ReportMetric(idleRSS, "idle-MiB")
	})
}

// processRSS returns the resident size of process pid in MiB, or 0 where
// /proc cannot tell.
func processRSS(pid int) float64 {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if kb, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(kb), "kB")))
			return float64(n) / 1024
		}
	}
	return 0
}

// sessionSetup measures initialize + tools/list on a new session at url,
// with the backend warm.
func sessionSetup(b *testing.B, url string) {
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	gatewaySession(b, url) // warm
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	lat := make([]time.Duration, b.N)
	b.ResetTimer()
	for i := range b.N {
		t0 := time.Now()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(context.Background(),
			&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := cs.ListTools(context.Background(), nil); err != nil {
			b.Fatal(err)
		}
		lat[i] = time.Since(t0)
		b.StopTimer()
		cs.Close()
		b.StartTimer()
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
}
