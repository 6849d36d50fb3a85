package gateway_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/app/gateway"
	"github.com/switchboardhq/switchboard/supervisor"
	"github.com/switchboardhq/switchboard/supervisor/testmcp"
)

// The benchmarks compare tools/call through the gateway with tools/call
// over stdio straight to the same server, in the same run. The gateway runs
// in a process of its own (this test binary, re-run with benchGatewayEnv),
// so that the load generator — this process — can be held to one core
// (GOMAXPROCS=1) without holding the gateway to it too.
//
//	go test -run '^$' -bench . -benchtime 3s ./app/gateway/

const benchGatewayEnv = "SWITCHBOARD_BENCH_GATEWAY"

// runBenchGatewayIfRequested serves a gateway in front of four pooled
// processes of the test server ("fast", shared, min=max=4) and four idle
// servers, prints its address, and exits when stdin closes.
func runBenchGatewayIfRequested() {
	if os.Getenv(benchGatewayEnv) != "1" {
		return
	}
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
	gw = gateway.New(gateway.Options{Backends: gateway.FromSupervisor(sup), Version: "bench"})
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
	srv := &http.Server{Handler: gw.Handler()}
	go srv.Serve(ln)
	fmt.Println("listening", ln.Addr())
	bufio.NewReader(os.Stdin).ReadString('\n') // until stdin closes
	srv.Close()
	gw.Close()
	sup.Close(ctx)
	os.Exit(0)
}

func benchServerEnv() map[string]string {
	env := map[string]string{}
	for _, kv := range testmcp.Env(testmcp.Options{Name: "fast"}) {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	return env
}

// benchGateway starts the gateway process and returns its base URL and pid.
func benchGateway(b *testing.B) (string, int) {
	b.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), benchGatewayEnv+"=1")
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
func runCalls(b *testing.B, sessions []*mcp.ClientSession, conc int, tool string, args map[string]any) {
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
}

func BenchmarkToolsCall(b *testing.B) {
	url, pid := benchGateway(b)
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
			runCalls(b, sessions, c.conc, c.tool, c.args)
		})
		b.Run("gateway/"+c.name, func(b *testing.B) {
			cs := gatewaySession(b, url+"/mcp/fast")
			runCalls(b, []*mcp.ClientSession{cs}, c.conc, c.tool, c.args)
		})
	}
	b.Run("gateway/session-setup", func(b *testing.B) {
		prev := runtime.GOMAXPROCS(1)
		defer runtime.GOMAXPROCS(prev)
		gatewaySession(b, url+"/mcp/fast") // warm
		hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
		lat := make([]time.Duration, b.N)
		b.ResetTimer()
		for i := range b.N {
			t0 := time.Now()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(context.Background(),
				&mcp.StreamableClientTransport{Endpoint: url + "/mcp/fast", HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
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
	})
	b.Run("gateway/rss", func(b *testing.B) {
		for range b.N {
		}
		data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
		if err != nil {
			b.Skip("no /proc")
		}
		for _, line := range strings.Split(string(data), "\n") {
			if kb, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(kb), "kB")))
				b.ReportMetric(float64(n)/1024, "MiB")
			}
		}
	})
}
