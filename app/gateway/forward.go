package gateway

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yosida95/uritemplate/v3"

	"github.com/switchboardhq/switchboard/supervisor"
)

// newFront makes the mcp.Server behind one endpoint: server "" is /mcp.
func (g *Gateway) newFront(server string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "switchboard", Title: "Switchboard", Version: g.opts.Version},
		&mcp.ServerOptions{
			Logger: g.log,
			// Every capability a backend may have is declared from the start:
			// servers are listed after a client may already have initialized,
			// and a client only lists what the capabilities promise. Lists of
			// a kind no server offers are empty.
			Capabilities: &mcp.ServerCapabilities{
				Tools:       &mcp.ToolCapabilities{ListChanged: true},
				Prompts:     &mcp.PromptCapabilities{ListChanged: true},
				Resources:   &mcp.ResourceCapabilities{ListChanged: true, Subscribe: true},
				Logging:     &mcp.LoggingCapabilities{},
				Completions: &mcp.CompletionCapabilities{},
			},
			CompletionHandler: func(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
				return g.complete(ctx, req, server)
			},
			SubscribeHandler: func(ctx context.Context, req *mcp.SubscribeRequest) error {
				return g.subscribe(ctx, req, server, req.Params.URI, true)
			},
			UnsubscribeHandler: func(ctx context.Context, req *mcp.UnsubscribeRequest) error {
				return g.subscribe(ctx, req, server, req.Params.URI, false)
			},
		})
	s.AddReceivingMiddleware(g.eraResults(), g.awaitLists(server), g.instructionsMiddleware(server), g.recordMiddleware(server),
		g.unlistedTools(server), g.rawResults())
	return s
}

// firstListWait bounds how long a request waits for servers to be listed
// for the first time (a lazy server starts a process to be listed).
const firstListWait = 30 * time.Second

// awaitLists holds requests that depend on a server's lists until each
// server of the endpoint has been listed once (or failed to be), so that a
// client connecting right after the daemon starts sees every tool.
func (g *Gateway) awaitLists(server string) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch method {
			case "initialize", "notifications/initialized", "ping", "server/discover", "logging/setLevel":
				return next(ctx, method, req)
			}
			// Once every server has been tried (the usual case) nothing
			// waits: no timer, no list.
			var waits []<-chan struct{}
			g.mu.Lock()
			for name, b := range g.backends {
				if server == "" || name == server {
					select {
					case <-b.tried:
					default:
						waits = append(waits, b.tried)
					}
				}
			}
			g.mu.Unlock()
			if len(waits) == 0 {
				return next(ctx, method, req)
			}
			timer := time.NewTimer(firstListWait)
			defer timer.Stop()
			for _, w := range waits {
				select {
				case <-w:
				case <-timer.C:
					return next(ctx, method, req)
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			return next(ctx, method, req)
		}
	}
}

// instructionsMiddleware answers initialize and server/discover with the
// backends' own instructions, each under its server's name.
func (g *Gateway) instructionsMiddleware(server string) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if err != nil {
				return res, err
			}
			switch r := res.(type) {
			case *mcp.InitializeResult:
				r.Instructions = g.instructions(server)
			case *mcp.DiscoverResult:
				r.Instructions = g.instructions(server)
			}
			return res, err
		}
	}
}

func (g *Gateway) instructions(server string) string {
	if server != "" {
		if b, ok := g.backend(server); ok {
			_, f := b.visible()
			return f.instructions
		}
		return ""
	}
	g.mu.Lock()
	var names []string
	for name := range g.backends {
		names = append(names, name)
	}
	g.mu.Unlock()
	var text string
	for _, name := range slices.Sorted(slices.Values(names)) {
		if b, ok := g.backend(name); ok {
			if _, f := b.visible(); f.instructions != "" {
				text += "## " + name + "\n\n" + f.instructions + "\n\n"
			}
		}
	}
	return text
}

