// A server's own endpoint, /mcp/<server>, lists the server's tools under
// their own names; a client that puts a prefix naming its entry before
// them ("switchboard-<server>") gets views of its own with shorter names,
// as the aggregated endpoints do (names.go), so that the name it hands its
// model stays within MaxNameLen.

package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MinOwnNameBudget is the shortest name budget a server's own endpoint
// honours: a few characters of the name, "_" and its hash (see ownNames).
// A server's own names have no prefix, so it is below MinNameBudget:
// Claude Code's entry for a 27-character server leaves 18.
const MinOwnNameBudget = 12

// ownNameBudget is the name budget of the client of a request on server's
// own endpoint, within [MinOwnNameBudget, MaxNameLen].
func (g *Gateway) ownNameBudget(ctx context.Context, server string) int {
	if g.opts.NameBudget == nil {
		return MaxNameLen
	}
	return min(max(g.opts.NameBudget(ctx, server), MinOwnNameBudget), MaxNameLen)
}

// ownNames names a server's tools within budget: a name that fits is
// kept; a longer one keeps its start and gets "_" and a short hash of the
// whole name, and a clash (with a kept name or another shortened one) a
// numeric suffix, in sorted order, so the names depend only on the list.
func ownNames(names []string, budget int) []exposed {
	names = slices.Sorted(slices.Values(names))
	taken := make(map[string]bool, len(names))
	for _, n := range names {
		if len(n) <= budget {
			taken[n] = true
		}
	}
	out := make([]exposed, 0, len(names))
	for _, n := range names {
		got := n
		if len(n) > budget {
			sum := sha256.Sum256([]byte(n))
			tag := hex.EncodeToString(sum[:4])
			want := n[:max(budget-len(tag)-1, 0)] + "_" + tag
			got = want
			for i := 2; taken[got]; i++ {
				suffix := fmt.Sprintf("_%d", i)
				got = want[:min(len(want), budget-len(suffix))] + suffix
			}
			taken[got] = true
		}
		out = append(out, exposed{Name: got, Original: n, Canonical: n})
	}
	return out
}

// A serverView is a server's own endpoint as the clients of one name
// budget below MaxNameLen see it (MaxNameLen's is backend.front).
type serverView struct {
	budget int
	front  *mcp.Server
	// registered is as backend.registered; originals maps a tool's
	// name on front to the server's own (both under backend.mu).
	registered map[string][]byte
	originals  map[string]string
}

// frontFor returns the front of b's own endpoint for budget, making its
// view (registered with what b offers now) if it has none yet: the first
// session of a client with that budget opens on it.
func (b *backend) frontFor(budget int) *mcp.Server {
	if budget >= MaxNameLen {
		return b.front
	}
	b.mu.Lock()
	v := b.views[budget]
	b.mu.Unlock()
	if v != nil {
		return v.front
	}
	b.installMu.Lock()
	defer b.installMu.Unlock()
	b.mu.Lock()
	v = b.views[budget]
	b.mu.Unlock()
	if v != nil { // made while this call waited
		return v.front
	}
	cfg, f := b.visible()
	v = &serverView{budget: budget, front: b.g.newFront(cfg.Name, budget, false), registered: map[string][]byte{}}
	// Registered before it is seen: no session opens on a view that
	// lists nothing yet.
	b.installView(v, cfg, f)
	b.mu.Lock()
	b.views[budget] = v
	b.mu.Unlock()
	b.g.log.Info("serving tool names for a client's name budget", "endpoint", endpointOf("/mcp/"+cfg.Name), "budget", budget)
	return v.front
}

// installView registers what b offers on v's front, its tools under
// names within v's budget. b.installMu is held.
func (b *backend) installView(v *serverView, cfg ServerConfig, f features) {
	var own []string
	for _, t := range f.tools {
		own = append(own, t.Name)
	}
	names := make(map[string]string, len(own))
	originals := make(map[string]string, len(own))
	for _, e := range ownNames(own, v.budget) {
		names[e.Original], originals[e.Name] = e.Name, e.Original
	}
	want := b.registrations(cfg, f, names)
	b.mu.Lock()
	d := diffRegistered(v.registered, want)
	v.registered, v.originals = d.registered, originals
	b.mu.Unlock()
	d.apply(v.front)
}

// fronts returns the fronts of b's own endpoint: its own names' first,
// then its views' by budget.
func (b *backend) fronts() []*mcp.Server {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := []*mcp.Server{b.front}
	for _, budget := range slices.Sorted(maps.Keys(b.views)) {
		out = append(out, b.views[budget].front)
	}
	return out
}

// listedTool returns the server's own name of name, a tool front (one of
// b's fronts) lists, and whether front lists it. b.mu is held.
func (b *backend) listedTool(front *mcp.Server, name string) (original string, ok bool) {
	if front == b.front {
		_, ok = b.registered["tool:"+name]
		return name, ok
	}
	for _, v := range b.views {
		if v.front == front {
			original, ok = v.originals[name]
			return original, ok
		}
	}
	return "", false
}
