// Holds: tools a server lists that clients must not see yet, because they
// are new or changed since the user approved the server's tools (a "rug
// pull": a server that changes what a tool says to the model, or takes,
// after it was trusted). The gateway does not judge; a ToolReviewer
// (app/approvals' Policy, in the daemon) does, each time a server's tools
// become known: listed, or read back from the kept lists. A held tool is
// registered on no front (not /mcp/<server>, not /mcp, not a profile's
// /mcp/p/<profile>), and a call naming it is refused with the reviewer's
// message, which names the change. A reviewer that is an ItemReviewer
// holds prompts and resource templates the same way (not registered;
// a prompts/get of a held prompt, and a resources/read of a URI only a
// held template matches, are refused with the reviewer's message).

package gateway

import (
	"context"
	"maps"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yosida95/uritemplate/v3"
)

// A ToolReviewer decides which of a server's tools are held from clients.
type ToolReviewer interface {
	// Review is given every list of server's tools as it becomes known,
	// and whether the server's new and changed tools are held (false for
	// a server the user trusts: ServerConfig.TrustTools). It returns the
	// tools to hold, by name, each with the error a call of it gets. It
	// must not call back into the gateway.
	Review(server string, tools []*mcp.Tool, hold bool) map[string]string
}

// An ItemReviewer is a ToolReviewer that holds a server's prompts and
// resource templates as well: new or changed ones are registered on no
// front until approved.
type ItemReviewer interface {
	// ReviewItems is Review of server's prompts and resource templates,
	// after Review of its tools; it returns the prompts (by name) and
	// templates (by URI template) to hold.
	ReviewItems(server string, prompts []*mcp.Prompt, templates []*mcp.ResourceTemplate, hold bool) (heldPrompts, heldTemplates map[string]string)
}

// reviewAll asks the reviewer about every kind of f (under reviewMu).
func (g *Gateway) reviewAll(cfg ServerConfig, f features) (tools, prompts, templates map[string]string) {
	r := g.opts.Reviewer
	tools = r.Review(cfg.Name, f.tools, !cfg.TrustTools)
	if ir, ok := r.(ItemReviewer); ok {
		prompts, templates = ir.ReviewItems(cfg.Name, f.prompts, f.templates, !cfg.TrustTools)
	}
	return tools, prompts, templates
}

// review asks the reviewer which of the server's known tools to hold and
// keeps the answer; the caller registers the tools again (install,
// rebuildAggregate). Reviews of one server run one at a time (with
// publish), so that an older answer never replaces a newer one.
func (b *backend) review() {
	if b.g.opts.Reviewer == nil {
		return
	}
	b.reviewMu.Lock()
	defer b.reviewMu.Unlock()
	b.mu.Lock()
	cfg, f := b.cfg, b.features
	b.mu.Unlock()
	held, prompts, templates := b.g.reviewAll(cfg, f)
	b.mu.Lock()
	b.held, b.heldPrompts, b.heldTemplates, b.reviewed = held, prompts, templates, true
	b.mu.Unlock()
}

// publish makes f the server's features together with the reviewer's
// answer on its tools, so that nothing ever sees the new tools with the old
// answer; it returns the kept-lists file as it was.
func (b *backend) publish(f features) (kept []byte) {
	b.reviewMu.Lock()
	defer b.reviewMu.Unlock()
	var held, prompts, templates map[string]string
	if b.g.opts.Reviewer != nil {
		held, prompts, templates = b.g.reviewAll(b.config(), f)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.features = f
	b.held, b.heldPrompts, b.heldTemplates, b.reviewed = held, prompts, templates, true
	return b.kept
}

// shown reports whether a tool of the server may be shown to clients (under
// b.mu): not held, and not before the reviewer has seen the server's tools.
func (b *backend) shown(tool string) bool {
	if b.g.opts.Reviewer == nil {
		return true
	}
	_, held := b.held[tool]
	return b.reviewed && !held
}

// shownItem reports whether a prompt or template (key in held) may be
// shown, as shown does for a tool (under b.mu).
func (b *backend) shownItem(held map[string]string, key string) bool {
	_, h := held[key]
	return b.reviewed && !h
}

// heldMessage is the error of a call of tool, or "" when it is not held.
func (b *backend) heldMessage(tool string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.held[tool]
}

// Recheck asks the reviewer again about server's known tools and
// registers them accordingly, without listing the server: after the user
// approved some of them.
func (g *Gateway) Recheck(server string) {
	b, ok := g.backend(server)
	if !ok || !b.listed.Load() {
		return
	}
	b.review()
	b.install()
	g.rebuildAggregates()
}

// heldTools refuses a tools/call of a held tool (and a prompts/get of a
// held prompt) with the reviewer's message, as an invalid-params error (what the spec answers for a tool
// the server does not offer). The go-sdk would otherwise answer a bare
// "unknown tool".
func (g *Gateway) heldTools(endpoint string, budget int) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if g.opts.Reviewer == nil {
				return next(ctx, method, req)
			}
			if pr, ok := req.(*mcp.GetPromptRequest); ok && method == "prompts/get" && pr.Params != nil {
				if server, msg := g.heldPrompt(endpoint, pr.Params.Name); msg != "" {
					if rec := recordFrom(ctx); rec != nil {
						rec.call.Server, rec.call.Tool = server, ownPart(endpoint, pr.Params.Name)
					}
					return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: msg}
				}
			}
			if rr, ok := req.(*mcp.ReadResourceRequest); ok && method == "resources/read" && rr.Params != nil {
				if server, msg := g.heldTemplate(endpoint, rr.Params.URI); msg != "" {
					if rec := recordFrom(ctx); rec != nil {
						rec.call.Server = server
					}
					return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: msg}
				}
			}
			if method != "tools/call" {
				return next(ctx, method, req)
			}
			cr, ok := req.(*mcp.CallToolRequest)
			if !ok || cr.Params == nil {
				return next(ctx, method, req)
			}
			if server, tool, msg := g.heldTool(endpoint, budget, cr.Params.Name); msg != "" {
				if rec := recordFrom(ctx); rec != nil {
					rec.call.Server, rec.call.Tool = server, tool // the refusal is in the server's history
				}
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: msg}
			}
			return next(ctx, method, req)
		}
	}
}

