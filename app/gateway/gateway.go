// Package gateway is Switchboard's MCP endpoint: one streamable-HTTP
// endpoint (/mcp) that aggregates every enabled server, one per server
// (/mcp/<server>), one per profile of the config (/mcp/p/<profile>, the
// aggregate of its servers and tools), and the legacy HTTP+SSE transport
// (/sse) for old clients.
//
// MCP ends here and starts again toward each backend (STYLE 6): the front is
// an mcp.Server per endpoint behind the go-sdk's streamable handler, which
// serves both protocol eras (sessions with initialize, and the stateless
// 2026-07-28 requests); each backend process is an mcp.ClientSession owned by
// the supervisor's pool. The gateway lists each backend's tools, prompts,
// resources and templates (every page), registers them on the fronts (with a
// server prefix on /mcp), and forwards calls through a lease on the pool:
//
//	client ──HTTP──▶ StreamableHTTPHandler ──▶ front mcp.Server (/mcp or /mcp/x)
//	                                             │ tool/prompt/resource handler
//	                                             ▼
//	                               supervisor.Lease ──stdio──▶ server process
//	                                             ▲
//	        progress, logging, list changes, sampling, elicitation, roots
//	        come back through the backend client's handlers (client.go)
//
// That is the go-sdk path, which serves every request when
// Options.FastPath is FastPathOff (SWITCHBOARD_FASTPATH=0). Otherwise the
// calls that carry the traffic, tools/call on a session-era session, take
// the fast path, where the gateway routes bytes instead of decoding them:
//
//	client ──POST──▶ Handler: serveFast scans the envelope, applies the session
//	                 guard and the middleware's rules, records (fastfront.go)
//	                   │ forward (lease, timeout, progress token, callers)
//	                   ▼
//	                 callBackend: the call as a line with id "sbf-<n>" on the
//	                 process's stdio ──▶ server process (fastback.go)
//	                   ▲
//	                 backendConn.Read: the response with that id, as bytes,
//	                 before the go-sdk's jsonrpc2 reads it (transport.go)
//	client ◀──SSE── the server's result bytes; progress and the server's
//	                 requests on the same stream, the client's replies
//	                 POSTed back and routed by id
//
// A request the fast path does not take exactly as the go-sdk path would
// (unknown tool, unknown or uninitialized session, another token's session,
// an odd id or header) goes to the go-sdk path unchanged, which answers it.
// The calls the go-sdk path forwards (tools/call of the stateless era,
// prompts/get, resources/read) take the same backend hop (viaBackend).
//
// The files, by concern:
//
//	gateway.go       Gateway, Options, servers coming and going, the HTTP handler
//	front.go         the fronts: construction, middlewares, the request handlers
//	subscriptions.go resource subscriptions, counted per server and URI across sessions
//	forward.go       the call core: forward, acquire, the _meta filter
//	leases.go        session mode: a client session keeps its process
//	progress.go      progress tokens and the caller index (who asked, on which process)
//	backend.go       one server's lifecycle: listing, relisting, its own endpoint
//	aggregation.go   the aggregates (/mcp, profiles), and the one registered-items diff every front uses
//	profiles.go      profiles: aggregates over a set of servers and tools, /mcp/p/<profile>
//	kept.go          lists kept on disk between runs
//	names.go         prefixed names and collisions on /mcp
//	tools.go         ToolInfo: a server's tools for the dashboard and the API
//	client.go        the backend client: notifications and requests from servers
//	mrtr.go          stateless clients' input-required rounds (pendingCalls)
//	record.go        what the Recorder is told of each call
//	raw.go, eras.go  results passed on as sent, shaped per protocol era
//	sessionguard.go, idle.go, httpchecks.go, keepalive.go
//	                 sessions' owners and idle timeout, malformed requests, keep-alive
//	relay.go         Relay: a gateway of one server whose backend is another
//	                 endpoint, what app/bridge (switchboard connect) serves with
//	transport.go, lineconn.go
//	                 the backend processes' transport, read a line at a time
//	fastfront.go, faststream.go, fastback.go
//	                 the fast path: tools/call on sessions routed as bytes
//
// The byte parsers these use (a message's envelope, tools/call params, a
// response line, a result's isError and resultType) are internal/mcpscan's.
package gateway

