package gateway_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/app/gateway"
	"github.com/switchboardhq/switchboard/app/internal/testutil"
	"github.com/switchboardhq/switchboard/supervisor"
)

// BenchmarkRemoteEcho measures what Switchboard adds in front of a remote
// server on loopback at concurrency 1: the same go-sdk client calls echo on
// a go-sdk streamable HTTP server directly, and through the gateway's
// /mcp/r (which reaches it as the remote server "r"). It reports the
// median call (p50-µs) besides the mean.
//
//	go test -run '^$' -bench BenchmarkRemoteEcho -benchtime 2000x ./app/gateway/
func BenchmarkRemoteEcho(b *testing.B) {
	server := mcp.NewServer(&mcp.Implementation{Name: "bench-remote", Version: "1"}, nil)
	type echoArgs struct {
		Text string `json:"text"`
	}
	mcp.AddTool(server, &mcp.Tool{Name: "echo"}, func(ctx context.Context, req *mcp.CallToolRequest, a echoArgs) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil, nil
	})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
	b.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		for ss := range server.Sessions() {
			ss.Close()
		}
	})
	for _, tt := range []struct{ name, via string }{{"direct", ""}, {"switchboard", "/mcp/r"}} {
		b.Run(tt.name, func(b *testing.B) {
			endpoint := srv.URL
			if tt.via != "" {
				f := newBenchRemoteFixture(b, srv.URL)
				endpoint = f + tt.via
			}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(b.Context(),
				&mcp.StreamableClientTransport{Endpoint: endpoint}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			args := map[string]any{"text": benchEchoText}
			// The gateway lists the remote in the background.
			testutil.Eventually(b, 30*time.Second, "echo through "+tt.name, func() bool {
				got, err := testutil.CallText(b.Context(), cs, "echo", args)
				return err == nil && got == benchEchoText
			})
			took := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				start := time.Now()
				if _, err := cs.CallTool(b.Context(), &mcp.CallToolParams{Name: "echo", Arguments: args}); err != nil {
					b.Fatal(err)
				}
				took = append(took, time.Since(start))
			}
			b.StopTimer()
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds()), "p50-µs")
		})
	}
}

// newBenchRemoteFixture serves the remote at url as "r" through a gateway
// and returns the gateway's base URL.
func newBenchRemoteFixture(b *testing.B, url string) string {
	var gw *gateway.Gateway
	tr := &http.Transport{}
	b.Cleanup(tr.CloseIdleConnections)
	sup, err := supervisor.New(b.Context(), supervisor.Options{StateDir: b.TempDir(), SampleInterval: -1, HealthInterval: -1,
		NewClient:          func(s string) *mcp.Client { return gw.NewClient(s) },
		Prepare:            func(ctx context.Context, s string, cs *mcp.ClientSession) error { return gw.Prepare(ctx, s, cs) },
		WrapTransport:      func(s string, t mcp.Transport) mcp.Transport { return gw.WrapTransport(s, t) },
		WrapRemoteHTTP:     func(s string, rt http.RoundTripper) http.RoundTripper { return gw.WrapRemoteHTTP(s, rt) },
		RemoteRoundTripper: func(string) http.RoundTripper { return tr }})
	if err != nil {
		b.Fatal(err)
	}
	gw = gateway.New(gateway.Options{Backends: gateway.FromSupervisor(sup), Version: "bench"})
	if err := sup.Apply(b.Context(), []supervisor.Spec{{Name: "r", Remote: &supervisor.RemoteSpec{URL: url}}}); err != nil {
		b.Fatal(err)
	}
	gw.Sync([]gateway.ServerConfig{{Name: "r"}})
	front := httptest.NewServer(gw.Handler())
	b.Cleanup(func() {
		front.CloseClientConnections()
		front.Close()
		gw.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = sup.Close(ctx)
	})
	return front.URL
}