// toolHandler forwards a tools/call to original on server. Failures of the
// server itself (down, crashed, timed out) come back as a tool error naming
// the server and the cause, so the model sees them; errors the server sends
// pass through unchanged.
func (g *Gateway) toolHandler(server, original string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if req.ProtocolVersion() >= statelessVersion {
			return g.statelessToolCall(ctx, req, server, original)
		}
		return g.callTool(ctx, req, server, original)
	}
}

// callTool forwards one tools/call.
func (g *Gateway) callTool(ctx context.Context, req *mcp.CallToolRequest, server, original string) (*mcp.CallToolResult, error) {
	params := &mcp.CallToolParams{Name: original, Meta: forwardMeta(req.Params.Meta)}
	if len(req.Params.Arguments) > 0 {
		params.Arguments = req.Params.Arguments // forwarded as received, not re-encoded
	}
	var res *mcp.CallToolResult
	err := g.forward(ctx, req, server, req.Params.GetProgressToken(), params, func(ctx context.Context, cs *mcp.ClientSession) error {
		var err error
		res, err = cs.CallTool(ctx, params)
		return err
	})
	if rc := rawCaptureFrom(ctx); rc != nil {
		rc.done(err == nil)
	}
	if err != nil {
		if _, ok := errors.AsType[*jsonrpc.Error](err); ok {
			return nil, err
		}
		if rec := recordFrom(ctx); rec != nil {
			rec.failure = err
		}
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}, nil
	}
	return res, nil
}

func (g *Gateway) promptHandler(server, original string) mcp.PromptHandler {
	return func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		params := &mcp.GetPromptParams{Name: original, Arguments: req.Params.Arguments, Meta: forwardMeta(req.Params.Meta)}
		var res *mcp.GetPromptResult
		err := g.forward(ctx, req, server, req.Params.GetProgressToken(), params, func(ctx context.Context, cs *mcp.ClientSession) error {
			var err error
			res, err = cs.GetPrompt(ctx, params)
			return err
		})
		return res, err
	}
}

func (g *Gateway) resourceHandler(server string) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		params := &mcp.ReadResourceParams{URI: req.Params.URI, Meta: forwardMeta(req.Params.Meta)}
		var res *mcp.ReadResourceResult
		err := g.forward(ctx, req, server, req.Params.GetProgressToken(), params, func(ctx context.Context, cs *mcp.ClientSession) error {
			var err error
			res, err = cs.ReadResource(ctx, params)
			return err
		})
		return res, err
	}
}

// complete routes completion/complete by its reference: a prompt to the
// prompt's server, a resource template to the template's server.
func (g *Gateway) complete(ctx context.Context, req *mcp.CompleteRequest, front string) (*mcp.CompleteResult, error) {
	params := *req.Params
	if params.Ref == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "completion/complete without a ref"}
	}
	ref := *params.Ref
	params.Ref = &ref
	server := front
	if front == "" {
		g.mu.Lock()
		switch ref.Type {
		case "ref/prompt":
			e, ok := g.agg.prompts[ref.Name]
			server, ref.Name = e.Server, e.Original
			if !ok {
				server = ""
			}
		case "ref/resource":
			server = g.agg.templates[ref.URI]
			if server == "" {
				server = g.agg.resources[ref.URI]
			}
		}
		g.mu.Unlock()
		if server == "" {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("no server offers %s %q", ref.Type, ref.Name+ref.URI)}
		}
	}
	var res *mcp.CompleteResult
	err := g.forward(ctx, req, server, nil, nil, func(ctx context.Context, cs *mcp.ClientSession) error {
		var err error
		res, err = cs.Complete(ctx, &params)
		return err
	})
	return res, err
}

