package gateway

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func tool(name string) *mcp.Tool {
	return &mcp.Tool{Name: name, Description: "does " + name,
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{"x": map[string]any{"type": "string"}}}}
}

// shapedList is what eraResults makes of a session-era tools/list result.
func shapedList(lists *listCache, tools ...*mcp.Tool) *shapedResult {
	res := &mcp.ListToolsResult{Tools: tools}
	r := newShapedResult(res, sessionEraDrop, false)
	r.lists, r.key = lists, mustKey(tools...)
	return r
}

func marshal(t *testing.T, r mcp.Result) []byte {
	t.Helper()
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// A list of the same items is answered with the bytes kept the first
// time, which are what shaping it anew gives; a list of other items (a
// tool replaced, even by an equal one) is shaped anew.
func TestListCacheKeepsAListUntilItsItemsChange(t *testing.T) {
	lists := &listCache{}
	a, b := tool("a"), tool("b")
	first, err := shapedList(lists, a, b).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	again, _ := shapedList(lists, a, b).MarshalJSON()
	if &again[0] != &first[0] {
		t.Error("the same list was marshaled again, not taken from the cache")
	}
	fresh, _ := shapedList(nil, a, b).shape()
	if string(first) != string(fresh) {
		t.Errorf("kept %s, shaping anew gives %s", first, fresh)
	}
	var shaped map[string]json.RawMessage
	if err := json.Unmarshal(first, &shaped); err != nil {
		t.Fatal(err)
	}
	for _, k := range sessionEraDrop {
		if _, ok := shaped[k]; ok {
			t.Errorf("the kept list carries %q: %s", k, first)
		}
	}

	b2 := tool("b") // equal, but another registration
	other, _ := shapedList(lists, a, b2).MarshalJSON()
	if &other[0] == &first[0] {
		t.Error("a list of another item was answered from the cache")
	}
	if got, _ := shapedList(lists, a, b).MarshalJSON(); &got[0] != &first[0] {
		t.Error("the first list is no longer kept beside the second")
	}
	if got := marshal(t, shapedList(lists, a)); string(got) == string(first) {
		t.Error("a shorter list got the longer one's bytes")
	}
}

// The key is the method, the items and the cursor.
func TestListKeys(t *testing.T) {
	a := tool("a")
	p := &mcp.Prompt{Name: "a"}
	tools := func(cursor string, items ...*mcp.Tool) listKey {
		k, _ := listKeyOf("tools/list", &mcp.ListToolsResult{Tools: items, NextCursor: cursor})
		return k
	}
	prompts, ok := listKeyOf("prompts/list", &mcp.ListPromptsResult{Prompts: []*mcp.Prompt{p}})
	if !ok {
		t.Fatal("a prompts/list result has no key")
	}
	for _, tc := range []struct {
		name  string
		x, y  listKey
		equal bool
	}{
		{"same items", tools("", a), tools("", a), true},
		{"another cursor", tools("", a), tools("c1", a), false},
		{"another item", tools("", a), tools("", tool("a")), false},
		{"one item more", tools("", a), tools("", a, a), false},
		{"another method", tools("", a), prompts, false},
	} {
		if got := tc.x.equal(tc.y); got != tc.equal {
			t.Errorf("%s: equal %v, want %v", tc.name, got, tc.equal)
		}
	}
	if _, ok := listKeyOf("tools/call", &mcp.CallToolResult{}); ok {
		t.Error("a tools/call result has a list key")
	}
}

// A result with a _meta (the go-sdk may set one after the handlers) is
// shaped every time, and not kept.
func TestListCacheLeavesResultsWithMeta(t *testing.T) {
	lists := &listCache{}
	a := tool("a")
	r := shapedList(lists, a)
	r.SetMeta(mcp.Meta{"k": "v"})
	if got := marshal(t, r); !strings.Contains(string(got), `"_meta":{"k":"v"}`) {
		t.Errorf("a result with _meta: %s", got)
	}
	if got := marshal(t, shapedList(lists, a)); strings.Contains(string(got), `_meta`) {
		t.Errorf("the _meta of another result was kept: %s", got)
	}
	if len(lists.entries) != 1 {
		t.Errorf("%d lists kept, want the one without _meta", len(lists.entries))
	}
}

// A front keeps its listCacheSize most recently used lists.
func TestListCacheKeepsTheMostRecentlyUsed(t *testing.T) {
	lists := &listCache{}
	var items []*mcp.Tool
	var kept [][]byte
	for i := range listCacheSize {
		items = append(items, tool(fmt.Sprint("t", i)))
		data, _ := shapedList(lists, items[i]).MarshalJSON()
		kept = append(kept, data)
	}
	// The first is used again; the second is now the least recent.
	if data, _ := shapedList(lists, items[0]).MarshalJSON(); &data[0] != &kept[0][0] {
		t.Fatal("the first list was not kept")
	}
	shapedList(lists, tool("newest")).MarshalJSON()
	if data, _ := shapedList(lists, items[0]).MarshalJSON(); &data[0] != &kept[0][0] {
		t.Error("the most recently used list was dropped")
	}
	if lists.get(mustKey(items[1])) != nil {
		t.Error("the least recently used list is still kept")
	}
	if len(lists.entries) != listCacheSize {
		t.Errorf("%d lists kept, want %d", len(lists.entries), listCacheSize)
	}
}

func mustKey(tools ...*mcp.Tool) listKey {
	k, _ := listKeyOf("tools/list", &mcp.ListToolsResult{Tools: tools})
	return k
}

// Sessions list at once (run with -race).
func TestListCacheConcurrentLists(t *testing.T) {
	lists := &listCache{}
	a, b := tool("a"), tool("b")
	want, _ := shapedList(nil, a, b).shape()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 50 {
				items := []*mcp.Tool{a, b}
				if (i+j)%3 == 0 {
					items = items[:1]
				}
				data, err := json.Marshal(shapedList(lists, items...))
				if err != nil {
					t.Error(err)
					return
				}
				if len(items) == 2 && string(data) != string(want) {
					t.Errorf("got %s, want %s", data, want)
					return
				}
			}
		})
	}
	wg.Wait()
}
