package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
)

// MaxNameLen is the longest tool or prompt name the aggregated endpoint
// hands out: Cursor and Claude reject names longer than 64 characters.
const MaxNameLen = 64

// MinNameBudget is the shortest name budget the gateway honours: below it
// a shortened name would be little more than its hash.
const MinNameBudget = 24

// A name budget is the longest aggregated tool name one client may be
// given: MaxNameLen, less what the client itself puts before a tool's name
// when it hands the name to its model. Claude Code names the tool
// srv__read_file of its entry "switchboard" mcp__switchboard__srv__read_file,
// so its sessions get names of at most 64 - 18 = 46 characters. The
// daemon knows the clients (Options.NameBudget); the gateway serves each
// budget from fronts of its own (see aggregate.views), with names computed
// from the same sorted configuration as every other budget's, so a
// session's names depend only on the configuration and its client.

// nameBudget is the name budget of the client of a request, within
// [MinNameBudget, MaxNameLen].
func (g *Gateway) nameBudget(ctx context.Context) int {
	if g.opts.NameBudget == nil {
		return MaxNameLen
	}
	return min(max(g.opts.NameBudget(ctx, ""), MinNameBudget), MaxNameLen)
}

// separator joins a server's prefix and a tool's own name.
const separator = "__"

// prefixedName is prefix__name, shortened to budget characters when too
// long by keeping the start and adding a short hash of the whole, so the
// result is stable across restarts and different for different long names.
func prefixedName(prefix, name string, budget int) string {
	full := prefix + separator + name
	if len(full) <= budget {
		return full
	}
	sum := sha256.Sum256([]byte(full))
	tag := hex.EncodeToString(sum[:4])
	return full[:budget-len(tag)-1] + "_" + tag
}

// An exposed name is what the aggregated endpoint calls an item of a server.
type exposed struct {
	Name     string // as clients see it
	Server   string
	Original string // as the server calls it
	// Canonical is the item's name within MaxNameLen: what the API, the
	// dashboard, the history and the clients of the full budget call it
	// (Name itself in the full budget's assignment).
	Canonical string
}

// key is the server and own name of the item.
func (e exposed) key() itemKey { return itemKey{e.Server, e.Original} }

// An itemKey names a server's item by its own name, whatever an endpoint
// calls it.
type itemKey struct{ server, original string }

// Collision reports an item that could not keep its preferred name.
type Collision struct {
	Wanted string `json:"wanted"`
	Got    string `json:"got"`
	Server string `json:"server"`
	Item   string `json:"item"`
}

// assignNames gives every item of every server a unique aggregated name of
// at most budget characters. Servers and items are taken in sorted order,
// so the same configuration always gives the same names: the first keeps
// prefix__name, a later one that would clash gets a numeric suffix.
// prefixes maps a server to its prefix (its alias or its name).
func assignNames(items map[string][]string, prefixes map[string]string, budget int) ([]exposed, []Collision) {
	servers := make([]string, 0, len(items))
	for s := range items {
		servers = append(servers, s)
	}
	slices.Sort(servers)
	taken := map[string]bool{}
	var out []exposed
	var collisions []Collision
	for _, s := range servers {
		names := slices.Clone(items[s])
		slices.Sort(names)
		for _, n := range names {
			want := prefixedName(prefixes[s], n, budget)
			got := want
			for i := 2; taken[got]; i++ {
				suffix := fmt.Sprintf("_%d", i)
				got = want[:min(len(want), budget-len(suffix))] + suffix
			}
			if got != want {
				collisions = append(collisions, Collision{Wanted: want, Got: got, Server: s, Item: n})
			}
			taken[got] = true
			out = append(out, exposed{Name: got, Server: s, Original: n, Canonical: got})
		}
	}
	return out, collisions
}