// subscribe forwards resources/subscribe and /unsubscribe to the server
// owning uri. Subscriptions are counted per server and URI: the server is
// asked once, when the first client subscribes, and told to stop when the
// last one unsubscribes, so one client leaving does not cut the others off.
// (The go-sdk front sends each update to the sessions that subscribed.)
func (g *Gateway) subscribe(ctx context.Context, req mcp.Request, front, uri string, on bool) error {
	server := front
	if front == "" {
		if server = g.resourceOwner(uri); server == "" {
			return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("no server offers resource %q", uri)}
		}
	}
	key := server + "\x00" + uri
	for {
		g.subsMu.Lock()
		st := g.subs[key]
		if st == nil {
			st = &subscriptionState{}
			g.subs[key] = st
		}
		g.subsMu.Unlock()
		// st.mu orders the subscribe and unsubscribe of this URI on this
		// server only: a server slow to answer holds up no other.
		st.mu.Lock()
		g.subsMu.Lock()
		current := g.subs[key] == st
		g.subsMu.Unlock()
		if !current { // emptied and forgotten while this call waited
			st.mu.Unlock()
			continue
		}
		err := g.subscribeLocked(ctx, req, st, key, server, uri, on)
		st.mu.Unlock()
		return err
	}
}

// resourceOwner returns the server that offers uri on /mcp: the one that
// lists it, else the first in name order with a resource template that
// matches it, else the only server when one is enabled; "" when none.
func (g *Gateway) resourceOwner(uri string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	if server := g.agg.resources[uri]; server != "" {
		return server
	}
	var owner string
	for tmpl, server := range g.agg.templates {
		if owner != "" && server >= owner {
			continue
		}
		if t, err := uritemplate.New(tmpl); err == nil && t.Regexp().MatchString(uri) {
			owner = server
		}
	}
	if owner == "" && len(g.backends) == 1 {
		for name := range g.backends {
			owner = name
		}
	}
	return owner
}

// subscriptionState counts the client sessions subscribed to one URI of
// one server.
type subscriptionState struct {
	mu sync.Mutex
	n  int
}

// subscribeLocked counts a subscribe or unsubscribe, asking the server when
// the count leaves or reaches zero; the caller holds st.mu.
func (g *Gateway) subscribeLocked(ctx context.Context, req mcp.Request, st *subscriptionState, key, server, uri string, on bool) error {
	switch {
	case on && st.n > 0:
		st.n++
		return nil
	case !on && st.n > 1:
		st.n--
		return nil
	case !on && st.n == 0:
		g.forgetSubscription(key, st)
		return nil
	}
	err := g.forward(ctx, req, server, nil, nil, func(ctx context.Context, cs *mcp.ClientSession) error {
		if on {
			return cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri})
		}
		return cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri})
	})
	if err != nil {
		if st.n == 0 {
			g.forgetSubscription(key, st)
		}
		return err
	}
	if on {
		st.n = 1
	} else {
		st.n = 0
		g.forgetSubscription(key, st)
	}
	return nil
}

// forgetSubscription drops st, which counts nobody, from the map.
func (g *Gateway) forgetSubscription(key string, st *subscriptionState) {
	g.subsMu.Lock()
	if g.subs[key] == st {
		delete(g.subs, key)
	}
	g.subsMu.Unlock()
}

// progressParams are the params whose progress token the gateway rewrites.
type progressParams interface{ SetProgressToken(any) }

// forward runs fn on a process of server for the client session ss, within
// the server's timeout (restarted by each progress notification). A client's
// progress token is replaced by one unique to the gateway, so that progress
// from a shared process reaches the caller that asked for it.
func (g *Gateway) forward(ctx context.Context, req mcp.Request, server string, token any, params progressParams,
	fn func(context.Context, *mcp.ClientSession) error) error {
	ss, _ := req.GetSession().(*mcp.ServerSession)
	b, ok := g.backend(server)
	if !ok {
		return fmt.Errorf("server %q is not enabled in Switchboard", server)
	}
	cfg := b.config()
	rec := recordFrom(ctx)
	g.routed(rec, server)
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	timer := time.AfterFunc(timeout, func() {
		cancel(fmt.Errorf("server %q did not answer within %s: %w", server, timeout, context.DeadlineExceeded))
	})
	defer timer.Stop()

	var route *progressRoute
	if token != nil && params != nil {
		gt := "sb-" + strconv.FormatUint(g.nextToken.Add(1), 36)
		route = &progressRoute{ctx: ctx, session: ss, token: token, timer: timer, timeout: timeout,
			delivered: make(chan struct{}, 1)}
		g.progress.Store(gt, route)
		defer g.progress.Delete(gt)
		params.SetProgressToken(gt)
	}

	lease, release, err := g.acquire(ctx, ss, server, cfg.Mode, cfg.leaseIdle())
	if err != nil {
		return g.failure(ctx, err)
	}
	defer release()
	if rec != nil {
		rec.call.PID = lease.PID()
	}
	if p := pendingFrom(ctx); p != nil {
		p.pid.Store(int64(lease.PID()))
	}
	cs := lease.Session()
	g.callers.push(cs, caller{session: ss, ctx: ctx, caps: capabilitiesOf(req), pending: pendingFrom(ctx)})
	defer g.callers.pop(cs, ss)
	if err := lease.Do(ctx, fn); err != nil {
		return g.failure(ctx, err)
	}
	route.drain()
	return nil
}