// heldTool is the server and message of name, a tool endpoint does not
// list because it is held; msg is "" when it is not. On an aggregated
// endpoint (/mcp, a profile's) name is prefixed (as its view of budget
// names tools), and a tool the profile does not offer anyway is not
// "held" there.
func (g *Gateway) heldTool(endpoint string, budget int, name string) (server, tool, msg string) {
	g.mu.Lock()
	var candidates []*backend
	var tools []string
	if a := g.aggregateFor(endpoint); a == nil {
		if b := g.backends[endpoint]; b != nil {
			candidates, tools = append(candidates, b), append(tools, name)
		}
	} else if _, shown := a.view(budget).state.tools[name]; !shown {
		for n, b := range g.backends {
			if tool, found := strings.CutPrefix(name, b.config().prefix()+separator); found && a.set.showsTool(n, tool) {
				candidates, tools = append(candidates, b), append(tools, tool)
			}
		}
	}
	g.mu.Unlock()
	for i, b := range candidates {
		if msg := b.heldMessage(tools[i]); msg != "" {
			return b.config().Name, tools[i], msg
		}
	}
	return "", "", ""
}

// heldPrompt is the server and message of name, a prompt endpoint does not
// list because it is held; msg is "" when it is not. On an aggregated
// endpoint name is prefixed as the aggregate names prompts.
func (g *Gateway) heldPrompt(endpoint, name string) (server, msg string) {
	g.mu.Lock()
	var candidates []*backend
	var prompts []string
	if a := g.aggregateFor(endpoint); a == nil {
		if b := g.backends[endpoint]; b != nil {
			candidates, prompts = append(candidates, b), append(prompts, name)
		}
	} else if _, shown := a.full().state.prompts[name]; !shown {
		for n, b := range g.backends {
			if p, found := strings.CutPrefix(name, b.config().prefix()+separator); found && a.set.shows(n) {
				candidates, prompts = append(candidates, b), append(prompts, p)
			}
		}
	}
	g.mu.Unlock()
	for i, b := range candidates {
		b.mu.Lock()
		msg := b.heldPrompts[prompts[i]]
		b.mu.Unlock()
		if msg != "" {
			return b.config().Name, msg
		}
	}
	return "", ""
}

// heldTemplate is the server and message of a held resource template that
// matches uri, a URI endpoint serves through no listed resource and no
// template it shows; msg is "" when there is none. (Without this, a read
// of such a URI is "not found", or on an aggregate of one server is
// forwarded to it, template held or not.)
func (g *Gateway) heldTemplate(endpoint, uri string) (server, msg string) {
	g.mu.Lock()
	var candidates []*backend
	a := g.aggregateFor(endpoint)
	if a == nil {
		if b := g.backends[endpoint]; b != nil {
			candidates = append(candidates, b)
		}
	} else {
		state := a.full().state
		if state.resources[uri] != "" {
			g.mu.Unlock()
			return "", ""
		}
		for tmpl := range state.templates {
			if templateMatches(tmpl, uri) {
				g.mu.Unlock()
				return "", "" // a template the endpoint shows serves it
			}
		}
		for _, n := range slices.Sorted(maps.Keys(g.backends)) {
			if a.set.shows(n) {
				candidates = append(candidates, g.backends[n])
			}
		}
	}
	g.mu.Unlock()
	for _, b := range candidates {
		b.mu.Lock()
		if a == nil {
			// The server's own endpoint: what it registers serves it.
			if _, ok := b.registered["resource:"+uri]; ok {
				b.mu.Unlock()
				return "", ""
			}
			for key := range b.registered {
				if tmpl, ok := strings.CutPrefix(key, "template:"); ok && templateMatches(tmpl, uri) {
					b.mu.Unlock()
					return "", ""
				}
			}
		}
		for _, tmpl := range slices.Sorted(maps.Keys(b.heldTemplates)) {
			if templateMatches(tmpl, uri) {
				server, msg := b.cfg.Name, b.heldTemplates[tmpl]
				b.mu.Unlock()
				return server, msg
			}
		}
		b.mu.Unlock()
	}
	return "", ""
}

// templateMatches reports whether uri is one of tmpl's URIs.
func templateMatches(tmpl, uri string) bool {
	t, err := uritemplate.New(tmpl)
	return err == nil && t.Regexp().MatchString(uri)
}
