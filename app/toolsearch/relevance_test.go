package toolsearch

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// relevanceTop is how far down the hits the intended tool may be, and
// relevanceMin the share of queries for which it must be there.
const (
	relevanceTop = 5
	relevanceMin = 0.90
)

// TestRelevance indexes the tools of the catalog servers and asks the
// natural-language queries of testdata/queries.json: the intended tool must
// be in the top 5 for at least 90% of them. Every miss is logged with what
// came first instead.
func TestRelevance(t *testing.T) {
	servers := loadCatalog(t)
	ix := indexCatalog(t, servers)
	known := map[string]bool{}
	total := 0
	for _, s := range servers {
		for _, tool := range s.Tools {
			known[aggregatedKey(s.Server, tool.Name)] = true
			total++
		}
	}
	queries := loadQueries(t)
	if len(queries) < 30 {
		t.Fatalf("testdata/queries.json has %d queries; the check needs at least 30", len(queries))
	}
	hits := 0
	var misses []string
	byWhen := map[string][2]int{} // written → hits, queries
	for _, q := range queries {
		want := aggregatedKey(q.Server, q.Tool)
		if !known[want] {
			t.Errorf("query %q names tool %s, which no catalog server lists", q.Query, want)
			continue
		}
		found, err := ix.Search(context.Background(), q.Query, relevanceTop)
		if err != nil {
			t.Fatalf("search %q: %v", q.Query, err)
		}
		rank := -1
		var got []string
		for i, h := range found {
			got = append(got, h.Key)
			if h.Key == want {
				rank = i + 1
			}
		}
		n := byWhen[q.Written]
		n[1]++
		if rank > 0 {
			n[0]++
			byWhen[q.Written] = n
			hits++
			continue
		}
		byWhen[q.Written] = n
		misses = append(misses, fmt.Sprintf("%q: want %s, got [%s]", q.Query, want, strings.Join(got, " ")))
	}
	share := float64(hits) / float64(len(queries))
	t.Logf("relevance: intended tool in the top %d for %d/%d queries (%.1f%%) over %d tools of %d servers",
		relevanceTop, hits, len(queries), 100*share, total, len(servers))
	for when, n := range byWhen {
		t.Logf("queries written %s: %d/%d", when, n[0], n[1])
	}
	for _, m := range misses {
		t.Logf("miss: %s", m)
	}
	if share < relevanceMin {
		t.Errorf("intended tool in the top %d for %.1f%% of queries; want at least %.0f%%",
			relevanceTop, 100*share, 100*relevanceMin)
	}
}
