package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/app/record"
	"github.com/switchboardhq/switchboard/internal/mcpreq"
	"github.com/switchboardhq/switchboard/supervisor"
)

// A Recorder receives every call through the gateway, failures included.
// RecordCall must not block: history queues it.
type Recorder interface {
	RecordCall(record.Call)
}

// A CallWatcher is a Recorder that also wants to know of a call while it
// runs: CallStarted gets it once the server it goes to is known (its
// outcome, duration and response are not set yet), CallProgress the
// server's progress notifications for it (when its client asked for
// progress; at most one every progressWatchEvery), RecordCall when it
// ends. Neither may block.
type CallWatcher interface {
	CallStarted(record.Call)
	CallProgress(record.Call, CallProgress)
}

// CallProgress is one progress notification of a call in flight.
type CallProgress struct {
	Progress float64
	Total    float64 // 0 when the server does not know
	Message  string
}

// progressWatchEvery bounds how often a call's progress reaches the
// CallWatcher: a server may notify far more often than a page can show.
const progressWatchEvery = 100 * time.Millisecond

// A CallJournal notes a call when it starts and returns its id (0 if it
// could not), which the call carries to the Recorder. It must be quick:
// it is on every call's path.
type CallJournal interface {
	Begin(*record.Call) uint64
}

type recordKey struct{}

// callRecord travels in the context so forward can add what it learns.
type callRecord struct {
	call      record.Call
	announced bool // CallStarted was called
	// failure is the gateway's own error behind a tool error result (the
	// server was down, crashed, timed out), for the outcome.
	failure error
}

// routed notes the server a recorded call goes to, journals the call
// (once) now that what it is is known, and tells a CallWatcher, once, that
// the call is under way; rec may be nil.
func (g *Gateway) routed(rec *callRecord, server string) {
	if rec == nil {
		return
	}
	rec.call.Server = server
	if j := g.opts.Journal; j != nil && rec.call.Journal == 0 {
		rec.call.Journal = j.Begin(&rec.call)
	}
	if w, ok := g.opts.Recorder.(CallWatcher); ok && !rec.announced {
		rec.announced = true
		started := rec.call
		started.Arguments = nil // the live feed carries no arguments
		w.CallStarted(started)
	}
}

// progressWatch returns what passes a recorded call's progress on to a
// CallWatcher, or nil when there is none; it is made once the call is
// routed (see routed).
func (g *Gateway) progressWatch(rec *callRecord) func(mcp.ProgressNotificationParams) {
	w, ok := g.opts.Recorder.(CallWatcher)
	if !ok || rec == nil {
		return nil
	}
	started := rec.call
	started.Arguments = nil
	var last atomic.Int64 // unix nanos of the last notification passed on
	return func(p mcp.ProgressNotificationParams) {
		now := time.Now().UnixNano()
		prev := last.Load()
		final := p.Total > 0 && p.Progress >= p.Total
		if !final && now-prev < int64(progressWatchEvery) || !last.CompareAndSwap(prev, now) {
			return
		}
		w.CallProgress(started, CallProgress{Progress: p.Progress, Total: p.Total, Message: p.Message})
	}
}

func recordFrom(ctx context.Context) *callRecord {
	r, _ := ctx.Value(recordKey{}).(*callRecord)
	return r
}

// recordMiddleware times every call-like request on an endpoint and hands
// it to the Recorder, whatever its outcome.
func (g *Gateway) recordMiddleware(endpoint string) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if g.opts.Recorder == nil {
				return next(ctx, method, req)
			}
			switch method {
			case "tools/call", "prompts/get", "resources/read", "completion/complete":
			default:
				return next(ctx, method, req)
			}
			rec := &callRecord{call: record.Call{Start: time.Now(), Method: method, Endpoint: endpoint,
				ClientLabel: g.opts.ClientLabel(ctx)}}
			describeRequest(&rec.call, req)
			res, err := next(context.WithValue(ctx, recordKey{}, rec), method, req)
			c := &rec.call
			c.Duration = time.Since(c.Start)
			if c.Server == "" && !isAggregated(endpoint) {
				c.Server = endpoint // a call /mcp/<server> could not route is still that server's
			}
			if c.Tool == "" {
				g.nameUnrouted(c, endpoint)
			}
			c.Outcome = record.OutcomeOK
			if err != nil {
				c.Outcome, c.Error = classify(err), err.Error()
			} else if raw, ok := res.(*rawResult); ok {
				c.Response, c.ResponseSize = raw.data, len(raw.data) // plain by construction
			} else if res != nil {
				// marshalResult: what a result's own MarshalJSON returns is
				// compact already, and json.Marshal would walk it again.
				if data, merr := marshalResult(res); merr == nil {
					c.Response, c.ResponseSize = data, len(data)
				}
				if tr, ok := res.(*mcp.CallToolResult); ok && tr.IsError {
					c.Outcome = record.OutcomeToolError
					c.Error = toolErrorText(tr)
					if rec.failure != nil {
						c.Outcome = classify(rec.failure)
					}
				}
			}
			g.opts.Recorder.RecordCall(*c)
			return res, err
		}
	}
}

