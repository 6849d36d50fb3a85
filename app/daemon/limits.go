package daemon

import (
	"container/list"
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboardhq/switchboard/app/internal/conntrust"
)

// HTTPLimits bound what a connection to the daemon may hold. Any local
// program can connect to loopback, token or not: without these, one that
// opens hundreds of connections and sends a body a byte at a time keeps
// them (and their descriptors and goroutines) for ever.
type HTTPLimits struct {
	// ReadTimeout bounds reading one request, headers and body; a
	// connection still sending when it passes is closed. Once a body has
	// been read (or there is none) the deadline is lifted for the rest of
	// the request: streams and long calls are not cut (see
	// liftReadDeadline). 0 means DefaultReadTimeout.
	ReadTimeout time.Duration
	// ReadHeaderTimeout bounds reading the headers; 0 means
	// DefaultReadHeaderTimeout, and it is never longer than ReadTimeout.
	ReadHeaderTimeout time.Duration
	// IdleTimeout closes a kept-alive connection idle this long; 0 means
	// DefaultIdleTimeout.
	IdleTimeout time.Duration
	// MaxHeaderBytes bounds the request line and headers; 0 means
	// DefaultMaxHeaderBytes.
	MaxHeaderBytes int
	// MaxConns bounds the connections open at once. When they are all
	// taken, the oldest that never presented a valid token is closed for
	// a new one; when all of them did, a new one waits until one closes
	// (see limitListener). 0 means DefaultMaxConns.
	MaxConns int
}

// Defaults of HTTPLimits.
const (
	DefaultReadTimeout       = 30 * time.Second
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultIdleTimeout       = 2 * time.Minute
	DefaultMaxHeaderBytes    = 64 << 10
	DefaultMaxConns          = 1024
)

func (l HTTPLimits) withDefaults() HTTPLimits {
	if l.ReadTimeout <= 0 {
		l.ReadTimeout = DefaultReadTimeout
	}
	if l.ReadHeaderTimeout <= 0 {
		l.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	l.ReadHeaderTimeout = min(l.ReadHeaderTimeout, l.ReadTimeout)
	if l.IdleTimeout <= 0 {
		l.IdleTimeout = DefaultIdleTimeout
	}
	if l.MaxHeaderBytes <= 0 {
		l.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if l.MaxConns <= 0 {
		l.MaxConns = DefaultMaxConns
	}
	return l
}

// server returns the daemon's http.Server for h with these limits.
func (l HTTPLimits) server(h http.Handler) *http.Server {
	return &http.Server{Handler: liftReadDeadline(h), ReadTimeout: l.ReadTimeout, ConnContext: connContext,
		ReadHeaderTimeout: l.ReadHeaderTimeout, IdleTimeout: l.IdleTimeout, MaxHeaderBytes: l.MaxHeaderBytes}
}

// liftReadDeadline lifts the connection's read deadline (ReadTimeout) once
// the request's body has been read to its end, or at once when there is
// none, through http.ResponseController.
//
// The deadline is there to bound reading the request. But net/http keeps
// it while the handler runs, and when it passes during the handler, the
// server's background read of the connection fails and cancels the
// request's context: the event and log streams, the MCP streams (a GET
// stream, and a POST whose answer is a stream of progress while a tool
// runs for minutes) and long API calls (start waits for a process) would be
// cut after ReadTimeout. A request that never finishes sending its body,
// or whose body the handler does not read, keeps the deadline and is
// closed when it passes; a request refused from its headers (no token)
// is answered at once and closed sooner (see api.dropBody).
func liftReadDeadline(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		lift := func() { _ = rc.SetReadDeadline(time.Time{}) }
		if r.Body == nil || r.Body == http.NoBody {
			lift()
		} else {
			// On a copy: net/http decides by the type of its own
			// request's body whether what a handler left of it is too
			// big to read before answering (it closes the connection
			// instead); behind the wrapper it would read up to 256 KiB
			// of it whatever its size.
			r = r.WithContext(r.Context())
			r.Body = &liftAtEOF{ReadCloser: r.Body, lift: lift}
		}
		next.ServeHTTP(w, r)
	})
}

// liftAtEOF calls lift once its body has been read to the end.
type liftAtEOF struct {
	io.ReadCloser
	lift func()
	once sync.Once
}