// failure puts the most useful cause on err: the timeout or the client's
// cancellation rather than a bare "context canceled".
func (g *Gateway) failure(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); cause != nil && errors.Is(err, context.Canceled) {
		return cause
	}
	return err
}

// acquire leases a process for a call: per call in shared mode, per client
// session in session mode (kept until the session ends). A stateless
// request has no session to keep a process for, so it leases per call.
func (g *Gateway) acquire(ctx context.Context, ss *mcp.ServerSession, server string, mode supervisor.Mode, idle time.Duration) (Lease, func(), error) {
	if mode != supervisor.ModeSession || ss == nil || ss.ID() == "" {
		l, err := g.opts.Backends.Acquire(ctx, server)
		if err != nil {
			return nil, nil, err
		}
		return l, l.Release, nil
	}
	return g.leases.get(ctx, g.opts.Backends, ss, server, idle)
}

// A progressRoute leads a gateway progress token back to the client.
type progressRoute struct {
	// ctx is the client's request's: notifications sent with it go on that
	// request's own response stream (the only one a client without the
	// optional GET stream, or in the stateless era, listens to).
	ctx       context.Context
	session   *mcp.ServerSession
	token     any
	timer     *time.Timer
	timeout   time.Duration
	delivered chan struct{} // signalled after each notification passed on
	count     atomic.Int64  // notifications passed on
	seen      atomic.Int64  // notifications read off a counting transport
}

// The go-sdk client hands a server's notifications to a handler goroutine
// but a response straight to the caller, so the server's last progress
// notification, sent just before its result, can still be queued when the
// result arrives; passing the result on at once would drop it. On the
// supervisor's stdio transports the gateway counts each progress
// notification as it is read (WrapTransport), in order with the response,
// so a call waits until every one read before its result has been passed
// on. Elsewhere (the bridge's HTTP upstream) it waits briefly for more.
const (
	progressDrainMax = time.Second          // bound on waiting for counted notifications
	progressDrain    = 2 * time.Millisecond // the brief wait where nothing was counted
)

// drain waits until the progress notifications of a finished call have
// been passed on; nil does nothing.
func (r *progressRoute) drain() {
	if r == nil {
		return
	}
	if r.seen.Load() > 0 {
		deadline := time.NewTimer(progressDrainMax)
		defer deadline.Stop()
		for r.count.Load() < r.seen.Load() {
			select {
			case <-r.delivered:
			case <-deadline.C:
				return
			}
		}
		return
	}
	if r.count.Load() == 0 {
		return
	}
	t := time.NewTimer(progressDrain)
	defer t.Stop()
	for {
		select {
		case <-r.delivered:
			t.Reset(progressDrain)
		case <-t.C:
			return
		}
	}
}

// deliver passes one progress notification on to the client.
func (r *progressRoute) deliver(p mcp.ProgressNotificationParams) {
	r.timer.Reset(r.timeout) // progress keeps a long call alive
	p.ProgressToken = r.token
	_ = r.session.NotifyProgress(r.ctx, &p)
	r.count.Add(1)
	select {
	case r.delivered <- struct{}{}:
	default:
	}
}

