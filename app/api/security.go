package api

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/app/internal/conntrust"
	"github.com/switchboardhq/switchboard/app/internal/mediatype"
	"github.com/switchboardhq/switchboard/app/internal/statuswriter"
	"github.com/switchboardhq/switchboard/app/tokens"
)

// secure wraps h with the checks every request passes, outermost first:
//
//	logRequests ─ checkHost ─ checkOrigin ─ fetchSite (CrossOriginProtection) ─
//	authenticate (and the token's scope) ─ requireJSON ─ h
//
// The Host check defeats DNS rebinding (a page on evil.com whose name now
// resolves to 127.0.0.1 still sends Host: evil.com). The Origin checks
// defeat cross-site requests from a browser: a page elsewhere may send
// requests to 127.0.0.1, and the browser adds its Origin. The bearer token
// keeps out every other local program that has not been given a token, and
// the token's scope keeps MCP clients out of the API. requireJSON makes a
// form or a text/plain body, which a browser may send cross-site without
// asking, useless.
//
// api says whether h is the API, which takes admin tokens and dashboard
// sessions only, or the MCP endpoint, which takes any token.
func (s *Server) secure(h http.Handler, api bool) http.Handler {
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		dropBody(w, r)
		writeRefusal(w, r, http.StatusForbidden, "cross-origin request refused")
	}))
	return s.logRequests(checkHost(checkOrigin(fetchSite(cop, s.authenticate(requireJSON(h), api)))))
}

// fetchSite applies cop to requests that carry Sec-Fetch-Site, which every
// current browser sends: "cross-site" is refused even from a loopback
// Origin. A request without it has had its Origin checked by checkOrigin,
// which accepts the loopback spellings of this server (Origin localhost
// with Host 127.0.0.1); cop alone would require Origin and Host to match
// exactly and refuse them.
func fetchSite(cop *http.CrossOriginProtection, next http.Handler) http.Handler {
	guarded := cop.Handler(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Sec-Fetch-Site") == "" {
			next.ServeHTTP(w, r)
			return
		}
		guarded.ServeHTTP(w, r)
	})
}

// Protect wraps h (the MCP endpoint) with the same checks as the API:
// loopback Host, own Origin, a valid bearer token of any scope (see
// TokenLabel and TokenID), a JSON body. Dashboard sessions do not reach it.
func (s *Server) Protect(h http.Handler) http.Handler { return s.secure(h, false) }

