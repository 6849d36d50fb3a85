package gateway

import (
	"bytes"
	"context"
	"maps"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/app/internal/sse"
)

// DefaultKeepAlive is how long a call may stay silent (no headers yet, or
// nothing on its stream) before the gateway writes on its response. It is
// well under the 300 s that Node's fetch (undici's headersTimeout, what the
// TypeScript SDK uses) waits for a response's headers, and under the idle
// timeouts of common proxies.
const DefaultKeepAlive = 15 * time.Second

// keepAlive wraps the go-sdk's handler: every response goes through a
// keepAliveWriter, and a POST's is watched by watch (nil: no keep-alives),
// which writes an SSE comment (": keep-alive") on it whenever it has been
// silent for watch's interval, so that clients and proxies with idle or
// header timeouts do not cut a long call. A request for which early
// reports true may have its headers sent by the watch before the go-sdk's
// (see keepAliveWriter.Header); any other gets comments only once the
// go-sdk answered it with a stream.
//
// The writer also puts big raw results in the stream in place of their
// placeholders (see splices); for that it wraps every request's writer.
func keepAlive(next http.Handler, watch *streamWatch, early func(*http.Request) bool, sp *splices) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		kw := newKeepAliveWriter(w, r, watch, early != nil && early(r), sp)
		defer kw.stop()
		next.ServeHTTP(kw, r)
	})
}

// hasSession reports whether r names a session: in the session era, a
// request other than initialize (whose answer must carry the session id
// the go-sdk sets in its headers, so they are not sent before its own).
func hasSession(r *http.Request) bool { return r.Header.Get("Mcp-Session-Id") != "" }

// always is keepAlive's early for the stateless era: no request there has
// headers of its own to wait for.
func always(*http.Request) bool { return true }

// A streamWatch is the gateway's one ticker over the responses of its
// calls in flight (a timer per call would cost every call one): every
// half interval it visits the watched writers and has each that has been
// silent for interval write on its response. Registering a call is a link
// into a list under one mutex; the list is copied out under it, and each
// write is done by a goroutine of its own, so that a client that reads
// nothing holds up neither the other calls' comments nor the calls that
// start and end meanwhile.
type streamWatch struct {
	interval time.Duration

	mu    sync.Mutex
	calls *keepAliveWriter // the watched writers, linked by prev and next

	due []*keepAliveWriter // visit's scratch, used by run's goroutine only
}

func newStreamWatch(interval time.Duration) *streamWatch {
	return &streamWatch{interval: interval}
}

// run ticks until ctx ends.
func (w *streamWatch) run(ctx context.Context) {
	t := time.NewTicker(max(w.interval/2, time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			w.visit()
		}
	}
}

// visit starts a keep-alive write on each watched response that has been
// silent for the interval.
func (w *streamWatch) visit() {
	w.mu.Lock()
	for k := w.calls; k != nil; k = k.next {
		w.due = append(w.due, k)
	}
	w.mu.Unlock()
	for _, k := range w.due {
		if k.silentFor(w.interval) {
			go k.keepAlive(w.interval)
		}
	}
	clear(w.due) // hold no writer past its call
	w.due = w.due[:0]
}

func (w *streamWatch) add(k *keepAliveWriter) {
	w.mu.Lock()
	k.next = w.calls
	if w.calls != nil {
		w.calls.prev = k
	}
	w.calls = k
	w.mu.Unlock()
}

func (w *streamWatch) remove(k *keepAliveWriter) {
	w.mu.Lock()
	if k.prev != nil {
		k.prev.next = k.next
	} else if w.calls == k {
		w.calls = k.next
	}
	if k.next != nil {
		k.next.prev = k.prev
	}
	k.prev, k.next = nil, nil
	w.mu.Unlock()
}

// A keepAliveWriter is the response writer of one request, serializing
// the handler's writes with the keep-alive writes of the gateway's
// streamWatch.
//
// A call that says nothing until it answers would leave its client
// without headers until then; so a watched writer that may open its
// stream early (the go-sdk's calls in a session or in the stateless era,
// and the fast path's) is given, once silent for the interval, the
// headers of an event stream (200, text/event-stream) and a comment. The
// handler's own headers are kept apart (Header) until they are sent, so
// that the watch never reads what the handler writes. When the handler
// then answers, its answer must fit in the stream already open: an event
// stream goes on as it is; a JSON body (a 2026-07-28 era error with its
// own HTTP status) is held and written as the stream's one event when the
// handler returns; anything else (plain text refusals, which come before
// any silence) is dropped, and the client sees the stream end unanswered.
type keepAliveWriter struct {
	http.ResponseWriter
	watch      *streamWatch     // nil: no keep-alives
	prev, next *keepAliveWriter // in watch's list, guarded by watch.mu
	splices    *splices

	mu     sync.Mutex
	answer *heldAnswer // the handler's headers until sent, when early
	last   time.Time

	early    bool // the watch may send the headers (see above)
	sent     bool // headers on the wire
	sse      bool // ... of an event stream
	opened   bool // ... sent by the watch, before the handler's
	answered bool // the handler gave its status (WriteHeader, Write or Flush)
	reframe  bool // opened, and the handler answered JSON: answer.body is its body
	discard  bool // opened, and the handler answered neither a stream nor JSON
	done     bool // the handler returned: write nothing more
}

