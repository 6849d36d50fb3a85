package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/app/internal/statuswriter"
)

// DefaultMaxSessionsPerToken bounds the open MCP sessions of one token when
// Options.MaxSessionsPerToken is zero. A client opens one per window or
// agent; hundreds mean a loop or an attack, each holding memory and maybe
// a process.
const DefaultMaxSessionsPerToken = 64

// sessionGuard binds each session of the streamable endpoints to the token
// that initialized it and to the endpoint (/mcp or /mcp/<server>) that
// opened it. An Mcp-Session-Id is a bearer of its own: without the binding,
// any client holding any token (or the same token on another endpoint,
// reaching another server's tools) could use a session it saw in a log.
//
// The legacy HTTP+SSE transport (/sse) has the same rule: its session id
// (the sessionid of the endpoint its GET stream announces) answers only the
// token and endpoint of that stream, and lives as long as it.
type sessionGuard struct {
	mu      sync.Mutex
	owners  map[string]sessionOwner // Mcp-Session-Id → who opened it
	sse     map[string]sessionOwner // /sse sessionid → who holds its stream
	opening map[string]int          // token → initializations in progress
}

type sessionOwner struct {
	token    string // the id of the token (Options.ClientToken)
	endpoint string // "/mcp" or "/mcp/<server>"
}

func (sg *sessionGuard) init() {
	sg.owners = map[string]sessionOwner{}
	sg.sse = map[string]sessionOwner{}
	sg.opening = map[string]int{}
}

// forget stops answering for session id (it ended): its next request gets
// the guard's 404.
func (sg *sessionGuard) forget(id string) {
	sg.mu.Lock()
	delete(sg.owners, id)
	sg.mu.Unlock()
}

// A seat is a session reserved for a token while it opens: counted in
// opening until the session is counted in owners or sse, in the same
// critical section (settleLocked), or failed to open (release), so that an
// opening session counts once, never twice.
type seat struct {
	guard   *sessionGuard
	token   string
	settled bool // guarded by guard.mu
}

// settleLocked stops counting the seat (idempotent); guard.mu must be held.
func (s *seat) settleLocked() {
	if s.settled {
		return
	}
	s.settled = true
	if s.guard.opening[s.token]--; s.guard.opening[s.token] <= 0 {
		delete(s.guard.opening, s.token)
	}
}

// release stops counting the seat (idempotent): the session failed to
// open, or is counted otherwise already.
func (s *seat) release() {
	s.guard.mu.Lock()
	s.settleLocked()
	s.guard.mu.Unlock()
}

// reserve counts the sessions token has open or opening and, under the
// limit, reserves a seat for one more. At the limit it takes the place of
// the token's least recently used streamable session with no request in
// progress, which it stops counting and returns as evict: the caller ends
// it (evictSession). ok is false when every session of the token is busy.
// (Legacy SSE sessions are never evicted: each lasts as long as its
// client holds its stream, and a client that went away closed it.)
func (g *Gateway) reserve(token string) (s *seat, evict string, ok bool) {
	// Under the lock, so that no session opened meanwhile is taken for a
	// closed one.
	g.guard.mu.Lock()
	defer g.guard.mu.Unlock()
	live := g.liveSessions()
	n := g.guard.opening[token]
	var mine []string
	for id, o := range g.guard.owners {
		switch {
		case !live[id]:
			delete(g.guard.owners, id) // closed: by DELETE, idle timeout or revocation
		case o.token == token:
			mine = append(mine, id)
		}
	}
	n += len(mine)
	for _, o := range g.guard.sse {
		if o.token == token {
			n++
		}
	}
	if n >= g.opts.MaxSessionsPerToken {
		if evict, ok = g.idle.takeLeastRecent(mine); !ok {
			return nil, "", false
		}
		delete(g.guard.owners, evict) // its next request gets 404
	}
	g.guard.opening[token]++
	return &seat{guard: &g.guard, token: token}, evict, true
}

// admit reserves a seat for a session that token opens, ending the
// token's least recently used idle session at the limit, or answers w with
// 429 when every session of the token is busy (ok false).
func (g *Gateway) admit(w http.ResponseWriter, token string) (s *seat, ok bool) {
	s, evict, ok := g.reserve(token)
	if !ok {
		g.tooManySessions(w)
		return nil, false
	}
	if evict != "" {
		g.evictSession(evict)
	}
	return s, true
}

// evictSession ends session id, the least recently used of its token at
// the limit of sessions, as the idle timeout ends one: its calls (none in
// flight), subscriptions and leases go with it.
func (g *Gateway) evictSession(id string) {
	g.log.Info("ended a client session to open a new one of its token: the token has as many open as it may, and this one was the least recently used",
		"session", id, "limit", g.opts.MaxSessionsPerToken)
	g.closeSession(id)
}

