package toolscan

import "testing"

// BenchmarkScanCatalog scans the catalog's 128 tools, each server with
// every other server's tool names; ns/tool is the figure to watch.
func BenchmarkScanCatalog(b *testing.B) {
	listings, others := loadCatalog(b)
	tools := 0
	for _, l := range listings {
		tools += len(l.Tools)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		for i, l := range listings {
			Scan(l, others[i])
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(tools), "ns/tool")
}
