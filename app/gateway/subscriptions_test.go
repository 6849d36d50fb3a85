package gateway_test

import (
	"context"
	"encoding/json"
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

// tokenHeader adds the X-Token header newTokenGateway reads the token of
// a request from.
type tokenHeader string

func (tok tokenHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Token", string(tok))
	return http.DefaultTransport.RoundTrip(r)
}

// subscriber is a go-sdk client of a newTokenGateway's /mcp and the
// resource updates it gets.
type subscriber struct {
	cs      *mcp.ClientSession
	updates chan string
}

// connectAs connects a go-sdk client to srv's /mcp with token, speaking
// era, once alpha__touch is listed.
func connectAs(t *testing.T, srv *httptest.Server, token, era string) *subscriber {
	t.Helper()
	s := &subscriber{updates: make(chan string, 100)}
	c := mcp.NewClient(&mcp.Implementation{Name: "sub-" + token, Version: "1"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) { s.updates <- req.Params.URI },
	})
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp",
		HTTPClient: &http.Client{Transport: tokenHeader(token)}}, &mcp.ClientSessionOptions{ProtocolVersion: era})
	if err != nil {
		t.Fatalf("connect as %s: %v", token, err)
	}
	t.Cleanup(func() { cs.Close() })
	s.cs = cs
	testutil.Eventually(t, 30*time.Second, "alpha__touch to be listed", func() bool {
		res, err := cs.ListTools(t.Context(), nil)
		return err == nil && slices.ContainsFunc(res.Tools, func(tool *mcp.Tool) bool { return tool.Name == "alpha__touch" })
	})
	return s
}

// touch has alpha send an update for uri, through cs, and returns whether
// alpha holds a subscription to uri.
func touch(t *testing.T, cs *mcp.ClientSession, uri string) bool {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__touch", Arguments: map[string]any{"uri": uri}})
	if err != nil || res.IsError {
		t.Fatalf("touch %s: %v %+v", uri, err, res)
	}
	var out struct{ Subscribed bool }
	data, _ := json.Marshal(res.StructuredContent)
	_ = json.Unmarshal(data, &out)
	return out.Subscribed
}

// gotUpdate reports whether s gets an update for uri within a few seconds
// (the ones before are dropped).
func (s *subscriber) gotUpdate(uri string) bool {
	timeout := time.After(5 * time.Second)
	for {
		select {
		case got := <-s.updates:
			if got == uri {
				return true
			}
		case <-timeout:
			return false
		}
	}
}

// drain drops the updates s got so far.
func (s *subscriber) drain() {
	for len(s.updates) > 0 {
		<-s.updates
	}
}

// subscribe subscribes s to uri and waits until alpha knows (touch through
// toucher says so).
func (s *subscriber) subscribe(t *testing.T, toucher *mcp.ClientSession, uri string) {
	t.Helper()
	if err := s.cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: uri}); err != nil {
		t.Fatalf("subscribe %s: %v", uri, err)
	}
	testutil.Eventually(t, 10*time.Second, "alpha to know of the subscription to "+uri, func() bool { return touch(t, toucher, uri) })
}

// TestUnsubscribeRemovesOnlyItsOwn: a session's resources/unsubscribe
// removes only its own subscription. Another token's session, never
// subscribed, unsubscribing A's URI leaves alpha subscribed and A getting
// updates; of two subscribed sessions, the first to unsubscribe leaves the
// other its updates, and alpha is unsubscribed when the last one does.
func TestUnsubscribeRemovesOnlyItsOwn(t *testing.T) {
	_, srv := newTokenGateway(t, nil)
	const uri = "test://items/7"
	a := connectAs(t, srv, "tok_a", "2025-11-25")
	a.subscribe(t, a.cs, uri)

	b := connectAs(t, srv, "tok_b", "2025-11-25")
	if err := b.cs.Unsubscribe(t.Context(), &mcp.UnsubscribeParams{URI: uri}); err != nil {
		t.Fatalf("B's unsubscribe: %v", err)
	}
	a.drain()
	if !touch(t, a.cs, uri) {
		t.Errorf("alpha was unsubscribed by the unsubscribe of a session that never subscribed")
	}
	if !a.gotUpdate(uri) {
		t.Errorf("A got no update after B's unsubscribe")
	}

	b.subscribe(t, a.cs, uri)
	if err := a.cs.Unsubscribe(t.Context(), &mcp.UnsubscribeParams{URI: uri}); err != nil {
		t.Fatalf("A's unsubscribe: %v", err)
	}
	b.drain()
	if !touch(t, a.cs, uri) || !b.gotUpdate(uri) {
		t.Errorf("B lost its subscription when A unsubscribed")
	}
	if err := b.cs.Unsubscribe(t.Context(), &mcp.UnsubscribeParams{URI: uri}); err != nil {
		t.Fatalf("B's unsubscribe: %v", err)
	}
	if touch(t, a.cs, uri) {
		t.Errorf("alpha still subscribed after every session unsubscribed")
	}
}