// tooManySessions answers a request over the limit of sessions, when each
// session of its token has a request in progress.
func (g *Gateway) tooManySessions(w http.ResponseWriter) {
	writeJSONRPCError(w, http.StatusTooManyRequests, codeServerError, fmt.Sprintf(
		"too many open MCP sessions for this token (the limit is %d), each with a request in progress: "+
			"wait for one to finish, or close some (DELETE with their Mcp-Session-Id)",
		g.opts.MaxSessionsPerToken))
}

// sessionNotFound answers a request in a session the gateway does not know
// for its token and endpoint (closed, never opened, or another's): 404, on
// which a client opens a new session, as the spec says.
func sessionNotFound(w http.ResponseWriter) {
	writeJSONRPCError(w, http.StatusNotFound, codeSessionNotFound, "session not found")
}

// guardSessions wraps the stateful streamable handler: a request in a
// session must come with the session's token on the session's endpoint,
// else it gets 404 as for an unknown session (the client then starts a new
// one, as the spec says); a request that opens a session is refused with
// 429 when its token has MaxSessionsPerToken open and none idle (see
// reserve).
func (g *Gateway) guardSessions(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		me := sessionOwner{token: g.opts.ClientToken(r.Context()), endpoint: endpointOf(r.URL.Path)}
		if id := r.Header.Get("Mcp-Session-Id"); id != "" {
			g.guard.mu.Lock()
			owner, ok := g.guard.owners[id]
			g.guard.mu.Unlock()
			if !ok || owner != me {
				sessionNotFound(w)
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r) // the go-sdk refuses it: no session
			return
		}

		seat, ok := g.admit(w, me.token)
		if !ok {
			return
		}
		defer seat.release()
		next.ServeHTTP(&sessionIDCatcher{ResponseWriter: w, opened: func(id string) {
			g.guard.mu.Lock()
			g.guard.owners[id] = me
			seat.settleLocked() // the session counts as open now
			g.guard.mu.Unlock()
		}}, r)
	})
}

// guardSSE wraps the legacy HTTP+SSE handler: a GET opens a session (under
// the same limit as the streamable ones) that belongs to its token and
// endpoint while the stream lasts; a POST to a session of another token or
// endpoint gets 404, as for an unknown one.
func (g *Gateway) guardSSE(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		me := sessionOwner{token: g.opts.ClientToken(r.Context()), endpoint: endpointOf(r.URL.Path)}
		switch r.Method {
		case http.MethodPost:
			if id := r.URL.Query().Get("sessionid"); id != "" {
				g.guard.mu.Lock()
				owner, ok := g.guard.sse[id]
				g.guard.mu.Unlock()
				if !ok || owner != me {
					sessionNotFound(w)
					return
				}
				g.legacyPost(w, r, id, next)
				return
			}
		case http.MethodGet:
			seat, ok := g.admit(w, me.token)
			if !ok {
				return
			}
			defer seat.release()
			var opened string // guarded by g.guard.mu
			defer func() {
				g.guard.mu.Lock()
				if opened != "" {
					delete(g.guard.sse, opened)
				}
				g.guard.mu.Unlock()
				if opened != "" {
					g.inflight.forget(opened)
				}
			}()
			w = &sseIDCatcher{ResponseWriter: w, opened: func(id string) {
				g.guard.mu.Lock()
				opened = id
				g.guard.sse[id] = me
				seat.settleLocked() // the session counts as open now
				g.guard.mu.Unlock()
			}, answered: func(id string) { g.inflight.owe(id, -1) }}
		}
		next.ServeHTTP(w, r)
	})
}

// endpointOf names the endpoint of a request path: "/mcp", "/mcp/<server>",
// "/sse" or "/sse/<server>".
func endpointOf(path string) string {
	base := "/mcp"
	if strings.HasPrefix(path, "/sse") {
		base = "/sse"
	}
	if s := serverInPath(path); s != "" {
		return base + "/" + s
	}
	return base
}

// fronts returns every front server: the aggregates (/mcp and the
// profiles') and one per backend.
func (g *Gateway) fronts() []*mcp.Server {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := append(g.all.fronts(), g.profileFronts()...)
	for _, b := range g.backends {
		out = append(out, b.fronts()...)
	}
	return out
}

// liveSessions returns the ids of the sessions connected to a front.
func (g *Gateway) liveSessions() map[string]bool {
	live := map[string]bool{}
	for _, s := range g.fronts() {
		for ss := range s.Sessions() {
			if id := ss.ID(); id != "" {
				live[id] = true
			}
		}
	}
	return live
}