// A caller is a client request in flight on a backend session.
type caller struct {
	session *mcp.ServerSession
	ctx     context.Context // the request's, see progressRoute.ctx
	caps    *mcp.ClientCapabilities
	// pending is set for a stateless client's tool call: requests to the
	// client go through its input-required rounds (see mrtr.go).
	pending *pendingCall
}

// capabilitiesOf returns what the client of req can do: from the request's
// _meta in the 2026-07-28 era, from initialize before.
func capabilitiesOf(req mcp.Request) *mcp.ClientCapabilities {
	if r, ok := req.(interface {
		ClientCapabilities() *mcp.ClientCapabilities
	}); ok {
		return r.ClientCapabilities()
	}
	return nil
}

// callerIndex knows which client sessions have calls in flight on which
// backend session, for server-to-client requests (sampling, elicitation,
// roots). The rule, when calls from several clients share a process: the
// request goes to the client whose call started most recently.
type callerIndex struct {
	mu    sync.Mutex
	calls map[*mcp.ClientSession][]caller
}

func (c *callerIndex) init() { c.calls = map[*mcp.ClientSession][]caller{} }

func (c *callerIndex) push(cs *mcp.ClientSession, ss caller) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls[cs] = append(c.calls[cs], ss)
}

func (c *callerIndex) pop(cs *mcp.ClientSession, ss *mcp.ServerSession) {
	c.mu.Lock()
	defer c.mu.Unlock()
	list := c.calls[cs]
	for i := len(list) - 1; i >= 0; i-- {
		if list[i].session == ss {
			list = append(list[:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(c.calls, cs)
	} else {
		c.calls[cs] = list
	}
}

func (c *callerIndex) latest(cs *mcp.ClientSession) (caller, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	list := c.calls[cs]
	if len(list) == 0 {
		return caller{}, false
	}
	return list[len(list)-1], true
}

// sessionLeases holds the processes leased to client sessions of
// session-mode servers. A session's first call to a server leases a process
// (one acquisition per session and server, however many calls arrive at
// once: in session mode releasing a process stops it, so a second lease
// would cost a process and its state); the session keeps it until the
// session ends or it stays idle for the server's idle timeout.
type sessionLeases struct {
	mu       sync.Mutex
	sessions map[*mcp.ServerSession]map[string]*sessionLease
	closed   bool // the gateway is closing: no new leases are kept
	// track runs a session's releaser as part of the gateway's lifetime
	// (Close waits for it).
	track func(func())
}

// A sessionLease is the process of one server leased to one client session.
type sessionLease struct {
	ready chan struct{} // closed once the acquisition ended
	lease Lease         // set before ready closes; nil when it failed
	err   error         // why it failed
	inUse int           // calls running on it
	idle  *time.Timer   // releases it once idle for the server's idle timeout
}

func (s *sessionLeases) init(track func(func())) {
	s.sessions = map[*mcp.ServerSession]map[string]*sessionLease{}
	s.track = track
}

// get returns the process of server leased to ss, leasing one if it has
// none (or its process ended), and a function to call when the call is done.
func (s *sessionLeases) get(ctx context.Context, backends Backends, ss *mcp.ServerSession, server string, idle time.Duration) (Lease, func(), error) {
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return nil, nil, supervisor.ErrClosed
		}
		leases := s.sessions[ss]
		if leases == nil {
			leases = map[string]*sessionLease{}
			s.sessions[ss] = leases
			// Tracked under mu: Close sets closed first, so no releaser
			// starts after Close began waiting for them.
			s.track(func() {
				ss.Wait()
				s.release(ss)
			})
		}
		sl := leases[server]
		var dead Lease
		if sl != nil {
			select {
			case <-sl.ready:
				if sl.lease.Err() == nil {
					sl.inUse++
					if sl.idle != nil {
						sl.idle.Stop()
					}
					s.mu.Unlock()
					return sl.lease, s.doneFunc(ss, server, sl, idle), nil
				}
				// Its process ended: lease another.
				delete(leases, server)
				dead = sl.lease
			default:
				// Another call of this session is acquiring: wait for it.
				s.mu.Unlock()
				select {
				case <-sl.ready:
					if sl.err != nil && !(ctx.Err() == nil && isContextErr(sl.err)) {
						return nil, nil, sl.err
					}
					// Acquired, or the acquiring call was cancelled or
					// timed out, which ends that call, not this one:
					// look again (and acquire, if it must).
					continue
				case <-ctx.Done():
					return nil, nil, context.Cause(ctx)
				}
			}
		}
		sl = &sessionLease{ready: make(chan struct{}), inUse: 1}
		leases[server] = sl
		s.mu.Unlock()
		if dead != nil {
			dead.Release()
		}

		l, err := backends.Acquire(ctx, server)
		s.mu.Lock()
		kept := s.sessions[ss][server] == sl
		if err != nil {
			if kept {
				delete(s.sessions[ss], server)
			}
			sl.err = err
			close(sl.ready)
			s.mu.Unlock()
			return nil, nil, err
		}
		sl.lease = l
		close(sl.ready)
		s.mu.Unlock()
		if !kept {
			// The session ended (or the gateway closed) meanwhile: the
			// process serves this call only.
			return l, l.Release, nil
		}
		return l, s.doneFunc(ss, server, sl, idle), nil
	}
}

// isContextErr reports whether err is a cancellation or a deadline.
func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// doneFunc returns what ends one call on sl: when no call of the session
// uses the process any more, its idle timer starts.
func (s *sessionLeases) doneFunc(ss *mcp.ServerSession, server string, sl *sessionLease, idle time.Duration) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			sl.inUse--
			if sl.inUse > 0 || idle <= 0 || s.sessions[ss][server] != sl {
				return
			}
			if sl.idle == nil {
				sl.idle = time.AfterFunc(idle, func() { s.expire(ss, server, sl) })
			} else {
				sl.idle.Reset(idle)
			}
		})
	}
}

