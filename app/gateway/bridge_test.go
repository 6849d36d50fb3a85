package gateway_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/switchboardhq/switchboard/app/bridge"
	"github.com/switchboardhq/switchboard/app/gateway"
	"github.com/switchboardhq/switchboard/app/internal/testutil"
)

// TestBridge runs the stdio bridge against a gateway: the daemon records
// calls under the bridge's client (not "switchboard"), and a reconnect the
// bridge starts in the background ends with the bridge.
func TestBridge(t *testing.T) {
	f := newFixture(t, gateway.ServerConfig{Name: "alpha"})
	f.waitTools(t, f.connect(t, "/mcp", "2025-11-25", nil), "alpha__echo")
	// The daemon as the bridge sees it, which the test stops.
	daemon := httptest.NewServer(f.gw.Handler())
	defer daemon.Close()
	var located atomic.Int64
	var down atomic.Bool
	ignore := goleak.IgnoreCurrent()

	var cs *mcp.ClientSession
	var toBridge, fromBridge *io.PipeReader
	var toBridgeW *io.PipeWriter
	ended := make(chan error, 1)
	// A client of each era: initialize (Claude Desktop), or server/discover
	// with clientInfo in each request (the go-sdk's default over stdio).
	for i, era := range []string{"2025-11-25", ""} {
		if cs != nil {
			cs.Close()
			toBridgeW.Close()
			if err := <-ended; err != nil {
				t.Errorf("bridge.Run: %v", err)
			}
			fromBridge.Close()
		}
		var bridgeOut *io.PipeWriter
		fromBridge, bridgeOut = io.Pipe()
		toBridge, toBridgeW = io.Pipe()
		t.Cleanup(func() { toBridgeW.Close(); fromBridge.Close() }) // ends the bridge if the test fails
		go func() {
			ended <- bridge.Run(context.Background(), bridge.Options{Front: relayFront,
				Locate: func(context.Context) (string, string, func() bool, error) {
					located.Add(1)
					if down.Load() {
						return "", "", nil, errors.New("Switchboard is not running")
					}
					return daemon.URL + "/mcp", "", func() bool { return true }, nil
				},
				In: toBridge, Out: bridgeOut, Version: "test", Reconnect: 30 * time.Second,
			})
		}()
		client := mcp.NewClient(&mcp.Implementation{Name: "claude-ai", Version: "0.9"}, nil)
		var err error
		cs, err = client.Connect(t.Context(), &mcp.IOTransport{Reader: fromBridge, Writer: toBridgeW},
			&mcp.ClientSessionOptions{ProtocolVersion: era})
		if err != nil {
			t.Fatal(err)
		}
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": "via the bridge"}})
		if err != nil || text(res) != "via the bridge" {
			t.Fatalf("call through the bridge: %v %+v", err, res)
		}
		var who []string
		for _, c := range f.rec.all() {
			if c.Method == "tools/call" && c.Name == "alpha__echo" {
				who = append(who, c.ClientName+" "+c.ClientVersion)
			}
		}
		if len(who) != i+1 || who[i] != "claude-ai 0.9" {
			t.Errorf("era %q: the daemon recorded calls from %q, want the bridge's client \"claude-ai 0.9\"", era, who)
		}
	}

	// The daemon ends the bridge's session (it stopped, or the session
	// idled out) and cannot be reached again: the bridge notices, and tries
	// to reconnect in the background, in vain; the client leaves meanwhile.
	before := located.Load()
	down.Store(true)
	f.gw.SetSessionTimeout(50 * time.Millisecond)
	testutil.Eventually(t, 20*time.Second, "the bridge to try to reconnect", func() bool { return located.Load() > before })
	cs.Close()
	toBridgeW.Close()
	select {
	case err := <-ended:
		if err != nil {
			t.Errorf("bridge.Run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the bridge did not end when its client left")
	}
	fromBridge.Close()
	// The bridge's keep-alive connections to the daemon are in the shared
	// http.DefaultTransport; one that is still busy when the idle ones are
	// closed (its last request's answer being read) goes idle after, and
	// its read and write loops outlive the test (seen with -count=5). The
	// daemon's side closes them all.
	daemon.CloseClientConnections()
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	goleak.VerifyNone(t, ignore,
		goleak.IgnoreAnyFunction("github.com/modelcontextprotocol/go-sdk/mcp.(*StreamableHTTPHandler).ServeHTTP.func1"))
}