// nameUnrouted names the server and tool of a call that no handler of the
// gateway's took (the go-sdk answered it: an unknown tool or prompt, a
// completion without a ref), from the name the client used, and marks
// what was not known: on /mcp/<server>, that server's tool; on an
// aggregated endpoint (/mcp, a profile's), the server (or alias) the
// prefix names, which is known or not, and the name after it.
func (g *Gateway) nameUnrouted(c *record.Call, endpoint string) {
	if c.Method != "tools/call" && c.Method != "prompts/get" {
		c.Tool = c.Name // a resource's URI, a completion's ref: no server's name in them
		return
	}
	c.Tool = ownPart(endpoint, c.Name)
	if !isAggregated(endpoint) {
		c.Unknown = record.UnknownTool
		return
	}
	prefix, _, found := strings.Cut(c.Name, separator)
	if !found || prefix == "" {
		c.Unknown = record.UnknownServer // a name with no server in it
		return
	}
	if server := g.serverByPrefix(prefix); server != "" {
		c.Server, c.Unknown = server, record.UnknownTool
		return
	}
	c.Server, c.Unknown = prefix, record.UnknownServer
}

// ownPart is the part of name, as a client called an item on endpoint,
// that its server knows it by: after the prefix on an aggregated endpoint
// (server names and aliases never contain "__"), the whole name
// elsewhere.
func ownPart(endpoint, name string) string {
	if isAggregated(endpoint) {
		if prefix, rest, found := strings.Cut(name, separator); found && prefix != "" {
			return rest
		}
	}
	return name
}

// serverByPrefix is the configured server whose prefix on the aggregated
// endpoints (its alias, or its name) is prefix, or "".
func (g *Gateway) serverByPrefix(prefix string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	for name, b := range g.backends {
		if b.config().prefix() == prefix {
			return name
		}
	}
	return ""
}

func describeRequest(c *record.Call, req mcp.Request) {
	if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss != nil {
		c.Session = ss.ID()
	}
	c.ClientName, c.ClientVersion = mcpreq.ClientInfo(req)
	switch p := req.GetParams().(type) {
	case *mcp.CallToolParamsRaw:
		c.Name, c.Arguments = p.Name, p.Arguments
	case *mcp.GetPromptParams:
		c.Name = p.Name
		c.Arguments, _ = json.Marshal(p.Arguments)
	case *mcp.ReadResourceParams:
		c.Name = p.URI
	case *mcp.CompleteParams:
		if p.Ref != nil {
			c.Name = p.Ref.Name + p.Ref.URI
		}
		c.Arguments, _ = json.Marshal(p.Argument)
	}
}

// classify maps an error to an outcome.
func classify(err error) string {
	var se *supervisor.StartError
	var ee *supervisor.ExitError
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return record.OutcomeTimeout
	case errors.Is(err, context.Canceled):
		return record.OutcomeCancelled
	case errors.As(err, &se), errors.As(err, &ee), errors.Is(err, supervisor.ErrFailing),
		errors.Is(err, supervisor.ErrStopped), errors.Is(err, supervisor.ErrUnknownServer), errors.Is(err, supervisor.ErrClosed):
		return record.OutcomeUnavailable
	}
	if _, ok := errors.AsType[*jsonrpc.Error](err); ok {
		return record.OutcomeProtocol
	}
	return record.OutcomeUnavailable
}

func toolErrorText(r *mcp.CallToolResult) string {
	for _, c := range r.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			return t.Text
		}
	}
	return ""
}
