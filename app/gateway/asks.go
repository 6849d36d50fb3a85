// Asks: a call of a destructive tool (see tiers.go) on a server or a
// profile that asks before destructive calls waits for the user's yes.
// The gateway asks, in this order:
//
//  1. the client, by form elicitation, when it is a session-era client
//     that declared the elicitation capability (forms);
//  2. the client, through an input-required round (SEP-2322), when it is
//     a 2026-07-28 (stateless) client that declares elicitation in its
//     request: the call is answered with an input request and a
//     requestState of the gateway's own, and the client's retry with its
//     answer is the call;
//  3. the user, through the Options.Asker (the daemon's board of pending
//     asks, answered on the dashboard, from the tray or the CLI).
//
// Nobody answering within the ask timeout (SetAskTimeout) denies the
// call. A denied call is answered with a tool error naming the tool and
// who denied it; the decision is in the call's record either way. Calls
// that need asking never take the fast path (fastToolCall hands them to
// the go-sdk path, which runs this middleware).

package gateway

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/app/record"
	"github.com/switchboardhq/switchboard/app/tiers"
)

// DefaultAskTimeout is how long a call waits for the user's answer when
// Options.AskTimeout is 0.
const DefaultAskTimeout = 2 * time.Minute

// The bounds of the ask timeout: anything else is refused by the config.
const (
	MinAskTimeout = time.Second
	MaxAskTimeout = time.Hour
)

// A PendingAsk is a call waiting for the user's answer, as an Asker is
// given it.
type PendingAsk struct {
	Server   string // the tool's server
	Tool     string // the tool's own name on its server
	Endpoint string // "" for /mcp, "p/<profile>", or the server of /mcp/<server>
	Client   string // the token's label
	Tier     tiers.Tier
	// Arguments are the call's arguments as the client sent them: the
	// Asker redacts them before showing them.
	Arguments json.RawMessage
}

// An Asker puts calls before the user when their client cannot answer.
type Asker interface {
	// Ask waits for the user's answer on a, until ctx ends (its deadline
	// is the ask timeout). by says who answered (record.DecidedBy...);
	// when ctx ends first it returns ctx's error.
	Ask(ctx context.Context, a PendingAsk) (allowed bool, by string, err error)
}

// askState is the gateway's part of the asks: the timeout, and the
// input-required rounds it started (by their requestState).
type askState struct {
	mu      sync.Mutex
	timeout time.Duration
	rounds  map[string]*askRound
}

// An askRound is a stateless client's call that was answered with the
// gateway's input request; its retry must be the same call, of the same
// token, before the deadline.
type askRound struct {
	token, server, original string
	arguments               []byte // compacted
	input                   string // the input request's id
	deadline                time.Time
	expiry                  *time.Timer
}

func (a *askState) init(timeout time.Duration) {
	a.rounds = map[string]*askRound{}
	a.timeout = timeout
}

// SetAskTimeout changes how long calls wait for the user's answer (0:
// DefaultAskTimeout), for the asks that start from now on.
func (g *Gateway) SetAskTimeout(d time.Duration) {
	g.asks.mu.Lock()
	defer g.asks.mu.Unlock()
	g.asks.timeout = d
}

func (g *Gateway) askTimeout() time.Duration {
	g.asks.mu.Lock()
	defer g.asks.mu.Unlock()
	if g.asks.timeout <= 0 {
		return DefaultAskTimeout
	}
	return g.asks.timeout
}

// needsAsk reports whether a call of server's tool original through
// endpoint waits for the user's yes: the tool is destructive and the
// server, or the profile of endpoint, asks before destructive calls.
func (g *Gateway) needsAsk(endpoint, server, original string) bool {
	b, ok := g.backend(server)
	if !ok {
		return false
	}
	ask := b.config().AskBeforeDestructive
	if !ask && isAggregated(endpoint) && endpoint != "" {
		g.mu.Lock()
		if a := g.aggregateFor(endpoint); a != nil {
			ask = a.set.askBeforeDestructive
		}
		g.mu.Unlock()
	}
	if !ask {
		return false
	}
	tier, ok := g.tierOf(server, original)
	return ok && tier == tiers.Destructive
}

