package history

import (
	"context"
	"database/sql/driver"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/app/record"
)

// A writer is the one goroutine that commits the Store's queue, and what
// only that goroutine touches: its prepared statements and the buffers it
// reuses from one batch to the next. The Store keeps the queue (enqueue,
// take) and the public API; the writer takes the queue, commits it in
// transactions of at most BatchSize records, ends the batch's calls in the
// journal, answers the flushes among them in order and hands the stored
// calls to OnCommit. Between batches it brings the search index up to
// date (see indexTail).
//
// Nothing in it is locked: only run (and what it calls) uses it.
type writer struct {
	s *Store

	// stmts are the statements prepared on the driver connection stmtConn,
	// kept from one batch to the next (preparing the INSERT of 32 calls,
	// the search index's catch-up and the events' INSERTs again for every
	// batch cost about 6 % of what storing a call did). They are made
	// again when the writer finds another connection under it.
	stmtConn any
	stmts    map[string]driver.Stmt
	args     []driver.NamedValue // reused by every statement

	batch      []item       // the records of the transaction being made
	flushes    []chan error // the flushes it answers once committed
	journalIDs []uint64     // reused by endJournaled
	// batchCalls, callInserts and callArgs: the calls of a batch waiting
	// for their INSERT, that INSERT's text for each number of rows (see
	// insertCalls), and its values.
	batchCalls  []*record.Call
	callInserts []string
	callArgs    []any
	// sharedInserts are the INSERTs of calls some of whose columns hold
	// one value for every row (see insertCalls), by sharedKey; rowArgs is
	// their arguments, reused.
	sharedInserts map[uint64]string
	rowArgs       []any
	// lastRow is the values of the last call insertCalls bound, which the
	// next call's columns bind again when they hold the same (see same).
	lastRow [callColumns]any
	// stored is the array of the calls handed to OnCommit, reused: a
	// batch's slice grown by append for every batch was a fifteenth of
	// what a call allocated.
	stored []Call

	// unindexed counts the calls stored since the search index last held
	// every call (about: it starts at 1, for what a previous run left).
	unindexed int
}

func newWriter(s *Store) *writer {
	return &writer{s: s, stmts: make(map[string]driver.Stmt, 8), args: make([]driver.NamedValue, 0, callColumns*callsPerInsert),
		batch: make([]item, 0, s.opts.BatchSize), unindexed: 1}
}

// run commits records until the store closes. Woken by the first record
// of a batch, it waits until the batch is full, the batch delay has passed
// (see Options.MaxBatchDelay), a Flush asks or the store closes; then it
// commits what is pending.
func (w *writer) run() {
	s := w.s
	defer close(s.writerDone)
	defer w.closeStatements()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	// idle fires once the writer has had nothing to commit for indexDelay
	// while calls wait for the search index.
	idle := time.NewTimer(s.opts.indexDelay)
	defer idle.Stop()
	delay := s.opts.BatchDelay
	for {
		select {
		case <-s.wake:
			if !s.hasPending() {
				continue // a wake that came as the last batch was taken
			}
		case <-idle.C:
			if w.indexStep() {
				idle.Reset(0) // more of the tail, after what is waiting
			}
			continue
		case err := <-s.corrupt:
			w.closeStatements()
			s.replaceDatabase(err)
			w.unindexed = 1
			continue
		case <-s.stop:
			w.commitPending()
			return
		}
		timed := false
		if !s.batchReady() {
			timer.Reset(delay)
		wait:
			for {
				select {
				case <-timer.C:
					timed = true
					break wait
				case <-s.wake:
					// A full batch or a flush; or a record's wake that
					// came as the last batch was taken, for a record of
					// this one.
					if s.batchReady() {
						timer.Stop()
						break wait
					}
				case <-s.stop:
					timer.Stop()
					w.commitPending()
					return
				}
			}
		}
		n := w.commitPending()
		if timed {
			delay = w.nextDelay(delay, n)
		}
		if w.unindexed >= indexChunk {
			w.indexStep()
		}
		if w.unindexed > 0 {
			idle.Reset(s.opts.indexDelay)
		}
	}
}