import (
	"bytes"
	"context"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboardhq/switchboard/app/tiers"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/supervisor"
)

// Backends is what the gateway needs of the supervisor: processes to lease,
// and word of servers becoming ready. FromSupervisor adapts a Supervisor;
// a Relay has its own (for the stdio bridge, the daemon's endpoint over
// HTTP).
type Backends interface {
	Acquire(ctx context.Context, server string) (Lease, error)
	Subscribe(buffer int) (<-chan *supervisor.Event, func())
}

// A Lease is the use of one backend session; *supervisor.Lease is one.
type Lease interface {
	Session() *mcp.ClientSession
	// Do runs fn with the session, and returns why the backend failed if
	// it did during fn.
	Do(ctx context.Context, fn func(context.Context, *mcp.ClientSession) error) error
	Release()
	Err() error
	PID() int
}

// FromSupervisor makes a supervisor the gateway's Backends.
func FromSupervisor(s *supervisor.Supervisor) Backends { return supervisorBackends{s} }

type supervisorBackends struct{ *supervisor.Supervisor }

func (s supervisorBackends) Acquire(ctx context.Context, server string) (Lease, error) {
	l, err := s.Supervisor.Acquire(ctx, server)
	if err != nil {
		return nil, err
	}
	return l, nil
}

// ServerConfig is what the gateway needs to know of one enabled server.
type ServerConfig struct {
	Name string
	// Alias, when set, replaces the server's name as its prefix on /mcp.
	Alias string
	Mode  supervisor.Mode
	// Timeout bounds a call without progress; 0 means DefaultTimeout.
	// Every progress notification from the server starts it again.
	Timeout       time.Duration
	DisabledTools []string
	// Tiers override the tiers of the server's tools (by their own
	// names) that their annotations give (see tierOf).
	Tiers map[string]tiers.Tier
	// IdleTimeout is the pool's: in session mode, a process leased to a
	// client session that made no call for this long is given back (the
	// session's next call leases one again); 0 means DefaultLeaseIdle.
	IdleTimeout time.Duration
	// Roots answer the server's roots/list when no client can (it asks
	// outside of a call, or the calling client has no roots): absolute
	// paths or file:// URIs.
	Roots []string
	// TrustTools says the user trusts the server: its new and changed
	// tools are not held (Options.Reviewer is told so, and approves them).
	TrustTools bool
	// AskBeforeDestructive makes a call of one of the server's
	// destructive tools wait for the user's yes (see asks.go).
	AskBeforeDestructive bool
}

// DefaultLeaseIdle is how long a session-mode client session keeps its
// process without making a call, when the pool sets no idle timeout.
const DefaultLeaseIdle = 10 * time.Minute

func (c ServerConfig) leaseIdle() time.Duration {
	if c.IdleTimeout > 0 {
		return c.IdleTimeout
	}
	return DefaultLeaseIdle
}

func (c ServerConfig) prefix() string {
	if c.Alias != "" {
		return c.Alias
	}
	return c.Name
}

// DefaultTimeout is generous: tools that drive browsers or builds are slow.
const DefaultTimeout = 5 * time.Minute

