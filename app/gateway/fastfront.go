package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/app/record"
	"github.com/switchboardhq/switchboard/internal/mcpscan"
)

// The fast path's front hop. Gateway.Handler gives serveFast every
// session-era POST first; serveFast takes only what it serves exactly as
// the go-sdk path would, and returns false for everything else, which then
// goes to the go-sdk handler unchanged:
//
//   - tools/call on a live, initialized session of this token and endpoint
//     (the session guard's rule), for a tool the endpoint registers (or an
//     unlisted server's, as unlistedTools finds them), once the endpoint's
//     servers were tried (awaitLists' rule), with an MCP-Protocol-Version
//     the go-sdk accepts for a session and an id it echoes as written;
//   - the reply to a request the fast path sent the client during one of its
//     calls (sampling, elicitation, roots), routed by id;
//   - notifications/cancelled for one of its calls.
//
// A tools/call is scanned, not decoded (method, id, params.name, arguments
// and _meta as bytes), recorded as recordMiddleware records it, forwarded
// through forward (timeout, progress token, leases, callers) with the
// backend hop of fastback.go, and answered as the go-sdk answers: one SSE
// event with the response (the server's result bytes when they are plain),
// after any progress notification or request to the client the call made.

// fastState is the fast path's part of a Gateway.
type fastState struct {
	on      bool          // Options.FastPath is FastPathOn
	conns   sync.Map      // *mcp.ClientSession → *backendConn, nil for a session over no connection of ours (fastback.go)
	wrapped atomic.Bool   // WrapTransport made a connection
	nextID  atomic.Uint64 // the gateway's call and request ids
	served  atomic.Int64  // calls the fast path answered (tests read it)

	mu       sync.Mutex
	sessions map[string]fastSession // by Mcp-Session-Id, once found on a front
	calls    map[fastKey]context.CancelCauseFunc
	asks     map[fastKey]chan fastReply // requests to clients, waiting for the reply
	sdkCalls map[fastKey]int            // requests of sessions in flight on the go-sdk path
}

// fastKey names a message of one session: a client's call by its id as
// written, or a request to the client by the gateway's id.
type fastKey struct{ session, id string }

type fastReply struct {
	result json.RawMessage
	err    *jsonrpc.Error
}

// A fastSession is a client session and the front that serves it.
type fastSession struct {
	front *mcp.Server
	ss    *mcp.ServerSession
}

func (f *fastState) init(on bool) {
	f.on = on
	f.sessions = map[string]fastSession{}
	f.calls = map[fastKey]context.CancelCauseFunc{}
	f.asks = map[fastKey]chan fastReply{}
	f.sdkCalls = map[fastKey]int{}
}

// FastPathEnv is the environment variable that, set to 0, makes New
// serve every request through the go-sdk (see Options.FastPath).
const FastPathEnv = "SWITCHBOARD_FASTPATH"

// A FastPathMode selects who serves tools/call on sessions.
type FastPathMode int

const (
	FastPathFromEnv FastPathMode = iota // on unless SWITCHBOARD_FASTPATH=0
	FastPathOn                          // the gateway's fast path
	FastPathOff                         // the go-sdk's handlers, as every other request
)

// serveFast serves r if the fast path takes it, and reports whether it did.
func (g *Gateway) serveFast(w http.ResponseWriter, r *http.Request, body []byte) bool {
	sid := r.Header.Get("Mcp-Session-Id")
	if r.Method != http.MethodPost || sid == "" || len(r.Header.Values("Last-Event-ID")) > 0 ||
		!sessionVersion(r.Header.Get("MCP-Protocol-Version")) {
		return false
	}
	if !hostChecked(r) {
		return false // the go-sdk's DNS rebinding protection answers 403
	}
	env, ok := mcpscan.ScanMessage(body)
	if !ok {
		return false
	}
	switch env.Method {
	case "":
		return g.fastReply(w, r, sid, env)
	case "notifications/cancelled":
		return g.fastCancel(w, r, sid, env)
	case "tools/call":
		return g.fastToolCall(w, r, sid, env)
	}
	return false
}