// A heldAnswer is what the handler of an early writer has written that is
// not on the wire yet (made when the handler asks for its headers: never
// on the fast path, which writes none of its own).
type heldAnswer struct {
	header http.Header
	body   []byte
}

// newKeepAliveWriter wraps w, the writer of r's response, watched by watch
// (if r is a POST and watch is not nil); stop it when the handler returns.
func newKeepAliveWriter(w http.ResponseWriter, r *http.Request, watch *streamWatch, early bool, sp *splices) *keepAliveWriter {
	kw := &keepAliveWriter{ResponseWriter: w, last: time.Now(), splices: sp}
	if r.Method == http.MethodPost && watch != nil {
		kw.watch, kw.early = watch, early
		watch.add(kw)
	}
	return kw
}

// stop ends the keep-alives (the handler returned), and writes what the
// handler left to write on a stream the watch opened.
func (k *keepAliveWriter) stop() {
	if k.watch != nil {
		k.watch.remove(k)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.done = true
	if !k.sent && k.answer != nil {
		// The handler returned without a write: net/http sends the headers.
		maps.Copy(k.ResponseWriter.Header(), k.answer.header)
	}
	if k.reframe {
		_ = sse.WriteEvent(k.ResponseWriter, sse.Event{Type: "message", Data: bytes.TrimSpace(k.answer.body)})
	}
}

// Header returns the handler's headers: the response's own, or, for a
// writer whose headers the watch may send first, a map of their own.
func (k *keepAliveWriter) Header() http.Header {
	if !k.early {
		return k.ResponseWriter.Header()
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.answer == nil {
		k.answer = &heldAnswer{header: make(http.Header)}
	}
	return k.answer.header
}

// setStreamHeaders sets the headers of an event stream, as the go-sdk
// sets them.
func setStreamHeaders(h http.Header) {
	h.Set("Cache-Control", "no-cache, no-transform")
	h.Set("Content-Type", "text/event-stream")
	h.Set("Connection", "keep-alive")
}

func isEventStream(contentType string) bool {
	return strings.HasPrefix(contentType, "text/event-stream")
}

// startStream is the fast path's WriteHeader: the response is an event
// stream (already open if the watch opened it).
func (k *keepAliveWriter) startStream() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.answered = true
	if !k.sent {
		setStreamHeaders(k.ResponseWriter.Header())
		k.sent, k.sse = true, true
		k.ResponseWriter.WriteHeader(http.StatusOK)
	}
}

func (k *keepAliveWriter) WriteHeader(code int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.answerLocked(code)
}

// answerLocked takes the handler's status: it sends the headers, or, on a
// stream the watch opened, decides how the handler's answer goes in it.
func (k *keepAliveWriter) answerLocked(code int) {
	if k.answered {
		return
	}
	k.answered = true
	if k.opened {
		var ct string
		if k.answer != nil {
			ct = k.answer.header.Get("Content-Type")
		}
		switch {
		case code == http.StatusOK && isEventStream(ct):
		case strings.HasPrefix(ct, "application/json"):
			k.reframe = true
		default:
			k.discard = true
		}
		return
	}
	h := k.ResponseWriter.Header()
	if k.answer != nil {
		maps.Copy(h, k.answer.header)
	}
	k.sent = true
	k.sse = isEventStream(h.Get("Content-Type"))
	k.ResponseWriter.WriteHeader(code)
}

func (k *keepAliveWriter) Write(b []byte) (int, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.answerLocked(http.StatusOK)
	switch {
	case k.reframe:
		k.answer.body = append(k.answer.body, b...)
		return len(b), nil
	case k.discard:
		return len(b), nil
	}
	k.last = time.Now()
	if k.splices != nil && len(b) >= len(k.splices.prefix) && k.splices.waiting() {
		return k.splices.write(k.ResponseWriter, b)
	}
	return k.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's other controls.
func (k *keepAliveWriter) Unwrap() http.ResponseWriter { return k.ResponseWriter }

func (k *keepAliveWriter) Flush() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.answerLocked(http.StatusOK)
	if !k.reframe && !k.discard {
		k.flushLocked()
	}
}

// flushLocked flushes the response; the go-sdk flushes after every event.
func (k *keepAliveWriter) flushLocked() {
	if f, ok := k.ResponseWriter.(http.Flusher); ok {
		f.Flush() // net/http's own writer: no controller to allocate
		return
	}
	_ = http.NewResponseController(k.ResponseWriter).Flush()
}

// silentFor reports whether the response has been silent for interval and
// may get a keep-alive write; a writer busy writing is not silent.
func (k *keepAliveWriter) silentFor(interval time.Duration) bool {
	if !k.mu.TryLock() {
		return false
	}
	defer k.mu.Unlock()
	return !k.done && (k.sse || (!k.sent && k.early)) && time.Since(k.last) >= interval
}

// keepAlive writes on a response silent for interval: the headers of an
// event stream if none were sent (see keepAliveWriter), and a comment.
func (k *keepAliveWriter) keepAlive(interval time.Duration) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.done || time.Since(k.last) < interval {
		return
	}
	if !k.sent {
		if !k.early {
			return // the handler's headers decide what the response is
		}
		setStreamHeaders(k.ResponseWriter.Header())
		k.sent, k.sse, k.opened = true, true, true
		k.ResponseWriter.WriteHeader(http.StatusOK)
	}
	if !k.sse || sse.WriteComment(k.ResponseWriter, "keep-alive") != nil {
		return
	}
	k.flushLocked()
	k.last = time.Now()
}
