package gateway

import (
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/app/internal/sse"
)

// DefaultKeepAlive is how long a response stream may stay silent before
// the gateway writes an SSE comment on it.
const DefaultKeepAlive = 15 * time.Second

// keepAlive writes an SSE comment (": keep-alive") on a call's response
// stream whenever it has been silent for interval, so that proxies and
// clients with idle timeouts do not cut a long call. The go-sdk writes the
// stream; the wrapper serializes its writes with the comments and writes a
// comment only once the SDK has answered with text/event-stream.
//
// The writer also puts big raw results in the stream in place of their
// placeholders (see splices); for that it wraps every request's writer,
// with no timer where there is nothing to keep alive (interval <= 0, or
// not a POST). The timer is armed only once the response is a stream (its
// header says text/event-stream): most calls answer before, and cost no
// timer at all.
func keepAlive(next http.Handler, interval time.Duration, sp *splices) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		kw := newKeepAliveWriter(w, r, interval, sp)
		defer kw.stop()
		next.ServeHTTP(kw, r)
	})
}

// newKeepAliveWriter wraps w, the writer of r's response; stop it when
// the handler returns.
func newKeepAliveWriter(w http.ResponseWriter, r *http.Request, interval time.Duration, sp *splices) *keepAliveWriter {
	kw := &keepAliveWriter{ResponseWriter: w, last: time.Now(), splices: sp}
	if r.Method == http.MethodPost && interval > 0 {
		kw.interval = interval
	}
	return kw
}

type keepAliveWriter struct {
	http.ResponseWriter
	interval time.Duration // 0: no comments
	mu       sync.Mutex
	started  bool        // headers sent
	sse      bool        // ... as text/event-stream
	done     bool        // the handler returned: write nothing more
	timer    *time.Timer // armed once the headers say text/event-stream
	last     time.Time
	splices  *splices
}

// stop ends the comments: the handler returned.
func (k *keepAliveWriter) stop() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.done = true
	if k.timer != nil {
		k.timer.Stop()
	}
}

// tick writes a comment if one is due and arms the timer for the next.
func (k *keepAliveWriter) tick() {
	if wait := k.comment(k.interval); wait > 0 {
		k.mu.Lock()
		if !k.done {
			k.timer.Reset(wait)
		}
		k.mu.Unlock()
	}
}

func (k *keepAliveWriter) WriteHeader(code int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.writeHeaderLocked(code)
}

func (k *keepAliveWriter) writeHeaderLocked(code int) {
	if k.started {
		return
	}
	k.started = true
	k.sse = strings.HasPrefix(k.Header().Get("Content-Type"), "text/event-stream")
	if k.sse && k.interval > 0 && !k.done {
		// Due when the stream has been silent for interval, counted from
		// the last write (or the start), as if armed at the start.
		k.timer = time.AfterFunc(max(k.interval-time.Since(k.last), 0), k.tick)
	}
	k.ResponseWriter.WriteHeader(code)
}

func (k *keepAliveWriter) Write(b []byte) (int, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.writeHeaderLocked(http.StatusOK)
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
	k.flushLocked()
}

// flushLocked flushes the response; the go-sdk flushes after every event.
func (k *keepAliveWriter) flushLocked() {
	if f, ok := k.ResponseWriter.(http.Flusher); ok {
		f.Flush() // net/http's own writer: no controller to allocate
		return
	}
	_ = http.NewResponseController(k.ResponseWriter).Flush()
}

// comment writes a keep-alive comment if the stream has been silent for
// interval, and returns how long to wait before looking again (0: stop).
func (k *keepAliveWriter) comment(interval time.Duration) time.Duration {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.done {
		return 0
	}
	if silent := time.Since(k.last); !k.started || !k.sse || silent < interval {
		return interval - min(silent, interval) + time.Millisecond
	}
	if sse.WriteComment(k.ResponseWriter, "keep-alive") != nil {
		return 0
	}
	k.flushLocked()
	k.last = time.Now()
	return interval
}