// ownedBy applies the session guard's rule: the session belongs to the
// token and endpoint of r (else the go-sdk path answers 404).
func (g *Gateway) ownedBy(r *http.Request, sid string) bool {
	me := sessionOwner{token: g.opts.ClientToken(r.Context()), endpoint: endpointOf(r.URL.Path)}
	g.guard.mu.Lock()
	owner, ok := g.guard.owners[sid]
	g.guard.mu.Unlock()
	return ok && owner == me
}

// sessionOn returns the live session sid of front, or nil. A session
// found once is kept until it closes (endSession: DELETE, the idle
// timeout, a revoked token, Close).
func (g *Gateway) sessionOn(front *mcp.Server, sid string) *mcp.ServerSession {
	g.fast.mu.Lock()
	fs, ok := g.fast.sessions[sid]
	g.fast.mu.Unlock()
	if ok {
		if fs.front != front {
			return nil
		}
		return fs.ss
	}
	for s := range front.Sessions() {
		if s.ID() == sid {
			g.fast.mu.Lock()
			g.fast.sessions[sid] = fastSession{front: front, ss: s}
			g.fast.mu.Unlock()
			return s
		}
	}
	return nil
}

// endFastSession forgets session sid (it closed) and cancels its fast
// calls in flight, as a notifications/cancelled of the client would (see
// endSession, which does the same for the go-sdk path's).
func (g *Gateway) endFastSession(sid string) {
	if sid == "" {
		return
	}
	var cancels []context.CancelCauseFunc
	g.fast.mu.Lock()
	delete(g.fast.sessions, sid)
	for key, cancel := range g.fast.calls {
		if key.session == sid {
			cancels = append(cancels, cancel)
		}
	}
	g.fast.mu.Unlock()
	for _, cancel := range cancels {
		cancel(nil)
	}
}

// fastReply routes a client's reply to a request the fast path sent it.
func (g *Gateway) fastReply(w http.ResponseWriter, r *http.Request, sid string, env mcpscan.Message) bool {
	id, ok := mcpscan.PlainStringID(env.ID)
	if !ok || (env.Result == nil) == (env.Error == nil) {
		return false
	}
	var rpcErr *jsonrpc.Error
	if env.Error != nil {
		if rpcErr, ok = clientError(env.Error); !ok {
			return false // the go-sdk refuses the message (400)
		}
	}
	key := fastKey{sid, id}
	g.fast.mu.Lock()
	ch := g.fast.asks[key]
	g.fast.mu.Unlock()
	if ch == nil || !g.ownedBy(r, sid) {
		return false
	}
	g.fast.mu.Lock()
	delete(g.fast.asks, key)
	g.fast.mu.Unlock()
	ch <- fastReply{result: env.Result, err: rpcErr} // buffered
	w.WriteHeader(http.StatusAccepted)
	return true
}

// fastCancel ends a fast call the client cancelled.
func (g *Gateway) fastCancel(w http.ResponseWriter, r *http.Request, sid string, env mcpscan.Message) bool {
	if env.HasID {
		return false
	}
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(env.Params, &p) != nil || p.RequestID == nil {
		return false
	}
	key := fastKey{sid, string(bytes.TrimSpace(p.RequestID))}
	g.fast.mu.Lock()
	cancel := g.fast.calls[key]
	g.fast.mu.Unlock()
	if cancel == nil || !g.ownedBy(r, sid) {
		return false
	}
	cancel(nil)
	w.WriteHeader(http.StatusAccepted)
	return true
}

