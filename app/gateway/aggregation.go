// Aggregation: what each front registers, and the aggregated endpoints:
// /mcp, the aggregate of every server (tools and prompts prefixed,
// collisions renamed), and each profile's /mcp/p/<name>, the aggregate of
// its set under the same names (see profiles.go). The per-server fronts
// (backend.install) and the aggregates (rebuildAggregates) change their
// registrations through one diff, diffRegistered, so a relist re-registers
// only what changed (each change notifies clients).

package gateway

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/app/tiers"
)

// A registration is one item a front should offer: its "kind:name" key
// (kind tool, prompt, resource or template), the value whose JSON tells
// whether it changed, and how to register it on a front.
type registration struct {
	key   string
	value any
	add   func(front *mcp.Server)
}

// registeredDiff is what a front must change to offer a list of
// registrations.
type registeredDiff struct {
	registered map[string][]byte   // what the front has afterwards, as JSON by key
	gone       []string            // keys to remove
	adds       []func(*mcp.Server) // registrations new or changed, in the order wanted
}

// diffRegistered compares the registrations want with what a front has
// (registered, by key, as JSON).
func diffRegistered(registered map[string][]byte, want []registration) registeredDiff {
	d := registeredDiff{registered: make(map[string][]byte, len(want))}
	for _, r := range want {
		data, _ := json.Marshal(r.value)
		d.registered[r.key] = data
		if !bytes.Equal(registered[r.key], data) {
			d.adds = append(d.adds, r.add)
		}
	}
	for key := range registered {
		if _, ok := d.registered[key]; !ok {
			d.gone = append(d.gone, key)
		}
	}
	return d
}

// apply removes what is gone from s, then registers what is new or changed.
func (d registeredDiff) apply(s *mcp.Server) {
	removeRegistered(s, d.gone)
	for _, add := range d.adds {
		add(s)
	}
}

// removeRegistered removes "kind:name" keys from s.
func removeRegistered(s *mcp.Server, keys []string) {
	var tools, prompts, resources, templates []string
	for _, k := range keys {
		kind, name, _ := strings.Cut(k, ":")
		switch kind {
		case "tool":
			tools = append(tools, name)
		case "prompt":
			prompts = append(prompts, name)
		case "resource":
			resources = append(resources, name)
		case "template":
			templates = append(templates, name)
		}
	}
	if len(tools) > 0 {
		s.RemoveTools(tools...)
	}
	if len(prompts) > 0 {
		s.RemovePrompts(prompts...)
	}
	if len(resources) > 0 {
		s.RemoveResources(resources...)
	}
	if len(templates) > 0 {
		s.RemoveResourceTemplates(templates...)
	}
}

// addTool registers t under name on s, calling original on server; its
// calls are recorded under canonical (see exposed.Canonical). The go-sdk
// panics on a tool without an object input schema; a server that lists
// one gets the tool left out and a warning instead.
func addTool(g *Gateway, s *mcp.Server, t *mcp.Tool, name, canonical, server string) {
	cp := *t
	cp.Name = name
	if cp.InputSchema == nil {
		cp.InputSchema = map[string]any{"type": "object"}
	}
	if m, ok := cp.InputSchema.(map[string]any); !ok || m["type"] != "object" {
		g.log.Warn("server lists a tool whose input schema is not an object; leaving it out",
			"server", server, "tool", t.Name)
		return
	}
	s.AddTool(&cp, g.recordedAs(canonical, g.toolHandler(server, t.Name)))
}

// aggregateState is what an aggregated endpoint (/mcp, or a profile's) has
// registered, and for which server.
type aggregateState struct {
	tools     map[string]exposed // aggregated name → owner
	names     map[itemKey]string // and back: a tool's aggregated name
	prompts   map[string]exposed
	resources map[string]string // URI → server
	templates map[string]string // URI template → server

	registered map[string][]byte // as backend.registered
	// searchRegistered is what the search front has registered: the
	// same prompts, resources and templates, none of the tools (it
	// offers search_tools and call_tool instead).
	searchRegistered map[string][]byte
	collisions       []Collision
}

func newAggregateState() aggregateState {
	return aggregateState{tools: map[string]exposed{}, names: map[itemKey]string{}, prompts: map[string]exposed{},
		resources: map[string]string{}, templates: map[string]string{}, registered: map[string][]byte{},
		searchRegistered: map[string][]byte{}}
}

