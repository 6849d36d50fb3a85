package history

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app/internal/testutil"
	"github.com/switchboardhq/switchboard/app/record"
)

// BenchmarkRecordCall measures sustained throughput from RecordCall to
// committed rows: b.N calls queued, then Flush. The queue is sized, in
// records and in bytes, to hold them all so that none is dropped and the
// figure is the writer's.
func BenchmarkRecordCall(b *testing.B) {
	opts := testOptions()
	opts.QueueSize = max(b.N+1, 65536)
	opts.QueueBytes = max(int64(b.N+1)*4096, 16<<20)
	opts.Logger = nil
	s := openTest(b, opts)
	calls := make([]record.Call, 64)
	for i := range calls {
		calls[i] = call(i, "files", "read_file",
			fmt.Sprintf(`{"path":"/home/ann/project/src/file%d.go","apiKey":"sk-abc","limit":100}`, i))
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0, haveCPU := testutil.ProcessCPU()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		c := calls[i%len(calls)]
		c.Start = t0.Add(time.Duration(i) * time.Millisecond)
		s.RecordCall(c)
	}
	flush(b, s)
	elapsed := time.Since(start)
	cpu1, _ := testutil.ProcessCPU()
	b.StopTimer()
	if d := s.Dropped(); d != 0 {
		b.Fatalf("%d dropped", d)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "calls/s")
	if haveCPU { // the process's CPU (queueing, the writer, SQLite, GC) per call
		b.ReportMetric(float64((cpu1-cpu0).Microseconds())/float64(b.N), "cpu-µs/call")
	}
}

var words = []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india",
	"juliet", "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango"}

var (
	benchOnce sync.Once
	benchDir  string
	benchErr  error
	benchRows = 1_000_000
)

func cleanupBenchDB() {
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
}