// fastToolCall serves a tools/call, or returns false if it is not one the
// fast path takes.
func (g *Gateway) fastToolCall(w http.ResponseWriter, r *http.Request, sid string, env mcpscan.Message) bool {
	if !env.HasID || !mcpscan.EchoableID(env.ID) {
		return false
	}
	p, ok := mcpscan.ScanToolParams(env.Params)
	if !ok {
		return false
	}
	endpoint := serverInPath(r.URL.Path)
	front := g.serverFor(r)
	if front == nil || !g.ownedBy(r, sid) || !g.listsTried(endpoint) {
		return false
	}
	ss := g.sessionOn(front, sid)
	if ss == nil || ss.InitializeParams() == nil {
		return false // unknown, closed or not yet initialized: the go-sdk answers
	}
	server, original, canonical, unlisted, ok := g.fastTool(front, endpoint, p.Name)
	if !ok {
		return false // an unknown tool: the go-sdk's error
	}
	if max, _ := g.capFor(r.Context(), endpoint); max != "" {
		if tier, ok := g.tierOf(server, original); ok && tier.Above(max) {
			return false // tierCaps refuses it (tiers.go)
		}
	}
	if g.needsAsk(endpoint, server, original) {
		return false // askFirst asks the user first (asks.go)
	}
	var meta mcp.Meta
	if p.Meta != nil && string(p.Meta) != "null" {
		if json.Unmarshal(p.Meta, &meta) != nil {
			return false
		}
	}
	key := fastKey{sid, string(env.ID)}
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(r.Context()))
	defer cancel(nil)
	g.fast.mu.Lock()
	if _, dup := g.fast.calls[key]; dup || g.fast.sdkCalls[key] > 0 {
		g.fast.mu.Unlock()
		// A request with this id is in flight: a fast call, which the
		// go-sdk does not know of (it would serve this one), or one of
		// the go-sdk path (sdkRequest). Refused as the go-sdk refuses a
		// duplicate id.
		refuseDuplicate(w, env.ID)
		return true
	}
	g.fast.calls[key] = cancel
	g.fast.mu.Unlock()
	defer func() {
		g.fast.mu.Lock()
		delete(g.fast.calls, key)
		g.fast.mu.Unlock()
	}()
	// The session's end cancels it (also an end racing with its start, and
	// the gateway's closing, with its cause).
	defer g.inflight.remove(g.inflight.add(sid, cancel))
	g.fast.served.Add(1)

	// The call is activity of its session while its client waits for the
	// answer, as on the go-sdk path: a client that went away leaves the
	// session to idle out, which cancels the call (endSession).
	g.idle.begin(sid, false)
	stopIdleEnd := context.AfterFunc(r.Context(), func() { g.idle.end(sid) })
	defer func() {
		if stopIdleEnd() { // else the client went away, and it ended
			g.idle.end(sid)
		}
	}()
	kw := newKeepAliveWriter(w, r, g.watch, true, &g.splice)
	defer kw.stop()
	stream := &fastStream{w: kw, g: g, session: sid}
	ctx = context.WithValue(ctx, fastStreamKey{}, stream)
	req := &mcp.CallToolRequest{Session: ss, Params: &mcp.CallToolParamsRaw{Name: p.Name, Arguments: p.Arguments, Meta: meta}}
	g.fastCall(ctx, cancel, stream, env.ID, req, endpoint, server, original, canonical, unlisted)
	return true
}

// sdkRequest notes a request of a session that the go-sdk path serves
// while it is in flight, so that a fast call with its id is refused as the
// go-sdk refuses a duplicate id; and refuses it when a fast call of its
// session has its id (the go-sdk does not know of fast calls). done ends
// the note; refused reports that the request was answered.
func (g *Gateway) sdkRequest(w http.ResponseWriter, r *http.Request, body []byte) (done func(), refused bool) {
	sid := r.Header.Get("Mcp-Session-Id")
	if r.Method != http.MethodPost || sid == "" {
		return func() {}, false
	}
	env, ok := mcpscan.ScanMessage(body)
	if !ok || !env.HasID || env.Method == "" || !mcpscan.EchoableID(env.ID) {
		return func() {}, false // fast calls have echoable ids
	}
	key := fastKey{sid, string(env.ID)}
	g.fast.mu.Lock()
	_, dup := g.fast.calls[key]
	if !dup {
		g.fast.sdkCalls[key]++
	}
	g.fast.mu.Unlock()
	if dup {
		if g.ownedBy(r, sid) {
			refuseDuplicate(w, env.ID)
			return nil, true
		}
		return func() {}, false // the session guard answers 404
	}
	return func() {
		g.fast.mu.Lock()
		if g.fast.sdkCalls[key]--; g.fast.sdkCalls[key] <= 0 {
			delete(g.fast.sdkCalls, key)
		}
		g.fast.mu.Unlock()
	}, false
}

// listsTried reports whether every server of the endpoint has been listed
// once (or failed to be): before that, awaitLists holds calls.
func (g *Gateway) listsTried(endpoint string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for name, b := range g.backends {
		if endpoint == "" || name == endpoint {
			select {
			case <-b.tried:
			default:
				return false
			}
		}
	}
	return true
}

