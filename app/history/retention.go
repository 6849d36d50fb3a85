package history

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"time"
)

// retentionChunk is the most rows one retention transaction deletes, so that
// the writer never waits long for the connection.
const retentionChunk = 1000

// Downsampling tiers of resource samples: points older than Age are merged
// into one point per Bucket (average CPU, weighted by the raw samples each
// point stands for; maximum RSS and process count).
var tiers = []struct{ Age, Bucket time.Duration }{
	{time.Hour, time.Minute},
	{24 * time.Hour, 15 * time.Minute},
}

// A RetentionReport says what one Retain pass removed.
type RetentionReport struct {
	Calls      int64 `json:"calls"`      // calls deleted (by age or size)
	Logs       int64 `json:"logs"`       // log lines deleted
	Events     int64 `json:"events"`     // events deleted
	Samples    int64 `json:"samples"`    // samples deleted by age
	Downsample int64 `json:"downsample"` // samples merged into coarser points
	UsedBytes  int64 `json:"usedBytes"`  // the database's used size afterwards
}

func (s *Store) retainLoop() {
	defer close(s.retainDone)
	if s.opts.RetentionInterval < 0 {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { // stop a pass in progress when the store closes
		select {
		case <-s.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	t := time.NewTicker(s.opts.RetentionInterval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			if _, err := s.Retain(ctx); err != nil && ctx.Err() == nil {
				s.opts.Logger.Warn("history: retention failed", "err", err)
			}
		}
	}
}

// SetRetention changes how long records are kept and how big the database
// may grow (0: the default; negative: no bound); the next retention pass
// applies it.
func (s *Store) SetRetention(maxAge time.Duration, maxBytes int64) {
	o := Options{MaxAge: maxAge, MaxBytes: maxBytes}
	o.setDefaults()
	s.maxAge.Store(int64(o.MaxAge))
	s.maxBytes.Store(o.MaxBytes)
}

// Retention returns the bounds in force: age and size (negative: none).
func (s *Store) Retention() (maxAge time.Duration, maxBytes int64) {
	return time.Duration(s.maxAge.Load()), s.maxBytes.Load()
}

// Retain runs one retention pass now: it deletes records older than MaxAge,
// downsamples resource samples, then deletes the oldest calls and log lines
// until the database's used size is under MaxBytes. Every step is a series of
// small transactions. When ctx ends the pass stops before its next
// statement, never inside one (see execStep). The background goroutine
// calls it every RetentionInterval; tests call it with an injected clock.
func (s *Store) Retain(ctx context.Context) (RetentionReport, error) {
	var rep RetentionReport
	now := s.opts.Now()
	maxAge, maxBytes := s.Retention()
	if maxAge > 0 {
		cutoff := now.Add(-maxAge).UnixMicro()
		for _, t := range []struct {
			table, col string
			n          *int64
		}{
			{"calls", "start", &rep.Calls},
			{"logs", "time", &rep.Logs},
			{"events", "time", &rep.Events},
			{"samples", "time", &rep.Samples},
		} {
			q := fmt.Sprintf(`DELETE FROM %[1]s WHERE id IN
				(SELECT id FROM %[1]s WHERE %[2]s < ? ORDER BY %[2]s LIMIT %[3]d)`, t.table, t.col, retentionChunk)
			if err := s.deleteChunks(ctx, q, t.n, cutoff); err != nil {
				return rep, err
			}
		}
	}
	for _, tier := range tiers {
		n, err := s.downsample(ctx, now, tier.Age, tier.Bucket)
		rep.Downsample += n
		if err != nil {
			return rep, err
		}
	}
	used, err := s.usedBytes(ctx)
	if err != nil {
		return rep, err
	}
	// Over the bound: delete the oldest calls and log lines, each table by
	// the share of the size to give back (down to 90% of the bound, so the
	// next pass does not start over at once). Deleted rows leave tombstones in
	// the search index until its segments merge, so re-measuring after each
	// chunk would overshoot; instead each round deletes its estimate, merges
	// the index a little, and measures again.
	for round := 0; round < 3 && maxBytes > 0 && used > maxBytes; round++ {
		target := maxBytes / 10 * 9
		frac := float64(used-target) / float64(used)
		for _, t := range []struct {
			table, col string
			n          *int64
		}{
			{"calls", "start", &rep.Calls},
			{"logs", "time", &rep.Logs},
		} {
			var rows int64
			if err := scanStep(ctx, s.wdb(), "SELECT count(*) FROM "+t.table, nil, &rows); err != nil {
				return rep, err
			}
			todo := int64(math.Ceil(frac * float64(rows)))
			q := fmt.Sprintf(`DELETE FROM %[1]s WHERE id IN (SELECT id FROM %[1]s ORDER BY %[2]s LIMIT ?)`, t.table, t.col)
			for todo > 0 {
				res, err := execStep(ctx, s.wdb(), q, min(todo, retentionChunk))
				if err != nil {
					return rep, err
				}
				k, _ := res.RowsAffected()
				if k == 0 {
					break
				}
				*t.n += k
				todo -= k
			}
		}
		if err := s.compactSearchIndex(ctx); err != nil {
			return rep, err
		}
		if used, err = s.usedBytes(ctx); err != nil {
			return rep, err
		}
	}
	// Give freed pages back to the file system, a bounded number at a time.
	for i := 0; i < 64; i++ {
		var free int64
		if err := scanStep(ctx, s.wdb(), "PRAGMA freelist_count", nil, &free); err != nil {
			return rep, err
		}
		if free == 0 {
			break
		}
		if _, err := execStep(ctx, s.wdb(), "PRAGMA incremental_vacuum(2048)"); err != nil {
			return rep, err
		}
	}
	rep.UsedBytes, err = s.usedBytes(ctx)
	return rep, err
}

// rebuildRows is the size of search index (rows of calls_fts_data, each
// a page of at most about 4 KB) up to which compactSearchIndex builds it
// anew: at most about 16 MB written, a fraction of a second.
const rebuildRows = 4096

// compactSearchIndex gives back pages that deleted calls held in the
// search index. Deleting a call's entries leaves the index's pages in
// place, nearly empty, until FTS5 merges their segment with another
// ('merge' does a bounded amount of that: 2,048 pages here); an index of
// one segment, as a small history's often is now that calls are indexed
// in bulk (indexTail), has none to merge with, and even 'optimize' leaves
// its pages. A small index is built anew instead, with the calls of the
// tail, in one transaction with the mark that says they are indexed.
func (s *Store) compactSearchIndex(ctx context.Context) error {
	var rows int64
	if err := scanStep(ctx, s.wdb(), "SELECT count(*) FROM calls_fts_data", nil, &rows); err != nil {
		return err
	}
	if rows > rebuildRows {
		for range 8 {
			if _, err := execStep(ctx, s.wdb(), `INSERT INTO calls_fts(calls_fts, rank) VALUES ('merge', -256)`); err != nil {
				return err
			}
		}
		return nil
	}
	tx, err := beginTx(ctx, s.wdb())
	if err != nil {
		return err
	}
	defer tx.Rollback()
	bg := context.WithoutCancel(ctx)
	if _, err := tx.ExecContext(bg, `INSERT INTO calls_fts(calls_fts) VALUES ('rebuild')`); err != nil {
		return fmt.Errorf("rebuilding the search index: %w", err)
	}
	if _, err := tx.ExecContext(bg, `UPDATE search_index_state SET unindexed_from = max(unindexed_from, (SELECT coalesce(max(id), 0) + 1 FROM calls))`); err != nil {
		return fmt.Errorf("moving the search index's mark: %w", err)
	}
	return tx.Commit()
}

// deleteChunks runs a chunked DELETE until it deletes nothing.
func (s *Store) deleteChunks(ctx context.Context, q string, n *int64, args ...any) error {
	for {
		res, err := execStep(ctx, s.wdb(), q, args...)
		if err != nil {
			return err
		}
		k, err := res.RowsAffected()
		if err != nil {
			return err
		}
		*n += k
		if k < retentionChunk {
			return nil
		}
	}
}

// usedBytes is the size of the database's pages in use (freed pages excluded).
func (s *Store) usedBytes(ctx context.Context) (int64, error) {
	var pages, free, size int64
	err := scanStep(ctx, s.wdb(), `SELECT p.page_count, f.freelist_count, s.page_size
		FROM pragma_page_count p, pragma_freelist_count f, pragma_page_size s`, nil, &pages, &free, &size)
	return (pages - free) * size, err
}

// downsample merges the samples finer than bucket and older than age (in
// whole buckets) into one point per server and bucket. It works through the
// old samples a window at a time, one transaction per window.
func (s *Store) downsample(ctx context.Context, now time.Time, age, bucket time.Duration) (int64, error) {
	b := bucket.Microseconds()
	cutoff := now.Add(-age).UnixMicro()
	cutoff -= cutoff % b // only whole buckets
	window := 60 * b     // 1 hour of 1-minute buckets, 15 hours of 15-minute buckets
	var merged int64
	for {
		var lo sql.NullInt64
		if err := scanStep(ctx, s.wdb(), `SELECT min(time) FROM samples WHERE span < ? AND time < ?`, []any{b, cutoff}, &lo); err != nil {
			return merged, err
		}
		if !lo.Valid {
			return merged, nil
		}
		from := lo.Int64 - lo.Int64%b
		to := min(from+window, cutoff)
		n, err := s.mergeWindow(ctx, b, from, to)
		merged += n
		if err != nil {
			return merged, err
		}
	}
}

func (s *Store) mergeWindow(ctx context.Context, b, from, to int64) (int64, error) {
	tx, err := beginTx(ctx, s.wdb())
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	if _, err := execStep(ctx, tx, `INSERT INTO samples (time, server, cpu, rss, processes, span, n)
		SELECT (time / ?1) * ?1 AS bucket, server, sum(cpu * n) / sum(n), max(rss), max(processes), ?1, sum(n)
		FROM samples WHERE span < ?1 AND time >= ?2 AND time < ?3
		GROUP BY server, bucket`, b, from, to); err != nil {
		return 0, err
	}
	res, err := execStep(ctx, tx, `DELETE FROM samples WHERE span < ?1 AND time >= ?2 AND time < ?3`, b, from, to)
	if err != nil {
		return 0, err
	}
	n, _ := res.RowsAffected()
	return n, tx.Commit()
}
