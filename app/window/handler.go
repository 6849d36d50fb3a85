package window

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"path"
	"strings"
	"sync"
	"time"
)

// A Handler is the AssetServer's handler of the window: it proxies /api/ to
// the daemon and answers the dashboard's client-side routes with its
// index.html. Wails calls it for every request its Assets cannot answer.
type Handler struct {
	resolve Resolver
	assets  fs.FS
	log     *slog.Logger
	proxy   *httputil.ReverseProxy
	tr      *http.Transport
	// base ends every proxied request when the window closes: Wails makes
	// its requests without a context, and an event stream would otherwise
	// run until the daemon's next keep-alive finds the pipe closed.
	base    context.Context
	endBase context.CancelFunc

	mu       sync.Mutex
	active   int           // proxied requests not yet returned
	closing  bool          // Shutdown was called: no new ones
	returned chan struct{} // closed once closing and none is active
}

type targetKey struct{}

// NewHandler returns the handler for a window whose lifetime is ctx.
// assets may be nil (no dashboard build: the built-in status page is shown).
func NewHandler(ctx context.Context, resolve Resolver, assets fs.FS, log *slog.Logger) *Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if assets == nil {
		assets = FallbackAssets()
	}
	h := &Handler{resolve: resolve, assets: assets, log: log, returned: make(chan struct{})}
	h.base, h.endBase = context.WithCancel(ctx)
	// A transport of its own: no proxy from the environment (the daemon is
	// on loopback), and idle connections closed with the window.
	h.tr = &http.Transport{
		Proxy:                 nil,
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       90 * time.Second,
		ResponseHeaderTimeout: 0, // start/stop answer when done; streams answer at once
	}
	h.proxy = &httputil.ReverseProxy{
		Rewrite:   h.rewrite,
		Transport: h.tr,
		// -1: flush after every write, so server-sent events and followed
		// logs reach the page as they happen.
		FlushInterval: -1,
		ErrorHandler:  h.proxyError,
		ErrorLog:      slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}
	return h
}

// Close drops the idle connections to the daemon.
func (h *Handler) Close() { h.tr.CloseIdleConnections() }

// Shutdown ends every proxied request (the page's event stream never ends
// by itself) and waits until their handlers have returned, or ctx ends.
// Requests that come after it are refused.
//
// The window calls it before Wails tears the webview down: Wails releases a
// request's WebKit object when its handler returns, and one released while
// the webview is being destroyed aborts the process.
func (h *Handler) Shutdown(ctx context.Context) error {
	h.mu.Lock()
	if !h.closing {
		h.closing = true
		if h.active == 0 {
			close(h.returned)
		}
	}
	h.mu.Unlock()
	h.endBase()
	select {
	case <-h.returned:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("window: proxied requests still running at shutdown: %w", ctx.Err())
	}
}

// enter counts a proxied request in; false once Shutdown was called.
func (h *Handler) enter() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closing {
		return false
	}
	h.active++
	return true
}

func (h *Handler) leave() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.active--
	if h.closing && h.active == 0 {
		close(h.returned)
	}
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/api" || strings.HasPrefix(r.URL.Path, "/api/") {
		h.serveAPI(w, r)
		return
	}
	h.serveApp(w, r)
}

func (h *Handler) serveAPI(w http.ResponseWriter, r *http.Request) {
	if !h.enter() {
		writeError(w, http.StatusServiceUnavailable, "the window is closing")
		return
	}
	defer h.leave()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	stop := context.AfterFunc(h.base, cancel)
	defer stop()
	target, err := h.resolve(ctx)
	if err != nil {
		h.log.Warn("window: cannot find the daemon", "err", err)
		writeError(w, http.StatusBadGateway, "cannot reach the Switchboard daemon: "+err.Error())
		return
	}
	if target.URL == nil {
		writeError(w, http.StatusBadGateway, "cannot reach the Switchboard daemon: no address")
		return
	}
	ctx = context.WithValue(ctx, targetKey{}, target)
	h.proxy.ServeHTTP(w, r.WithContext(ctx))
}

// rewrite points a request of the page at the daemon. Headers that are the
// WebView's (its origin is wails:// or http://wails.localhost, not the
// daemon's) would make the daemon refuse the request as cross-origin; the
// page is this program's own, so the proxy speaks for it with the token.
func (h *Handler) rewrite(pr *httputil.ProxyRequest) {
	target := pr.In.Context().Value(targetKey{}).(Target)
	pr.SetURL(target.URL)
	out := pr.Out.Header
	for _, k := range []string{"Origin", "Referer", "Cookie", "Authorization",
		"Sec-Fetch-Site", "Sec-Fetch-Mode", "Sec-Fetch-Dest", "Sec-Fetch-User"} {
		out.Del(k)
	}
	out.Set("Authorization", "Bearer "+target.Token)
	// The daemon needs no forwarding headers: the client is this process.
	out.Del("X-Forwarded-For")
}

func (h *Handler) proxyError(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, context.Canceled) {
		// The page went away (or the window closed): nobody reads an answer.
		return
	}
	target, _ := r.Context().Value(targetKey{}).(Target)
	addr := ""
	if target.URL != nil {
		addr = target.URL.Host
	}
	h.log.Warn("window: proxying to the daemon", "method", r.Method, "path", r.URL.Path, "err", err)
	writeError(w, http.StatusBadGateway, fmt.Sprintf("cannot reach the Switchboard daemon at %s: %v", addr, err))
}

// serveApp answers a GET of a client-side route (/servers/fs, /history)
// with index.html, so a reload or a start --path shows the page the router
// draws for it. Missing files (a path with an extension) stay 404.
func (h *Handler) serveApp(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		writeError(w, http.StatusMethodNotAllowed, "method "+r.Method+" not allowed on "+r.URL.Path)
		return
	}
	name := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
	if name != "" && strings.Contains(path.Base(name), ".") {
		if data, err := fs.ReadFile(h.assets, name); err == nil {
			w.Header().Set("Content-Type", contentType(name))
			w.Write(data)
			return
		}
		http.NotFound(w, r)
		return
	}
	data, err := fs.ReadFile(h.assets, "index.html")
	if err != nil {
		writeError(w, http.StatusNotFound, "the dashboard build has no index.html")
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.Write(data)
}

func contentType(name string) string {
	switch path.Ext(name) {
	case ".html":
		return "text/html; charset=utf-8"
	case ".js", ".mjs":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	case ".json":
		return "application/json"
	case ".png":
		return "image/png"
	}
	return "application/octet-stream"
}

// writeError answers in the API's error shape, so the page shows a proxy
// failure like any other API error.
func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"error": msg})
}