// benchDB builds, once per test binary, a database of benchRows calls over
// 30 days: 20 servers, 50 tools, 5% errors, arguments of a few words of which
// one in 1000 holds the word "needle". It inserts in one transaction with a
// prepared statement, through the real schema, then indexes them for search
// as the writer does.
func benchDB(b *testing.B) string {
	benchOnce.Do(func() {
		benchDir, benchErr = os.MkdirTemp("", "history-bench-")
		if benchErr != nil {
			return
		}
		path := filepath.Join(benchDir, "history.db")
		s, err := Open(context.Background(), path, testOptions())
		if err != nil {
			benchErr = err
			return
		}
		defer s.Close(context.Background())
		began := time.Now()
		tx, err := s.wdb().Begin()
		if err != nil {
			benchErr = err
			return
		}
		st, err := tx.Prepare(`INSERT INTO calls (start, duration_us, client_label, client_name, client_version,
			session, endpoint, server, method, name, arguments, outcome, error, response_size, response_preview, pid)
			VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`)
		if err != nil {
			benchErr = err
			return
		}
		rng := rand.New(rand.NewPCG(1, 2))
		from := t0.Add(-30 * 24 * time.Hour).UnixMicro()
		step := (30 * 24 * time.Hour).Microseconds() / int64(benchRows)
		for i := range benchRows {
			server := fmt.Sprintf("server%02d", rng.IntN(20))
			tool := fmt.Sprintf("tool%02d", rng.IntN(50))
			w1, w2 := words[rng.IntN(len(words))], words[rng.IntN(len(words))]
			if i%1000 == 0 {
				w2 = "needle"
			}
			args, _ := json.Marshal(map[string]any{"query": w1 + " " + w2, "n": i})
			outcome, errText := "ok", ""
			if rng.IntN(20) == 0 {
				outcome, errText = "tool_error", "failed: "+words[rng.IntN(len(words))]
			}
			if _, err := st.Exec(from+int64(i)*step+rng.Int64N(step), rng.Int64N(500_000), "cursor", "Cursor", "1.0",
				"sess", "", server, "tools/call", tool, string(args), outcome, errText, 100, `{"ok":true}`, 1000+rng.IntN(5)); err != nil {
				benchErr = err
				return
			}
		}
		st.Close()
		if _, benchErr = indexTail(context.Background(), tx, math.MaxInt64); benchErr != nil {
			return
		}
		if benchErr = tx.Commit(); benchErr != nil {
			return
		}
		_, benchErr = s.wdb().Exec("PRAGMA optimize; ANALYZE")
		fmt.Fprintf(os.Stderr, "built a %d-call database in %v\n", benchRows, time.Since(began).Round(time.Millisecond))
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return filepath.Join(benchDir, "history.db")
}

func benchQuery(b *testing.B, q CallQuery) {
	path := benchDB(b)
	s := openAt(b, path, testOptions())
	ctx := context.Background()
	b.ResetTimer()
	var n int
	for i := 0; i < b.N; i++ {
		p, err := s.Calls(ctx, q)
		if err != nil {
			b.Fatal(err)
		}
		n = len(p.Calls)
	}
	b.StopTimer()
	if n == 0 {
		b.Fatal("empty page")
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/page")
}

// BenchmarkFilteredFirstPage: first 50 calls of one server with errors, in
// the last week, over the 1,000,000-call database.
func BenchmarkFilteredFirstPage(b *testing.B) {
	benchQuery(b, CallQuery{Server: "server07", Outcome: OutcomeError, Since: t0.Add(-7 * 24 * time.Hour)})
}

// BenchmarkErrorsFirstPage: first 50 failed calls.
func BenchmarkErrorsFirstPage(b *testing.B) {
	benchQuery(b, CallQuery{Outcome: OutcomeError})
}

// BenchmarkErrorKindFirstPage: first 50 calls that failed with a tool error.
func BenchmarkErrorKindFirstPage(b *testing.B) {
	benchQuery(b, CallQuery{Outcome: "tool_error"})
}

// BenchmarkOKFirstPage: first 50 successful calls.
func BenchmarkOKFirstPage(b *testing.B) {
	benchQuery(b, CallQuery{Outcome: "ok"})
}

// BenchmarkToolFirstPage: first 50 calls of one tool, whatever the server.
func BenchmarkToolFirstPage(b *testing.B) {
	benchQuery(b, CallQuery{Tool: "tool13"})
}

// BenchmarkServerFirstPage: first 50 calls of one server and tool.
func BenchmarkServerToolFirstPage(b *testing.B) {
	benchQuery(b, CallQuery{Server: "server07", Tool: "tool13"})
}

// BenchmarkSearchFirstPage: first 50 calls matching a word that 1 call in
// 1000 holds.
func BenchmarkSearchFirstPage(b *testing.B) {
	benchQuery(b, CallQuery{Text: "needle"})
}

// BenchmarkSearchCommonWordFirstPage: a word in ~10% of the calls.
func BenchmarkSearchCommonWordFirstPage(b *testing.B) {
	benchQuery(b, CallQuery{Text: "alpha"})
}

// BenchmarkOpenLarge: Open (integrity check, migration check) of the big database.
func BenchmarkOpenLarge(b *testing.B) {
	path := benchDB(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, err := Open(context.Background(), path, testOptions())
		if err != nil {
			b.Fatal(err)
		}
		s.Close(context.Background())
	}
}

var _ = sql.ErrNoRows

// BenchmarkRecordJournaled measures what history costs a call as the
// daemon records it: the journal's Begin when the call starts, RecordCall
// when it ends, and the writer's commits (with the journal's End) as the
// writer batches them, the calls arriving at the rates of echo calls in
// `switchboard serve` (issue 33): 2,500 calls/s (concurrency 1) and 8,000
// calls/s (concurrency 16), 1/100 of a second's worth at a time. It
// reports the process's CPU per call (user + system, the writer and GC
// included): the figure issue 33's target of 10 µs is about.
func BenchmarkRecordJournaled(b *testing.B) {
	for _, rate := range []int{2500, 8000} {
		b.Run(fmt.Sprintf("rate=%d", rate), func(b *testing.B) {
			j, _, err := OpenJournal(filepath.Join(b.TempDir(), "calls.journal"), nil)
			if err != nil {
				b.Fatal(err)
			}
			defer j.Close()
			opts := testOptions()
			opts.Journal = j
			opts.CleanCheckDelay = -1 // the check of the new file, at once, not in the measured loop
			opts.Logger = slog.New(slog.DiscardHandler)
			s := openTest(b, opts)
			testutil.EventuallyEvery(b, 20*time.Second, time.Millisecond, "the integrity check of the new history file (Checking) to end before the measured loop", func() bool { return !s.Checking() })
			calls := make([]record.Call, 64)
			for i := range calls {
				calls[i] = call(i, "echo", "echo", fmt.Sprintf(`{"text":"hello, history %d"}`, i))
				calls[i].Session, calls[i].Endpoint = "0123456789abcdef0123456789abcdef", "echo"
			}
			const tick = 10 * time.Millisecond
			perTick := rate / int(time.Second/tick)
			b.ReportAllocs()
			b.ResetTimer()
			cpu0, haveCPU := testutil.ProcessCPU()
			next := time.Now()
			for i := 0; i < b.N; i++ {
				if i%perTick == 0 {
					next = next.Add(tick)
					time.Sleep(time.Until(next))
				}
				c := calls[i%len(calls)]
				c.Start = t0.Add(time.Duration(i) * time.Millisecond)
				c.Journal = j.Begin(&c)
				s.RecordCall(c)
			}
			flush(b, s)
			cpu1, _ := testutil.ProcessCPU()
			b.StopTimer()
			if d := s.Dropped(); d != 0 {
				b.Fatalf("%d dropped", d)
			}
			if haveCPU {
				b.ReportMetric(float64((cpu1-cpu0).Microseconds())/float64(b.N), "cpu-µs/call")
			}
		})
	}
}
