package gateway

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sessionCalls ties the requests a client session has in flight on the
// go-sdk path to the session: when it ends (DELETE, the idle timeout, a
// revoked token, Close) they are cancelled, as if the client had sent
// notifications/cancelled for each, so that the server is told
// (notifications/cancelled) and its process freed at once rather than at
// the call's timeout. (The go-sdk does not cancel a closed session's
// handlers; the fast path keeps its calls in fastState.calls.)
type sessionCalls struct {
	mu    sync.Mutex
	next  uint64
	calls map[sessionCall]context.CancelCauseFunc
	// ended holds the sessions ended lately, so that a request racing with
	// the end is cancelled too: the go-sdk's close of a session waits for
	// its handlers, so the calls are cancelled before it, and one more
	// arriving in between would hold the close up.
	ended map[string]time.Time
	// endedOrder holds the ids of ended in the order they ended (each
	// with its time), so that those kept long enough are dropped from
	// the front, not found by walking every id at each end: a client
	// opening and closing sessions many times a second keeps thousands.
	endedOrder []endedSession
	endedHead  int // endedOrder[:endedHead] are expired and dropped
	// stopped, once set (stop), cancels every call, those that start
	// later too: the gateway is closing.
	stopped error
	// owed counts, by legacy SSE session, the requests posted whose answer
	// is not written on the session's stream yet: the go-sdk writes it
	// after the call's handler returns, and a session closed before that
	// drops it (see legacyPost).
	owed map[string]int
	// drained, when not nil, is closed when no call is left and no legacy
	// answer owed (see wait).
	drained chan struct{}
}

// A sessionCall is one call in flight of a session (by Mcp-Session-Id).
// One flat map of them, not a map per session: a session's calls come
// and go one at a time, and a map per session would be made for each.
type sessionCall struct {
	session string
	n       uint64
}

// An endedSession is an entry of sessionCalls.endedOrder.
type endedSession struct {
	id string
	at time.Time
}

// endedKept is how long an ended session's id is kept in ended.
const endedKept = time.Minute

func (s *sessionCalls) init() {
	s.calls = map[sessionCall]context.CancelCauseFunc{}
	s.ended = map[string]time.Time{}
	s.owed = map[string]int{}
}

// idleLocked reports whether no call is in flight and no legacy answer
// owed; s.mu must be held.
func (s *sessionCalls) idleLocked() bool {
	return len(s.calls) == 0 && len(s.owed) == 0
}

// signalLocked wakes wait up when the calls are drained; s.mu must be held.
func (s *sessionCalls) signalLocked() {
	if s.drained != nil && s.idleLocked() {
		close(s.drained)
		s.drained = nil
	}
}

// owe adds n to the answers legacy SSE session sid owes (negative: they
// were written, or will not be); forget drops the session's count (its
// stream ended).
func (s *sessionCalls) owe(sid string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, open := s.owed[sid]; !open && n < 0 {
		return
	}
	s.owed[sid] += n
	if s.owed[sid] <= 0 {
		delete(s.owed, sid)
	}
	s.signalLocked()
}

func (s *sessionCalls) forget(sid string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.owed, sid)
	s.signalLocked()
}

// track returns a context of ctx that ends when session sid ends, and the
// function that forgets it (the call is over).
func (s *sessionCalls) track(ctx context.Context, sid string) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	call := s.add(sid, cancel)
	return ctx, func() {
		s.remove(call)
		cancel(nil)
	}
}

// add makes cancel a call of session sid, called when the session ends
// (at once if it just ended, or the gateway is closing); remove it when
// the call is over.
func (s *sessionCalls) add(sid string, cancel context.CancelCauseFunc) sessionCall {
	s.mu.Lock()
	s.next++
	call := sessionCall{sid, s.next}
	s.calls[call] = cancel
	_, ended := s.ended[sid]
	stopped := s.stopped
	s.mu.Unlock()
	switch {
	case stopped != nil:
		cancel(stopped)
	case ended:
		cancel(nil)
	}
	return call
}

// remove forgets a call that is over.
func (s *sessionCalls) remove(call sessionCall) {
	s.mu.Lock()
	delete(s.calls, call)
	s.signalLocked()
	s.mu.Unlock()
}

