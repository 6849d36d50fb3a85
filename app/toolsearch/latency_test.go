//go:build !race

package toolsearch

import (
	"testing"
	"time"
)

// TestSearchLatency is the benchmark's figure in every test run: the p95
// of the relevance queries over 1,024 tools, logged with the floor. The
// bound it asserts is ten times the target (5 ms), for a shared, loaded
// machine. It is built without the race detector only, which makes the
// pure-Go SQLite some fifty times slower and the figure meaningless;
// `make test` runs it so after the race-enabled run.
func TestSearchLatency(t *testing.T) {
	ix, n := indexCopies(t, benchCopies)
	search, floor := latencies(t, ix, 5)
	p95 := percentile(search, 0.95)
	t.Logf("search over %d tools: p50 %.2f ms, p95 %.2f ms (%d searches); floor p95 %.3f ms",
		n, ms(percentile(search, 0.50)), ms(p95), len(search), ms(percentile(floor, 0.95)))
	if p95 > 50*time.Millisecond {
		t.Errorf("p95 search latency %.1f ms over %d tools; the target is 5 ms", ms(p95), n)
	}
}
