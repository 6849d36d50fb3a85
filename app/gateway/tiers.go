// Tiers: what each tool may do (read, write, destructive; app/tiers), and
// the caps on it. A profile's maxTier and a client token's cap the tools a
// request sees: the lower of the two applies. Caps are applied per
// request rather than in what the fronts register, because a token's cap
// differs between clients of the same front: tools/list answers leave out
// the tools above the cap, search_tools does not find them, and a call of
// one by name is refused with an error naming the tool, its tier and the
// cap (the fast path hands such a call to the go-sdk path, which refuses
// it here).

package gateway

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/switchboardhq/switchboard/app/tiers"
)

// toolTier is the tier of t, a tool of the server cfg configures: the
// user's override if cfg has one, else what its annotations say (no
// annotations: the spec's defaults, which make it destructive).
func toolTier(cfg ServerConfig, t *mcp.Tool) tiers.Tier {
	if tier, ok := cfg.Tiers[t.Name]; ok && tier.Valid() {
		return tier
	}
	if t.Annotations == nil {
		return tiers.Of(false, nil)
	}
	return tiers.Of(t.Annotations.ReadOnlyHint, t.Annotations.DestructiveHint)
}

// tierOf is the tier of server's tool original; ok is false when the
// server is unknown. A tool the server has not listed (an unlisted
// server's, see kept.go) has no annotations to go by: it is destructive,
// as the spec's defaults say, unless the user overrides it.
func (g *Gateway) tierOf(server, original string) (tier tiers.Tier, ok bool) {
	b, ok := g.backend(server)
	if !ok {
		return "", false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, t := range b.features.tools {
		if t.Name == original {
			return toolTier(b.cfg, t), true
		}
	}
	if tier, ok := b.cfg.Tiers[original]; ok && tier.Valid() {
		return tier, true
	}
	return tiers.Destructive, true
}

// capFor is the tier cap of a request to endpoint: the lower of its
// profile's maxTier (on /mcp/p/<profile>) and its token's. by says whose
// it is, for the refusal; max "" caps nothing.
func (g *Gateway) capFor(ctx context.Context, endpoint string) (max tiers.Tier, by string) {
	var token tiers.Tier
	if g.opts.ClientMaxTier != nil {
		token = g.opts.ClientMaxTier(ctx)
	}
	var profile tiers.Tier
	if isAggregated(endpoint) && endpoint != "" {
		g.mu.Lock()
		if a := g.aggregateFor(endpoint); a != nil {
			profile = a.set.maxTier
		}
		g.mu.Unlock()
	}
	switch max = tiers.Min(profile, token); {
	case max == "":
		return "", ""
	case max == profile:
		return max, "profile " + endpoint[len(profilePrefix):]
	default:
		return max, "this client's token"
	}
}

// toolAt finds the server and own name of name, a tool as endpoint's view
// of budget names it; ok is false for a name it does not know (search
// mode's own two tools among them). A name of an unlisted server is
// found too (kept.go).
func (g *Gateway) toolAt(endpoint string, budget int, name string) (server, original string, ok bool) {
	g.mu.Lock()
	a := g.aggregateFor(endpoint)
	if a != nil {
		e, found := a.view(budget).state.tools[name]
		g.mu.Unlock()
		if found {
			return e.Server, e.Original, true
		}
		return g.unlistedTool(endpoint, budget, name)
	}
	b := g.backends[endpoint]
	g.mu.Unlock()
	if b == nil {
		return "", "", false
	}
	b.mu.Lock()
	original, found := name, false
	if v := b.views[budget]; v != nil && budget != MaxNameLen {
		original, found = v.originals[name]
	} else {
		_, found = b.registered["tool:"+name]
	}
	b.mu.Unlock()
	if found {
		return endpoint, original, true
	}
	return g.unlistedTool(endpoint, budget, name)
}

// aboveCap is the refusal of a call of name when its tool is above max,
// the cap of by; nil when it is not.
func (g *Gateway) aboveCap(endpoint string, budget int, name string, max tiers.Tier, by string) (server, original string, tier tiers.Tier, err *jsonrpc.Error) {
	server, original, ok := g.toolAt(endpoint, budget, name)
	if !ok {
		return "", "", "", nil
	}
	tier, ok = g.tierOf(server, original)
	if !ok || !tier.Above(max) {
		return server, original, tier, nil
	}
	return server, original, tier, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
		Message: fmt.Sprintf("tool %q is refused: it is a %s tool, and %s is capped at %s tools", name, tier, by, capWords(max))}
}

// capWords says what a cap lets through.
func capWords(max tiers.Tier) string {
	if max == tiers.Write {
		return "read and write"
	}
	return string(max) // "read"; a destructive cap refuses nothing
}

// tierCaps applies the request's cap on endpoint's front of budget: its
// tools/list answers leave out the tools above it, and a tools/call of
// one is refused (recorded under its server, with its tier).
func (g *Gateway) tierCaps(endpoint string, budget int) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "tools/list" && method != "tools/call" {
				return next(ctx, method, req)
			}
			max, by := g.capFor(ctx, endpoint)
			if max == "" {
				return next(ctx, method, req)
			}
			if method == "tools/call" {
				cr, ok := req.(*mcp.CallToolRequest)
				if !ok || cr.Params == nil {
					return next(ctx, method, req)
				}
				if server, original, tier, err := g.aboveCap(endpoint, budget, cr.Params.Name, max, by); err != nil {
					if rec := recordFrom(ctx); rec != nil {
						rec.call.Server, rec.call.Tool, rec.call.Tier = server, original, string(tier)
					}
					return nil, err
				}
				return next(ctx, method, req)
			}
			res, err := next(ctx, method, req)
			lr, ok := res.(*mcp.ListToolsResult)
			if err != nil || !ok {
				return res, err
			}
			kept := slices.DeleteFunc(slices.Clone(lr.Tools), func(t *mcp.Tool) bool {
				server, original, ok := g.toolAt(endpoint, budget, t.Name)
				if !ok {
					return false // search mode's own tools
				}
				tier, ok := g.tierOf(server, original)
				return ok && tier.Above(max)
			})
			out := *lr
			out.Tools = kept
			return &out, nil
		}
	}
}

// CapsChanged tells the gateway that a client token's tier cap changed:
// every open session is told that its tool list changed (a capped client
// lists again, and sees what its new cap lets through). A change of a
// profile's maxTier or of a tier override (SetProfiles, Sync) tells the
// sessions it concerns by itself.
func (g *Gateway) CapsChanged() {
	g.capEpoch.Add(1)
	g.mu.Lock()
	backends := slices.Collect(maps.Values(g.backends))
	g.mu.Unlock()
	for _, b := range backends {
		b.install()
	}
	g.rebuildAggregates()
}

// noteTier records the tier of the tool a call goes to; rec may be nil.
func (g *Gateway) noteTier(rec *callRecord, server, original string) {
	if rec == nil {
		return
	}
	if tier, ok := g.tierOf(server, original); ok {
		rec.call.Tier = string(tier)
	}
}
