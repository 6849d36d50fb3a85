package toolsearch

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"
)

// benchCopies is how many times the catalog's tools are indexed, each time
// under other server names and with descriptions that differ a little:
// 8 × 128 tools = 1,024.
const benchCopies = 8

// indexCopies indexes the catalog's tools copies times over.
func indexCopies(tb testing.TB, copies int) (*Index, int) {
	tb.Helper()
	servers := loadCatalog(tb)
	ix, err := New()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ix.Close() })
	flavours := []string{"", "local", "team", "staging", "backup", "personal", "work", "archive", "mirror", "lab"}
	n := 0
	for c := range copies {
		for _, s := range servers {
			name := s.Server
			if c > 0 {
				name = fmt.Sprintf("%s-%s%d", s.Server, flavours[c%len(flavours)], c)
			}
			tools := toolsOf(s, name)
			for i := range tools {
				if c > 0 {
					tools[i].Description += fmt.Sprintf(" (%s copy %d)", flavours[c%len(flavours)], c)
				}
			}
			if err := ix.Replace(context.Background(), name, tools); err != nil {
				tb.Fatal(err)
			}
			n += len(tools)
		}
	}
	return ix, n
}

// latencies runs every relevance query rounds times and returns the
// sorted durations of the searches; the sorted service times, each query's
// fastest run (on a loaded machine most of a slow run's time is spent
// waiting for a core, which the fastest of several runs leaves out); and
// the durations of as many trivial queries on the same database (the
// floor: what any query through database/sql and the SQLite connection
// costs on this machine now).
func latencies(tb testing.TB, ix *Index, rounds int) (search, service, floor []time.Duration) {
	tb.Helper()
	ctx := context.Background()
	queries := loadQueries(tb)
	fastest := make([]time.Duration, len(queries))
	for round := range rounds {
		for i, q := range queries {
			start := time.Now()
			if _, err := ix.Search(ctx, q.Query, DefaultLimit); err != nil {
				tb.Fatal(err)
			}
			took := time.Since(start)
			search = append(search, took)
			if round == 0 || took < fastest[i] {
				fastest[i] = took
			}
			start = time.Now()
			var one int
			if err := ix.db.QueryRowContext(ctx, `SELECT 1`).Scan(&one); err != nil {
				tb.Fatal(err)
			}
			floor = append(floor, time.Since(start))
		}
	}
	slices.Sort(search)
	slices.Sort(fastest)
	slices.Sort(floor)
	return search, fastest, floor
}

func percentile(sorted []time.Duration, p float64) time.Duration {
	return sorted[min(len(sorted)-1, int(float64(len(sorted))*p))]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// BenchmarkSearch reports the p50/p95 latency of the relevance queries
// over 1,024 indexed tools (each iteration runs every query once), the p95
// of the queries' service times (each one's fastest run), and the floor of
// a trivial query measured in the same run:
//
//	go test -run '^$' -bench Search -benchtime 20x ./app/toolsearch/
func BenchmarkSearch(b *testing.B) {
	ix, n := indexCopies(b, benchCopies)
	if n < 1000 {
		b.Fatalf("indexed %d tools; the benchmark needs at least 1,000", n)
	}
	b.ResetTimer()
	search, service, floor := latencies(b, ix, b.N)
	b.ReportMetric(float64(n), "tools")
	b.ReportMetric(ms(percentile(search, 0.50)), "p50-ms")
	b.ReportMetric(ms(percentile(search, 0.95)), "p95-ms")
	b.ReportMetric(ms(percentile(service, 0.95)), "service-p95-ms")
	b.ReportMetric(ms(percentile(floor, 0.95)), "floor-p95-ms")
}
