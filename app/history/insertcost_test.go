package history

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"log/slog"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app/internal/testutil"
)

// BenchmarkInsertCost measures what SQLite costs per stored call, schema
// part by schema part, with the writer's own batching: one transaction of
// 512 rows (and other sizes), multi-row INSERTs of callsPerInsert rows on
// the driver connection, and when there is a search index, the writer's
// indexTail every indexChunk calls. The rows are BenchmarkRecordCall's,
// already prepared (redaction and previews are not measured here:
// BenchmarkRecordCall measures the whole writer).
//
//   - floor: the calls table alone, no secondary index, no search index:
//     the cheapest a row of this design can be stored in modernc.org/sqlite;
//   - indexes: the table and its secondary indexes as the schema has them;
//   - schema: the whole schema (indexes and search index), what the writer
//     pays;
//   - schema/index-every-batch: the search index brought up to date at
//     the end of every batch, as the writer did before migration 0007;
//   - schema/staged: the secondary indexes off the batches' path (issue
//     33): each batch into a copy of calls without them, moved into calls
//     by one INSERT ... SELECT every stagedMove calls. It measures what
//     that design costs in all (it costs more: docs/benchmarks.md, the
//     ninth round), so that it is not tried again on a hunch.
//
// It reports CPU µs per row (the process's user + system time, GC
// included) where the platform gives it, and wall µs per row.
func BenchmarkInsertCost(b *testing.B) {
	for _, v := range []struct {
		name            string
		indexes, search bool
		batch           int
		indexEvery      int // calls; 0: at the end of every batch
		staged          bool
	}{
		{"floor", false, false, 512, 0, false},
		{"indexes", true, false, 512, 0, false},
		{"schema", true, true, 512, indexChunk, false},
		{"schema/index-every-batch", true, true, 512, 0, false},
		{"schema/staged", true, true, 512, indexChunk, true},
		// What a batch costs beside its rows (the commit, the WAL's
		// frames for the pages every batch changes): smaller and larger
		// batches. The writer commits at most BatchSize (512) records,
		// fewer when BatchDelay (50 ms) passes first: at 8,000 calls/s
		// a batch is 400.
		{"schema/batch=128", true, true, 128, indexChunk, false},
		{"schema/batch=2048", true, true, 2048, indexChunk, false},
	} {
		b.Run(v.name, func(b *testing.B) { benchInsert(b, v.indexes, v.search, v.batch, v.indexEvery, v.staged) })
	}
}

// stagedMove is how many staged calls schema/staged moves at a time.
const stagedMove = 4096