// Options configure a Gateway.
type Options struct {
	Backends Backends
	Recorder Recorder // nil records nothing
	// Journal, if set, notes each recorded call when it is forwarded, so
	// that a call in flight when the daemon dies is not lost (see
	// record.Call.Journal; the Recorder ends it once stored).
	Journal CallJournal
	Logger  *slog.Logger
	Version string
	// SessionTimeout closes client sessions idle this long (and releases
	// their session-mode processes); 0 means DefaultSessionTimeout. See
	// SetSessionTimeout.
	SessionTimeout time.Duration
	// ClientLabel returns the label of the token that authenticated a
	// request (see api.TokenLabel); nil gives "".
	ClientLabel func(context.Context) string
	// ClientToken returns the id of the token that authenticated a
	// request (see api.TokenID); nil gives "". A session is bound to the
	// token that opened it (see sessionguard.go).
	ClientToken func(context.Context) string
	// ClientMaxTier returns the tier cap of the token that authenticated
	// a request ("" for none): tools above it are not listed to it and
	// its calls of them are refused (see tiers.go). nil caps nothing.
	ClientMaxTier func(context.Context) tiers.Tier
	// MaxSessionsPerToken bounds the open sessions of one token; 0 means
	// DefaultMaxSessionsPerToken.
	MaxSessionsPerToken int
	// ListsDir keeps each server's last lists (tools, prompts, resources),
	// one file per server, so that they are served while the server is down
	// and after a restart of the daemon without starting it; "" keeps them
	// in memory only.
	ListsDir string
	// Reviewer, if set, decides which of each server's tools are held from
	// clients until the user approves them (see holds.go); nil holds none.
	Reviewer ToolReviewer
	// FastPath selects who serves tools/call on sessions: the gateway's
	// fast path (fastfront.go, fastback.go) or the go-sdk's handlers, as
	// every other request. FastPathFromEnv, the default, reads
	// SWITCHBOARD_FASTPATH once, in New: 0 selects the go-sdk's path.
	FastPath FastPathMode
	// KeepAlive is how long a call may stay silent before the gateway
	// writes on its response: the headers of an event stream if it has
	// none yet, and an SSE comment, again each time it has been silent as
	// long (see streamWatch); 0 means DefaultKeepAlive, negative disables.
	KeepAlive time.Duration
	// ToolSearch starts /mcp in search mode (see search.go and
	// SetToolSearch).
	ToolSearch bool
	// ToolIndex is searched by search_tools and fed with what the
	// aggregated endpoints offer; nil leaves search_tools nothing to search.
	ToolIndex ToolIndex
	// NameBudget, if set, returns the name budget of the client of a
	// request (see names.go): the longest tool name it may be given,
	// MaxNameLen less the prefix the client puts before a tool's name for
	// its model. server is "" on the aggregated endpoints (/mcp and the
	// profiles'), else the server of /mcp/<server>, whose client entry,
	// and so the prefix, names the server (ownnames.go). The daemon
	// answers from the token's client (see clients.Client.ToolNames). nil
	// gives every client MaxNameLen; a value is kept within
	// [MinNameBudget, MaxNameLen] on the aggregated endpoints,
	// [MinOwnNameBudget, MaxNameLen] on a server's.
	NameBudget func(ctx context.Context, server string) int
	// Listed, if set, hears each time a server's lists were fetched (its
	// first listing, or a relist): the Tools it tells have changed. It
	// must not block.
	Listed func(server string)
	// Asker puts the calls that need the user's yes before the user when
	// their client cannot answer (see asks.go); nil: such calls wait for
	// the ask timeout, which denies them.
	Asker Asker
	// AskTimeout is how long a call waits for the user's answer; 0 means
	// DefaultAskTimeout. See SetAskTimeout.
	AskTimeout time.Duration
}

