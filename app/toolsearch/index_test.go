package toolsearch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
)

func newIndex(t *testing.T) *Index {
	t.Helper()
	ix, err := New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

func keys(hits []Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.Key)
	}
	return out
}

func search(t *testing.T, ix *Index, q string) []string {
	t.Helper()
	hits, err := ix.Search(context.Background(), q, 10)
	if err != nil {
		t.Fatalf("search %q: %v", q, err)
	}
	return keys(hits)
}

func TestWords(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"read_file", "read file"},
		{"readFile", "read file"},
		{"ReadFile", "read file"},
		{"read-file", "read file"},
		{"HTTPServer", "http server"},
		{"getURLForID", "get url for id"},
		{"API-post-search", "api post search"},
		{"s3_list_buckets", "s3 list buckets"},
		{"v2api", "v2 api"},
		{"sequentialthinking", "sequentialthinking"},
		{"  Résumé écrit ", "résumé écrit"},
		{"", ""},
	} {
		if got := splitName(tc.in); got != tc.want {
			t.Errorf("splitName(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestMatchExpression(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"read file", `"read"* OR "file"*`},
		{`"read" NEAR(file) AND*`, `"read"* OR "near"* OR "file"*`},
		{"the a of", `"the"* OR "a" OR "of"`},                  // only stop words: they are all there is
		{"a folder's id", `"folder"* OR "id" OR "directory"*`}, // one letter says nothing; two are no prefix
		{"readFile readfile", `"read"* OR "file"* OR "readfile"*`},
		{"make a folder", `"make"* OR "folder"* OR "create"* OR "directory"*`},
		{"   ", ""},
		{`"*()^:-+`, ""},
	} {
		if got := matchExpression(tc.in); got != tc.want {
			t.Errorf("matchExpression(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestSearchRanksNameAndParameters(t *testing.T) {
	ix := newIndex(t)
	ctx := context.Background()
	schema := json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"where the file is"},
		"edits":{"type":"array","items":{"type":"object","properties":{"oldText":{"type":"string"}}}}}}`)
	err := ix.Replace(ctx, "files", []Tool{
		{Key: "files__read_file", Name: "read_file", Description: "Returns what a document holds.", InputSchema: schema},
		{Key: "files__writeFile", Name: "writeFile", Description: "Stores text in a file.", InputSchema: map[string]any{"type": "object"}},
		{Key: "files__edit", Name: "edit", Description: "Changes lines.", InputSchema: schema},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.Replace(ctx, "web", []Tool{{Key: "web__fetch", Name: "fetch", Description: "Reads a URL and returns the file it serves."}}); err != nil {
		t.Fatal(err)
	}
	if got := search(t, ix, "read file"); len(got) == 0 || got[0] != "files__read_file" {
		t.Errorf(`"read file" ranks %v; want files__read_file first (its name)`, got)
	}
	if got := search(t, ix, "write files"); len(got) == 0 || got[0] != "files__writeFile" {
		t.Errorf(`"write files" ranks %v; want files__writeFile first (camelCase split, stemmed)`, got)
	}
	if got := search(t, ix, "old text"); !slices.Contains(got, "files__edit") || slices.Contains(got, "web__fetch") {
		t.Errorf(`"old text" finds %v; want the tools whose nested parameter is oldText, not web__fetch`, got)
	}
	if got := search(t, ix, "web"); len(got) != 1 || got[0] != "web__fetch" {
		t.Errorf(`"web" finds %v; want web__fetch by its server's name`, got)
	}
	if got := search(t, ix, "nothing matches this"); len(got) != 0 {
		t.Errorf("an unrelated query finds %v", got)
	}
	hits, err := ix.Search(ctx, "file", 1)
	if err != nil || len(hits) != 1 || hits[0].Server == "" || hits[0].Score >= 0 {
		t.Errorf("Search(limit 1) = %+v, %v; want one hit with its server and a BM25 score", hits, err)
	}
	// Kept hits only, however far down: web__fetch ranks last for "file".
	hits, err = ix.SearchFunc(ctx, "file", 1, func(h Hit) bool { return h.Server == "web" })
	if err != nil || len(hits) != 1 || hits[0].Key != "web__fetch" {
		t.Errorf("SearchFunc(only web, limit 1) = %+v, %v; want web__fetch", hits, err)
	}
}