// requireJSON refuses a POST, PUT, PATCH or DELETE whose body is not
// declared application/json, with 415: a declared other type, or a body
// with no type at all. A request without a body (Content-Length 0, as the
// CLI's start and stop send) needs no type.
func requireJSON(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
			ct := r.Header.Get("Content-Type")
			if ct == "" && r.ContentLength == 0 {
				break
			}
			if !mediatype.IsJSON(ct) {
				what := "no Content-Type"
				if ct != "" {
					what = "Content-Type " + quote(ct)
				}
				dropBody(w, r)
				writeRefusal(w, r, http.StatusUnsupportedMediaType,
					r.Method+" with "+what+" refused: send the body as JSON with Content-Type: application/json")
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

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
			dropBody(w, r)
			writeRefusal(w, r, http.StatusForbidden, "request refused: Host "+quote(r.Host)+" is not a loopback address (127.0.0.1, [::1] or localhost)")
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
			dropBody(w, r)
			writeRefusal(w, r, http.StatusForbidden, "cross-origin request refused: Origin "+quote(origin)+" is not this server's")
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

// authenticate requires "Authorization: Bearer <secret>" with a secret the
// token store knows, and records who the request is for in the context.
// The API (api true) also takes the dashboard's session cookie, which only
// a same-site page sends (SameSite=Strict, and the Origin checks above),
// and refuses client-scoped tokens with 403: they are for the MCP
// endpoints. A cookie is never taken as a bearer secret, nor a secret as a
// cookie. On the MCP endpoints, a token bound to a profile reaches that
// profile's endpoint only (see refuseOtherEndpoint).
//
// The request's context ends when its token is revoked (see openRequests).
func (s *Server) authenticate(next http.Handler, api bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		refuse := func(status int, challenge, msg string) {
			dropBody(w, r)
			w.Header().Set("WWW-Authenticate", challenge)
			writeRefusal(w, r, status, msg)
		}
		h := r.Header.Get("Authorization")
		scheme, secret, _ := strings.Cut(h, " ")
		secret = strings.TrimSpace(secret)
		var tok tokens.Token
		switch {
		case h == "" && api:
			c, err := r.Cookie(SessionCookie)
			if err != nil || c.Value == "" {
				refuse(http.StatusUnauthorized, `Bearer realm="switchboard"`, "missing token: send Authorization: Bearer <token>")
				return
			}
			var ok bool
			if tok, ok = s.dash.verify(c.Value); !ok {
				refuse(http.StatusUnauthorized, `Bearer realm="switchboard"`, "the dashboard's session has ended (it expired, its token was revoked or Switchboard restarted): sign in again with `switchboard open`")
				return
			}
		case h == "":
			refuse(http.StatusUnauthorized, `Bearer realm="switchboard"`, "missing token: send Authorization: Bearer <token>")
			return
		case !strings.EqualFold(scheme, "Bearer") || secret == "":
			refuse(http.StatusUnauthorized, `Bearer realm="switchboard"`, "the Authorization header is not a bearer token: send Authorization: Bearer <token>")
			return
		case !api && s.try.matches(secret):
			// The daemon's own MCP client, trying a tool for the
			// dashboard (trytool.go): on the MCP endpoints only.
			tok = s.try.token()
		default:
			var ok bool
			// The dashboard's token only stands behind browser sessions and
			// is never handed out; but before sessions existed the cookie
			// held its secret, and browsers that signed in then still send
			// it to every port of 127.0.0.1. It is no bearer token.
			if tok, ok = s.tokens.Verify(secret); !ok || tok.Label == DashboardTokenLabel {
				refuse(http.StatusUnauthorized, `Bearer realm="switchboard", error="invalid_token"`, "invalid token")
				return
			}
		}
		// A client the user gave a token to: its connection is not shed
		// for others (see the daemon's limitListener), even when this
		// request is refused for the token's scope.
		conntrust.Trust(r.Context())
		if info, ok := r.Context().Value(infoKey{}).(*requestInfo); ok {
			info.label = tok.Label
		}
		if api && tok.Scope != tokens.ScopeAdmin {
			reaches := "/mcp, /mcp/<server> and /sse"
			if tok.Profile != "" { // bound: it does not reach those either
				reaches = ProfilePath(tok.Profile) + " (profile " + quote(tok.Profile) + ")"
			}
			refuse(http.StatusForbidden, `Bearer realm="switchboard", error="insufficient_scope"`,
				"the token "+quote(tok.Label)+" is an MCP client's: it reaches "+reaches+", not the API")
			return
		}
		if !api && refuseOtherEndpoint(w, r, tok) {
			return
		}
		ctx := r.Context()
		if tok.ID != s.try.id { // not in the token store: nothing to revoke
			var done func()
			ctx, done = s.open.add(ctx, tok.ID)
			defer done()
		}
		ctx = context.WithValue(ctx, principalKey{}, principal{id: tok.ID, label: tok.Label, scope: tok.Scope, maxTier: tok.MaxTier})
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// writeRefusal answers a request refused before its handler runs (its
// Host, Origin, token or body type): on an MCP endpoint with a JSON-RPC
// error, which MCP clients read and show (the gateway's own refusals are
// JSON-RPC errors too), elsewhere with the API's error body.
func writeRefusal(w http.ResponseWriter, r *http.Request, status int, msg string) {
	if !isMCPPath(r.URL.Path) {
		writeError(w, status, msg)
		return
	}
	// Without an id: the request is not read.
	writeJSON(w, status, rpcErrorResponse{JSONRPC: "2.0", Error: rpcError{Code: codeServerError, Message: msg}})
}

// isMCPPath reports whether path is one of the MCP endpoints (/mcp, /sse
// and what is under them) that Protect guards.
func isMCPPath(path string) bool {
	for _, root := range []string{"/mcp", "/sse"} {
		if rest, ok := strings.CutPrefix(path, root); ok && (rest == "" || rest[0] == '/') {
			return true
		}
	}
	return false
}

// refusedBodyGrace is how long a connection whose request was refused
// before its body was read keeps reading what is left of that body
// before it is closed.
const refusedBodyGrace = 250 * time.Millisecond

// dropBody prepares the answer to a request refused from its headers (no
// token, a wrong one, a foreign Host), before it is written: the body is
// not wanted, and the connection is closed after the answer.
//
// net/http, to keep a connection for the next request, reads what is left
// of an unread body (up to 256 KiB) before it sends the answer. A program
// without a token that declares a Content-Length larger than what it
// sends would so hold the connection, unanswered, until the read timeout;
// a thousand of them held every connection the daemon serves. With
// Connection: close the answer goes out at once. net/http still reads the
// rest after sending it, so that a client whose body is on its way is not
// reset before it reads the answer; the read deadline bounds that to
// refusedBodyGrace. A request without a body keeps its connection.
func dropBody(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength == 0 {
		return
	}
	w.Header().Set("Connection", "close")
	// Not supported by a test's recorder: there is no connection to hold.
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(refusedBodyGrace))
}

// requestInfo carries what inner handlers learn back to logRequests.
type requestInfo struct{ label string }

type infoKey struct{}

// logRequests logs each request at Debug once it is answered. It logs the
// path without the query and never a header, so no token reaches the log.
// When the log leaves Debug out (its level is set at start), next is
// served as it is: the wrapper's writer, context and clock are a cost of
// every request, MCP calls included, for a line nobody reads.
func (s *Server) logRequests(next http.Handler) http.Handler {
	if !s.log.Enabled(context.Background(), slog.LevelDebug) {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		info := &requestInfo{}
		sw := &statuswriter.Writer{ResponseWriter: w}
		next.ServeHTTP(sw, r.WithContext(context.WithValue(r.Context(), infoKey{}, info)))
		if sw.Status == 0 {
			sw.Status = http.StatusOK
		}
		s.log.Debug("api request", "method", r.Method, "path", r.URL.Path, "status", sw.Status,
			"duration", time.Since(start), "client", info.label, "remote", r.RemoteAddr)
	})
}

// quote quotes s for an error message, capping its length: it comes from
// the request. Control characters and quotes are escaped; backslashes are
// not, so a Windows path reads as the user typed it (C:\Users\me, not
// C:\\Users\\me).
func quote(s string) string {
	const limit = 100
	if len(s) > limit {
		s = s[:limit] + "…"
	}
	q := strconv.Quote(s)
	return strings.ReplaceAll(q, `\\`, `\`)
}

// HostOnly wraps h with the loopback Host check (and the request log)
// alone: for the sign-in redirect (remoteauth's callback), which the
// browser brings without a Switchboard token; its state parameter, known
// only to the pending sign-in, is what it checks.
func (s *Server) HostOnly(h http.Handler) http.Handler { return s.logRequests(checkHost(h)) }