// A Gateway serves the MCP endpoints. Create it with New, give it the
// servers with Sync, serve its Handler, and Close it.
type Gateway struct {
	opts Options
	log  *slog.Logger
	// sdkLog is log with Info lowered to Debug, for the go-sdk (sdkLogger).
	sdkLog *slog.Logger
	// The go-sdk serves the session era with a stateful handler and the
	// stateless 2026-07-28 era only with a stateless one; Handler routes each
	// request to the one its era needs (see isStateless).
	sessions  http.Handler
	stateless http.Handler
	sse       http.Handler

	ctx    context.Context // ends at Close; parent of background work
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu       sync.Mutex // guards backends, profiles and every aggregate's state
	aggMu    sync.Mutex // serializes rebuilds of the aggregated endpoints
	backends map[string]*backend
	// all is /mcp, the aggregate of every server; profiles are the
	// aggregates of the config's profiles, /mcp/p/<name>, by name.
	all      *aggregate
	profiles map[string]*aggregate
	search   searchIndex // what the search fronts find (search.go)

	splice splices      // big results on their way out (see raw.go)
	watch  *streamWatch // keep-alives of silent calls; nil when disabled

	subs subscriptions // resource subscriptions, by server, URI and client session

	progress  sync.Map // gateway progress token → *progressRoute
	nextToken atomic.Uint64
	callers   callerIndex
	leases    sessionLeases
	idle      idleSessions
	pending   pendingCalls
	guard     sessionGuard
	inflight  sessionCalls
	fast      fastState
	asks      askState
	// capEpoch counts the changes of tokens' caps (CapsChanged): part of
	// every tool's registration, so that a change re-registers them.
	capEpoch atomic.Uint64
}

// New makes a gateway with no servers.
func New(opts Options) *Gateway {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.KeepAlive == 0 {
		opts.KeepAlive = DefaultKeepAlive
	}
	if opts.ClientLabel == nil {
		opts.ClientLabel = func(context.Context) string { return "" }
	}
	if opts.ClientToken == nil {
		opts.ClientToken = func(context.Context) string { return "" }
	}
	if opts.FastPath == FastPathFromEnv {
		opts.FastPath = FastPathOn
		if os.Getenv(FastPathEnv) == "0" {
			opts.FastPath = FastPathOff
		}
	}
	if opts.MaxSessionsPerToken <= 0 {
		opts.MaxSessionsPerToken = DefaultMaxSessionsPerToken
	}
	ctx, cancel := context.WithCancel(context.Background())
	g := &Gateway{
		opts: opts, log: opts.Logger, sdkLog: sdkLogger(opts.Logger), ctx: ctx, cancel: cancel,
		backends: make(map[string]*backend),
		profiles: make(map[string]*aggregate),
	}
	g.callers.init()
	g.splice.init()
	g.pending.init()
	g.asks.init(opts.AskTimeout)
	g.leases.init(func(f func()) { g.wg.Go(f) })
	g.guard.init()
	g.subs.init(func(f func()) { g.wg.Go(f) }, g.sessionUnsubscribed)
	g.inflight.init()
	g.fast.init(opts.FastPath == FastPathOn)
	g.all = g.newAggregate("")
	g.all.searching = opts.ToolSearch
	// The session timeout is the gateway's own (idleSessions), so that a
	// change of the setting applies to the sessions already open.
	g.idle.init(opts.SessionTimeout, g.closeSession)
	if opts.KeepAlive > 0 {
		g.watch = newStreamWatch(opts.KeepAlive)
		g.wg.Go(func() { g.watch.run(ctx) })
	}
	// The guard comes first: a request it refuses (another token's, or
	// another endpoint's) is no activity of the session it names.
	streamable := keepAlive(jsonRefusals(mcp.NewStreamableHTTPHandler(g.serverFor, &mcp.StreamableHTTPOptions{
		Logger:              g.sdkLog,
		MaxRequestBodyBytes: maxRequestBody,
	})), g.watch, hasSession, &g.splice)
	g.sessions = g.guardSessions(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.idle.serve(streamable, w, r)
	}))
	g.stateless = keepAlive(jsonRefusals(mcp.NewStreamableHTTPHandler(g.serverFor, &mcp.StreamableHTTPOptions{
		Logger:                       g.sdkLog,
		Stateless:                    true,
		PropagateRequestCancellation: true, // a closed stream cancels the call, as the spec says
		MaxRequestBodyBytes:          maxRequestBody,
	})), g.watch, always, &g.splice)
	g.sse = g.guardSSE(keepAlive(jsonRefusals(mcp.NewSSEHandler(g.serverFor, &mcp.SSEOptions{MaxRequestBodyBytes: maxRequestBody})), nil, nil, &g.splice))
	// Subscribed before New returns, so that no server that becomes ready
	// from now on goes unseen.
	events, unsubscribe := opts.Backends.Subscribe(256)
	g.wg.Go(func() { g.followSupervisor(events, unsubscribe) })
	return g
}

