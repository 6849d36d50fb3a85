// Resource subscriptions: resources/subscribe and /unsubscribe of client
// sessions, counted per server and URI across the sessions, so that the
// server is asked once and each session's unsubscribe, or end, removes
// only its own subscription.

package gateway

import (
	"context"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/supervisor"
)

// subscriptions knows which client sessions are subscribed to which URI of
// which server. The server is asked to subscribe when the first session
// subscribes, and to unsubscribe when the last one leaves: by its
// unsubscribe, or by its end (DELETE, the idle timeout, a revoked token,
// eviction, a closed stream), which a goroutine per subscribed session
// waits for. A session that never subscribed unsubscribes nothing. (The
// go-sdk front sends each update to the sessions that subscribed.)
type subscriptions struct {
	mu       sync.Mutex // guards the fields below; never held across a server's answer
	uris     map[subscriptionKey]*subscription
	sessions map[*mcp.ServerSession]map[subscriptionKey]bool // what each session is subscribed to
	closed   bool                                            // the gateway is closing: no new watchers
	// track runs a session's watcher as part of the gateway's lifetime
	// (Close waits for it); ended is what the watcher calls once the
	// session ended.
	track func(func())
	ended func(*mcp.ServerSession)
}

// A subscriptionKey names one subscription of a server. In session mode
// each client session has a process of its own, which the session's
// subscription is made on: session names it (nil otherwise, where one
// subscription of the server serves every session).
type subscriptionKey struct {
	server, uri string
	session     *mcp.ServerSession
}

// A subscription is the client sessions subscribed to one key.
type subscription struct {
	// mu orders the subscribe and unsubscribe of this key only: a server
	// slow to answer holds up no other.
	mu          sync.Mutex
	subscribers map[*mcp.ServerSession]bool
}

func (s *subscriptions) init(track func(func()), ended func(*mcp.ServerSession)) {
	s.uris = map[subscriptionKey]*subscription{}
	s.sessions = map[*mcp.ServerSession]map[subscriptionKey]bool{}
	s.track, s.ended = track, ended
}

// lock returns the subscription of key, locked (made if there is none).
func (s *subscriptions) lock(key subscriptionKey) *subscription {
	for {
		s.mu.Lock()
		sub := s.uris[key]
		if sub == nil {
			sub = &subscription{subscribers: map[*mcp.ServerSession]bool{}}
			s.uris[key] = sub
		}
		s.mu.Unlock()
		sub.mu.Lock()
		s.mu.Lock()
		current := s.uris[key] == sub
		s.mu.Unlock()
		if current {
			return sub
		}
		sub.mu.Unlock() // emptied and forgotten while this call waited
	}
}

// forget drops sub, when nobody is subscribed to it, from the map; the
// caller holds sub.mu.
func (s *subscriptions) forget(key subscriptionKey, sub *subscription) {
	if len(sub.subscribers) > 0 {
		return
	}
	s.mu.Lock()
	if s.uris[key] == sub {
		delete(s.uris, key)
	}
	s.mu.Unlock()
}

// note records that ss is subscribed to key (or, on false, no longer is),
// and watches for the end of a session subscribed for the first time.
func (s *subscriptions) note(ss *mcp.ServerSession, key subscriptionKey, on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := s.sessions[ss]
	if !on {
		delete(keys, key)
		return
	}
	if keys == nil {
		keys = map[subscriptionKey]bool{}
		s.sessions[ss] = keys
		// Under mu: Close sets closed first, so no watcher starts after
		// Close began waiting for them.
		if !s.closed {
			s.track(func() {
				_ = ss.Wait()
				s.ended(ss)
			})
		}
	}
	keys[key] = true
}

// take returns what ss was subscribed to, and forgets it: ss ended. A
// subscription ss makes later (racing with its end) is noted again, and
// its watcher, at once.
func (s *subscriptions) take(ss *mcp.ServerSession) []subscriptionKey {
	s.mu.Lock()
	defer s.mu.Unlock()
	var keys []subscriptionKey
	for key := range s.sessions[ss] {
		keys = append(keys, key)
	}
	delete(s.sessions, ss)
	return keys
}