// benchInsert stores b.N calls in a new database in transactions of
// batchSize, without the secondary indexes of calls unless indexes is set,
// without the search index unless search is; with it, the batch that
// stores the indexEvery-th call since the last (every batch if 0) and the
// last batch bring the index up to date. staged stores the batches in
// calls_stage, calls' twin without indexes, and moves them into calls
// every stagedMove calls and after the last batch, before the index.
func benchInsert(b *testing.B, indexes, search bool, batchSize, indexEvery int, staged bool) {
	ctx := context.Background()
	opts := testOptions()
	opts.CleanCheckDelay = -1 // the check of the new file at once, before the measured loop
	opts.Logger = slog.New(slog.DiscardHandler)
	s := openTest(b, opts)
	db := s.wdb()
	var drop []string
	if !search {
		drop = append(drop, "DROP TRIGGER calls_fts_delete", "DROP TRIGGER calls_fts_update", "DROP TABLE calls_fts")
	}
	if !indexes {
		rows, err := db.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'calls' AND sql IS NOT NULL`)
		if err != nil {
			b.Fatal(err)
		}
		for rows.Next() {
			var name string
			if err := rows.Scan(&name); err != nil {
				b.Fatal(err)
			}
			drop = append(drop, "DROP INDEX "+name)
		}
		rows.Close()
	}
	for _, q := range drop {
		if _, err := db.ExecContext(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
	into := func(insert string) string { return insert }
	if staged {
		// SQLite keeps the table's statement up to date with every ALTER.
		var table string
		if err := db.QueryRowContext(ctx, `SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'calls'`).Scan(&table); err != nil {
			b.Fatal(err)
		}
		twin, ok := strings.CutPrefix(table, "CREATE TABLE calls ")
		if !ok {
			b.Fatalf("the calls table's statement: %s", table)
		}
		if _, err := db.ExecContext(ctx, "CREATE TABLE calls_stage "+twin); err != nil {
			b.Fatal(err)
		}
		stage := strings.Replace(insertCallsPrefix, " calls (", " calls_stage (", 1)
		if stage == insertCallsPrefix {
			b.Fatalf("no table name to replace in %q", insertCallsPrefix)
		}
		into = func(insert string) string {
			rest, ok := strings.CutPrefix(insert, insertCallsPrefix)
			if !ok {
				b.Fatalf("the staged INSERT from %q", insert)
			}
			return stage + rest
		}
	}
	move := func(conn *sql.Conn) {
		tx, err := conn.BeginTx(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer tx.Rollback()
		for _, q := range []string{"INSERT INTO calls (" + callColumnList + ") SELECT " + callColumnList + " FROM calls_stage ORDER BY id",
			"DELETE FROM calls_stage"} {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				b.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
	}
	c := call(1, "files", "read_file", `{"path":"/home/ann/project/src/file1.go","apiKey":"[redacted]","limit":100}`)
	arguments := string(c.Arguments)
	preview := string(c.Response)
	row := func(i int) []any {
		return []any{t0.UnixMicro() + int64(i), c.Duration.Microseconds(), c.ClientLabel, c.ClientName, c.ClientVersion,
			c.Session, c.Endpoint, c.Server, c.Method, c.Name, arguments, c.Outcome, "", c.ResponseSize, preview, c.PID,
			c.Tier, toolOf(&c), c.Unknown, "", 0, int64(0)} // no decision
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	var inserts writer // for callInsert
	b.ReportAllocs()
	b.ResetTimer()
	cpu0, haveCPU := testutil.ProcessCPU()
	start := time.Now()
	unindexed, unmoved := 0, 0
	for done := 0; done < b.N; {
		n := min(batchSize, b.N-done)
		err := conn.Raw(func(dc any) error {
			conn := dc.(interface {
				driver.ConnBeginTx
				driver.ConnPrepareContext
				driver.ExecerContext
			})
			tx, err := conn.BeginTx(ctx, driver.TxOptions{})
			if err != nil {
				return err
			}
			defer tx.Rollback()
			rb := &rawBatch{ctx: ctx, conn: conn, stmts: map[string]driver.Stmt{}}
			defer func() {
				for _, st := range rb.stmts {
					st.Close()
				}
			}()
			for i := 0; i < n; i += callsPerInsert {
				k := min(callsPerInsert, n-i)
				args := make([]any, 0, k*callColumns)
				for j := range k {
					args = append(args, row(done+i+j)...)
				}
				if _, err := rb.exec(into(inserts.callInsert(k)), args...); err != nil {
					return err
				}
			}
			return tx.Commit()
		})
		if err != nil {
			b.Fatal(err)
		}
		done += n
		if unmoved += n; staged && (unmoved >= stagedMove || done == b.N) {
			move(conn)
			unmoved = 0
		}
		// The writer's step: its own transaction after the batch's.
		if unindexed += n; search && (unindexed >= indexEvery || done == b.N) {
			tx, err := conn.BeginTx(ctx, nil)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := indexTail(ctx, tx, math.MaxInt64); err != nil {
				b.Fatal(err)
			}
			if err := tx.Commit(); err != nil {
				b.Fatal(err)
			}
			unindexed = 0
		}
	}
	wall := time.Since(start)
	cpu1, _ := testutil.ProcessCPU()
	b.StopTimer()
	conn.Close() // the writer pool's one connection, for the count below
	b.ReportMetric(float64(wall.Microseconds())/float64(b.N), "wall-µs/row")
	if haveCPU {
		b.ReportMetric(float64((cpu1-cpu0).Microseconds())/float64(b.N), "cpu-µs/row")
	}
	var count int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM calls").Scan(&count); err != nil || count < b.N {
		b.Fatalf("%d calls stored (%v), want %d", count, err, b.N)
	}
}
