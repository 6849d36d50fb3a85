// Routing back to the client: progressRoute leads a gateway progress token
// to the caller that asked, and callerIndex knows which client call is in
// flight on which backend session, so that a server's sampling, elicitation
// and roots requests (client.go) reach the right client.

package gateway

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A progressRoute leads a gateway progress token back to the client.
type progressRoute struct {
	// ctx is the client's request's: notifications sent with it go on that
	// request's own response stream (the only one a client without the
	// optional GET stream, or in the stateless era, listens to).
	ctx       context.Context
	session   *mcp.ServerSession
	token     any
	timer     *time.Timer
	timeout   time.Duration
	delivered chan struct{} // signalled after each notification passed on
	count     atomic.Int64  // notifications passed on
	seen      atomic.Int64  // notifications read off a counting transport

	watch func(mcp.ProgressNotificationParams) // tells the CallWatcher; nil if none
}

// The go-sdk client hands a server's notifications to a handler goroutine
// but a response straight to the caller, so the server's last progress
// notification, sent just before its result, can still be queued when the
// result arrives; passing the result on at once would drop it. On the
// supervisor's stdio transports the gateway counts each progress
// notification as it is read (WrapTransport), in order with the response,
// and on a remote server's connection as its event stream is read
// (WrapRemoteHTTP), so a call waits until every one read before its
// result has been passed on. Elsewhere (the bridge's HTTP upstream) it
// waits briefly for more.
const (
	progressDrainMax = time.Second          // bound on waiting for counted notifications
	progressDrain    = 2 * time.Millisecond // the brief wait where nothing was counted
)

// drain waits until the progress notifications of a finished call have
// been passed on; nil does nothing.
func (r *progressRoute) drain() {
	if r == nil {
		return
	}
	if r.seen.Load() > 0 {
		deadline := time.NewTimer(progressDrainMax)
		defer deadline.Stop()
		for r.count.Load() < r.seen.Load() {
			select {
			case <-r.delivered:
			case <-deadline.C:
				return
			}
		}
		return
	}
	if r.count.Load() == 0 {
		return
	}
	t := time.NewTimer(progressDrain)
	defer t.Stop()
	for {
		select {
		case <-r.delivered:
			t.Reset(progressDrain)
		case <-t.C:
			return
		}
	}
}

// deliver passes one progress notification on to the client.
func (r *progressRoute) deliver(p mcp.ProgressNotificationParams) {
	r.timer.Reset(r.timeout) // progress keeps a long call alive
	p.ProgressToken = r.token
	_ = r.session.NotifyProgress(r.ctx, &p)
	r.count.Add(1)
	select {
	case r.delivered <- struct{}{}:
	default:
	}
}

// A caller is a client request in flight on a backend session.
type caller struct {
	session *mcp.ServerSession
	ctx     context.Context // the request's, see progressRoute.ctx
	caps    *mcp.ClientCapabilities
	// pending is set for a stateless client's tool call: requests to the
	// client go through its input-required rounds (see mrtr.go).
	pending *pendingCall
}

// capabilitiesOf returns what the client of req can do: from the request's
// _meta in the 2026-07-28 era, from initialize before.
func capabilitiesOf(req mcp.Request) *mcp.ClientCapabilities {
	if r, ok := req.(interface {
		ClientCapabilities() *mcp.ClientCapabilities
	}); ok {
		return r.ClientCapabilities()
	}
	return nil
}

// callerIndex knows which client sessions have calls in flight on which
// backend session, for server-to-client requests (sampling, elicitation,
// roots). The rule, when calls from several clients share a process: the
// request goes to the client whose call started most recently.
type callerIndex struct {
	mu    sync.Mutex
	calls map[*mcp.ClientSession][]caller
}

func (c *callerIndex) init() { c.calls = map[*mcp.ClientSession][]caller{} }

func (c *callerIndex) push(cs *mcp.ClientSession, ss caller) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls[cs] = append(c.calls[cs], ss)
}

func (c *callerIndex) pop(cs *mcp.ClientSession, ss *mcp.ServerSession) {
	c.mu.Lock()
	defer c.mu.Unlock()
	list := c.calls[cs]
	for i := len(list) - 1; i >= 0; i-- {
		if list[i].session == ss {
			list = append(list[:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(c.calls, cs)
	} else {
		c.calls[cs] = list
	}
}

func (c *callerIndex) latest(cs *mcp.ClientSession) (caller, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	list := c.calls[cs]
	if len(list) == 0 {
		return caller{}, false
	}
	return list[len(list)-1], true
}
