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
// not a POST).
func keepAlive(next http.Handler, interval time.Duration, sp *splices) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		kw := &keepAliveWriter{ResponseWriter: w, last: time.Now(), splices: sp}
		if r.Method != http.MethodPost || interval <= 0 {
			next.ServeHTTP(kw, r)
			return
		}
		var tick func()
		var timer *time.Timer
		tick = func() {
			if wait := kw.comment(interval); wait > 0 {
				kw.mu.Lock()
				if !kw.done {
					timer.Reset(wait)
				}
				kw.mu.Unlock()
			}
		}
		kw.mu.Lock()
		timer = time.AfterFunc(interval, tick)
		kw.mu.Unlock()
		defer func() {
			kw.mu.Lock()
			kw.done = true
			timer.Stop()
			kw.mu.Unlock()
		}()
		next.ServeHTTP(kw, r)
	})
}

type keepAliveWriter struct {
	http.ResponseWriter
	mu      sync.Mutex
	started bool // headers sent
	sse     bool // ... as text/event-stream
	done    bool // the handler returned: write nothing more
	last    time.Time
	splices *splices
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