// TestSessionEndUnsubscribes: a session that ends without unsubscribing
// (DELETE, the idle timeout, its token's revocation, its eviction for a
// new session of its token) takes its subscription with it: with another
// session subscribed to the URI alpha stays subscribed, and once the last
// subscribed session ends alpha is unsubscribed.
func TestSessionEndUnsubscribes(t *testing.T) {
	for _, tt := range []struct {
		name  string
		limit int // sessions per token (0: the default)
		// end ends a's session, the last subscribed one.
		end func(t *testing.T, gw *gateway.Gateway, srv *httptest.Server, a *subscriber)
	}{
		{"DELETE", 0, func(t *testing.T, _ *gateway.Gateway, _ *httptest.Server, a *subscriber) {
			if err := a.cs.Close(); err != nil {
				t.Fatal(err)
			}
		}},
		{"idle timeout", 0, func(_ *testing.T, gw *gateway.Gateway, _ *httptest.Server, _ *subscriber) {
			gw.SetSessionTimeout(200 * time.Millisecond) // a goes quiet
		}},
		{"revocation", 0, func(t *testing.T, gw *gateway.Gateway, _ *httptest.Server, _ *subscriber) {
			if n := gw.CloseSessionsOf("tok_a"); n != 1 {
				t.Fatalf("CloseSessionsOf closed %d sessions, want 1", n)
			}
		}},
		{"eviction", 1, func(t *testing.T, _ *gateway.Gateway, srv *httptest.Server, _ *subscriber) {
			connectAs(t, srv, "tok_a", "2025-11-25") // tok_a may have one: a makes room
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			gw, srv := newTokenGateway(t, func(o *gateway.Options) { o.MaxSessionsPerToken = tt.limit })
			const uri = "test://items/9"
			// Touched without a session (2026-07-28), which no idle
			// timeout, revocation or eviction of tok_a ends.
			toucher := connectAs(t, srv, "tok_t", "2026-07-28").cs
			c := connectAs(t, srv, "tok_c", "2025-11-25")
			c.subscribe(t, toucher, uri)
			a := connectAs(t, srv, "tok_a", "2025-11-25")
			a.subscribe(t, toucher, uri)

			if err := c.cs.Close(); err != nil { // DELETE, without unsubscribing
				t.Fatal(err)
			}
			a.drain()
			if !touch(t, toucher, uri) || !a.gotUpdate(uri) {
				t.Fatalf("a lost its subscription when another subscribed session ended")
			}
			tt.end(t, gw, srv, a)
			testutil.Eventually(t, 15*time.Second, "alpha to be unsubscribed once the last subscribed session ended", func() bool {
				return !touch(t, toucher, uri)
			})
		})
	}
}

// TestStatelessSubscriptionEndsWithItsStream: a 2026-07-28 client's
// subscription lives as long as its subscriptions/listen stream: alpha is
// unsubscribed when the client unsubscribes (the go-sdk front's
// unsubscribe then has a cancelled context) or goes away.
func TestStatelessSubscriptionEndsWithItsStream(t *testing.T) {
	_, srv := newTokenGateway(t, nil)
	const uri = "test://items/5"
	toucher := connectAs(t, srv, "tok_t", "2026-07-28").cs
	s := connectAs(t, srv, "tok_s", "2026-07-28")
	s.subscribe(t, toucher, uri)
	if !s.gotUpdate(uri) {
		t.Errorf("no update for %s", uri)
	}
	if err := s.cs.Unsubscribe(t.Context(), &mcp.UnsubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, "alpha to be unsubscribed after the client unsubscribed", func() bool { return !touch(t, toucher, uri) })
	s.subscribe(t, toucher, uri)
	if err := s.cs.Close(); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, "alpha to be unsubscribed after the client went away", func() bool { return !touch(t, toucher, uri) })
}

// TestSessionModeSubscribesEachProcess: in session mode each client
// session has a process of its own, and its subscription is made on it:
// a second session subscribing to a URI the first one has gets its own.
func TestSessionModeSubscribesEachProcess(t *testing.T) {
	f := newFixture(t, gateway.ServerConfig{Name: "sess", Mode: supervisor.ModeSession})
	const uri = "test://items/11"
	var sessions []*mcp.ClientSession
	for range 2 {
		cs := f.connect(t, "/mcp/sess", "2025-11-25", nil)
		f.waitTools(t, cs, "touch")
		if err := cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: uri}); err != nil {
			t.Fatalf("subscribe: %v", err)
		}
		sessions = append(sessions, cs)
	}
	for i, cs := range sessions {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "touch", Arguments: map[string]any{"uri": uri}})
		if err != nil || res.IsError {
			t.Fatalf("touch: %v %+v", err, res)
		}
		var out struct{ Subscribed bool }
		data, _ := json.Marshal(res.StructuredContent)
		_ = json.Unmarshal(data, &out)
		if !out.Subscribed {
			t.Errorf("session %d's process holds no subscription to %s", i+1, uri)
		}
	}
}
