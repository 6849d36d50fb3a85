package daemon

import (
	"io"
	"net"
	"net/http"
	"sync"
	"time"
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
	// MaxConns bounds the connections open at once; more wait in the
	// listen queue until one closes. 0 means DefaultMaxConns.
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
	return &http.Server{Handler: liftReadDeadline(h), ReadTimeout: l.ReadTimeout,
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

// limitListener accepts at most n connections open at once: Accept waits
// for one to close. (golang.org/x/net/netutil has the same; this keeps the
// module's dependencies as they are.)
func limitListener(ln net.Listener, n int) net.Listener {
	return &limitedListener{Listener: ln, slots: make(chan struct{}, n), done: make(chan struct{})}
}

type limitedListener struct {
	net.Listener
	slots     chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

func (l *limitedListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitedConn{Conn: c, release: func() { <-l.slots }}, nil
}

func (l *limitedListener) Close() error {
	err := l.Listener.Close()
	l.closeOnce.Do(func() { close(l.done) })
	return err
}

type limitedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