// nextDelay is the wait for the batch after one of n records that the
// timer committed after waiting delay (see Options.MaxBatchDelay).
func (w *writer) nextDelay(delay time.Duration, n int) time.Duration {
	o := &w.s.opts
	if n < max(o.BatchSize/8, 1) {
		return o.BatchDelay
	}
	return min(2*delay, o.MaxBatchDelay)
}

// commitPending takes every pending record and commits them in batches,
// and returns how many it took.
func (w *writer) commitPending() int {
	items := w.s.take()
	n := len(items)
	batch := w.batch[:0]
	for _, it := range items {
		if it.flush != nil {
			w.flushes = append(w.flushes, it.flush)
			err := w.commit(batch)
			if it.index {
				w.indexAll()
			}
			for _, f := range w.flushes {
				f <- err
			}
			clear(w.flushes)
			batch, w.flushes = batch[:0], w.flushes[:0]
			continue
		}
		batch = append(batch, it)
		if len(batch) >= w.s.opts.BatchSize {
			w.commit(batch)
			batch = batch[:0]
		}
	}
	if len(batch) > 0 {
		w.commit(batch)
	}
	clear(batch[:cap(batch)]) // let the records go
	w.batch = batch[:0]
	w.s.giveBack(items)
	return n
}

// commit writes one batch in one transaction. A failed batch is lost and
// counted in Dropped.
func (w *writer) commit(batch []item) error {
	s := w.s
	if s.opts.beforeCommit != nil {
		s.opts.beforeCommit()
	}
	if len(batch) == 0 {
		return nil
	}
	calls, err := w.commitBatch(batch)
	w.endJournaled(batch)
	if err != nil {
		s.dropped.Add(uint64(len(batch)))
		s.opts.Logger.Warn("history: lost a batch of records", "records", len(batch), "err", err)
		if isCorrupt(err) {
			s.checkInBackground(0)
		}
		return err
	}
	for _, it := range batch {
		if it.call != nil {
			w.unindexed++
		}
	}
	if len(calls) > 0 {
		s.opts.OnCommit(calls, s.Dropped())
		clear(calls) // let their texts go
		w.stored = calls[:0]
	}
	return nil
}

// endJournaled ends the batch's journaled calls in the journal, in one
// line: stored, or lost with a failed batch (and counted in Dropped).
func (w *writer) endJournaled(batch []item) {
	if w.s.opts.Journal == nil {
		return
	}
	ids := w.journalIDs[:0]
	for _, it := range batch {
		if it.call != nil && it.call.Journal != 0 {
			ids = append(ids, it.call.Journal)
		}
	}
	if len(ids) > 0 {
		w.s.opts.Journal.End(ids...)
	}
	w.journalIDs = ids[:0]
}

// commitBatch writes batch in one transaction and, when there is an
// OnCommit, returns the calls it stored.
//
// It works on the driver's connection itself (sql.Conn.Raw): through
// database/sql every row cost a fresh slice of converted arguments and
// the package's locking, a third of what recording a call allocated. The
// statements are prepared once and reused for every row of every batch,
// with one argument slice.
func (w *writer) commitBatch(batch []item) (stored []Call, err error) {
	ctx := w.s.writeCtx
	conn, err := w.s.wdb().Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	err = conn.Raw(func(dc any) error {
		stored, err = w.commitRaw(ctx, dc, batch)
		return err
	})
	return stored, err
}

// closeStatements closes the writer's prepared statements, before the
// connection they were prepared on is closed.
func (w *writer) closeStatements() {
	if len(w.stmts) == 0 {
		return
	}
	conn, err := w.s.wdb().Conn(context.Background())
	if err == nil {
		_ = conn.Raw(func(dc any) error {
			if dc == w.stmtConn {
				for _, st := range w.stmts {
					st.Close()
				}
			}
			return nil
		})
		conn.Close()
	}
	clear(w.stmts)
	w.stmtConn = nil
}

// callColumnList is the columns a call's INSERT binds, in the order of
// the values insertCalls appends (callColumns of them).
const callColumnList = "start, duration_us, client_label, client_name, client_version, " +
	"session, endpoint, server, method, name, arguments, outcome, error, response_size, " +
	"response_preview, pid, tier, tool, unknown, decided_by, decision_allowed, decided_at"

