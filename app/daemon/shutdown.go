package daemon

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/app/events"
	"github.com/switchboardhq/switchboard/app/gateway"
)

// AnswerGrace bounds the wait for the answers to the calls in flight when
// the daemon stops, once they are cancelled (see stopServing).
const AnswerGrace = time.Second

// HTTPGrace bounds the wait for the requests still open after that, once
// their contexts have ended; those left are cut.
const HTTPGrace = 2 * time.Second

// stopServing stops the daemon's HTTP server promptly, in an order that
// lets every client with a call in flight be answered:
//
//  1. no new connection is accepted (Shutdown closes the listener first,
//     then runs its OnShutdown hooks);
//  2. the gateway cancels every call in flight with gateway.ErrShuttingDown
//     (and any call that starts later): each call's client is answered so,
//     and the call recorded as cancelled with that reason;
//  3. the requests that carry an answer (every one but a GET) are waited
//     for, and the gateway's calls, at most AnswerGrace; then the gateway
//     closes its client sessions (a legacy SSE client's answers go on its
//     session's stream);
//  4. the live feed closes and every request's context ends: the event
//     and log streams, the MCP GET and legacy SSE streams end instead of
//     holding the stop;
//  5. once no connection is serving a request (every response written
//     out; at most HTTPGrace more), the connections left are closed: idle
//     ones, and ones a client opened without sending a request yet, which
//     Shutdown alone would wait 5 s for.
//
// The servers stop after that (Run's deferred gateway and supervisor
// Close), and the history closes once the supervisor's events are drained:
// the calls' records are flushed to it and ended in the journal, which the
// next daemon then finds empty.
func stopServing(log *slog.Logger, srv *http.Server, open *openRequests, gw *gateway.Gateway, bus *events.Bus) {
	started := time.Now()
	ended := make(chan struct{})
	srv.RegisterOnShutdown(func() {
		defer close(ended)
		gw.CancelCalls()
		answered, cancel := context.WithTimeout(context.Background(), AnswerGrace)
		defer cancel()
		if !open.answered(answered) {
			log.Warn("requests in flight were not answered in time; ending them", "grace", AnswerGrace)
		}
		gw.EndSessions(answered)
		bus.Close()
		open.end(gateway.ErrShuttingDown)
	})

	shutCtx, cut := context.WithCancel(context.Background())
	defer cut()
	var wg sync.WaitGroup
	wg.Go(func() {
		defer cut()
		grace, cancel := context.WithTimeout(context.Background(), AnswerGrace+HTTPGrace)
		defer cancel()
		select {
		case <-ended:
		case <-grace.Done():
			return
		}
		open.finished(grace)
	})
	err := srv.Shutdown(shutCtx)
	if err != nil {
		srv.Close()
	}
	wg.Wait()
	log.Debug("stopped serving", "took", time.Since(started), "cut", err != nil)
}

// openRequests follows the daemon's HTTP requests and connections: the
// requests that carry an answer (not a GET, which may be a stream that
// lasts as long as its client) and the connections serving a request can
// be waited for, and every request's context ends with end.
type openRequests struct {
	ctx    context.Context
	cancel context.CancelCauseFunc

	mu      sync.Mutex
	answers int               // requests being served, but GETs
	active  map[net.Conn]bool // connections serving a request
	changed chan struct{}     // closed when either drops while a wait is on
}

func newOpenRequests() *openRequests {
	ctx, cancel := context.WithCancelCause(context.Background())
	return &openRequests{ctx: ctx, cancel: cancel, active: map[net.Conn]bool{}}
}

// base is the http.Server's BaseContext: every request's context ends
// with end.
func (o *openRequests) base(net.Listener) context.Context { return o.ctx }

// end ends every request's context, with cause.
func (o *openRequests) end(cause error) { o.cancel(cause) }

// connState is the http.Server's ConnState. A connection is active from
// the first byte of a request until its response is written out (net/http
// makes it idle after flushing it).
func (o *openRequests) connState(c net.Conn, st http.ConnState) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if st == http.StateActive {
		o.active[c] = true
		return
	}
	if o.active[c] {
		delete(o.active, c)
		o.signal()
	}
}

// track counts the requests of h that carry an answer.
func (o *openRequests) track(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			h.ServeHTTP(w, r)
			return
		}
		o.mu.Lock()
		o.answers++
		o.mu.Unlock()
		defer func() {
			o.mu.Lock()
			o.answers--
			o.signal()
			o.mu.Unlock()
		}()
		h.ServeHTTP(w, r)
	})
}

// signal wakes the waits up; o.mu must be held.
func (o *openRequests) signal() {
	if o.changed != nil {
		close(o.changed)
		o.changed = nil
	}
}

// answered waits until no request that carries an answer is being served,
// or ctx ends, and reports whether none is.
func (o *openRequests) answered(ctx context.Context) bool {
	return o.waitUntil(ctx, func() bool { return o.answers == 0 })
}

// finished waits until no connection is serving a request (every response
// written out), or ctx ends, and reports whether none is.
func (o *openRequests) finished(ctx context.Context) bool {
	return o.waitUntil(ctx, func() bool { return len(o.active) == 0 })
}

// waitUntil waits until done, called with o.mu held, reports true, or ctx
// ends.
func (o *openRequests) waitUntil(ctx context.Context, done func() bool) bool {
	for {
		o.mu.Lock()
		if done() {
			o.mu.Unlock()
			return true
		}
		if o.changed == nil {
			o.changed = make(chan struct{})
		}
		changed := o.changed
		o.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return false
		}
	}
}
