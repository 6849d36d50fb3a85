package gateway

import (
	"maps"
	"slices"
	"strings"

	"github.com/switchboardhq/switchboard/app/tiers"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ProfileConfig is what the gateway needs to know of one profile: a named
// set of servers, and optionally of tools within them, served aggregated
// on /mcp/p/<Name> under the same names as on /mcp.
type ProfileConfig struct {
	Name string
	// Servers are the servers the profile offers. One the gateway does not
	// serve (not configured or not enabled) offers nothing until it does.
	Servers []string
	// Tools, when it has an entry for a server, limits that server's tools
	// to the ones listed (by the server's own names); a server without an
	// entry offers every visible tool.
	Tools map[string][]string
	// ToolSearch serves the profile in search mode: its endpoint lists
	// search_tools and call_tool only (see search.go).
	ToolSearch bool
	// MaxTier caps the tiers of the tools the profile offers ("" caps
	// nothing); see tiers.go.
	MaxTier tiers.Tier
	// AskBeforeDestructive makes a call of a destructive tool through the
	// profile's endpoint wait for the user's yes (see asks.go).
	AskBeforeDestructive bool
}

// An aggregate is one aggregated endpoint: /mcp, over every server, or a
// profile's /mcp/p/<name>, over the profile's set. Every aggregate takes
// its items from one assignment per name budget (see Gateway.assign and
// names.go), so an item has the same name on each for the same client.
type aggregate struct {
	// endpoint is "" for /mcp, "p/<name>" for a profile's (see aggregateFor).
	endpoint string
	// searching serves each view's search front in place of its front
	// (see search.go); under Gateway.mu.
	searching bool
	// set says what the endpoint offers; the zero set offers everything
	// (/mcp). It is replaced, never changed, under Gateway.mu.
	set serverSet
	// views are the endpoint's fronts by name budget: MaxNameLen's from
	// the start, another budget's from the first session of a client
	// with that budget (viewFor). Added under Gateway.aggMu and
	// Gateway.mu, read under either.
	views map[int]*view
}

// A view is an aggregated endpoint as the clients of one name budget see
// it: its two fronts, and what they registered.
type view struct {
	budget int
	front  *mcp.Server
	// search is the view's search front, served in place of front
	// while the aggregate is searching; see search.go.
	search *mcp.Server
	// state is what the fronts have registered (under Gateway.mu).
	state aggregateState
}

// full is the view of the full budget, MaxNameLen, which every aggregate
// has: its names are the ones the API, the index and the logs show.
func (a *aggregate) full() *view { return a.views[MaxNameLen] }

// view returns the view of budget, or the full one when a has none (a
// profile made after the budget's first session). g.mu or g.aggMu is held.
func (a *aggregate) view(budget int) *view {
	if v, ok := a.views[budget]; ok {
		return v
	}
	return a.full()
}

// viewOf returns the view front belongs to, or nil. g.mu is held.
func (a *aggregate) viewOf(front *mcp.Server) *view {
	for _, v := range a.views {
		if v.front == front || v.search == front {
			return v
		}
	}
	return nil
}

// budgets returns the budgets of a's views, in order. g.mu is held.
func (a *aggregate) budgets() []int { return slices.Sorted(maps.Keys(a.views)) }

// A serverSet says which servers, and which of their tools, an aggregate
// offers.
type serverSet struct {
	// servers is nil for every server.
	servers map[string]bool
	// tools limits some servers' tools, by their own names.
	tools map[string][]string
	// maxTier caps the tiers of the tools offered; "" caps nothing.
	maxTier tiers.Tier
	// askBeforeDestructive: see ProfileConfig.AskBeforeDestructive.
	askBeforeDestructive bool
}

func (s serverSet) shows(server string) bool { return s.servers == nil || s.servers[server] }

func (s serverSet) showsTool(server, tool string) bool {
	if !s.shows(server) {
		return false
	}
	only, ok := s.tools[server]
	return !ok || slices.Contains(only, tool)
}

func setOf(p ProfileConfig) serverSet {
	s := serverSet{servers: make(map[string]bool, len(p.Servers)), tools: map[string][]string{}, maxTier: p.MaxTier, askBeforeDestructive: p.AskBeforeDestructive}
	for _, name := range p.Servers {
		s.servers[name] = true
	}
	for server, tools := range p.Tools {
		s.tools[server] = slices.Clone(tools)
	}
	return s
}

// profilePrefix starts the endpoint name of a profile: serverInPath of
// /mcp/p/<name> is "p/<name>". A server name has no '/', so it never
// starts so.
const profilePrefix = "p/"

// aggregateFor returns the aggregate an endpoint name (see serverInPath)
// stands for: /mcp for "", a profile's for "p/<profile>", nil for a
// server's own endpoint or an unknown profile. g.mu is held.
func (g *Gateway) aggregateFor(endpoint string) *aggregate {
	if endpoint == "" {
		return g.all
	}
	if name, ok := strings.CutPrefix(endpoint, profilePrefix); ok {
		return g.profiles[name]
	}
	return nil
}

// isAggregated reports whether endpoint names an aggregated endpoint (/mcp
// or a profile's) rather than a server's own.
func isAggregated(endpoint string) bool {
	return endpoint == "" || strings.HasPrefix(endpoint, profilePrefix)
}

// SetProfiles makes the gateway serve exactly profiles on /mcp/p/<name>:
// a new profile gets its endpoint, a changed one offers its new set at
// once (its clients are told their lists changed), and the sessions of a
// removed one are closed.
func (g *Gateway) SetProfiles(profiles []ProfileConfig) {
	g.mu.Lock()
	want, removed := reconcile(g.profiles, profiles, func(p ProfileConfig) string { return p.Name })
	var added []string
	for name, p := range want {
		a, ok := g.profiles[name]
		if !ok {
			a = g.newAggregate(profilePrefix + name)
			g.profiles[name] = a
			added = append(added, name)
		}
		a.set = setOf(p)
		a.searching = p.ToolSearch
	}
	var closing []*mcp.Server
	for _, a := range removed {
		closing = append(closing, a.fronts()...)
	}
	g.mu.Unlock()
	for _, front := range closing {
		for ss := range front.Sessions() {
			_ = ss.Close()
		}
	}
	if len(added) > 0 {
		slices.Sort(added)
		g.log.Info("profiles served", "profiles", added)
	}
	g.rebuildAggregates()
}

// ToolCount returns how many tools an aggregated endpoint lists now: /mcp
// for profile "", else /mcp/p/<profile> (in search mode, its two), within
// the profile's maxTier (a token's cap is not counted); ok is false for a
// profile the gateway does not serve.
func (g *Gateway) ToolCount(profile string) (n int, ok bool) {
	return g.countTools(profile, false)
}

// ReachableToolCount returns how many tools a client reaches through an
// aggregated endpoint: those ToolCount counts, or in search mode the ones
// its search_tools and call_tool find and call (within the profile's
// maxTier). ok is false for a profile the gateway does not serve.
func (g *Gateway) ReachableToolCount(profile string) (n int, ok bool) {
	return g.countTools(profile, true)
}

func (g *Gateway) countTools(profile string, behindSearch bool) (n int, ok bool) {
	g.mu.Lock()
	endpoint := ""
	if profile != "" {
		endpoint = profilePrefix + profile
	}
	a := g.aggregateFor(endpoint)
	if a == nil {
		g.mu.Unlock()
		return 0, false
	}
	if a.searching && !behindSearch {
		g.mu.Unlock()
		return 2, true // search_tools and call_tool
	}
	max := a.set.maxTier
	if max == "" {
		n = len(a.full().state.tools)
		g.mu.Unlock()
		return n, true
	}
	tools := slices.Collect(maps.Values(a.full().state.tools))
	g.mu.Unlock()
	// tierOf takes g.mu: counted once it is released.
	for _, e := range tools {
		if tier, ok := g.tierOf(e.Server, e.Original); ok && !tier.Above(max) {
			n++
		}
	}
	return n, true
}

// profileFronts returns the fronts of the profiles (both of each), in
// name order. g.mu is held.
func (g *Gateway) profileFronts() []*mcp.Server {
	out := make([]*mcp.Server, 0, 2*len(g.profiles))
	for _, name := range slices.Sorted(maps.Keys(g.profiles)) {
		out = append(out, g.profiles[name].fronts()...)
	}
	return out
}