// An assignment is what the aggregated endpoints can offer to the clients
// of one name budget: every server's tools and prompts under their names
// on /mcp (prefixed, collisions resolved over every server in sorted
// order, so an item has the same name on every aggregated endpoint), and
// its resources and templates. Only tool names depend on the budget: a
// client hands its model tools, not prompts, under its own prefix.
type assignment struct {
	budget         int
	tools, prompts []exposed
	// toolNames and prefixes are what tools were named from, for
	// another budget's names (withBudget).
	toolNames map[string][]string
	prefixes  map[string]string
	toolOf    map[string]map[string]*mcp.Tool // server → original name → tool
	promptOf  map[string]map[string]*mcp.Prompt
	// resources and templates are each server's, servers in name order.
	resources  []owned[*mcp.Resource]
	templates  []owned[*mcp.ResourceTemplate]
	collisions []Collision
}

// assign computes the assignment of every server's visible features.
func (g *Gateway) assign() assignment {
	g.mu.Lock()
	backends := slices.Collect(maps.Values(g.backends))
	g.mu.Unlock()
	slices.SortFunc(backends, func(a, b *backend) int { return strings.Compare(a.config().Name, b.config().Name) })

	toolNames, promptNames := map[string][]string{}, map[string][]string{}
	prefixes := map[string]string{}
	asg := assignment{toolOf: map[string]map[string]*mcp.Tool{}, promptOf: map[string]map[string]*mcp.Prompt{}}
	for _, b := range backends {
		cfg, f := b.visible()
		prefixes[cfg.Name] = cfg.prefix()
		asg.toolOf[cfg.Name], asg.promptOf[cfg.Name] = map[string]*mcp.Tool{}, map[string]*mcp.Prompt{}
		for _, t := range f.tools {
			toolNames[cfg.Name] = append(toolNames[cfg.Name], t.Name)
			asg.toolOf[cfg.Name][t.Name] = t
		}
		for _, p := range f.prompts {
			promptNames[cfg.Name] = append(promptNames[cfg.Name], p.Name)
			asg.promptOf[cfg.Name][p.Name] = p
		}
		for _, r := range f.resources {
			asg.resources = append(asg.resources, owned[*mcp.Resource]{r, cfg.Name})
		}
		for _, t := range f.templates {
			asg.templates = append(asg.templates, owned[*mcp.ResourceTemplate]{t, cfg.Name})
		}
	}
	var toolCollisions, promptCollisions []Collision
	asg.budget, asg.toolNames, asg.prefixes = MaxNameLen, toolNames, prefixes
	asg.tools, toolCollisions = assignNames(toolNames, prefixes, MaxNameLen)
	asg.prompts, promptCollisions = assignNames(promptNames, prefixes, MaxNameLen)
	asg.collisions = append(toolCollisions, promptCollisions...)
	return asg
}

// withBudget returns asg with its tools named within budget, each with
// its full budget's name as Canonical. asg is the full budget's. The
// collisions stay the full budget's: they are what the API and the logs
// tell of.
func (asg assignment) withBudget(budget int) assignment {
	if budget == asg.budget {
		return asg
	}
	canonical := make(map[itemKey]string, len(asg.tools))
	for _, e := range asg.tools {
		canonical[e.key()] = e.Name
	}
	asg.budget = budget
	asg.tools, _ = assignNames(asg.toolNames, asg.prefixes, budget)
	for i, e := range asg.tools {
		asg.tools[i].Canonical = canonical[e.key()]
	}
	return asg
}

// rebuildAggregates recomputes every aggregated endpoint, /mcp and the
// profiles', from every server's features.
func (g *Gateway) rebuildAggregates() {
	g.aggMu.Lock()
	defer g.aggMu.Unlock()
	asg := g.assign()
	g.indexTools(asg.tools, asg.toolOf)
	g.mu.Lock()
	aggs := []*aggregate{g.all}
	for _, name := range slices.Sorted(maps.Keys(g.profiles)) {
		aggs = append(aggs, g.profiles[name])
	}
	var views [][]*view
	for _, a := range aggs {
		var vs []*view
		for _, budget := range a.budgets() {
			vs = append(vs, a.views[budget])
		}
		views = append(views, vs)
	}
	oldCollisions := g.all.full().state.collisions
	g.mu.Unlock()
	for _, c := range asg.collisions {
		if !slices.Contains(oldCollisions, c) {
			g.log.Warn("two servers offer items with the same name on /mcp; renamed the later one",
				"server", c.Server, "item", c.Item, "wanted", c.Wanted, "got", c.Got)
		}
	}
	byBudget := map[int]assignment{MaxNameLen: asg}
	for i, a := range aggs {
		for _, v := range views[i] {
			if _, ok := byBudget[v.budget]; !ok {
				byBudget[v.budget] = asg.withBudget(v.budget)
			}
			g.rebuild(a, v, byBudget[v.budget])
		}
	}
}

