package gateway

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// NewClient makes the MCP client the supervisor uses toward server's
// processes (supervisor.Options.NewClient). It declares every client
// capability, since servers hide tools from clients that lack one, and
// sends what the server says back to the right client: progress to the
// caller, logging to every client session at its own level, list changes
// as a relist, resource updates to subscribers, and sampling, elicitation
// and roots requests to the client whose call is in flight (see
// callerIndex for the rule).
func (g *Gateway) NewClient(server string) *mcp.Client {
	return g.newClient(server, &mcp.Implementation{Name: "switchboard", Version: g.opts.Version})
}

// newClient is NewClient introducing itself as impl.
func (g *Gateway) newClient(server string, impl *mcp.Implementation) *mcp.Client {
	c := mcp.NewClient(impl, &mcp.ClientOptions{
		//lint:ignore SA1019 the gateway relays roots between clients and servers that still use it (deprecated by SEP-2577, functional in its deprecation window)
		Capabilities: &mcp.ClientCapabilities{RootsV2: &mcp.RootCapabilities{ListChanged: true}},
		//lint:ignore SA1019 the gateway relays sampling between clients and servers that still use it (deprecated by SEP-2577, functional in its deprecation window)
		CreateMessageHandler: func(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			//lint:ignore SA1019 the gateway relays sampling between clients and servers that still use it (deprecated by SEP-2577, functional in its deprecation window)
			return askCaller(g, ctx, req.Session, server, "sampling", func(c *mcp.ClientCapabilities) bool { return c.Sampling != nil },
				//lint:ignore SA1019 the gateway relays sampling between clients and servers that still use it (deprecated by SEP-2577, functional in its deprecation window)
				req.Params, samplingResult, (*mcp.ServerSession).CreateMessage)
		},
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return askCaller(g, ctx, req.Session, server, "elicitation", func(c *mcp.ClientCapabilities) bool { return c.Elicitation != nil },
				req.Params, answerAs[*mcp.ElicitResult]("elicitation"), (*mcp.ServerSession).Elicit)
		},
		ProgressNotificationHandler: func(ctx context.Context, req *mcp.ProgressNotificationClientRequest) {
			token, _ := req.Params.ProgressToken.(string)
			if v, ok := g.progress.Load(token); ok {
				g.deliverProgress(v.(*progressRoute), *req.Params)
			}
		},
		//lint:ignore SA1019 the gateway relays logging between clients and servers that still use it (deprecated by SEP-2577, functional in its deprecation window)
		LoggingMessageHandler: func(ctx context.Context, req *mcp.LoggingMessageRequest) {
			p := *req.Params
			if p.Logger == "" {
				p.Logger = server
			} else {
				p.Logger = server + "/" + p.Logger
			}
			for _, s := range g.frontsOf(server) {
				for ss := range s.Sessions() {
					//lint:ignore SA1019 the gateway relays logging between clients and servers that still use it (deprecated by SEP-2577, functional in its deprecation window)
					_ = ss.Log(ctx, &p)
				}
			}
		},
		ToolListChangedHandler:     func(_ context.Context, req *mcp.ToolListChangedRequest) { g.relist(server, req.Session) },
		PromptListChangedHandler:   func(_ context.Context, req *mcp.PromptListChangedRequest) { g.relist(server, req.Session) },
		ResourceListChangedHandler: func(_ context.Context, req *mcp.ResourceListChangedRequest) { g.relist(server, req.Session) },
		ResourceUpdatedHandler: func(ctx context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			for _, s := range g.frontsOf(server) {
				_ = s.ResourceUpdated(ctx, req.Params)
			}
		},
	})
	// roots/list has no handler option: the go-sdk client answers it from its
	// own root list. Intercept it to ask the caller's client instead.
	c.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "roots/list" {
				return next(ctx, method, req)
			}
			cs, _ := req.GetSession().(*mcp.ClientSession)
			//lint:ignore SA1019 the gateway relays roots between clients and servers that still use it (deprecated by SEP-2577, functional in its deprecation window); Roots (v1) is read as well since clients of older SDKs fill only it
			hasRoots := func(c *mcp.ClientCapabilities) bool { return c.RootsV2 != nil || c.Roots.ListChanged }
			if c, ok := g.callers.latest(cs); !ok || c.caps == nil || !hasRoots(c.caps) {
				// Outside of a call (server-filesystem asks at start), or
				// for a client without roots: the roots configured for the
				// server, or none; an error would be logged as a failure.
				return g.configuredRoots(server), nil
			}
			return askCaller(g, ctx, cs, server, "roots", hasRoots,
				//lint:ignore SA1019 the gateway relays roots between clients and servers that still use it (deprecated by SEP-2577, functional in its deprecation window)
				&mcp.ListRootsParams{}, answerAs[*mcp.ListRootsResult]("roots/list"), (*mcp.ServerSession).ListRoots)
		}
	})
	return c
}