// Handler serves /mcp, /mcp/<server> and /sse (legacy HTTP+SSE, with
// /sse/<server>). Mount it at "/mcp" and "/mcp/", "/sse" and "/sse/", behind
// the daemon's Host, Origin and token checks.
func (g *Gateway) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if g.serverFor(r) == nil {
			refuseUnknownEndpoint(w, r)
			return
		}
		if strings.HasPrefix(r.URL.Path, "/sse") {
			if r.Method == http.MethodPost {
				if _, ok := readBody(w, r); !ok {
					return
				}
			}
			g.sse.ServeHTTP(w, r)
			return
		}
		body, ok := checkRequest(w, r)
		if !ok {
			return
		}
		w.Header().Set("X-Accel-Buffering", "no")
		if isStateless(r, body) {
			g.stateless.ServeHTTP(w, r)
			return
		}
		if g.fast.on {
			if g.serveFast(w, r, body) {
				return
			}
			done, refused := g.sdkRequest(w, r, body)
			if refused {
				return
			}
			defer done()
		}
		// A DELETE of another token's or endpoint's session is refused
		// (404) and ends nothing.
		sid := r.Header.Get("Mcp-Session-Id")
		deleting := r.Method == http.MethodDelete && sid != "" && g.ownedBy(r, sid)
		if deleting {
			// The session's calls are cancelled before the go-sdk closes
			// it: its close waits for them.
			g.endSession(sid)
		}
		g.sessions.ServeHTTP(w, r)
		if deleting {
			g.endClosedSession(r)
		}
	})
}

// isStateless reports whether r belongs to the stateless 2026-07-28 era: a
// POST whose MCP-Protocol-Version says so (a session id it carries is
// ignored, as the spec asks), or one without a session whose body carries
// the era's per-request protocol version in _meta (the stateless handler
// then answers a missing or different header as the spec says). Everything
// else (initialize, requests in a session, the GET stream, DELETE) is the
// session era.
func isStateless(r *http.Request, body []byte) bool {
	if r.Method != http.MethodPost {
		return false
	}
	if r.Header.Get("MCP-Protocol-Version") >= statelessVersion {
		return true
	}
	return r.Header.Get("Mcp-Session-Id") == "" && bytes.Contains(body, []byte(`"`+mcp.MetaKeyProtocolVersion+`"`))
}

// statelessVersion is the first protocol version without sessions.
const statelessVersion = "2026-07-28"

// serverInPath returns the <server> of /mcp/<server> or /sse/<server>, or ""
// for /mcp and /sse, or "p/<profile>" for a profile's /mcp/p/<profile>:
// the name of the request's endpoint (see aggregateFor).
func serverInPath(path string) string {
	path = strings.TrimPrefix(strings.TrimPrefix(path, "/mcp"), "/sse")
	return strings.Trim(path, "/")
}

// serverFor picks the front server for a request by its path, and by the
// name budget of its client (names.go, ownnames.go).
func (g *Gateway) serverFor(r *http.Request) *mcp.Server {
	name := serverInPath(r.URL.Path)
	g.mu.Lock()
	a := g.aggregateFor(name)
	if a == nil {
		b, ok := g.backends[name]
		g.mu.Unlock()
		if !ok {
			return nil
		}
		return b.frontFor(g.ownNameBudget(r.Context(), name))
	}
	g.mu.Unlock()
	v := g.viewFor(a, g.nameBudget(r.Context()))
	g.mu.Lock()
	defer g.mu.Unlock()
	return v.served(a.searching)
}

