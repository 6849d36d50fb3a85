package gateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/app/bridge"
	"github.com/switchboardhq/switchboard/app/gateway"
	"github.com/switchboardhq/switchboard/app/internal/testutil"
	"github.com/switchboardhq/switchboard/supervisor"
	"github.com/switchboardhq/switchboard/supervisor/testmcp"
)

// relayFront serves the bridge's client with the gateway's Relay, as
// daemon.NewBridgeFront does for switchboard connect.
func relayFront(acquire func(context.Context) (bridge.Lease, error), logger *slog.Logger, version string) bridge.Front {
	return gateway.NewRelay(func(ctx context.Context) (gateway.Lease, error) {
		l, err := acquire(ctx)
		if err != nil {
			return nil, err
		}
		return l, nil
	}, logger, version)
}

// rawBridge runs a bridge to the fixture's gateway and returns a writer of
// the client's lines, a channel of the bridge's, and leave, which closes
// the client's side and returns what bridge.Run returned.
func rawBridge(t *testing.T, f *fixture, opts bridge.Options) (send func(string), lines <-chan map[string]any, leave func() error) {
	t.Helper()
	if opts.Locate == nil {
		daemon := httptest.NewServer(f.gw.Handler())
		t.Cleanup(daemon.Close)
		opts.Locate = func(context.Context) (string, string, func() bool, error) {
			return daemon.URL + "/mcp", "", func() bool { return true }, nil
		}
	}
	toBridge, toBridgeW := io.Pipe()
	fromBridge, bridgeOut := io.Pipe()
	opts.In, opts.Out, opts.Version, opts.Front = toBridge, bridgeOut, "test", relayFront
	if opts.Reconnect == 0 {
		opts.Reconnect = 5 * time.Second
	}
	done := make(chan error, 1)
	go func() { done <- bridge.Run(context.Background(), opts) }()
	out := make(chan map[string]any, 100)
	go func() {
		defer close(out)
		sc := bufio.NewScanner(fromBridge)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Errorf("the bridge wrote %q: %v", sc.Text(), err)
				continue
			}
			out <- m
		}
	}()
	var once sync.Once
	var ended error
	leave = func() error {
		once.Do(func() {
			toBridgeW.Close()
			select {
			case ended = <-done:
			case <-time.After(10 * time.Second):
				t.Error("the bridge did not end when its client left")
			}
			fromBridge.Close()
		})
		return ended
	}
	t.Cleanup(func() { leave() })
	return func(line string) {
		if _, err := io.WriteString(toBridgeW, line+"\n"); err != nil {
			t.Fatalf("writing to the bridge: %v", err)
		}
	}, out, leave
}

// answerTo reads lines up to the answer to request id, returning it and
// the methods of the notifications before it.
func answerTo(t *testing.T, lines <-chan map[string]any, id float64) (map[string]any, []string) {
	t.Helper()
	var methods []string
	timeout := time.After(20 * time.Second)
	for {
		select {
		case m, ok := <-lines:
			if !ok {
				t.Fatalf("the bridge ended before answering request %v", id)
			}
			if m["id"] == id {
				return m, methods
			}
			if method, _ := m["method"].(string); method != "" {
				methods = append(methods, method)
			}
		case <-timeout:
			t.Fatalf("no answer to request %v", id)
		}
	}
}

// listedLog reads the bridge's log: each list it installs is logged as
// "server listed" with its number of tools.
type listedLog struct {
	lists atomic.Int64 // lists installed
	tools atomic.Int64 // tools in the last one
}

var listedTools = regexp.MustCompile(`msg="server listed" .*tools=(\d+)`)

func (l *listedLog) Write(p []byte) (int, error) {
	for _, m := range listedTools.FindAllSubmatch(p, -1) {
		n, _ := strconv.Atoi(string(m[1]))
		l.tools.Store(int64(n))
		l.lists.Add(1)
	}
	return len(p), nil
}