// configuredRoots are the roots of server's config as a roots/list result.
//
//lint:ignore SA1019 the gateway relays roots between clients and servers that still use it (deprecated by SEP-2577, functional in its deprecation window)
func (g *Gateway) configuredRoots(server string) *mcp.ListRootsResult {
	//lint:ignore SA1019 the gateway relays roots between clients and servers that still use it (deprecated by SEP-2577, functional in its deprecation window)
	res := &mcp.ListRootsResult{Roots: []*mcp.Root{}}
	b, ok := g.backend(server)
	if !ok {
		return res
	}
	for _, r := range b.config().Roots {
		uri := r
		if !strings.HasPrefix(r, "file://") {
			uri = (&url.URL{Scheme: "file", Path: filepath.ToSlash(r)}).String()
			if !strings.HasPrefix(filepath.ToSlash(r), "/") { // C:/x on Windows
				uri = (&url.URL{Scheme: "file", Path: "/" + filepath.ToSlash(r)}).String()
			}
		}
		name := path.Base(strings.TrimSuffix(strings.TrimPrefix(uri, "file://"), "/"))
		//lint:ignore SA1019 the gateway relays roots between clients and servers that still use it (deprecated by SEP-2577, functional in its deprecation window)
		res.Roots = append(res.Roots, &mcp.Root{URI: uri, Name: name})
	}
	return res
}

// Prepare readies a new backend session (supervisor.Options.Prepare): a
// server sends log messages only once its client has set a level, so the
// gateway asks for all of them and passes each client session those at or
// above the level that client set.
func (g *Gateway) Prepare(ctx context.Context, server string, cs *mcp.ClientSession) error {
	//lint:ignore SA1019 the gateway relays logging between clients and servers that still use it (deprecated by SEP-2577, functional in its deprecation window)
	if caps := cs.InitializeResult().Capabilities; caps == nil || caps.Logging == nil {
		return nil
	}
	//lint:ignore SA1019 the gateway relays logging between clients and servers that still use it (deprecated by SEP-2577, functional in its deprecation window)
	return cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"})
}

// askCaller passes a server's request (sampling, elicitation, roots) to the
// client whose call is in flight on cs: sent straight to a session-era
// client, or through the input-required rounds of a stateless one (whose
// answer convert turns into the result the server expects).
func askCaller[P mcp.InputRequest, R any](g *Gateway, ctx context.Context, cs *mcp.ClientSession, server, what string,
	has func(*mcp.ClientCapabilities) bool, params P, convert func(mcp.InputResponse) (R, error),
	send func(*mcp.ServerSession, context.Context, P) (R, error)) (R, error) {
	c, ctx, done, err := g.callerFor(ctx, cs, server, what, has)
	if err != nil {
		var zero R
		return zero, err
	}
	defer done()
	if s := fastStreamFrom(c.ctx); s != nil {
		return askFast(ctx, s, c.caps, what, params, convert)
	}
	if c.pending == nil {
		return send(c.session, ctx, params)
	}
	r, err := g.askClient(ctx, c, params)
	if err != nil {
		var zero R
		return zero, err
	}
	return convert(r)
}

// answerAs converts a stateless client's answer to the type R the server's
// request expects.
func answerAs[R mcp.InputResponse](what string) func(mcp.InputResponse) (R, error) {
	return func(r mcp.InputResponse) (R, error) {
		if v, ok := r.(R); ok {
			return v, nil
		}
		var zero R
		return zero, fmt.Errorf("the client answered %s with %T", what, r)
	}
}

// callerFor finds the client to answer a server-to-client request, checks it
// can, and returns the context to send the request with: the client's own
// request's (so the go-sdk puts it on that request's response stream),
// cancelled too when the server gives up on its request (backendCtx).
func (g *Gateway) callerFor(backendCtx context.Context, cs *mcp.ClientSession, server, what string, has func(*mcp.ClientCapabilities) bool) (caller, context.Context, func(), error) {
	c, ok := g.callers.latest(cs)
	if !ok {
		return caller{}, nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
			Message: fmt.Sprintf("server %q asked for %s outside of a client's call; no client can answer it", server, what)}
	}
	if c.caps == nil || !has(c.caps) {
		return caller{}, nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
			Message: fmt.Sprintf("the calling client does not support %s", what)}
	}
	ctx, cancel := context.WithCancel(c.ctx)
	stop := context.AfterFunc(backendCtx, cancel)
	return c, ctx, func() { stop(); cancel() }, nil
}

// frontsOf returns the endpoints that show server: /mcp, /mcp/<server> and
// the profiles that offer it.
func (g *Gateway) frontsOf(server string) []*mcp.Server {
	g.mu.Lock()
	out := g.all.fronts()
	for _, name := range slices.Sorted(maps.Keys(g.profiles)) {
		if a := g.profiles[name]; a.set.shows(server) {
			out = append(out, a.fronts()...)
		}
	}
	g.mu.Unlock()
	if b, ok := g.backend(server); ok {
		out = append(out, b.fronts()...)
	}
	return out
}

// relist lists server's features again, from the process of cs, which
// announced that they changed.
func (g *Gateway) relist(server string, cs *mcp.ClientSession) {
	if b, ok := g.backend(server); ok {
		b.kickFrom(cs)
	}
}
