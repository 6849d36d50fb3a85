package history

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app/internal/testutil"
)

// indexedCalls is how many calls the search index holds and where its
// mark is.
func indexedCalls(t testing.TB, s *Store) (n, unindexedFrom int64) {
	t.Helper()
	if err := s.rdb().QueryRow(`SELECT (SELECT count(*) FROM calls_fts WHERE calls_fts MATCH 'bulk'),
		unindexed_from FROM search_index_state`).Scan(&n, &unindexedFrom); err != nil {
		t.Fatal(err)
	}
	return n, unindexedFrom
}

// checkSearchIndex runs FTS5's own check of the index against the calls.
func checkSearchIndex(t testing.TB, s *Store) {
	t.Helper()
	if _, err := s.wdb().Exec("INSERT INTO calls_fts(calls_fts) VALUES ('integrity-check')"); err != nil {
		t.Errorf("the search index's integrity-check: %v", err)
	}
}

// TestSearchFindsCallsNotYetIndexed: the writer stores calls without
// indexing them for search; a search finds every call recorded before it
// all the same (it has the writer index them first), and the calls stored
// after it wait for the next step.
func TestSearchFindsCallsNotYetIndexed(t *testing.T) {
	ctx := context.Background()
	opts := testOptions()
	opts.indexDelay = time.Hour // no step for idleness in this test
	s := openTest(t, opts)
	for i := range 10 {
		s.RecordCall(call(i, "a", "read", fmt.Sprintf(`{"q":"bulk %d"}`, i)))
	}
	flush(t, s)
	if n, _ := indexedCalls(t, s); n != 0 {
		t.Fatalf("%d calls in the search index after the batch, want 0: they wait for a step", n)
	}
	// Not even flushed: the search has the writer commit them too.
	for i := 10; i < 15; i++ {
		s.RecordCall(call(i, "a", "read", fmt.Sprintf(`{"q":"bulk %d"}`, i)))
	}
	page, err := s.Calls(ctx, CallQuery{Text: "bulk", Limit: 100})
	if err != nil || len(page.Calls) != 15 {
		t.Fatalf("search found %d calls (%v), want 15", len(page.Calls), err)
	}
	if n, from := indexedCalls(t, s); n != 15 || from != 16 {
		t.Errorf("after the search: %d indexed, unindexed from %d; want 15, 16", n, from)
	}
	var exported countingWriter
	s.RecordCall(call(15, "a", "read", `{"q":"bulk 15"}`))
	if err := s.Export(ctx, CallQuery{Text: "bulk"}, &exported, "jsonl"); err != nil || exported.lines != 16 {
		t.Errorf("export of a search: %d lines (%v), want 16", exported.lines, err)
	}
	// A search whose text has no word reads no index and waits for nothing.
	s.RecordCall(call(16, "a", "read", `{"q":"bulk 16"}`))
	if page, err := s.Calls(ctx, CallQuery{Text: "!!", Limit: 100}); err != nil || len(page.Calls) != 0 {
		t.Errorf("search for punctuation: %d calls (%v)", len(page.Calls), err)
	}
	flush(t, s)
	if n, _ := indexedCalls(t, s); n != 16 {
		t.Errorf("%d indexed after the punctuation search, want 16", n)
	}
	checkSearchIndex(t, s)
}

// countingWriter counts the lines written to it.
type countingWriter struct{ lines int }

func (w *countingWriter) Write(p []byte) (int, error) {
	for _, b := range p {
		if b == '\n' {
			w.lines++
		}
	}
	return len(p), nil
}

// TestIdleWriterIndexesTheTail: with nothing to commit for indexDelay, the
// writer indexes what it stored; calls left unindexed by a store that
// closed are indexed by the next one when it is first idle.
func TestIdleWriterIndexesTheTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.db")
	opts := testOptions()
	opts.indexDelay = 20 * time.Millisecond
	s := openAt(t, path, opts)
	for i := range 20 {
		s.RecordCall(call(i, "a", "read", `{"q":"bulk"}`))
	}
	flush(t, s)
	testutil.Eventually(t, 10*time.Second, "the idle writer to index the 20 calls", func() bool {
		n, _ := indexedCalls(t, s)
		return n == 20
	})
	checkSearchIndex(t, s)

	// A store that closes with calls not indexed leaves them to the next.
	opts.indexDelay = time.Hour
	s = reopen(t, s, path, opts)
	for i := 20; i < 30; i++ {
		s.RecordCall(call(i, "a", "read", `{"q":"bulk"}`))
	}
	flush(t, s)
	if n, from := indexedCalls(t, s); n != 20 || from != 21 {
		t.Fatalf("before closing: %d indexed, unindexed from %d; want 20, 21", n, from)
	}
	opts.indexDelay = 20 * time.Millisecond
	s = reopen(t, s, path, opts)
	testutil.Eventually(t, 10*time.Second, "the next store to index the 10 calls the last one left", func() bool {
		n, from := indexedCalls(t, s)
		return n == 30 && from == 31
	})
	checkSearchIndex(t, s)
}

// reopen closes s and opens the database at path again.
func reopen(t *testing.T, s *Store, path string, opts Options) *Store {
	t.Helper()
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	return openAt(t, path, opts)
}

// TestBusyWriterIndexesInChunks: under a stream that never lets the writer
// idle, it indexes once the tail reaches indexChunk calls, in one step.
func TestBusyWriterIndexesInChunks(t *testing.T) {
	opts := testOptions()
	opts.indexDelay = time.Hour
	opts.QueueSize = 2 * indexChunk
	s := openTest(t, opts)
	for i := range indexChunk + 100 {
		s.RecordCall(call(i, "a", "read", `{"q":"bulk"}`))
	}
	flush(t, s)
	testutil.Eventually(t, 20*time.Second, "the writer to index a chunk", func() bool {
		n, _ := indexedCalls(t, s)
		return n >= indexChunk
	})
	if n, from := indexedCalls(t, s); n > indexChunk+100 || from-1 != n {
		t.Errorf("%d indexed, unindexed from %d", n, from)
	}
	checkSearchIndex(t, s)
}

// TestFailingIndexStepIsNotRetriedEveryBatch: a step that fails is logged,
// and tried again after another chunk's worth of calls (or when idle, or
// for a search), not after every batch of a busy writer.
func TestFailingIndexStepIsNotRetriedEveryBatch(t *testing.T) {
	var logged testutil.SyncBuffer
	opts := testOptions()
	opts.indexDelay = time.Hour
	opts.QueueSize = 2 * indexChunk
	opts.BatchSize = 512
	opts.Logger = slog.New(slog.NewTextHandler(&logged, nil))
	s := openTest(t, opts)
	// The step's first statement fails; storing calls does not read it.
	if _, err := s.wdb().Exec("ALTER TABLE search_index_state RENAME TO gone"); err != nil {
		t.Fatal(err)
	}
	failures := func() int { return strings.Count(logged.String(), "adding calls to the search index") }
	for i := range indexChunk {
		s.RecordCall(call(i, "a", "read", `{"q":"bulk"}`))
	}
	flush(t, s)
	testutil.Eventually(t, 20*time.Second, "the chunk's step to fail and say so", func() bool { return failures() > 0 })
	for i := range 8 * opts.BatchSize {
		s.RecordCall(call(i, "a", "read", `{"q":"bulk"}`))
		if i%opts.BatchSize == 0 {
			flush(t, s) // a batch each
		}
	}
	flush(t, s)
	if n := failures(); n != 1 {
		t.Errorf("the failing step was logged %d times over 8 more batches, want once:\n%s", n, logged.String())
	}
}
