package daemon

import (
	"encoding/json"
	"net/http"
	"runtime"
	"runtime/metrics"
)

// RuntimeStatsEnv, set to 1, makes `switchboard serve` answer GET
// RuntimeStatsPath (behind the MCP endpoint's checks: any valid token)
// with the daemon's allocation and GC counters, for benchmarks (make
// bench-serve) that divide them by the calls they made. Unset, the path
// does not exist.
const RuntimeStatsEnv = "SWITCHBOARD_RUNTIME_STATS"

// RuntimeStatsPath is where the runtime stats are served.
const RuntimeStatsPath = "/debug/runtime"

// RuntimeStats are the daemon's counters since it started.
type RuntimeStats struct {
	AllocBytes   uint64 `json:"allocBytes"`   // heap bytes allocated, all told
	AllocObjects uint64 `json:"allocObjects"` // heap objects allocated, all told
	GCCycles     uint64 `json:"gcCycles"`     // GC cycles completed
	HeapBytes    uint64 `json:"heapBytes"`    // bytes in live and not yet swept heap objects
	Goroutines   int    `json:"goroutines"`
	Procs        int    `json:"procs"` // GOMAXPROCS now (see app/internal/procs)
}

// ReadRuntimeStats reads this process's counters.
func ReadRuntimeStats() RuntimeStats {
	samples := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}, {Name: "/gc/heap/allocs:objects"},
		{Name: "/gc/cycles/total:gc-cycles"}, {Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(samples)
	return RuntimeStats{AllocBytes: samples[0].Value.Uint64(), AllocObjects: samples[1].Value.Uint64(),
		GCCycles: samples[2].Value.Uint64(), HeapBytes: samples[3].Value.Uint64(), Goroutines: runtime.NumGoroutine(),
		Procs: runtime.GOMAXPROCS(0)}
}

// runtimeStatsHandler serves ReadRuntimeStats as JSON.
func runtimeStatsHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			w.Header().Set("Allow", http.MethodGet)
			http.Error(w, "GET only", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(ReadRuntimeStats())
	})
}