// fastTool finds the server and original name behind a tool as the front
// would: an unlisted server's tool first (unlistedTools), then a tool the
// endpoint registers. On an aggregated endpoint, front is the plain front
// of one of its views, whose names the session was given. canonical is
// the name the call is recorded under (see exposed.Canonical).
func (g *Gateway) fastTool(front *mcp.Server, endpoint, name string) (server, original, canonical string, unlisted, ok bool) {
	g.mu.Lock()
	a := g.aggregateFor(endpoint)
	var v *view
	budget := MaxNameLen
	if a != nil {
		if v = a.viewOf(front); v != nil {
			budget = v.budget
		}
	}
	g.mu.Unlock()
	if a != nil && (v == nil || front != v.front) {
		return "", "", "", false, false // the search front (search.go): its own two tools
	}
	if g.opts.Reviewer != nil {
		if _, _, msg := g.heldTool(endpoint, budget, name); msg != "" {
			return "", "", "", false, false // heldTools refuses it
		}
	}
	if server, original, ok := g.unlistedTool(endpoint, budget, name); ok {
		return server, original, name, true, true
	}
	var e exposed
	found, registered := false, false
	if a != nil {
		g.mu.Lock()
		e, found = v.state.tools[name]
		_, registered = v.state.registered["tool:"+name]
		g.mu.Unlock()
	}
	if a == nil {
		// A server's own endpoint: its tools under their own names.
		// A server's own endpoint: its tools under their own names, or
		// the session's view's (ownnames.go).
		if b, ok := g.backend(endpoint); ok {
			b.mu.Lock()
			original, listed := b.listedTool(front, name)
			b.mu.Unlock()
			e, found, registered = exposed{Name: name, Server: endpoint, Original: original, Canonical: original}, true, listed
		}
	}
	if !found || !registered {
		return "", "", "", false, false
	}
	b, ok := g.backend(e.Server)
	if !ok {
		return "", "", "", false, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, t := range b.features.tools {
		if t.Name == e.Original {
			return e.Server, e.Original, e.Canonical, false, objectSchema(t) // else addTool left it out
		}
	}
	return "", "", "", false, false
}

// objectSchema reports whether addTool registers t (its input schema is an
// object).
func objectSchema(t *mcp.Tool) bool {
	if t.InputSchema == nil {
		return true
	}
	m, ok := t.InputSchema.(map[string]any)
	return ok && m["type"] == "object"
}

// fastParams are the params of a forwarded call: forward sets the
// gateway's progress token in its _meta.
type fastParams struct{ meta mcp.Meta }

func (p *fastParams) SetProgressToken(t any) {
	if p.meta == nil {
		p.meta = mcp.Meta{}
	}
	p.meta["progressToken"] = t
}

// toolCallParams encodes the params of tools/call for the server: the
// original name, the client's arguments as they came, the _meta to pass on.
func (p *fastParams) toolCallParams(original string, arguments json.RawMessage) ([]byte, error) {
	name, err := json.Marshal(original)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(name)+len(arguments)+32)
	out = append(out, `{"name":`...)
	out = append(out, name...)
	if len(arguments) > 0 {
		out = append(out, `,"arguments":`...)
		out = append(out, arguments...)
	}
	if len(p.meta) > 0 {
		meta, err := json.Marshal(p.meta)
		if err != nil {
			return nil, err
		}
		out = append(out, `,"_meta":`...)
		out = append(out, meta...)
	}
	return append(out, '}'), nil
}

