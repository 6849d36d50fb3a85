package gateway

import (
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A front's list results (tools/list, prompts/list, resources/list,
// resources/templates/list) are the items it registered, the same
// pointers each time until they change, and marshaling them is most of
// what a session's setup costs once servers list real tools: with the
// 128 tools of the catalog's offline servers, 1.3 ms and 550 KB a
// tools/list for encoding/json to walk their schemas (maps), and as much
// again for eraResults to take the other era's keys out. So each front
// keeps the session-era bytes of its last few lists, keyed by what makes
// them: the method, the items (by identity), the cursor. Identity is
// enough because a registered item is never changed in place: the
// gateway registers copies (addTool, the prompt and resource
// registrations) and replaces them when a server's lists change; the
// go-sdk marshals them from every session's goroutine without a lock, so
// a change in place would be a data race already.

// listCacheSize is how many lists a front keeps: the plain view and a
// capped one (tierCaps) of tools, with room for the other kinds.
const listCacheSize = 4

// A listCache holds a front's recent list bytes, most recent first.
type listCache struct {
	mu      sync.Mutex
	entries []listEntry
}

// A listKey is what a list result's bytes depend on, but for its _meta,
// which a cached result never has (see shapedResult.MarshalJSON).
type listKey struct {
	method string
	items  []any // the items' pointers
	cursor string
}

type listEntry struct {
	key  listKey
	data []byte
}

func (k listKey) equal(o listKey) bool {
	return k.method == o.method && k.cursor == o.cursor && slices.Equal(k.items, o.items)
}

// listKeyOf is the key of res, a front's result of method, and whether it
// is a list result the cache takes.
func listKeyOf(method string, res mcp.Result) (listKey, bool) {
	switch r := res.(type) {
	case *mcp.ListToolsResult:
		return listKey{method, pointers(r.Tools), r.NextCursor}, true
	case *mcp.ListPromptsResult:
		return listKey{method, pointers(r.Prompts), r.NextCursor}, true
	case *mcp.ListResourcesResult:
		return listKey{method, pointers(r.Resources), r.NextCursor}, true
	case *mcp.ListResourceTemplatesResult:
		return listKey{method, pointers(r.ResourceTemplates), r.NextCursor}, true
	}
	return listKey{}, false
}

// pointers are items as values that compare by identity.
func pointers[T any](items []*T) []any {
	v := make([]any, len(items))
	for i, p := range items {
		v[i] = p
	}
	return v
}

// get returns the bytes kept for key, or nil.
func (c *listCache) get(key listKey) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, e := range c.entries {
		if e.key.equal(key) {
			if i > 0 { // to the front: the least recently used goes first
				copy(c.entries[1:i+1], c.entries[:i])
				c.entries[0] = e
			}
			return e.data
		}
	}
	return nil
}

// put keeps data, which no one changes afterwards, as the bytes of key.
func (c *listCache) put(key listKey, data []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.entries {
		if e.key.equal(key) {
			return // another session marshaled the same list meanwhile
		}
	}
	if len(c.entries) < listCacheSize {
		c.entries = append(c.entries, listEntry{})
	}
	copy(c.entries[1:], c.entries[:len(c.entries)-1])
	c.entries[0] = listEntry{key, data}
}