func TestReplaceAndRemove(t *testing.T) {
	ix := newIndex(t)
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(ix.Replace(ctx, "a", []Tool{{Key: "a__alpha", Name: "alpha"}, {Key: "a__beta", Name: "beta"}}))
	must(ix.Replace(ctx, "b", []Tool{{Key: "b__alpha", Name: "alpha"}}))
	if got := search(t, ix, "alpha"); !slices.Equal(slices.Sorted(slices.Values(got)), []string{"a__alpha", "b__alpha"}) {
		t.Fatalf("alpha finds %v", got)
	}
	// A new list replaces the old one: beta is gone, gamma is there.
	must(ix.Replace(ctx, "a", []Tool{{Key: "a__gamma", Name: "gamma"}}))
	if got := search(t, ix, "alpha beta gamma"); !slices.Equal(slices.Sorted(slices.Values(got)), []string{"a__gamma", "b__alpha"}) {
		t.Fatalf("after replacing a's tools: %v", got)
	}
	// The same list again is a no-op, and still correct.
	must(ix.Replace(ctx, "a", []Tool{{Key: "a__gamma", Name: "gamma"}}))
	if got := search(t, ix, "gamma"); !slices.Equal(got, []string{"a__gamma"}) {
		t.Fatalf("after replacing a's tools with the same: %v", got)
	}
	must(ix.Remove(ctx, "b"))
	must(ix.Remove(ctx, "b")) // again: nothing to do
	if got := search(t, ix, "alpha gamma"); !slices.Equal(got, []string{"a__gamma"}) {
		t.Fatalf("after removing b: %v", got)
	}
	must(ix.Replace(ctx, "a", nil)) // no tools: the server leaves
	if got := search(t, ix, "alpha gamma"); len(got) != 0 || len(ix.Servers()) != 0 {
		t.Fatalf("after emptying a: %v, servers %v", got, ix.Servers())
	}
	if err := ix.Replace(ctx, "c", []Tool{{Name: "nokey"}}); err == nil {
		t.Error("a tool without a key was indexed")
	}
	if err := ix.Replace(ctx, "c", []Tool{{Key: "c__x", Name: "x", InputSchema: json.RawMessage(`{"type":`)}}); err == nil {
		t.Error("a tool with a broken input schema was indexed")
	}
}

func TestLimit(t *testing.T) {
	ix := newIndex(t)
	var tools []Tool
	for i := range MaxLimit + 10 {
		tools = append(tools, Tool{Key: fmt.Sprintf("s__t%d", i), Name: fmt.Sprintf("t%d", i), Description: "shared word"})
	}
	if err := ix.Replace(context.Background(), "s", tools); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ ask, want int }{{0, DefaultLimit}, {-1, DefaultLimit}, {3, 3}, {1000, MaxLimit}} {
		hits, err := ix.Search(context.Background(), "shared", tc.ask)
		if err != nil || len(hits) != tc.want {
			t.Errorf("limit %d: %d hits, %v; want %d", tc.ask, len(hits), err, tc.want)
		}
	}
}

func TestCancelledContext(t *testing.T) {
	ix := newIndex(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ix.Search(ctx, "anything", 5); !errors.Is(err, context.Canceled) {
		t.Errorf("Search with a cancelled context: %v", err)
	}
	if err := ix.Replace(ctx, "s", []Tool{{Key: "s__x", Name: "x"}}); !errors.Is(err, context.Canceled) {
		t.Errorf("Replace with a cancelled context: %v", err)
	}
	// What failed left nothing behind: the next Replace indexes.
	if err := ix.Replace(context.Background(), "s", []Tool{{Key: "s__x", Name: "x"}}); err != nil {
		t.Fatal(err)
	}
	if got := search(t, ix, "x"); !slices.Equal(got, []string{"s__x"}) {
		t.Errorf("after a cancelled Replace and a good one: %v", got)
	}
}

// TestConcurrentUse searches while servers' tools are replaced and removed
// (run with -race): every search answers without error, and the index ends
// as the last writes left it.
func TestConcurrentUse(t *testing.T) {
	ix := newIndex(t)
	servers := loadCatalog(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	for i, s := range servers {
		tools := toolsOf(s, s.Server)
		tools = tools[:min(len(tools), 6)] // enough to race on, quick under -race
		wg.Go(func() {
			for round := range 5 { // ends on a Replace for every server
				if round%2 == 1 && i%2 == 1 {
					if err := ix.Remove(ctx, s.Server); err != nil {
						t.Error(err)
					}
					continue
				}
				if err := ix.Replace(ctx, s.Server, tools); err != nil {
					t.Error(err)
				}
			}
		})
	}
	queries := loadQueries(t)
	for w := range 2 {
		wg.Go(func() {
			for _, q := range queries[w*10 : w*10+10] {
				if _, err := ix.Search(ctx, q.Query, 5); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if got := len(ix.Servers()); got != len(servers) {
		t.Errorf("%d servers indexed after the writers ended; want %d", got, len(servers))
	}
}