// TestBridgeSendsNothingBeforeInitialize: a server whose lists change
// while the bridge's client has not initialized yet makes the bridge send
// nothing before its initialize answer; the client lists the change after
// initializing, hears of later changes, and hears of no other list when
// only the tools changed, nor of any when the bridge lists again and
// nothing changed.
func TestBridgeSendsNothingBeforeInitialize(t *testing.T) {
	f := newOneProcessFixture(t)
	direct := f.connect(t, "/mcp", "2025-11-25", nil)
	f.waitTools(t, direct, "alpha__echo")
	var listed listedLog
	send, lines, _ := rawBridge(t, f, bridge.Options{Logger: slog.New(slog.NewTextHandler(&listed, nil))})
	testutil.Eventually(t, 20*time.Second, "the bridge's first list", func() bool { return listed.lists.Load() > 0 })
	addTool := func(name string) {
		t.Helper()
		before := listed.tools.Load()
		res, err := direct.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__add_tool", Arguments: map[string]any{"name": name}})
		if err != nil || res.IsError {
			t.Fatalf("add_tool: %v %+v", err, res)
		}
		// The bridge hears of it upstream and lists again.
		testutil.Eventually(t, 20*time.Second, "the bridge to list the new tool", func() bool { return listed.tools.Load() > before })
	}
	answer := func(id float64) (map[string]any, []string) {
		t.Helper()
		return answerTo(t, lines, id)
	}
	otherLists := func(methods []string) []string {
		return slices.DeleteFunc(slices.Clone(methods), func(m string) bool {
			return !strings.HasSuffix(m, "list_changed") || m == "notifications/tools/list_changed"
		})
	}

	addTool("before_init")
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if _, early := answer(1); len(early) > 0 {
		t.Errorf("the bridge sent %q before answering initialize", early)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if res, _ := answer(2); !strings.Contains(fmt.Sprint(res["result"]), "alpha__before_init") {
		t.Error("tools/list after initializing lacks the tool added before")
	}

	// A call opens the upstream session again in the client's name, and
	// the bridge lists again: nothing changed, so no list is announced.
	before := listed.lists.Load()
	send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"alpha__echo","arguments":{"text":"hi"}}}`)
	_, heard := answer(3)
	testutil.Eventually(t, 20*time.Second, "the bridge to list again after reconnecting", func() bool { return listed.lists.Load() > before })
	send(`{"jsonrpc":"2.0","id":4,"method":"ping"}`)
	_, more := answer(4)
	if other := otherLists(append(heard, more...)); len(other) > 0 {
		t.Errorf("listing again with nothing changed announced %q", other)
	}

	// A change after initialization is announced, for the tools only.
	addTool("after_init")
	heard = nil
	deadline := time.After(20 * time.Second)
	for !slices.Contains(heard, "notifications/tools/list_changed") {
		select {
		case m, ok := <-lines:
			if !ok {
				t.Fatal("the bridge ended")
			}
			if method, _ := m["method"].(string); method != "" {
				heard = append(heard, method)
			}
		case <-deadline:
			t.Fatalf("no tools/list_changed after a tool was added (heard %q)", heard)
		}
	}
	if other := otherLists(heard); len(other) > 0 {
		t.Errorf("a new tool announced %q too", other)
	}
}

// TestBridgeRefusedTellsTheClient: a bridge whose token Switchboard refuses
// (revoked), that bridges to a server or profile Switchboard does not serve
// (404), or that gets no token (a reserved --client label), answers its
// client at once with an error naming the reason, instead of leaving its
// requests unanswered, and returns the refusal when the client leaves (the
// command exits non-zero). Clients of both eras: initialize, or
// server/discover over stdio.
func TestBridgeRefusedTellsTheClient(t *testing.T) {
	spec := supervisor.Spec{Name: "alpha", Command: os.Args[0], Env: testEnv(testmcp.Options{Name: "alpha"}), Pool: supervisor.PoolSpec{Max: 1}}
	f := newSpecFixture(t, "the-real-token", []supervisor.Spec{spec}, gateway.ServerConfig{Name: "alpha"})
	for _, tt := range []struct {
		name   string
		locate func(context.Context) (string, string, func() bool, error)
		reason string
	}{
		{"revoked token", func(context.Context) (string, string, func() bool, error) {
			return f.url + "/mcp", "a-revoked-token", func() bool { return true }, nil
		}, "missing or wrong bearer token"},
		{"unknown server", func(context.Context) (string, string, func() bool, error) {
			return f.url + "/mcp/nosuch", "the-real-token", func() bool { return true }, nil
		}, `unknown server "nosuch"`},
		{"unknown profile", func(context.Context) (string, string, func() bool, error) {
			return f.url + "/mcp/p/nosuch", "the-real-token", func() bool { return true }, nil
		}, `unknown profile "nosuch"`},
		{"no profile name", func(context.Context) (string, string, func() bool, error) {
			return f.url + "/mcp/p/", "the-real-token", func() bool { return true }, nil
		}, "a profile name is missing"},
		{"reserved label", func(context.Context) (string, string, func() bool, error) {
			return "", "", nil, fmt.Errorf("%w: --client: the label \"cli\" is reserved", bridge.ErrRefused)
		}, `the label "cli" is reserved`},
	} {
		for _, era := range []string{"2025-11-25", ""} {
			t.Run(tt.name+" "+era, func(t *testing.T) {
				toBridge, toBridgeW := io.Pipe()
				fromBridge, bridgeOut := io.Pipe()
				ended := make(chan error, 1)
				go func() {
					// Reconnect is long: the answers must not wait for it.
					ended <- bridge.Run(context.Background(), bridge.Options{Front: relayFront, Locate: tt.locate,
						In: toBridge, Out: bridgeOut, Version: "test", Reconnect: time.Minute})
				}()
				defer fromBridge.Close()
				ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
				defer cancel()
				client := mcp.NewClient(&mcp.Implementation{Name: "claude-ai", Version: "0.9"}, nil)
				cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: fromBridge, Writer: toBridgeW},
					&mcp.ClientSessionOptions{ProtocolVersion: era})
				if err == nil {
					_, err = cs.ListTools(ctx, nil)
					cs.Close()
				}
				if err == nil || !strings.Contains(err.Error(), "Switchboard refused the bridge") || !strings.Contains(err.Error(), tt.reason) {
					t.Errorf("the client got %v, want an error naming %q", err, tt.reason)
				}
				toBridgeW.Close()
				select {
				case err := <-ended:
					if !errors.Is(err, bridge.ErrRefused) {
						t.Errorf("bridge.Run returned %v, want the refusal", err)
					}
				case <-time.After(10 * time.Second):
					t.Fatal("the bridge did not end when its client left")
				}
			})
		}
	}
}

// TestBridgeTokenRevokedDuringSession: the bridge's token is revoked while
// its client's session is open. The next call fails with the refusal (the
// token, and how to get a new one), not with a broken connection being
// re-established, later calls too, and the bridge returns the refusal when
// its client leaves (the command exits non-zero). Whether the daemon has
// closed the bridge's upstream session (as it does on a revocation) or
// only refuses its next request.
func TestBridgeTokenRevokedDuringSession(t *testing.T) {
	spec := supervisor.Spec{Name: "alpha", Command: os.Args[0], Env: testEnv(testmcp.Options{Name: "alpha"}), Pool: supervisor.PoolSpec{Max: 1}}
	f := newSpecFixture(t, "", []supervisor.Spec{spec}, gateway.ServerConfig{Name: "alpha"})
	for _, closeSessions := range []bool{false, true} {
		t.Run(fmt.Sprintf("sessions closed %v", closeSessions), func(t *testing.T) {
			var revoked atomic.Bool
			handler := f.gw.Handler()
			daemon := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if revoked.Load() {
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(http.StatusUnauthorized)
					io.WriteString(w, `{"error":"invalid token"}`)
					return
				}
				handler.ServeHTTP(w, r)
			}))
			t.Cleanup(daemon.Close)
			toBridge, toBridgeW := io.Pipe()
			fromBridge, bridgeOut := io.Pipe()
			ended := make(chan error, 1)
			go func() {
				// Reconnect is long: the refusal must not wait for it.
				ended <- bridge.Run(context.Background(), bridge.Options{Front: relayFront,
					Locate: func(context.Context) (string, string, func() bool, error) {
						return daemon.URL + "/mcp", "a-token", func() bool { return true }, nil
					},
					In: toBridge, Out: bridgeOut, Version: "test", Reconnect: time.Minute})
			}()
			defer fromBridge.Close()
			defer toBridgeW.Close()
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "claude-ai", Version: "0.9"}, nil).Connect(ctx,
				&mcp.IOTransport{Reader: fromBridge, Writer: toBridgeW}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				t.Fatal(err)
			}
			echo := func() (string, error) {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": "hi"}})
				if err != nil {
					return "", err
				}
				if res.IsError {
					return "", errors.New(text(res))
				}
				return text(res), nil
			}
			if got, err := echo(); err != nil || got != "hi" {
				t.Fatalf("echo before the revocation: %q %v", got, err)
			}

			revoked.Store(true)
			if closeSessions {
				if n := f.gw.CloseSessionsOf(""); n == 0 {
					t.Fatal("no session of the bridge's token to close")
				}
			}
			for i := range 2 {
				_, err := echo()
				if err == nil || !strings.Contains(err.Error(), "Switchboard refused the bridge") || !strings.Contains(err.Error(), "invalid token") ||
					!strings.Contains(err.Error(), "switchboard clients connect") || strings.Contains(err.Error(), "re-established") {
					t.Errorf("call %d after the revocation: %v; want the refusal, the daemon's reason and how to get a new token", i+1, err)
				}
			}
			cs.Close()
			toBridgeW.Close()
			select {
			case err := <-ended:
				if !errors.Is(err, bridge.ErrRefused) {
					t.Errorf("bridge.Run returned %v, want the refusal", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the bridge did not end when its client left")
			}
		})
	}
}

// TestBridgeReconnectsOnUnknownSession: a daemon that does not know the
// bridge's session (it restarted on the same address) answers 404
// "session not found", which is no refusal: the bridge opens a new
// session and the client's call goes through.
func TestBridgeReconnectsOnUnknownSession(t *testing.T) {
	first := newFixture(t, gateway.ServerConfig{Name: "alpha"})
	second := newFixture(t, gateway.ServerConfig{Name: "alpha"})
	var current atomic.Pointer[http.Handler]
	h := first.gw.Handler()
	current.Store(&h)
	daemon := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { (*current.Load()).ServeHTTP(w, r) }))
	t.Cleanup(daemon.Close)
	send, lines, leave := rawBridge(t, first, bridge.Options{
		Locate: func(context.Context) (string, string, func() bool, error) {
			return daemon.URL + "/mcp", "", func() bool { return true }, nil
		},
	})
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	answerTo(t, lines, 1)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	echo := func(id int) {
		t.Helper()
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"alpha__echo","arguments":{"text":"hi"}}}`, id))
		got, _ := answerTo(t, lines, float64(id))
		data, _ := json.Marshal(got)
		if !strings.Contains(string(data), `"text":"hi"`) || strings.Contains(string(data), `"isError":true`) {
			t.Fatalf("echo %d: %s", id, data)
		}
	}
	echo(2)
	h2 := second.gw.Handler()
	current.Store(&h2)
	echo(3)
	if err := leave(); err != nil {
		t.Errorf("bridge.Run returned %v, want nil", err)
	}
}
