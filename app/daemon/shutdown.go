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
//     for, at most AnswerGrace;
//  4. the live feed closes and every request's context ends: the event
//     and log streams, the MCP GET and legacy SSE streams end instead of
//     holding the stop;
//  5. Shutdown waits (at most HTTPGrace) for the handlers to return; what
//     is left is cut.
//
// The client sessions end and the servers stop after that (Run's deferred
// gateway and supervisor Close), and the history closes once the
// supervisor's events are drained: the calls' records are flushed to it
// and ended in the journal, which the next daemon then finds empty.
func stopServing(log *slog.Logger, srv *http.Server, open *openRequests, gw *gateway.Gateway, bus *events.Bus) {
	srv.RegisterOnShutdown(func() {
		gw.CancelCalls()
		if !open.answered(AnswerGrace) {
			log.Warn("requests in flight were not answered within the grace; ending them", "grace", AnswerGrace)
		}
		bus.Close()
		open.end(gateway.ErrShuttingDown)
	})
	ctx, cancel := context.WithTimeout(context.Background(), AnswerGrace+HTTPGrace)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		log.Warn("requests still open when the daemon stopped were cut", "err", err)
		srv.Close()
	}
}

// openRequests follows the daemon's HTTP requests: those that carry an
// answer (not a GET, which may be a stream that lasts as long as its
// client) can be waited for, and every request's context ends with end.
type openRequests struct {
	ctx    context.Context
	cancel context.CancelCauseFunc

	mu       sync.Mutex
	answers  int           // requests other than GET being served
	drained  chan struct{} // closed when answers drops to 0 while a wait is on
	draining bool
}

func newOpenRequests() *openRequests {
	ctx, cancel := context.WithCancelCause(context.Background())
	return &openRequests{ctx: ctx, cancel: cancel}
}

// base is the http.Server's BaseContext: every request's context ends
// with end.
func (o *openRequests) base(net.Listener) context.Context { return o.ctx }

// end ends every request's context, with cause.
func (o *openRequests) end(cause error) { o.cancel(cause) }

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
			if o.answers == 0 && o.draining {
				o.draining = false
				close(o.drained)
			}
			o.mu.Unlock()
		}()
		h.ServeHTTP(w, r)
	})
}

// answered waits until no request that carries an answer is being served,
// at most grace, and reports whether none is.
func (o *openRequests) answered(grace time.Duration) bool {
	o.mu.Lock()
	if o.answers == 0 {
		o.mu.Unlock()
		return true
	}
	if !o.draining {
		o.draining = true
		o.drained = make(chan struct{})
	}
	drained := o.drained
	o.mu.Unlock()
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-drained:
		return true
	case <-timer.C:
		return false
	}
}