// insertCallsPrefix is how a batch's INSERTs begin. OR FAIL rather than the
// default ABORT: an INSERT of many rows that may abort needs a statement
// journal, a copy of every page it changes, so that an error undoes its own
// rows and no others; the writer rolls the whole batch back on any error
// (commitRaw), so that copy bought nothing and cost about 0.7 µs a call
// (BenchmarkRecordJournaled: 11.2 → 10.5, medians of 5 interleaved runs).
const insertCallsPrefix = "INSERT OR FAIL INTO calls ("

// The statement of a batch's calls.
const insertCallsInto = insertCallsPrefix + callColumnList + ") VALUES "

// rawBatch runs one batch's statements on a driver connection.
type rawBatch struct {
	ctx   context.Context // rows run under it; it cannot end (see commitRaw)
	conn  driver.ConnPrepareContext
	stmts map[string]driver.Stmt // prepared on conn, kept by the writer
	args  []driver.NamedValue    // reused by every statement
}

// exec runs query (prepared at its first use on the connection) with args,
// converted as database/sql converts them.
func (b *rawBatch) exec(query string, args ...any) (driver.Result, error) {
	st := b.stmts[query]
	if st == nil {
		var err error
		if st, err = b.conn.PrepareContext(b.ctx, query); err != nil {
			return nil, err
		}
		b.stmts[query] = st
	}
	b.args = b.args[:0]
	for i, a := range args {
		v, err := driver.DefaultParameterConverter.ConvertValue(a)
		if err != nil {
			return nil, fmt.Errorf("argument %d of %.40q: %w", i+1, query, err)
		}
		b.args = append(b.args, driver.NamedValue{Ordinal: i + 1, Value: v})
	}
	sx, ok := st.(driver.StmtExecContext)
	if !ok {
		return nil, fmt.Errorf("history: the SQLite driver's statement (%T) has no ExecContext", st)
	}
	res, err := sx.ExecContext(b.ctx, b.args)
	clear(b.args) // let the row's values go
	return res, err
}