// closeAll ends every session still subscribed to something, so that
// their watchers return (the gateway is closing), and starts no watcher
// from now on.
func (s *subscriptions) closeAll() {
	s.mu.Lock()
	s.closed = true
	var open []*mcp.ServerSession
	for ss := range s.sessions {
		open = append(open, ss)
	}
	s.mu.Unlock()
	for _, ss := range open {
		_ = ss.Close()
	}
}

// subscribe serves resources/subscribe (on) and /unsubscribe of the client
// session of req for uri on front: the server owning uri is asked when the
// first session subscribes and when the last one leaves.
func (g *Gateway) subscribe(ctx context.Context, req mcp.Request, front, uri string, on bool) error {
	server := front
	if isAggregated(front) {
		if server = g.resourceOwner(front, uri); server == "" {
			return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("no server offers resource %q", uri)}
		}
	}
	ss, _ := req.GetSession().(*mcp.ServerSession)
	key := subscriptionKey{server: server, uri: uri}
	if b, ok := g.backend(server); ok && b.config().Mode == supervisor.ModeSession {
		key.session = ss
	}
	sub := g.subs.lock(key)
	defer sub.mu.Unlock()
	if on {
		return g.join(ctx, req, key, sub, ss)
	}
	return g.leave(ctx, req, key, sub, ss)
}

// join subscribes ss to key, asking the server if ss is the first; the
// caller holds sub.mu.
func (g *Gateway) join(ctx context.Context, req mcp.Request, key subscriptionKey, sub *subscription, ss *mcp.ServerSession) error {
	if sub.subscribers[ss] {
		return nil // subscribed again: counted once
	}
	if len(sub.subscribers) == 0 {
		if err := g.askSubscription(ctx, req, key, true); err != nil {
			g.subs.forget(key, sub)
			return err
		}
	}
	sub.subscribers[ss] = true
	g.subs.note(ss, key, true)
	return nil
}

// leave unsubscribes ss from key, asking the server if ss is the last; a
// session that was not subscribed leaves the others as they are. The
// caller holds sub.mu.
func (g *Gateway) leave(ctx context.Context, req mcp.Request, key subscriptionKey, sub *subscription, ss *mcp.ServerSession) error {
	if !sub.subscribers[ss] {
		g.subs.forget(key, sub)
		return nil
	}
	if len(sub.subscribers) == 1 {
		if err := g.askSubscription(ctx, req, key, false); err != nil {
			return err // still subscribed, as the front still has it
		}
	}
	delete(sub.subscribers, ss)
	g.subs.note(ss, key, false)
	g.subs.forget(key, sub)
	return nil
}

// sessionUnsubscribed removes the subscriptions of ss, which ended, and
// unsubscribes the server from what nobody else is subscribed to. (In
// session mode the session's process, which holds its subscriptions, is
// given back with the session: nothing to ask.)
func (g *Gateway) sessionUnsubscribed(ss *mcp.ServerSession) {
	for _, key := range g.subs.take(ss) {
		sub := g.subs.lock(key)
		if sub.subscribers[ss] {
			delete(sub.subscribers, ss)
			_, served := g.backend(key.server) // else it left the gateway, and its processes stop
			if len(sub.subscribers) == 0 && key.session == nil && served && g.ctx.Err() == nil {
				req := &mcp.UnsubscribeRequest{Params: &mcp.UnsubscribeParams{URI: key.uri}}
				if err := g.askSubscription(g.ctx, req, key, false); err != nil {
					g.log.Info("could not unsubscribe a server from a resource after its last subscribed client session ended",
						"server", key.server, "uri", key.uri, "err", err)
				}
			}
		}
		g.subs.forget(key, sub)
		sub.mu.Unlock()
	}
}

// askSubscription asks key's server to subscribe to key's URI (on), or to
// unsubscribe, on behalf of req's session (on a process of its own in
// session mode).
func (g *Gateway) askSubscription(ctx context.Context, req mcp.Request, key subscriptionKey, on bool) error {
	return g.forward(ctx, req, key.server, nil, nil, func(ctx context.Context, cs *mcp.ClientSession) error {
		if on {
			return cs.Subscribe(ctx, &mcp.SubscribeParams{URI: key.uri})
		}
		return cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: key.uri})
	})
}
