package gateway

import (
	"context"
	"crypto/rand"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A client of the stateless 2026-07-28 era cannot be sent a request: when a
// server asks for sampling, elicitation or roots during such a client's
// call, the gateway answers the client's tools/call with an input-required
// result instead, parks the server's call, and resumes it when the client
// retries with its answers and the requestState it was given (SEP-2322):
//
//	client ─tools/call──────────▶ gateway ─tools/call──▶ server
//	                                       ◀─sampling──  (parked)
//	client ◀─input_required{r1}── gateway
//	client ─tools/call+answers──▶ gateway ─answer──────▶ server
//	client ◀─result─────────────  gateway ◀─result─────  server

// inputWait bounds how long a parked call waits for the client's retry.
const inputWait = 5 * time.Minute

// pendingCall is a stateless client's tool call that runs on beyond the
// HTTP request that started it, while the client answers the server.
type pendingCall struct {
	state string // the requestState handed to the client
	// Who may continue it: the token that started it (Options.ClientToken),
	// on the same tool. A requestState is a bearer of its own, like a
	// session id (see sessionGuard): another client holding it must not
	// answer the server nor read the result.
	token, server, original string
	asks                    chan *inputAsk     // a server's requests, for the next round
	done                    chan toolOutcome   // the call's outcome (buffered)
	stop                    context.CancelFunc // ends the server's call
	pid                     atomic.Int64       // the server process that ran it, for the record
	// raw is the capture of the round that started the call, which the
	// server's result reaches; a later round's takes it over (see adopt).
	raw *rawCapture

	mu      sync.Mutex
	waiting map[string]*inputAsk // asked of the client, by input id
	expiry  *time.Timer
}

type inputAsk struct {
	id     string
	req    mcp.InputRequest
	answer chan mcp.InputResponse // buffered
}

type toolOutcome struct {
	res *mcp.CallToolResult
	err error
}

type pendingKey struct{}

func pendingFrom(ctx context.Context) *pendingCall {
	p, _ := ctx.Value(pendingKey{}).(*pendingCall)
	return p
}

// pendingCalls holds the parked calls by requestState. Its mutex is
// locked by its methods only.
type pendingCalls struct {
	mu    sync.Mutex
	calls map[string]*pendingCall
	next  int
}

func (c *pendingCalls) init() { c.calls = map[string]*pendingCall{} }

// add parks p under its requestState.
func (c *pendingCalls) add(p *pendingCall) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls[p.state] = p
}

// get returns the call parked under state, or nil.
func (c *pendingCalls) get(state string) *pendingCall {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls[state]
}

// remove forgets p.
func (c *pendingCalls) remove(p *pendingCall) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.calls, p.state)
}

// nextSeq numbers a server's request to a client, unique in the gateway.
func (c *pendingCalls) nextSeq() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.next++
	return c.next
}

// list returns the parked calls keep accepts; keep nil accepts all.
func (c *pendingCalls) list(keep func(*pendingCall) bool) []*pendingCall {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*pendingCall
	for _, p := range c.calls {
		if keep == nil || keep(p) {
			out = append(out, p)
		}
	}
	return out
}