// askFirst makes the calls that need asking wait for the user's answer
// (see the top of this file).
func (g *Gateway) askFirst(endpoint string, budget int) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			cr, ok := req.(*mcp.CallToolRequest)
			if method != "tools/call" || !ok || cr.Params == nil {
				return next(ctx, method, req)
			}
			server, original, ok := g.toolAt(endpoint, budget, cr.Params.Name)
			if !ok || !g.needsAsk(endpoint, server, original) {
				return next(ctx, method, req)
			}
			rec := recordFrom(ctx)
			if rec != nil {
				rec.call.Server = server
				g.noteTier(rec, server, original)
			}
			ask := PendingAsk{Server: server, Tool: original, Endpoint: endpoint, Client: g.opts.ClientLabel(ctx),
				Tier: tiers.Destructive, Arguments: cr.Params.Arguments}
			var d record.Decision
			if cr.ProtocolVersion() >= statelessVersion {
				res, cont, decided, err := g.askRoundTrip(ctx, cr, ask)
				switch {
				case err != nil:
					return nil, err
				case res != nil:
					// Answered by the tool's handler, so that the go-sdk
					// marks it input_required as it marks mrtr.go's.
					return next(context.WithValue(ctx, askRoundKey{}, res), method, req)
				case cont == nil:
					// Another round's requestState (mrtr.go): the call it
					// continues was decided on when it started.
					return next(ctx, method, req)
				case decided == nil:
					d = g.askBoard(ctx, ask)
				default:
					d = *decided
					req = cont
				}
			} else {
				d = g.askSession(ctx, cr, ask)
			}
			if ctx.Err() != nil && d.By != record.DecidedByTimeout {
				return nil, context.Cause(ctx) // the client went away: cancelled
			}
			if rec != nil {
				rec.call.Decision = &d
			}
			if !d.Allowed {
				msg := fmt.Sprintf("the call of tool %q was denied: %s", cr.Params.Name, deniedBy(d.By))
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}, nil
			}
			return next(ctx, method, req)
		}
	}
}

// deniedBy says who denied a call.
func deniedBy(by string) string {
	switch by {
	case record.DecidedByTimeout:
		return "nobody allowed it in time (it is a destructive tool, and Switchboard asks before those)"
	case record.DecidedByElicitation, record.DecidedByInputRequired:
		return "the user declined it in the client"
	case record.DecidedByTray:
		return "the user denied it from Switchboard's tray menu"
	case record.DecidedByCLI:
		return "the user denied it with switchboard asks deny"
	default:
		return "the user denied it on Switchboard's " + by
	}
}

// askSession asks a session-era client by form elicitation when it can
// answer one, else the board.
func (g *Gateway) askSession(ctx context.Context, cr *mcp.CallToolRequest, ask PendingAsk) record.Decision {
	ss := cr.Session
	if ss == nil || !formElicitation(capabilitiesOf(cr)) {
		return g.askBoard(ctx, ask)
	}
	actx, cancel := context.WithTimeout(ctx, g.askTimeout())
	defer cancel()
	res, err := ss.Elicit(actx, askParams(ask))
	switch {
	case err == nil:
		return decision(record.DecidedByElicitation, elicitAllows(res))
	case actx.Err() != nil:
		return decision(record.DecidedByTimeout, false)
	}
	// The client could not answer after all (it failed the request):
	// the board, with the time that is left.
	g.log.Info("client failed to answer an ask; asking through Switchboard", "server", ask.Server, "tool", ask.Tool, "err", err)
	return g.askBoardUntil(ctx, actx, ask)
}

// formElicitation reports whether caps take form elicitation requests.
func formElicitation(caps *mcp.ClientCapabilities) bool {
	if caps == nil || caps.Elicitation == nil {
		return false
	}
	e := caps.Elicitation
	return e.Form != nil || e.URL == nil
}

// askParams is the form the client is asked to fill in: one yes/no.
func askParams(ask PendingAsk) *mcp.ElicitParams {
	return &mcp.ElicitParams{
		Mode: "form",
		Message: fmt.Sprintf("Allow the destructive tool %q of server %q to run? Switchboard asks before destructive calls on %s.",
			ask.Tool, ask.Server, askWhere(ask)),
		RequestedSchema: askSchema(),
	}
}