// commitRaw is commitBatch on the driver connection dc.
func (w *writer) commitRaw(ctx context.Context, dc any, batch []item) ([]Call, error) {
	conn, ok := dc.(interface {
		driver.ConnBeginTx
		driver.ConnPrepareContext
	})
	if !ok {
		return nil, fmt.Errorf("history: the SQLite driver's connection (%T) lacks a method the writer uses", dc)
	}
	if dc != w.stmtConn {
		// A new connection (the pool made another, or the database was
		// replaced): the statements of the old one are not used on it.
		// Those of a connection still open were closed by
		// closeStatements; a dead one's go with it.
		clear(w.stmts)
		w.stmtConn = dc
	}
	tx, err := conn.BeginTx(ctx, driver.TxOptions{})
	if err != nil {
		return nil, err
	}
	committed := false
	defer func() {
		if !committed {
			tx.Rollback()
		}
	}()
	// Rows are inserted under a context that cannot end: under one that
	// can, the driver starts a goroutine for each statement to watch it.
	// Once ctx ends the batch still stops, at the next row, and rolls back.
	b := &rawBatch{ctx: context.WithoutCancel(ctx), conn: conn, stmts: w.stmts, args: w.args}
	defer func() { w.args = b.args[:0] }()
	stored := w.stored[:0]
	values := !w.s.keepValues.Load() // redact credentials in values
	calls := w.batchCalls[:0]        // calls waiting for their insert
	defer func() { clear(calls); w.batchCalls = calls[:0] }()
	for _, it := range batch {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		switch {
		case it.call != nil:
			calls = append(calls, it.call)
			if len(calls) == callsPerInsert {
				stored, err = w.insertCalls(b, calls, stored, values)
				calls = calls[:0]
				// A batch of 512 calls takes milliseconds of CPU: on a
				// daemon running on one P (app/internal/procs), the calls
				// that arrive meanwhile wait for a statement, not for it.
				runtime.Gosched()
			}
		case it.event != nil:
			err = w.s.insertEvent(b, it.event, values)
		}
		if err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(calls) > 0 {
		if stored, err = w.insertCalls(b, calls, stored, values); err != nil {
			return nil, err
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	committed = true
	return stored, nil
}

// callsPerInsert is the most calls one INSERT statement writes. Each
// statement costs SQLite a fixed amount beside its rows (opening the table,
// its indexes and sqlite_sequence, AUTOINCREMENT's update of it): several
// rows a statement share it.
const callsPerInsert = 32

// callColumns is how many values insertCall binds for one call.
const callColumns = 22

// appendDecision appends the decision columns of a call to args: who
// decided ("" when nobody was asked), whether it was allowed, when.
func appendDecision(args []any, d *record.Decision) []any {
	if d == nil {
		return append(args, "", 0, int64(0))
	}
	allowed := 0
	if d.Allowed {
		allowed = 1
	}
	return append(args, d.By, allowed, d.At.UnixMicro())
}

// withDecision is c with d as stored: its time to the microsecond, in UTC.
func (c Call) withDecision(d *record.Decision) Call {
	if d != nil {
		at := time.UnixMicro(d.At.UnixMicro()).UTC()
		c.DecidedBy, c.DecisionAllowed, c.DecidedAt = d.By, d.Allowed, &at
	}
	return c
}

// callInsert returns the INSERT of n calls (1 ≤ n ≤ callsPerInsert), built
// once per n by the writer.
func (w *writer) callInsert(n int) string {
	if w.callInserts == nil {
		w.callInserts = make([]string, callsPerInsert+1)
	}
	if q := w.callInserts[n]; q != "" {
		return q
	}
	row := "(" + strings.Repeat("?,", callColumns-1) + "?)"
	q := insertCallsInto + strings.Repeat(row+",", n-1) + row
	w.callInserts[n] = q
	return q
}

// maxSharedInserts bounds the statements kept for shareColumns: beyond
// it, a new pattern of shared columns is written without sharing.
const maxSharedInserts = 64

// shareColumns returns the INSERT of n calls whose values are args (n rows
// of callColumns) and the values to bind to it: a column that holds the
// same value in every row is bound once, as a numbered parameter each row
// names (?1 ... ?k, before the rows' own values), rather than once a row.
// The driver copies every text it binds into memory of SQLite's, and
// takes SQLite's mutex to bind it and again to clear it, which cost about
// a quarter of what storing a call did; in a batch, most columns (the
// client, session, endpoint, server, tool, outcome, an empty error and
// decision) are the same for each call.
func (w *writer) shareColumns(n int, args []any) (string, []any) {
	var shared uint32 // bit c: column c is one value in every row
	if n > 1 {
		for c := range callColumns {
			v := args[c]
			same := true
			for r := 1; r < n && same; r++ {
				same = args[r*callColumns+c] == v
			}
			if same {
				shared |= 1 << c
			}
		}
	}
	key := uint64(n)<<32 | uint64(shared)
	q, ok := w.sharedInserts[key]
	if shared == 0 || !ok && len(w.sharedInserts) >= maxSharedInserts {
		return w.callInsert(n), args
	}
	if !ok {
		q = sharedInsert(n, shared)
		if w.sharedInserts == nil {
			w.sharedInserts = make(map[uint64]string)
		}
		w.sharedInserts[key] = q
	}
	out := w.rowArgs[:0]
	for c := range callColumns {
		if shared&(1<<c) != 0 {
			out = append(out, args[c])
		}
	}
	for r := range n {
		for c := range callColumns {
			if shared&(1<<c) == 0 {
				out = append(out, args[r*callColumns+c])
			}
		}
	}
	w.rowArgs = out
	return q, out
}

// sharedInsert is the INSERT of n calls whose columns in shared (bit c for
// column c) are bound once for all rows: see shareColumns. Its column list
// names the shared columns first, so that each row is ?1 ... ?k and then
// a bare ? for each of its own values, numbered on from k by SQLite: the
// driver asks SQLite the name of every parameter it binds and copies it
// into a Go string, which a bare ? has none of.
func sharedInsert(n int, shared uint32) string {
	names := strings.Split(callColumnList, ", ")
	var cols []string
	k := 0 // the shared columns' parameters are ?1 ... ?k
	for c, name := range names {
		if shared&(1<<c) != 0 {
			cols = append(cols, name)
			k++
		}
	}
	for c, name := range names {
		if shared&(1<<c) == 0 {
			cols = append(cols, name)
		}
	}
	var row strings.Builder
	row.WriteByte('(')
	for i := range len(names) {
		if i > 0 {
			row.WriteByte(',')
		}
		row.WriteByte('?')
		if i < k {
			row.WriteString(strconv.Itoa(i + 1))
		}
	}
	row.WriteByte(')')
	return insertCallsPrefix + strings.Join(cols, ", ") + ") VALUES " + strings.Repeat(row.String()+",", n-1) + row.String()
}

// insertCalls writes calls in one statement and appends them, with their
// ids, to stored when there is an OnCommit. One statement on the one
// writer connection gives its rows consecutive ids (AUTOINCREMENT: each
// one past the largest the table ever had), so the last row's id names
// them all; the statement's count of changed rows is checked against that.
func (w *writer) insertCalls(b *rawBatch, calls []*record.Call, stored []Call, values bool) ([]Call, error) {
	opts := &w.s.opts
	args := w.callArgs[:0]
	defer func() { clear(args); w.callArgs = args[:0]; clear(w.rowArgs); w.rowArgs = w.rowArgs[:0] }()
	var errTexts [callsPerInsert]string
	for i, c := range calls {
		var arguments any
		if a := prepareArguments(c.Arguments, opts.ArgumentsLimit, values); a != nil {
			arguments = string(a)
		}
		errTexts[i] = redactText(c.Error, values)
		l := &w.lastRow
		args = append(args, c.Start.UnixMicro(), c.Duration.Microseconds(), same(&l[2], c.ClientLabel),
			same(&l[3], c.ClientName), same(&l[4], c.ClientVersion), same(&l[5], c.Session), same(&l[6], c.Endpoint),
			same(&l[7], c.Server), same(&l[8], c.Method), same(&l[9], c.Name), arguments, same(&l[11], c.Outcome),
			errTexts[i], same(&l[13], int64(c.ResponseSize)), same(&l[14], preparePreview(c.Response, opts.PreviewLimit, values)),
			same(&l[15], int64(c.PID)), same(&l[16], c.Tier), same(&l[17], toolOf(c)), c.Unknown)
		args = appendDecision(args, c.Decision)
	}
	query, bound := w.shareColumns(len(calls), args)
	res, err := b.exec(query, bound...)
	if err != nil {
		return stored, err
	}
	last, err := res.LastInsertId()
	if err != nil {
		return stored, err
	}
	if n, err := res.RowsAffected(); err != nil || n != int64(len(calls)) {
		return stored, fmt.Errorf("history: inserting %d calls changed %d rows (%v)", len(calls), n, err)
	}
	first := last - int64(len(calls)) + 1
	if opts.OnCommit != nil {
		for i, c := range calls {
			stored = append(stored, Call{ID: first + int64(i), Start: time.UnixMicro(c.Start.UnixMicro()).UTC(), Duration: c.Duration.Truncate(time.Microsecond),
				ClientLabel: c.ClientLabel, ClientName: c.ClientName, ClientVersion: c.ClientVersion,
				Session: c.Session, Endpoint: c.Endpoint, Server: c.Server, Method: c.Method, Name: c.Name,
				Outcome: c.Outcome, Error: errTexts[i], ResponseSize: c.ResponseSize, PID: c.PID, Tier: c.Tier,
				Tool: toolOf(c), Unknown: c.Unknown}.withDecision(c.Decision))
		}
	}
	return stored, nil
}

// same returns v as an interface: *last when that holds v already, else a
// new one, kept in *last. Each new interface of a string or an int64 is an
// allocation, about ten a call; a batch's calls mostly repeat their client,
// session, server, tool and preview (see shareColumns), so the next call's
// columns take the last's.
func same[T comparable](last *any, v T) any {
	if p, ok := (*last).(T); ok && p == v {
		return *last
	}
	*last = v
	return *last
}

// toolOf is c's tool as its server calls it: c.Tool, which the gateway
// sets; for a call that does not carry it (one the journal carried over a
// crash), what migration 0006 derives for older calls: a tool's or
// prompt's name after the first "__" on an aggregated endpoint, else the
// name (a resource's URI whole).
func toolOf(c *record.Call) string {
	if c.Tool != "" {
		return c.Tool
	}
	if (c.Method == "tools/call" || c.Method == "prompts/get") && (c.Endpoint == "" || strings.HasPrefix(c.Endpoint, "p/")) {
		if i := strings.Index(c.Name, "__"); i > 0 {
			return c.Name[i+2:]
		}
	}
	return c.Name
}

// The search index (calls_fts) is not brought up to date by each batch:
// FTS5 then wrote a small segment per batch and merged the segments again
// and again, about a third of what storing a call cost; in bulk it costs
// a fraction of that. The writer adds the calls it has stored since last
// time (the tail: from search_index_state.unindexed_from on) when it has
// had nothing to commit for indexDelay, when the tail reaches indexChunk
// calls, and before a free-text search reads the index (Store.Calls and
// Export ask for it as a flush does: every call recorded before the
// search is found). The tail is in the database, so a crash loses none
// of it: the next run indexes it when it is first idle. Deleting a call
// of the tail leaves the index alone (the triggers of migration 0007).

// indexChunk is the most calls one transaction adds to the search index:
// about 40 ms of the writer's time, during which records queue.
const indexChunk = 16384

// defaultIndexDelay is Options.indexDelay's default.
const defaultIndexDelay = time.Second

// indexStep adds at most indexChunk calls of the tail to the search index
// in one transaction, and reports whether some of the tail is left for
// another. A failure is logged, and leaves the tail to the next step: when
// the writer next idles, after another chunk's worth of calls, or for a
// search (not after every batch, which would log it every batch).
func (w *writer) indexStep() (more bool) {
	s := w.s
	ctx := context.WithoutCancel(s.writeCtx) // see execStep
	tx, err := s.wdb().BeginTx(ctx, nil)
	if err == nil {
		var done bool
		if done, err = indexTail(ctx, tx, indexChunk); err == nil {
			if err = tx.Commit(); err == nil {
				if done {
					w.unindexed = 0
				} else {
					w.unindexed = max(w.unindexed-indexChunk, 1)
				}
				return !done
			}
		}
		tx.Rollback()
	}
	s.opts.Logger.Warn("history: adding calls to the search index", "err", err)
	if isCorrupt(err) {
		s.checkInBackground(0)
	}
	w.unindexed = 1
	return false
}

// indexAll brings the search index up to date, a chunk at a time, unless
// a step fails.
func (w *writer) indexAll() {
	for w.unindexed > 0 && w.indexStep() {
	}
}

// indexTail adds to the search index the calls from unindexed_from on, at
// most limit ids of them, and moves unindexed_from past them; it reports
// whether the index then holds every call. tx is a transaction on the
// writer connection: the rows and the mark change together.
func indexTail(ctx context.Context, tx execer, limit int64) (bool, error) {
	var from, end int64
	if err := tx.QueryRowContext(ctx, `SELECT unindexed_from, (SELECT coalesce(max(id), 0) + 1 FROM calls)
		FROM search_index_state`).Scan(&from, &end); err != nil {
		return false, fmt.Errorf("reading the search index's state: %w", err)
	}
	if from >= end {
		return true, nil
	}
	to := min(end, from+limit)
	if _, err := tx.ExecContext(ctx, `INSERT INTO calls_fts(rowid, name, arguments, error)
		SELECT id, name, arguments, error FROM calls WHERE id >= ?1 AND id < ?2`, from, to); err != nil {
		return false, fmt.Errorf("indexing calls %d to %d: %w", from, to-1, err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE search_index_state SET unindexed_from = ?`, to); err != nil {
		return false, fmt.Errorf("moving the search index's mark to %d: %w", to, err)
	}
	return to == end, nil
}