// viewFor returns a's view of budget, making it (its fronts registered
// with what a offers now) if a has none yet: the first session of a
// client with that budget opens on it.
func (g *Gateway) viewFor(a *aggregate, budget int) *view {
	g.mu.Lock()
	v := a.views[budget]
	g.mu.Unlock()
	if v != nil {
		return v
	}
	g.aggMu.Lock()
	defer g.aggMu.Unlock()
	if v = a.views[budget]; v != nil { // made while this call waited
		return v
	}
	// Registered before it is seen: no session opens on a view that
	// lists nothing yet. A rebuild waits for aggMu.
	v = g.newView(a.endpoint, budget)
	g.rebuild(a, v, g.assign().withBudget(budget))
	g.mu.Lock()
	a.views[budget] = v
	g.mu.Unlock()
	g.log.Info("serving tool names for a client's name budget", "endpoint", endpointOf("/mcp/"+a.endpoint), "budget", budget)
	return v
}

// rebuild makes a's view v offer what a's set lets through of asg, which
// is of v's budget: tools and prompts under their /mcp names, resources
// and templates under their own URIs (the first of a's servers in name
// order wins a duplicate). Its search front offers the same prompts,
// resources and templates: search mode changes the tool list only.
// g.aggMu is held.
func (g *Gateway) rebuild(a *aggregate, v *view, asg assignment) {
	g.mu.Lock()
	set, old, oldSearch := a.set, v.state.registered, v.state.searchRegistered
	g.mu.Unlock()

	next := newAggregateState()
	next.collisions = asg.collisions
	var want []registration
	for _, e := range asg.tools {
		if !set.showsTool(e.Server, e.Original) {
			continue
		}
		next.tools[e.Name] = e
		next.names[e.key()] = e.Name
		t := asg.toolOf[e.Server][e.Original]
		tier, _ := g.tierOf(e.Server, e.Original)
		want = append(want, registration{"tool:" + e.Name, ownedTool{t, e.Server, e.Canonical, capped{tier, set.maxTier, g.capEpoch.Load()}},
			func(s *mcp.Server) { addTool(g, s, t, e.Name, e.Canonical, e.Server) }})
	}
	for _, e := range asg.prompts {
		if !set.shows(e.Server) {
			continue
		}
		next.prompts[e.Name] = e
		want = append(want, registration{"prompt:" + e.Name, owned[*mcp.Prompt]{asg.promptOf[e.Server][e.Original], e.Server}, func(s *mcp.Server) {
			p := *asg.promptOf[e.Server][e.Original]
			p.Name = e.Name
			s.AddPrompt(&p, g.promptHandler(e.Server, e.Original))
		}})
	}
	for _, r := range asg.resources {
		if set.shows(r.Server) && claimFirst(next.resources, r.Item.URI, r.Server) {
			want = append(want, registration{"resource:" + r.Item.URI, r,
				func(s *mcp.Server) { s.AddResource(r.Item, g.resourceHandler(r.Server)) }})
		}
	}
	for _, t := range asg.templates {
		if set.shows(t.Server) && claimFirst(next.templates, t.Item.URITemplate, t.Server) {
			want = append(want, registration{"template:" + t.Item.URITemplate, t,
				func(s *mcp.Server) { s.AddResourceTemplate(t.Item, g.resourceHandler(t.Server)) }})
		}
	}

	var searchWant []registration
	for _, r := range want {
		if !strings.HasPrefix(r.key, "tool:") {
			searchWant = append(searchWant, r)
		}
	}
	d, sd := diffRegistered(old, want), diffRegistered(oldSearch, searchWant)
	next.registered, next.searchRegistered = d.registered, sd.registered
	g.mu.Lock()
	v.state = next
	g.mu.Unlock()
	d.apply(v.front)
	sd.apply(v.search)
}

// owned is an item of an aggregated endpoint with the server it goes to,
// as a registration's value: a change of either registers it again.
type owned[T any] struct {
	Item   T
	Server string
}

// ownedTool is an aggregated endpoint's tool as a registration's value:
// a change of its server or of the name its calls are recorded under
// registers it again.
type ownedTool struct {
	Item      *mcp.Tool
	Server    string
	Canonical string
	capped
}

// capped is what of a tool's registration changes what a capped client is
// listed without changing the tool: its tier, the aggregate's maxTier,
// and the gateway's caps epoch (a token's cap changed, see CapsChanged).
// A change of any re-registers the tool, which tells the fronts' sessions
// that their tool lists changed.
type capped struct {
	Tier  tiers.Tier `json:"tier,omitempty"`
	Cap   tiers.Tier `json:"cap,omitempty"`
	Epoch uint64     `json:"epoch,omitempty"`
}

// claimFirst makes server the owner of uri in owners unless a server
// earlier in name order has it, and reports whether it did.
func claimFirst(owners map[string]string, uri, server string) bool {
	if _, dup := owners[uri]; dup {
		return false
	}
	owners[uri] = server
	return true
}

// Collisions lists the items renamed on /mcp because of a name clash.
func (g *Gateway) Collisions() []Collision {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.all.full().state.collisions)
}
