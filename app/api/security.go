package api

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// secure wraps h with the checks every request passes, outermost first:
//
//	logRequests ─ checkHost ─ checkOrigin ─ CrossOriginProtection ─ authenticate ─ h
//
// The Host check defeats DNS rebinding (a page on evil.com whose name now
// resolves to 127.0.0.1 still sends Host: evil.com). The Origin checks
// defeat cross-site requests from a browser: a page elsewhere may send
// requests to 127.0.0.1, and the browser adds its Origin. The bearer token
// keeps out every other local program that has not been given a token.
func (s *Server) secure(h http.Handler) http.Handler {
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusForbidden, "cross-origin request refused")
	}))
	return s.logRequests(checkHost(checkOrigin(cop.Handler(s.authenticate(h)))))
}

// Protect wraps h (the MCP endpoint) with the same checks as the API:
// loopback Host, own Origin, a valid bearer token (see TokenLabel).
func (s *Server) Protect(h http.Handler) http.Handler { return s.secure(h) }

// loopbackName reports whether host (without port or brackets) is one of the
// names of this machine that the daemon answers to.
func loopbackName(host string) bool {
	switch strings.ToLower(host) {
	case "127.0.0.1", "::1", "localhost":
		return true
	}
	return false
}

// splitHost splits a Host header value into host (without brackets) and
// port ("" when absent).
func splitHost(hostport string) (host, port string) {
	if h, p, err := net.SplitHostPort(hostport); err == nil {
		return h, p
	}
	return strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]"), ""
}

// checkHost refuses requests whose Host is not a loopback name.
func checkHost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if host, _ := splitHost(r.Host); !loopbackName(host) {
			writeError(w, http.StatusForbidden, "request refused: Host "+quote(r.Host)+" is not a loopback address (127.0.0.1, [::1] or localhost)")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// checkOrigin refuses requests with an Origin other than
// http://127.0.0.1:PORT, http://[::1]:PORT or http://localhost:PORT, where
// PORT is the port of the request's Host. Requests without an Origin (the
// CLI, curl, same-origin GETs) pass.
func checkOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if origin := r.Header.Get("Origin"); origin != "" && !ownOrigin(origin, r.Host) {
			writeError(w, http.StatusForbidden, "cross-origin request refused: Origin "+quote(origin)+" is not this server's")
			return
		}
		next.ServeHTTP(w, r)
	})
}

func ownOrigin(origin, host string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Scheme != "http" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return false
	}
	_, port := splitHost(host)
	return loopbackName(u.Hostname()) && u.Port() == port
}

type labelKey struct{}

// TokenLabel returns the label of the token that authenticated the request
// whose context ctx is ("cli", or an MCP client's name), or "".
func TokenLabel(ctx context.Context) string {
	label, _ := ctx.Value(labelKey{}).(string)
	return label
}

// authenticate requires "Authorization: Bearer <secret>" with a secret the
// token store knows, and records the token's label in the context. The API
// (not the MCP endpoint) also takes the dashboard's session cookie, which
// only a same-site page sends (SameSite=Strict, and the Origin checks above).
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := r.Header.Get("Authorization")
		scheme, secret, _ := strings.Cut(h, " ")
		secret = strings.TrimSpace(secret)
		if h == "" && strings.HasPrefix(r.URL.Path, "/api/") {
			if c, err := r.Cookie(SessionCookie); err == nil && c.Value != "" {
				h, scheme, secret = "cookie", "Bearer", c.Value
			}
		}
		switch {
		case h == "":
			w.Header().Set("WWW-Authenticate", `Bearer realm="switchboard"`)
			writeError(w, http.StatusUnauthorized, "missing token: send Authorization: Bearer <token>")
			return
		case !strings.EqualFold(scheme, "Bearer") || secret == "":
			w.Header().Set("WWW-Authenticate", `Bearer realm="switchboard"`)
			writeError(w, http.StatusUnauthorized, "the Authorization header is not a bearer token: send Authorization: Bearer <token>")
			return
		}
		tok, ok := s.tokens.Verify(secret)
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="switchboard", error="invalid_token"`)
			writeError(w, http.StatusUnauthorized, "invalid token")
			return
		}
		if info, ok := r.Context().Value(infoKey{}).(*requestInfo); ok {
			info.label = tok.Label
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), labelKey{}, tok.Label)))
	})
}

// requestInfo carries what inner handlers learn back to logRequests.
type requestInfo struct{ label string }

type infoKey struct{}

// logRequests logs each request at Debug once it is answered. It logs the
// path without the query and never a header, so no token reaches the log.
func (s *Server) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		info := &requestInfo{}
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r.WithContext(context.WithValue(r.Context(), infoKey{}, info)))
		if sw.status == 0 {
			sw.status = http.StatusOK
		}
		s.log.Debug("api request", "method", r.Method, "path", r.URL.Path, "status", sw.status,
			"duration", time.Since(start), "client", info.label, "remote", r.RemoteAddr)
	})
}

// statusWriter remembers the status code. Unwrap lets
// http.ResponseController reach the real writer (to flush log streams).
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// quote quotes s for an error message, capping its length: it comes from
// the request.
func quote(s string) string {
	const limit = 100
	if len(s) > limit {
		s = s[:limit] + "…"
	}
	return strconv.Quote(s)
}