// ask hands a server's request to the client's next round and waits for
// the client's answer.
func (p *pendingCall) ask(ctx context.Context, req mcp.InputRequest, seq int) (mcp.InputResponse, error) {
	a := &inputAsk{id: "input-" + strconv.Itoa(seq), req: req, answer: make(chan mcp.InputResponse, 1)}
	select {
	case p.asks <- a:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case r := <-a.answer:
		return r, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// statelessToolCall runs a tools/call of a stateless client, in rounds.
func (g *Gateway) statelessToolCall(ctx context.Context, req *mcp.CallToolRequest, server, original string) (*mcp.CallToolResult, error) {
	var p *pendingCall
	if state := req.Params.RequestState; state != "" {
		p = g.pending.get(state)
		if p == nil || p.token != g.opts.ClientToken(ctx) || p.server != server || p.original != original {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
				Message: "unknown or expired requestState: the call it continued is over; call the tool again"}
		}
		p.expiry.Stop()
		p.mu.Lock()
		for id, resp := range req.Params.InputResponses {
			if a := p.waiting[id]; a != nil {
				delete(p.waiting, id)
				a.answer <- resp
			}
		}
		p.mu.Unlock()
	} else {
		p = g.startPending(ctx, req, server, original)
	}
	g.routed(recordFrom(ctx), server)
	select {
	case o := <-p.done:
		g.endPending(p)
		if rc := rawCaptureFrom(ctx); rc != nil && p.raw != nil && rc != p.raw {
			rc.adopt(p.raw) // the result came in a later round than the call started
		}
		if rec := recordFrom(ctx); rec != nil {
			rec.call.PID = int(p.pid.Load())
		}
		return o.res, o.err
	case a := <-p.asks:
		p.mu.Lock()
		p.waiting[a.id] = a
		p.expiry.Reset(inputWait)
		p.mu.Unlock()
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{a.id: a.req}, RequestState: p.state}, nil
	case <-ctx.Done():
		// In the stateless era a closed stream is the client's cancellation;
		// the gateway's close says why (ErrShuttingDown).
		g.endPending(p)
		return nil, context.Cause(ctx)
	}
}

// startPending starts the server's call detached from the client's HTTP
// request (which ends with the first input-required result).
func (g *Gateway) startPending(ctx context.Context, req *mcp.CallToolRequest, server, original string) *pendingCall {
	runCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	p := &pendingCall{state: newRequestState(), asks: make(chan *inputAsk), done: make(chan toolOutcome, 1),
		stop: stop, waiting: map[string]*inputAsk{}, token: g.opts.ClientToken(ctx), server: server, original: original}
	p.raw = rawCaptureFrom(ctx)
	// The expiry runs only while the client owes an answer.
	p.expiry = time.AfterFunc(inputWait, func() { g.endPending(p) })
	p.expiry.Stop()
	g.pending.add(p)
	runCtx = context.WithValue(runCtx, pendingKey{}, p)
	// The first round's recorder entry is written when that round ends; the
	// call itself must not touch it afterwards.
	runCtx = context.WithValue(runCtx, recordKey{}, (*callRecord)(nil))
	go func() {
		res, err := g.callTool(runCtx, req, server, original)
		p.done <- toolOutcome{res, err}
	}()
	return p
}

// endPending forgets p and ends its server call if it still runs.
func (g *Gateway) endPending(p *pendingCall) {
	p.expiry.Stop()
	p.stop()
	g.pending.remove(p)
}

func newRequestState() string {
	return "sb-state-" + rand.Text()
}

// askClient sends a server's request to the caller c: straight to a
// session-era client, or through its next round to a stateless one.
func (g *Gateway) askClient(ctx context.Context, c caller, req mcp.InputRequest) (mcp.InputResponse, error) {
	if c.pending == nil {
		return nil, fmt.Errorf("internal: askClient without a pending call")
	}
	return c.pending.ask(ctx, req, g.pending.nextSeq())
}

// samplingResult turns a client's answer into what the server's request expects.
//
//lint:ignore SA1019 the gateway relays sampling between clients and servers that still use it (deprecated by SEP-2577, functional in its deprecation window)
func samplingResult(r mcp.InputResponse) (*mcp.CreateMessageResult, error) {
	switch r := r.(type) {
	//lint:ignore SA1019 the gateway relays sampling between clients and servers that still use it (deprecated by SEP-2577, functional in its deprecation window)
	case *mcp.CreateMessageResult:
		return r, nil
	//lint:ignore SA1019 the gateway relays sampling between clients and servers that still use it (deprecated by SEP-2577, functional in its deprecation window)
	case *mcp.CreateMessageWithToolsResult:
		if len(r.Content) != 1 {
			return nil, fmt.Errorf("the client answered sampling with %d contents; the server expects one", len(r.Content))
		}
		//lint:ignore SA1019 the gateway relays sampling between clients and servers that still use it (deprecated by SEP-2577, functional in its deprecation window)
		return &mcp.CreateMessageResult{Meta: r.Meta, Content: r.Content[0], Model: r.Model, Role: r.Role, StopReason: r.StopReason}, nil
	}
	return nil, fmt.Errorf("the client answered sampling with %T", r)
}
