// Aggregation: what each front registers, and /mcp, the aggregate of every
// server (tools and prompts prefixed, collisions renamed). Both the
// per-server fronts (backend.install) and /mcp (rebuildAggregate) change
// their registrations through one diff, diffRegistered, so a relist
// re-registers only what changed (each change notifies clients).

package gateway

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A registration is one item a front should offer: its "kind:name" key
// (kind tool, prompt, resource or template), the value whose JSON tells
// whether it changed, and how to register it.
type registration struct {
	key   string
	value any
	add   func()
}

// registeredDiff is what a front must change to offer a list of
// registrations.
type registeredDiff struct {
	registered map[string][]byte // what the front has afterwards, as JSON by key
	gone       []string          // keys to remove
	adds       []func()          // registrations new or changed, in the order wanted
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
		add()
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

// addTool registers t under name on s, calling original on server. The
// go-sdk panics on a tool without an object input schema; a server that
// lists one gets the tool left out and a warning instead.
func addTool(g *Gateway, s *mcp.Server, t *mcp.Tool, name, server string) {
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
	s.AddTool(&cp, g.toolHandler(server, t.Name))
}

// aggregateState is what /mcp has registered, and for which server.
type aggregateState struct {
	tools     map[string]exposed // aggregated name → owner
	prompts   map[string]exposed
	resources map[string]string // URI → server
	templates map[string]string // URI template → server

	registered map[string][]byte // as backend.registered
	collisions []Collision
}

func newAggregateState() aggregateState {
	return aggregateState{tools: map[string]exposed{}, prompts: map[string]exposed{},
		resources: map[string]string{}, templates: map[string]string{}, registered: map[string][]byte{}}
}

// rebuildAggregate recomputes /mcp from every server's features: tools and
// prompts prefixed (collisions resolved in sorted order), resources and
// templates under their own URIs (the first server in name order wins a
// duplicate).
func (g *Gateway) rebuildAggregate() {
	g.aggMu.Lock()
	defer g.aggMu.Unlock()
	g.mu.Lock()
	backends := slices.Collect(maps.Values(g.backends))
	g.mu.Unlock()
	slices.SortFunc(backends, func(a, b *backend) int { return strings.Compare(a.config().Name, b.config().Name) })

	toolNames, promptNames := map[string][]string{}, map[string][]string{}
	prefixes := map[string]string{}
	tools := map[string]map[string]*mcp.Tool{}
	prompts := map[string]map[string]*mcp.Prompt{}
	next := newAggregateState()
	var wantResources, wantTemplates []registration
	for _, b := range backends {
		cfg, f := b.visible()
		prefixes[cfg.Name] = cfg.prefix()
		tools[cfg.Name], prompts[cfg.Name] = map[string]*mcp.Tool{}, map[string]*mcp.Prompt{}
		for _, t := range f.tools {
			toolNames[cfg.Name] = append(toolNames[cfg.Name], t.Name)
			tools[cfg.Name][t.Name] = t
		}
		for _, p := range f.prompts {
			promptNames[cfg.Name] = append(promptNames[cfg.Name], p.Name)
			prompts[cfg.Name][p.Name] = p
		}
		for _, r := range f.resources {
			if claimFirst(next.resources, r.URI, cfg.Name) {
				add := func() { g.aggregate.AddResource(r, g.resourceHandler(cfg.Name)) }
				wantResources = append(wantResources, registration{"resource:" + r.URI, owned[*mcp.Resource]{r, cfg.Name}, add})
			}
		}
		for _, t := range f.templates {
			if claimFirst(next.templates, t.URITemplate, cfg.Name) {
				add := func() { g.aggregate.AddResourceTemplate(t, g.resourceHandler(cfg.Name)) }
				wantTemplates = append(wantTemplates, registration{"template:" + t.URITemplate, owned[*mcp.ResourceTemplate]{t, cfg.Name}, add})
			}
		}
	}
	exposedTools, toolCollisions := assignNames(toolNames, prefixes)
	exposedPrompts, promptCollisions := assignNames(promptNames, prefixes)
	next.collisions = append(toolCollisions, promptCollisions...)

	var want []registration
	for _, e := range exposedTools {
		next.tools[e.Name] = e
		t := tools[e.Server][e.Original]
		want = append(want, registration{"tool:" + e.Name, owned[*mcp.Tool]{t, e.Server},
			func() { addTool(g, g.aggregate, t, e.Name, e.Server) }})
	}
	for _, e := range exposedPrompts {
		next.prompts[e.Name] = e
		want = append(want, registration{"prompt:" + e.Name, owned[*mcp.Prompt]{prompts[e.Server][e.Original], e.Server}, func() {
			p := *prompts[e.Server][e.Original]
			p.Name = e.Name
			g.aggregate.AddPrompt(&p, g.promptHandler(e.Server, e.Original))
		}})
	}
	want = append(append(want, wantResources...), wantTemplates...)

	g.mu.Lock()
	old, oldCollisions := g.agg.registered, g.agg.collisions
	g.mu.Unlock()
	d := diffRegistered(old, want)
	for _, c := range next.collisions {
		if !slices.Contains(oldCollisions, c) {
			g.log.Warn("two servers offer items with the same name on /mcp; renamed the later one",
				"server", c.Server, "item", c.Item, "wanted", c.Wanted, "got", c.Got)
		}
	}
	next.registered = d.registered
	g.mu.Lock()
	g.agg = next
	g.mu.Unlock()
	d.apply(g.aggregate)
}

// owned is an item of /mcp with the server it goes to, as a registration's
// value: a change of either registers it again.
type owned[T any] struct {
	Item   T
	Server string
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
	return slices.Clone(g.agg.collisions)
}