// expire releases sl, idle for the server's idle timeout: a session that
// went quiet (or was abandoned without DELETE) gives its process back. Its
// next call leases a process again.
func (s *sessionLeases) expire(ss *mcp.ServerSession, server string, sl *sessionLease) {
	s.mu.Lock()
	if s.sessions[ss][server] != sl || sl.inUse > 0 {
		s.mu.Unlock()
		return
	}
	delete(s.sessions[ss], server)
	s.mu.Unlock()
	sl.lease.Release()
}

// release gives back every process leased to ss (its session ended).
func (s *sessionLeases) release(ss *mcp.ServerSession) {
	s.mu.Lock()
	leases := s.sessions[ss]
	delete(s.sessions, ss)
	s.mu.Unlock()
	releaseLeases(leases)
}

// releaseAll gives back every session's processes and ends the sessions
// holding them, so their releasers return (the gateway is closing).
func (s *sessionLeases) releaseAll() {
	s.mu.Lock()
	s.closed = true
	all := s.sessions
	s.sessions = map[*mcp.ServerSession]map[string]*sessionLease{}
	s.mu.Unlock()
	for ss, leases := range all {
		releaseLeases(leases)
		_ = ss.Close()
	}
}

// releaseLeases releases the acquired leases of m; one still being
// acquired is released by its acquirer (it is no longer kept).
func releaseLeases(m map[string]*sessionLease) {
	for _, sl := range m {
		select {
		case <-sl.ready:
		default:
			continue
		}
		if sl.idle != nil {
			sl.idle.Stop()
		}
		if sl.lease != nil {
			sl.lease.Release()
		}
	}
}

// reservedMeta prefixes the _meta keys the protocol itself uses per request
// in the 2026-07-28 era (protocolVersion, clientInfo, clientCapabilities,
// logLevel, ...). They describe one hop: each hop sets its own.
const reservedMeta = "io.modelcontextprotocol/"

// forwardMeta copies a request's _meta for the backend, without the keys
// that belong to the client's hop.
func forwardMeta(m mcp.Meta) mcp.Meta {
	var out mcp.Meta
	for k, v := range m {
		if strings.HasPrefix(k, reservedMeta) {
			continue
		}
		if out == nil {
			out = make(mcp.Meta, len(m))
		}
		out[k] = v
	}
	return out
}