func (b *liftAtEOF) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.once.Do(b.lift)
	}
	return n, err
}

// limitListener serves at most n connections open at once, and keeps
// room for the clients that hold a token: connections that have not yet
// presented a valid token (conntrust.Trust, which the API's
// authentication calls) are shed first, oldest first.
//
// Any local program can connect to loopback. Had every connection the
// same claim on the n slots, one without a token could hold them all
// (connections that send headers slowly, up to ReadHeaderTimeout each;
// kept-alive ones after a dashboard file, up to IdleTimeout) and every
// authenticated client would wait behind it. So when a new connection
// finds the n slots taken, the oldest connection that never presented a
// valid token is closed to make room for it, and the new one is served.
// Oldest first, because a client with a token presents it in the first
// request it sends, at once: a hostile program must open n more
// connections between a client's connect and its headers to shed it, and
// it sheds its own older ones on the way. A connection stays trusted once
// it presented a token (a client's kept-alive connection is not shed
// between its requests). Only when every slot holds a trusted connection
// does the new one wait, accepted but not served, until one closes: the
// clients with tokens are then the ones using the slots.
func limitListener(ln net.Listener, n int) net.Listener {
	return &limitedListener{Listener: ln, max: n, released: make(chan struct{}, 1), done: make(chan struct{})}
}

type limitedListener struct {
	net.Listener
	max       int
	released  chan struct{} // a connection was closed (1 buffered: one waiter, the accept loop)
	done      chan struct{} // closed by Close
	closeOnce sync.Once

	mu        sync.Mutex
	open      int       // connections counted against max
	untrusted list.List // of *limitedConn not yet trusted, oldest first
}

func (l *limitedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	lc := &limitedConn{Conn: c, l: l}
	if err := l.admit(lc); err != nil {
		c.Close()
		return nil, err
	}
	return lc, nil
}

// admit counts c against max, shedding the oldest untrusted connection
// when every slot is taken, or waiting for one to close when every open
// connection is trusted.
func (l *limitedListener) admit(c *limitedConn) error {
	for {
		l.mu.Lock()
		if l.open < l.max {
			l.open++
			c.counted = true
			c.place = l.untrusted.PushBack(c)
			l.mu.Unlock()
			return nil
		}
		var shed *limitedConn
		if oldest := l.untrusted.Front(); oldest != nil {
			shed = oldest.Value.(*limitedConn)
			l.forgetLocked(shed)
		}
		l.mu.Unlock()
		if shed != nil {
			shed.Conn.Close() // net/http's Close of it later releases nothing more
			continue
		}
		select {
		case <-l.released:
		case <-l.done:
			return net.ErrClosed
		}
	}
}

// forgetLocked stops counting c and frees its slot; l.mu is held.
func (l *limitedListener) forgetLocked(c *limitedConn) {
	if c.place != nil {
		l.untrusted.Remove(c.place)
		c.place = nil
	}
	if c.counted {
		c.counted = false
		l.open--
		select {
		case l.released <- struct{}{}:
		default:
		}
	}
}

func (l *limitedListener) Close() error {
	err := l.Listener.Close()
	l.closeOnce.Do(func() { close(l.done) })
	return err
}

// limitedConn is a connection of a limitedListener.
type limitedConn struct {
	net.Conn
	l       *limitedListener
	trusted atomic.Bool // set once: later requests skip the lock

	// Guarded by l.mu.
	counted bool          // holds one of the listener's slots
	place   *list.Element // in the listener's untrusted, nil once trusted or gone
}

// trust marks c as having presented a valid token: it is not shed.
func (c *limitedConn) trust() {
	if c.trusted.Swap(true) {
		return
	}
	c.l.mu.Lock()
	defer c.l.mu.Unlock()
	if c.place != nil {
		c.l.untrusted.Remove(c.place)
		c.place = nil
	}
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.l.mu.Lock()
	c.l.forgetLocked(c)
	c.l.mu.Unlock()
	return err
}

// connContext is the http.Server's ConnContext: a request's context can
// mark its connection trusted (conntrust.Trust).
func connContext(ctx context.Context, c net.Conn) context.Context {
	if lc, ok := c.(*limitedConn); ok {
		return conntrust.With(ctx, lc.trust)
	}
	return ctx
}
