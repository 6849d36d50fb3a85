// The fronts: the mcp.Server behind each endpoint (/mcp and /mcp/<server>),
// its middlewares (waiting for first lists, the backends' instructions), and
// the handlers that route each request to a server: tools, prompts,
// resources, completion, and resource subscriptions (subscriptions.go).
// Each handler hands the call to forward (forward.go).

package gateway

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yosida95/uritemplate/v3"
)

// newFront makes the mcp.Server behind one endpoint: server "" is /mcp,
// "p/<name>" a profile's; budget is the name budget of the aggregated
// endpoint's view it serves (MaxNameLen for a server's own); search makes
// an aggregated endpoint's search front (see search.go).
func (g *Gateway) newFront(server string, budget int, search bool) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "switchboard", Title: "Switchboard", Version: g.opts.Version},
		&mcp.ServerOptions{
			Logger: g.sdkLog,
			// Every capability a backend may have is declared from the start:
			// servers are listed after a client may already have initialized,
			// and a client only lists what the capabilities promise. Lists of
			// a kind no server offers are empty.
			Capabilities: &mcp.ServerCapabilities{
				Tools:       &mcp.ToolCapabilities{ListChanged: true},
				Prompts:     &mcp.PromptCapabilities{ListChanged: true},
				Resources:   &mcp.ResourceCapabilities{ListChanged: true, Subscribe: true},
				Logging:     &mcp.LoggingCapabilities{}, //lint:ignore SA1019 the gateway relays logging between clients and servers that still use it (deprecated by SEP-2577, functional in its deprecation window)
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
	if search {
		// A call_tool becomes the call of its tool before the recorder
		// sees it, and reaches the call_tool handler innermost.
		s.AddReceivingMiddleware(g.cancelOnSessionEnd(), g.eraResults(), g.awaitLists(server), g.instructionsMiddleware(server), g.searchCalls(server, budget),
			g.recordMiddleware(server), g.heldTools(server, budget), g.tierCaps(server, budget), g.askFirst(server, budget), g.unlistedTools(server, budget), g.rawResults(), g.searchDispatch())
		return s
	}
	s.AddReceivingMiddleware(g.cancelOnSessionEnd(), g.eraResults(), g.awaitLists(server), g.instructionsMiddleware(server), g.recordMiddleware(server),
		g.heldTools(server, budget), g.tierCaps(server, budget), g.askFirst(server, budget), g.unlistedTools(server, budget), g.rawResults())
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
			a := g.aggregateFor(server)
			for name, b := range g.backends {
				if (a != nil && a.set.shows(name)) || name == server {
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
	if !isAggregated(server) {
		if b, ok := g.backend(server); ok {
			_, f := b.visible()
			return f.instructions
		}
		return ""
	}
	g.mu.Lock()
	a := g.aggregateFor(server)
	var names []string
	for name := range g.backends {
		if a != nil && a.set.shows(name) {
			names = append(names, name)
		}
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

// recordedAs makes the calls of a tool handler recorded under canonical,
// whatever name the client gave (a client with a short name budget has
// its own): a tool's calls are found under one name in the history.
func (g *Gateway) recordedAs(canonical string, h mcp.ToolHandler) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if rec := recordFrom(ctx); rec != nil {
			rec.call.Name = canonical
		}
		return h(ctx, req)
	}
}

// toolHandler forwards a tools/call to original on server. Failures of the
// server itself (down, crashed, timed out) come back as a tool error naming
// the server and the cause, so the model sees them; errors the server sends
// pass through unchanged.
func (g *Gateway) toolHandler(server, original string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if rec := recordFrom(ctx); rec != nil {
			rec.call.Server, rec.call.Tool = server, original
		}
		g.noteTier(recordFrom(ctx), server, original)
		if r := askRoundFrom(ctx); r != nil {
			return r, nil // the user is asked first (asks.go)
		}
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
	res, err := forwardRequest(ctx, g, req, server, req.Params.GetProgressToken(), params,
		viaBackend(g, "tools/call", (*mcp.ClientSession).CallTool, decodeToolResult))
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
		if rec := recordFrom(ctx); rec != nil {
			rec.call.Server, rec.call.Tool = server, original
		}
		params := &mcp.GetPromptParams{Name: original, Arguments: req.Params.Arguments, Meta: forwardMeta(req.Params.Meta)}
		return forwardRequest(ctx, g, req, server, req.Params.GetProgressToken(), params,
			viaBackend(g, "prompts/get", (*mcp.ClientSession).GetPrompt, decodePromptResult))
	}
}

func (g *Gateway) resourceHandler(server string) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		if rec := recordFrom(ctx); rec != nil {
			rec.call.Server, rec.call.Tool = server, req.Params.URI
		}
		params := &mcp.ReadResourceParams{URI: req.Params.URI, Meta: forwardMeta(req.Params.Meta)}
		res, err := forwardRequest(ctx, g, req, server, req.Params.GetProgressToken(), params,
			viaBackend(g, "resources/read", (*mcp.ClientSession).ReadResource, decodeResourceResult))
		if rc := rawCaptureFrom(ctx); rc != nil {
			rc.done(err == nil)
		}
		return res, err
	}
}

// forwardRequest forwards one request to server (see forward) with params,
// and returns the server's result.
func forwardRequest[P progressParams, R any](ctx context.Context, g *Gateway, req mcp.Request, server string, token any, params P,
	call func(*mcp.ClientSession, context.Context, P) (R, error)) (R, error) {
	var res R
	err := g.forward(ctx, req, server, token, params, func(ctx context.Context, cs *mcp.ClientSession) error {
		var err error
		res, err = call(cs, ctx, params)
		return err
	})
	return res, err
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
	if isAggregated(front) {
		server = ""
		g.mu.Lock()
		if a := g.aggregateFor(front); a != nil {
			switch ref.Type {
			// Prompts, resources and templates have the same names on
			// every view (only tool names depend on the budget).
			case "ref/prompt":
				if e, ok := a.full().state.prompts[ref.Name]; ok {
					server, ref.Name = e.Server, e.Original
				}
			case "ref/resource":
				server = a.full().state.templates[ref.URI]
				if server == "" {
					server = a.full().state.resources[ref.URI]
				}
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

// resourceOwner returns the server that offers uri on an aggregated
// endpoint (/mcp, or a profile's): the one that lists it, else the first in
// name order with a resource template that matches it, else the
// endpoint's only server when it has one; "" when none.
func (g *Gateway) resourceOwner(endpoint, uri string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	a := g.aggregateFor(endpoint)
	if a == nil {
		return ""
	}
	if server := a.full().state.resources[uri]; server != "" {
		return server
	}
	var owner string
	for tmpl, server := range a.full().state.templates {
		if owner != "" && server >= owner {
			continue
		}
		if t, err := uritemplate.New(tmpl); err == nil && t.Regexp().MatchString(uri) {
			owner = server
		}
	}
	if owner == "" {
		var shown []string
		for name := range g.backends {
			if a.set.shows(name) {
				shown = append(shown, name)
			}
		}
		if len(shown) == 1 {
			owner = shown[0]
		}
	}
	return owner
}
