package gateway

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
)

// MaxNameLen is the longest tool or prompt name the aggregated endpoint
// hands out: Cursor and Claude reject names longer than 64 characters.
const MaxNameLen = 64

// separator joins a server's prefix and a tool's own name.
const separator = "__"

// prefixedName is prefix__name, shortened to MaxNameLen when too long by
// keeping the start and adding a short hash of the whole, so the result is
// stable across restarts and different for different long names.
func prefixedName(prefix, name string) string {
	full := prefix + separator + name
	if len(full) <= MaxNameLen {
		return full
	}
	sum := sha256.Sum256([]byte(full))
	tag := hex.EncodeToString(sum[:4])
	return full[:MaxNameLen-len(tag)-1] + "_" + tag
}

// An exposed name is what the aggregated endpoint calls an item of a server.
type exposed struct {
	Name     string // as clients see it
	Server   string
	Original string // as the server calls it
}

// Collision reports an item that could not keep its preferred name.
type Collision struct {
	Wanted string `json:"wanted"`
	Got    string `json:"got"`
	Server string `json:"server"`
	Item   string `json:"item"`
}

// assignNames gives every item of every server a unique aggregated name.
// Servers and items are taken in sorted order, so the same configuration
// always gives the same names: the first keeps prefix__name, a later one
// that would clash gets a numeric suffix. prefixes maps a server to its
// prefix (its alias or its name).
func assignNames(items map[string][]string, prefixes map[string]string) ([]exposed, []Collision) {
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
			want := prefixedName(prefixes[s], n)
			got := want
			for i := 2; taken[got]; i++ {
				suffix := fmt.Sprintf("_%d", i)
				got = want[:min(len(want), MaxNameLen-len(suffix))] + suffix
			}
			if got != want {
				collisions = append(collisions, Collision{Wanted: want, Got: got, Server: s, Item: n})
			}
			taken[got] = true
			out = append(out, exposed{Name: got, Server: s, Original: n})
		}
	}
	return out, collisions
}