// askSchema is the form of askParams (a JSON schema: a flat object of
// primitives, as form elicitation requires).
func askSchema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"allow":{"type":"boolean","title":"Allow this call","default":true}}}`)
}

func askWhere(ask PendingAsk) string {
	if name, ok := cutProfile(ask.Endpoint); ok {
		return "profile " + name
	}
	return "this server"
}

func cutProfile(endpoint string) (string, bool) {
	if len(endpoint) > len(profilePrefix) && endpoint[:len(profilePrefix)] == profilePrefix {
		return endpoint[len(profilePrefix):], true
	}
	return "", false
}

// elicitAllows reports whether an answer to askParams allows the call:
// accepted, and "allow" not false.
func elicitAllows(res *mcp.ElicitResult) bool {
	if res == nil || res.Action != "accept" {
		return false
	}
	allow, ok := res.Content["allow"]
	if !ok {
		return true
	}
	b, isBool := allow.(bool)
	return isBool && b
}

func decision(by string, allowed bool) record.Decision {
	return record.Decision{By: by, Allowed: allowed, At: time.Now()}
}

// askBoard asks the Asker, within the ask timeout.
func (g *Gateway) askBoard(ctx context.Context, ask PendingAsk) record.Decision {
	actx, cancel := context.WithTimeout(ctx, g.askTimeout())
	defer cancel()
	return g.askBoardUntil(ctx, actx, ask)
}

// askBoardUntil asks the Asker until actx (a child of ctx) ends: its
// end by its deadline is the timeout's denial.
func (g *Gateway) askBoardUntil(ctx, actx context.Context, ask PendingAsk) record.Decision {
	if g.opts.Asker == nil {
		<-actx.Done() // nobody to ask: the timeout answers
		return decision(record.DecidedByTimeout, false)
	}
	allowed, by, err := g.opts.Asker.Ask(actx, ask)
	if err != nil {
		// The deadline, or the client went away (the caller returns
		// ctx's cause then).
		return decision(record.DecidedByTimeout, false)
	}
	return decision(by, allowed)
}

// askRoundTrip is the stateless era's ask. A call without the gateway's
// requestState from a client that declares elicitation is answered with
// the input request (res); its retry carries the answer, which decides
// (decided), and goes on as the call without the gateway's round (cont).
// A client that cannot answer gets cont = cr and no decision: the board
// decides. A retry with another round's requestState (or an expired one)
// gets nothing: the call goes on as it is (statelessToolCall answers it).
func (g *Gateway) askRoundTrip(ctx context.Context, cr *mcp.CallToolRequest, ask PendingAsk) (res *mcp.CallToolResult, cont mcp.Request, decided *record.Decision, err error) {
	if state := cr.Params.RequestState; state != "" {
		g.asks.mu.Lock()
		r := g.asks.rounds[state]
		if r != nil {
			delete(g.asks.rounds, state)
			r.expiry.Stop()
		}
		g.asks.mu.Unlock()
		if r == nil {
			return nil, nil, nil, nil
		}
		if r.token != g.opts.ClientToken(ctx) || r.server != ask.Server || r.original != ask.Tool || !bytes.Equal(r.arguments, compactJSON(cr.Params.Arguments)) {
			return nil, nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
				Message: "requestState does not belong to this call: call the tool again"}
		}
		var d record.Decision
		if time.Now().After(r.deadline) {
			d = decision(record.DecidedByTimeout, false)
		} else {
			answer, _ := cr.Params.InputResponses[r.input].(*mcp.ElicitResult)
			d = decision(record.DecidedByInputRequired, elicitAllows(answer))
		}
		p := *cr.Params
		p.RequestState, p.InputResponses = "", nil
		next := *cr
		next.Params = &p
		return nil, &next, &d, nil
	}
	if !formElicitation(capabilitiesOf(cr)) {
		return nil, cr, nil, nil
	}
	state, input := "sb-ask-"+rand.Text(), "ask-"+rand.Text()[:8]
	timeout := g.askTimeout()
	r := &askRound{token: g.opts.ClientToken(ctx), server: ask.Server, original: ask.Tool,
		arguments: compactJSON(cr.Params.Arguments), input: input, deadline: time.Now().Add(timeout)}
	// A round never answered is forgotten a while after its deadline (a
	// late retry is told it timed out until then).
	r.expiry = time.AfterFunc(timeout+inputWait, func() {
		g.asks.mu.Lock()
		defer g.asks.mu.Unlock()
		if g.asks.rounds[state] == r {
			delete(g.asks.rounds, state)
		}
	})
	g.asks.mu.Lock()
	g.asks.rounds[state] = r
	g.asks.mu.Unlock()
	// This round is recorded as the call it is (answered with an input
	// request); the retry's record has the decision.
	return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{input: askParams(ask)}, RequestState: state}, nil, nil, nil
}

// askRoundKey carries the input-required result of an ask round to the
// tool's handler (toolHandler), which answers it.
type askRoundKey struct{}

func askRoundFrom(ctx context.Context) *mcp.CallToolResult {
	r, _ := ctx.Value(askRoundKey{}).(*mcp.CallToolResult)
	return r
}

// compactJSON is raw without insignificant space ("" for none), so that
// a retry re-encoded by its client compares equal.
func compactJSON(raw json.RawMessage) []byte {
	var buf bytes.Buffer
	if len(bytes.TrimSpace(raw)) == 0 || json.Compact(&buf, raw) != nil {
		return bytes.TrimSpace(raw)
	}
	if buf.String() == "null" {
		return nil
	}
	return buf.Bytes()
}

// endAsks forgets the open rounds (at Close).
func (g *Gateway) endAsks() {
	g.asks.mu.Lock()
	defer g.asks.mu.Unlock()
	for state, r := range g.asks.rounds {
		r.expiry.Stop()
		delete(g.asks.rounds, state)
	}
}