// fastCall forwards a tools/call and answers it on stream, recording it as
// recordMiddleware does, under canonical. ctx is the call's own, with its
// cancel (see forwardIn).
func (g *Gateway) fastCall(ctx context.Context, cancel context.CancelCauseFunc, stream *fastStream, id json.RawMessage, req *mcp.CallToolRequest,
	endpoint, server, original, canonical string, unlisted bool) {
	var rec *callRecord
	if g.opts.Recorder != nil {
		rec = &callRecord{call: record.Call{Start: time.Now(), Method: "tools/call", Endpoint: endpoint,
			ClientLabel: g.opts.ClientLabel(ctx)}}
		describeRequest(&rec.call, req)
		rec.call.Name, rec.call.Tool = canonical, original
		g.noteTier(rec, server, original)
		ctx = context.WithValue(ctx, recordKey{}, rec)
	}

	params := &fastParams{meta: forwardMeta(req.Params.Meta)}
	var raw json.RawMessage
	var decoded *mcp.CallToolResult
	err := g.forwardIn(ctx, cancel, req, server, req.Params.GetProgressToken(), params, func(ctx context.Context, cs *mcp.ClientSession) error {
		if c := g.connOf(ctx, cs); c != nil {
			body, err := params.toolCallParams(original, req.Params.Arguments)
			if err != nil {
				return err
			}
			raw, err = g.callBackend(ctx, c, "tools/call", body, req.Params.GetProgressToken() != nil)
			if rpcErr, ok := errors.AsType[*jsonrpc.Error](err); ok {
				return fmt.Errorf("calling %q: %w", "tools/call", rpcErr) // as the go-sdk client says it
			}
			return err
		}
		// Not over a connection of the gateway's: through the go-sdk.
		cp := &mcp.CallToolParams{Name: original, Meta: params.meta}
		if len(req.Params.Arguments) > 0 {
			cp.Arguments = req.Params.Arguments
		}
		var err error
		decoded, err = cs.CallTool(ctx, cp)
		return err
	})

	// What callTool and the middleware make of the outcome.
	var rpcErr *jsonrpc.Error
	var result []byte // the response's result, when not raw
	plain, resultType := false, false
	if err != nil {
		if e, ok := errors.AsType[*jsonrpc.Error](err); ok {
			rpcErr = &jsonrpc.Error{Code: e.Code, Message: err.Error()}
		} else {
			if rec != nil {
				rec.failure = err
			}
			decoded = &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}
		}
	} else if decoded == nil {
		if !unlisted {
			plain, resultType = mcpscan.PlainToolResultKeys(raw)
		}
		if !plain {
			decoded = &mcp.CallToolResult{}
			if derr := json.Unmarshal(raw, decoded); derr != nil {
				derr = fmt.Errorf("calling %q: %w", "tools/call", derr)
				if rec != nil {
					rec.failure = derr
				}
				decoded = &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: derr.Error()}}}
			}
		}
	}
	if decoded != nil && !unlisted {
		normalizeToolResult(decoded)
	}

	if rec != nil {
		c := &rec.call
		c.Duration = time.Since(c.Start)
		if c.Server == "" && endpoint != "" {
			c.Server = endpoint
		}
		c.Outcome = record.OutcomeOK
		switch {
		case rpcErr != nil:
			c.Outcome, c.Error = classify(err), rpcErr.Message
		case plain:
			c.Response, c.ResponseSize = raw, len(raw)
		default:
			if data, merr := json.Marshal(decoded); merr == nil {
				c.Response, c.ResponseSize = data, len(data)
			}
			if decoded.IsError {
				c.Outcome = record.OutcomeToolError
				c.Error = toolErrorText(decoded)
				if rec.failure != nil {
					c.Outcome = classify(rec.failure)
				}
			}
		}
		g.opts.Recorder.RecordCall(*c)
	}

	switch {
	case rpcErr != nil:
		rid, _ := decodeID(id)
		data, merr := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: rid, Error: rpcErr})
		if merr == nil {
			_ = stream.errorResponse(data)
		}
		return
	case plain && !resultType:
		result = raw
	case plain:
		result, _ = json.Marshal(newShapedResult(&rawResult{data: raw}, sessionEraDrop, false))
	default:
		result, _ = json.Marshal(newShapedResult(decoded, sessionEraDrop, false))
	}
	_ = stream.response(id, result, plain && len(result) >= spliceMin)
}

// endClosedSession forgets the session its owner's DELETE closed: its
// next request gets the session guard's 404.
func (g *Gateway) endClosedSession(r *http.Request) {
	sid := r.Header.Get("Mcp-Session-Id")
	front := g.serverFor(r)
	if sid == "" || front == nil {
		return
	}
	for s := range front.Sessions() {
		if s.ID() == sid {
			return // still open (the DELETE was refused)
		}
	}
	g.guard.forget(sid)
	g.endSession(sid)
}