// end cancels every call of session sid still in flight, with cause (nil
// means context.Canceled): the failure of each call then says why.
func (s *sessionCalls) end(sid string, cause error) {
	now := time.Now()
	var cancels []context.CancelCauseFunc
	s.mu.Lock()
	for call, cancel := range s.calls {
		if call.session == sid {
			cancels = append(cancels, cancel)
			delete(s.calls, call)
		}
	}
	for s.endedHead < len(s.endedOrder) && now.Sub(s.endedOrder[s.endedHead].at) > endedKept {
		e := s.endedOrder[s.endedHead]
		// A session ended twice is in the order twice: only its last
		// end's entry removes it.
		if s.ended[e.id].Equal(e.at) {
			delete(s.ended, e.id)
		}
		s.endedOrder[s.endedHead] = endedSession{}
		s.endedHead++
	}
	// The entries before endedHead are dropped; moved down once they are
	// half of the slice, so that each entry is moved once on average.
	if s.endedHead > 0 && s.endedHead >= len(s.endedOrder)/2 {
		s.endedOrder = append(s.endedOrder[:0], s.endedOrder[s.endedHead:]...)
		s.endedHead = 0
	}
	s.ended[sid] = now
	s.endedOrder = append(s.endedOrder, endedSession{sid, now})
	s.mu.Unlock()
	for _, cancel := range cancels {
		cancel(cause)
	}
}

// stop cancels every call in flight, and every call that starts from now
// on, with cause.
func (s *sessionCalls) stop(cause error) {
	s.mu.Lock()
	s.stopped = cause
	var cancels []context.CancelCauseFunc
	for _, cancel := range s.calls {
		cancels = append(cancels, cancel)
	}
	s.mu.Unlock()
	for _, cancel := range cancels {
		cancel(cause)
	}
}

// wait waits until no call is in flight and no legacy answer owed, or ctx
// ends, and reports whether it is so.
func (s *sessionCalls) wait(ctx context.Context) bool {
	s.mu.Lock()
	if s.idleLocked() {
		s.mu.Unlock()
		return true
	}
	if s.drained == nil {
		s.drained = make(chan struct{})
	}
	drained := s.drained
	s.mu.Unlock()
	select {
	case <-drained:
		return true
	case <-ctx.Done():
		return false
	}
}

// cancelOnSessionEnd is the front middleware that makes each request of a
// session (not a notification) a call that the session's end cancels.
func (g *Gateway) cancelOnSessionEnd() mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			ss, _ := req.GetSession().(*mcp.ServerSession)
			if ss == nil || strings.HasPrefix(method, "notifications/") {
				return next(ctx, method, req)
			}
			sid := ss.ID()
			if sid == "" {
				// A stateless request (2026-07-28), or one of a legacy
				// SSE session (the go-sdk gives those no id): only
				// CancelCalls ends it through here.
				sid = statelessCalls
			}
			ctx, done := g.inflight.track(ctx, sid)
			defer done()
			return next(ctx, method, req)
		}
	}
}

// endSession cancels the calls in flight of the client session sid, which
// ends (DELETE, the idle timeout, a revoked token, Close), on both paths,
// and forgets the session on the fast path. It comes before the go-sdk's
// close of the session, which waits for the session's handlers to return.
func (g *Gateway) endSession(sid string) {
	if sid == "" {
		return
	}
	g.inflight.end(sid, nil)
	g.endFastSession(sid)
}

// ErrShuttingDown is why the calls in flight are cancelled when Switchboard
// stops (CancelCalls, Close): their clients are answered with it, and it
// counts as a cancellation (errors.Is context.Canceled), which the history
// records as cancelled.
var ErrShuttingDown error = shuttingDown{}

type shuttingDown struct{}

func (shuttingDown) Error() string        { return "the call was cancelled: Switchboard is shutting down" }
func (shuttingDown) Is(target error) bool { return target == context.Canceled }

// CancelCalls cancels every call in flight, of every client session and
// stateless, on both paths, with ErrShuttingDown, and every call that
// starts from now on: each is answered (and recorded) as cancelled because
// Switchboard is shutting down. The sessions stay open, so that the
// answers reach their clients; the daemon calls it when it stops accepting
// connections, and Close ends the sessions later.
func (g *Gateway) CancelCalls() { g.inflight.stop(ErrShuttingDown) }

// EndSessions closes every open client session once the calls CancelCalls
// cancelled have returned and a legacy SSE session's answers are written
// on its stream (or ctx ends): a session's close makes the go-sdk drop the
// answers not written yet. Close does it too, without waiting.
func (g *Gateway) EndSessions(ctx context.Context) {
	g.CancelCalls()
	g.inflight.wait(ctx)
	g.closeAllSessions()
}

// statelessCalls is the key in sessionCalls of the requests of sessions
// without an id: stateless ones (2026-07-28) and legacy SSE ones. A
// session id is never empty.
const statelessCalls = ""

// closeAllSessions closes every open client session (the gateway is
// closing) and cancels every call in flight with ErrShuttingDown.
func (g *Gateway) closeAllSessions() {
	g.CancelCalls()
	for _, s := range g.fronts() {
		for ss := range s.Sessions() {
			g.endSession(ss.ID()) // first: the go-sdk's Close waits for the calls
			_ = ss.Close()
		}
	}
}
