package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	switchboard "github.com/switchboardhq/switchboard/app/cli"
	"github.com/switchboardhq/switchboard/app/internal/testutil"
)

// BenchmarkServeRemoteEcho measures what `switchboard serve` adds in front
// of a remote server on loopback, at concurrency 1: the same raw HTTP client
// (pre-built JSON-RPC bytes, no SDK) calls echo on a go-sdk streamable HTTP
// server directly, and through a real daemon's /mcp/r, which reaches it as
// the remote server "r" and records every call in its history, as users run
// it. It reports the median and 90th percentile of the calls; the
// difference of the medians is Switchboard's cost.
//
//	go test -run '^$' -bench BenchmarkServeRemoteEcho -benchtime 2000x ./app/e2e/
func BenchmarkServeRemoteEcho(b *testing.B) {
	remote := echoRemote(b)
	home := filepath.Join(b.TempDir(), "home")
	cfg, _ := json.Marshal(map[string]any{"version": 1, "listen": "127.0.0.1:0",
		"servers": map[string]any{"r": map[string]any{"url": remote, "transport": "streamable-http"}}})
	if err := os.MkdirAll(home, 0o700); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "config.json"), cfg, 0o600); err != nil {
		b.Fatal(err)
	}
	// At the log level users run it at (the tests' daemons log debug).
	d := startDaemon(b, home, "--log-level", "info")
	p50 := map[string]time.Duration{}
	for _, tt := range []struct{ name, url, token string }{
		{"direct", remote, ""},
		{"switchboard", d.info.Address + "/mcp/r", d.client.Token},
	} {
		b.Run(tt.name, func(b *testing.B) {
			p50[tt.name] = benchEcho(b, &rawMCP{http: &http.Client{Transport: &http.Transport{}}, url: tt.url, token: tt.token})
		})
	}
	quitIfProfiling(b, d)
	if direct, via := p50["direct"], p50["switchboard"]; direct > 0 && via > 0 {
		b.Logf("p50 direct %s, through switchboard serve %s: +%s (%.2fx)", direct, via, via-direct, float64(via)/float64(direct))
	}
}

// benchEcho calls echo with the raw client c b.N times, one after the
// other, once it answers (a server is listed in the background), and
// reports the median and 90th percentile call; it returns the median.
func benchEcho(b *testing.B, c *rawMCP) time.Duration {
	defer c.http.CloseIdleConnections()
	if err := c.initialize(b.Context()); err != nil {
		b.Fatal(err)
	}
	call := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + benchText + `"}}}`)
	testutil.Eventually(b, 30*time.Second, "echo on "+c.url, func() bool { return c.echo(b.Context(), call) == nil })
	took := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		if err := c.echo(b.Context(), call); err != nil {
			b.Fatal(err)
		}
		took = append(took, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(took[len(took)*9/10].Microseconds()), "p90-µs")
	return took[len(took)/2]
}

// quitIfProfiling stops the daemon gracefully when the benchmark runs with
// SWITCHBOARD_CPUPROFILE set (passed on to the daemon), so that its profile
// is written (a killed daemon writes none).
func quitIfProfiling(b *testing.B, d *daemonProc) {
	if os.Getenv(switchboard.CPUProfileEnv) == "" {
		return
	}
	if _, err := d.client.Quit(b.Context()); err != nil {
		b.Fatal(err)
	}
	<-d.done
	b.Logf("the daemon's CPU profile is in %s", os.Getenv(switchboard.CPUProfileEnv))
}

// benchText is the echo's argument: a short text, as most tool calls are.
const benchText = "hello from the benchmark"

// echoRemote serves a go-sdk MCP server with an echo tool over streamable
// HTTP on loopback, closed when the benchmark ends, and returns its URL.
func echoRemote(tb testing.TB) string {
	server := mcp.NewServer(&mcp.Implementation{Name: "bench-remote", Version: "1"}, nil)
	type echoArgs struct {
		Text string `json:"text"`
	}
	mcp.AddTool(server, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, a echoArgs) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil, nil
	})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
	tb.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		for ss := range server.Sessions() {
			ss.Close()
		}
	})
	return srv.URL
}

// rawMCP is the cheapest honest streamable-HTTP client: it posts pre-built
// JSON-RPC bytes with the session's headers and reads the reply, whether
// the server answered with JSON or with an event stream.
type rawMCP struct {
	http    *http.Client
	url     string
	token   string
	session string
}

func (c *rawMCP) initialize(ctx context.Context) error {
	_, err := c.post(ctx, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw-bench","version":"1"}}}`))
	if err != nil {
		return fmt.Errorf("initialize %s: %w", c.url, err)
	}
	if _, err := c.post(ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)); err != nil {
		return fmt.Errorf("notifications/initialized %s: %w", c.url, err)
	}
	return nil
}

func (c *rawMCP) echo(ctx context.Context, call []byte) error {
	reply, err := c.post(ctx, call)
	if err != nil {
		return err
	}
	if !bytes.Contains(reply, []byte(`"text":"`+benchText+`"`)) || bytes.Contains(reply, []byte(`"isError":true`)) {
		return fmt.Errorf("echo reply %.300s", reply)
	}
	return nil
}

// post sends one message and returns the JSON-RPC reply (nil for a
// notification's 202).
func (c *rawMCP) post(ctx context.Context, body []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("HTTP %d: %.300s", resp.StatusCode, data)
	}
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		c.session = id
	}
	if resp.Header.Get("Content-Type") == "text/event-stream" {
		// The reply is the last data line of the stream (a call's stream
		// ends with its result).
		var last []byte
		for _, line := range bytes.Split(data, []byte("\n")) {
			if d, ok := bytes.CutPrefix(line, []byte("data: ")); ok && len(d) > 0 {
				last = d
			}
		}
		return last, nil
	}
	return data, nil
}