// reconcile indexes want by name (a later duplicate wins) and deletes from
// have the entries whose name is not in it, returning them: the first step
// of making what the gateway serves match a new list.
func reconcile[T, V any](have map[string]V, want []T, name func(T) string) (byName map[string]T, removed []V) {
	byName = make(map[string]T, len(want))
	for _, w := range want {
		byName[name(w)] = w
	}
	for n, v := range have {
		if _, ok := byName[n]; !ok {
			removed = append(removed, v)
			delete(have, n)
		}
	}
	return byName, removed
}

// Sync makes the gateway serve exactly servers: new ones get a front and are
// listed (which starts a process when none runs), removed ones disappear
// from /mcp and their endpoint, changed settings apply to the next call.
func (g *Gateway) Sync(servers []ServerConfig) {
	g.mu.Lock()
	want, removed := reconcile(g.backends, servers, func(c ServerConfig) string { return c.Name })
	var added, reinstall, rereview []*backend
	for name, c := range want {
		b, ok := g.backends[name]
		if !ok {
			b = g.newBackend(c)
			g.backends[name] = b
			added = append(added, b)
			continue
		}
		// b.mu guards cfg: calls read it (config) while Sync runs.
		b.mu.Lock()
		changed := !slices.Equal(b.cfg.DisabledTools, c.DisabledTools) || b.cfg.Alias != c.Alias || !maps.Equal(b.cfg.Tiers, c.Tiers)
		trust := b.cfg.TrustTools != c.TrustTools
		b.cfg = c
		b.mu.Unlock()
		if trust {
			rereview = append(rereview, b)
		}
		if changed || trust {
			// What is known is registered again under the new settings;
			// no need to ask (and maybe start) the server.
			reinstall = append(reinstall, b)
		}
	}
	g.mu.Unlock()
	// Kept lists, and lists under a changed trust, are reviewed before
	// any front shows them.
	for _, b := range added {
		if b.listed.Load() {
			b.review()
		}
	}
	for _, b := range rereview {
		b.review()
	}
	for _, b := range reinstall {
		b.install()
	}

	for _, b := range removed {
		b.close()
		g.forgetKept(b.config().Name) // uninstalled or disabled: listed afresh if it comes back
		g.log.Info("server left the gateway", "server", b.config().Name)
	}
	g.rebuildAggregates()
	for _, b := range added {
		g.wg.Go(func() { b.run(g.ctx) })
		if b.listed.Load() {
			// Kept lists: a lazy server starts on its first call, not now.
			b.install()
			continue
		}
		// Never listed: start it once to learn what it offers (a lazy
		// server's process then stops after its idle timeout).
		b.kick()
	}
}

// Close stops background work. Client sessions end with the HTTP server.
func (g *Gateway) Close() {
	g.cancel()
	g.idle.stop()
	// Open client sessions end with the gateway: their calls in flight
	// are cancelled, their goroutines end.
	g.closeAllSessions()
	g.mu.Lock()
	for _, b := range g.backends {
		b.close()
	}
	g.mu.Unlock()
	g.leases.releaseAll()
	g.subs.closeAll()
	for _, p := range g.pending.list(nil) {
		g.endPending(p)
	}
	g.endAsks()
	g.wg.Wait()
}

// followSupervisor relists a server that becomes ready when no process of
// this run listed it yet (it failed to start before, never started, its
// lists are kept from an earlier run, or its last list failed): the
// backend's run decides when the list's turn comes (see kickUnlisted).
func (g *Gateway) followSupervisor(events <-chan *supervisor.Event, unsubscribe func()) {
	defer unsubscribe()
	for {
		select {
		case <-g.ctx.Done():
			return
		case ev, ok := <-events:
			if !ok {
				return
			}
			if ev.Kind != supervisor.EventReady {
				continue
			}
			g.mu.Lock()
			b := g.backends[ev.Server]
			g.mu.Unlock()
			if b != nil {
				b.kickUnlisted()
			}
		}
	}
}

// Relist fetches server's lists again (after its backend reconnected).
func (g *Gateway) Relist(server string) {
	if b, ok := g.backend(server); ok {
		b.kick()
	}
}

func (g *Gateway) backend(name string) (*backend, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	b, ok := g.backends[name]
	return b, ok
}