// CloseSessionsOf closes every MCP session opened with the token whose id
// is tokenID (it was revoked), and returns how many. Their streams end, and
// so do the token's stateless calls waiting for its next round.
func (g *Gateway) CloseSessionsOf(tokenID string) int {
	// The token's parked stateless calls (input-required rounds) end too.
	for _, p := range g.pending.list(func(p *pendingCall) bool { return p.token == tokenID }) {
		g.endPending(p)
	}
	g.guard.mu.Lock()
	ids := map[string]bool{}
	for id, o := range g.guard.owners {
		if o.token == tokenID {
			ids[id] = true
			delete(g.guard.owners, id)
		}
	}
	g.guard.mu.Unlock()
	if len(ids) == 0 {
		return 0
	}
	// Their calls in flight are cancelled first: the go-sdk's Close waits
	// for them.
	for id := range ids {
		g.endSession(id)
	}
	n := 0
	for _, s := range g.fronts() {
		for ss := range s.Sessions() {
			if ids[ss.ID()] {
				_ = ss.Close()
				n++
			}
		}
	}
	return n
}

// sessionIDCatcher tells opened the Mcp-Session-Id the go-sdk answers an
// initialize with, before the answer leaves: the client cannot use the id
// before its owner is known.
type sessionIDCatcher struct {
	http.ResponseWriter
	opened func(id string)
	seen   bool
}

func (c *sessionIDCatcher) catch() {
	if c.seen {
		return
	}
	c.seen = true
	if id := c.Header().Get("Mcp-Session-Id"); id != "" {
		c.opened(id)
	}
}

func (c *sessionIDCatcher) WriteHeader(code int) {
	c.catch()
	c.ResponseWriter.WriteHeader(code)
}

func (c *sessionIDCatcher) Write(b []byte) (int, error) {
	c.catch()
	return c.ResponseWriter.Write(b)
}

func (c *sessionIDCatcher) Flush() {
	c.catch()
	_ = http.NewResponseController(c.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the connection's other controls.
func (c *sessionIDCatcher) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// sseIDCatcher tells opened the session id of the endpoint event a legacy
// SSE stream starts with ("data: /sse?sessionid=ID"), before it leaves.
type sseIDCatcher struct {
	http.ResponseWriter
	opened func(id string)
	seen   bool
	id     string
	// answered hears each answer to a client's request written on the
	// stream (see legacyPost).
	answered func(id string)
}

func (c *sseIDCatcher) Write(b []byte) (int, error) {
	if c.seen {
		n, err := c.ResponseWriter.Write(b)
		if err == nil && isAnswerEvent(b) {
			c.answered(c.id)
		}
		return n, err
	}
	if !c.seen {
		if _, after, ok := bytes.Cut(b, []byte("sessionid=")); ok {
			c.seen = true
			end := bytes.IndexFunc(after, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
			if end < 0 {
				end = len(after)
			}
			if end > 0 {
				c.id = string(after[:end])
				c.opened(c.id)
			}
		}
	}
	return c.ResponseWriter.Write(b)
}

func (c *sseIDCatcher) Flush() { _ = http.NewResponseController(c.ResponseWriter).Flush() }

// Unwrap lets http.ResponseController reach the connection's other controls.
func (c *sseIDCatcher) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// legacyPost serves a client's POST to legacy SSE session sid, counting
// the answers it asks for as owed until they are written on the session's
// stream (sseIDCatcher), so that EndSessions closes the session only after
// they are.
func (g *Gateway) legacyPost(w http.ResponseWriter, r *http.Request, sid string, next http.Handler) {
	body, ok := readBody(w, r) // bounded already in Handler: this reads memory
	if !ok {
		return
	}
	n := countCalls(body)
	g.inflight.owe(sid, n)
	sw := &statuswriter.Writer{ResponseWriter: w}
	next.ServeHTTP(sw, r)
	if sw.Status != http.StatusAccepted {
		g.inflight.owe(sid, -n) // refused: no answer comes on the stream
	}
}

// countCalls counts the JSON-RPC requests with an id in body, a message or
// a batch.
func countCalls(body []byte) int {
	type msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	var batch []msg
	if json.Unmarshal(body, &batch) != nil {
		var one msg
		if json.Unmarshal(body, &one) != nil {
			return 0
		}
		batch = []msg{one}
	}
	n := 0
	for _, m := range batch {
		if m.Method != "" && len(m.ID) > 0 && string(m.ID) != "null" {
			n++
		}
	}
	return n
}

// isAnswerEvent reports whether b, an event the go-sdk writes on a legacy
// SSE stream (in one Write), is the answer to a client's request.
func isAnswerEvent(b []byte) bool {
	_, data, ok := bytes.Cut(b, []byte("data: "))
	if !ok || !bytes.HasPrefix(b, []byte("event: message")) {
		return false
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	return json.Unmarshal(bytes.TrimSpace(data), &m) == nil && m.Method == "" && len(m.ID) > 0 && string(m.ID) != "null"
}
