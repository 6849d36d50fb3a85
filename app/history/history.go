// Package history is Switchboard's record of what happened: every call
// through the gateway, every line a server wrote to stderr, every lifecycle
// event and every resource sample, in one SQLite database (history.db).
//
// Recording never slows the thing recorded. RecordCall and Observe only put
// the record on a bounded queue; one writer goroutine commits the queue in
// batches on the single writer connection. When the queue is full the record
// is dropped and Dropped counts it:
//
//	gateway ──RecordCall──┐                     ┌─ writer conn (1) ── history.db (WAL)
//	supervisor ──Observe──┼─▶ queue (bounded) ─▶ writer goroutine ─┤      ▲
//	                      └─ full: Dropped++    (batches ≤ 512,    │      │
//	                                             ≤ 50 ms)          │  read pool ◀── Calls, Stats,
//	                      retention goroutine ── small DELETEs ────┘      Logs, Export, ...
//
// Queries use a separate pool of read-only connections, which WAL lets run
// beside the writer. Retention (by age and by size) and the downsampling of
// resource samples run in the background in small transactions on the writer
// connection, so a batch of records never waits long behind them.
//
// history knows no HTTP: the api package serves the result types as they are.
package history

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	_ "modernc.org/sqlite" // the "sqlite" driver

	"github.com/switchboardhq/switchboard/app/record"
)

// Options configure a Store. The zero value of each field means its default.
type Options struct {
	// QueueSize bounds the records waiting for the writer (default 65536).
	QueueSize int
	// QueueBytes bounds the bytes of the records waiting for the writer
	// (their text, arguments and preview; default 16 MiB), so that a flood
	// of long log lines cannot take the daemon's memory. A batch is
	// committed without waiting once it holds a quarter of this, so that
	// the queue fills only when the writer cannot keep up.
	QueueBytes int64
	// BatchSize is the most records committed in one transaction (default 512).
	BatchSize int
	// BatchDelay is the longest a queued record waits for its batch to fill
	// before it is committed (default 50 ms) while calls are few.
	BatchDelay time.Duration
	// MaxBatchDelay is that wait under a steady stream of records (default
	// 4 × BatchDelay): each batch committed by the timer that held at
	// least an eighth of BatchSize doubles the wait, up to this; a smaller
	// one sets it back to BatchDelay. A commit costs SQLite a fixed amount
	// beside its rows (the WAL's frames for the pages every batch
	// changes): batches of 128 cost about 13 % more per call than batches
	// of 512 (a third more while each batch also indexed its calls for
	// search, before schema 7).
	// A call waiting for its batch is in the journal, so a crash loses
	// none of them either way; the live feed shows it that much later.
	MaxBatchDelay time.Duration
	// MaxAge is how long records are kept (default 30 days; negative: forever).
	MaxAge time.Duration
	// MaxBytes bounds the database's used size; past it the oldest calls and
	// log lines are deleted (default 1 GiB; negative: no bound).
	MaxBytes int64
	// RetentionInterval is how often retention and downsampling run in the
	// background (default 5 minutes; negative: never, the caller runs Retain).
	RetentionInterval time.Duration
	// ArgumentsLimit caps a call's stored arguments, in bytes after redaction
	// (default 16 KiB).
	ArgumentsLimit int
	// PreviewLimit caps a call's stored response preview (default 2 KiB).
	PreviewLimit int
	// KeepSecretValues turns value redaction off: credentials found inside
	// arguments, response previews, errors and log lines (sk-…, ghp_…,
	// JWTs, PEM keys: see package redact) are stored as they are. Fields
	// named like secrets are redacted either way. SetKeepSecretValues
	// changes it while the store runs.
	KeepSecretValues bool
	// Now is the clock used by retention and downsampling and for the name
	// of a corrupt file moved aside (default time.Now).
	Now func() time.Time
	// Logger receives the store's own problems: ERROR when the user should
	// know (a corrupt database was replaced), WARN when records were lost (a
	// batch failed to commit). Default: slog.Default().
	Logger *slog.Logger

	// OnCommit, if set, is called by the writer after each batch that holds
	// calls has committed, with those calls as Calls returns them (with their
	// ids; without arguments and preview), and Dropped as it is then. It
	// feeds the live event stream; it must return quickly, since the next
	// batch waits for it. The slice is the writer's, reused for the next
	// batch: OnCommit copies what it keeps.
	OnCommit func(calls []Call, dropped uint64)

	// Journal, if set, is the call journal the gateway notes calls in when
	// they start: each call with a Journal id is ended there once it is
	// stored (or dropped).
	Journal *Journal

	// recentWindow, if set, replaces the constant of that name (tests).
	recentWindow int64

	// indexDelay is how long the writer waits with nothing to commit
	// before it brings the search index up to date (default
	// defaultIndexDelay; tests shorten it).
	indexDelay time.Duration

	// beforeCommit, if set, runs in the writer before each batch commits
	// (tests use it to hold the writer).
	beforeCommit func()

	// beforeCheck, if set, runs in the background integrity check before
	// it reads the file (tests use it to hold the check).
	beforeCheck func()

	// CleanCheckDelay is how long after Open the integrity check of a
	// database whose last store closed cleanly waits before it reads the
	// file, so that it does not take the disk and a core from the
	// daemon's first requests (a damaged file is then found a few seconds
	// later; after an unclean stop it is checked at once). 0 means
	// DefaultCleanCheckDelay; negative, no delay.
	CleanCheckDelay time.Duration
}

// DefaultCleanCheckDelay is Options.CleanCheckDelay's default.
const DefaultCleanCheckDelay = 5 * time.Second

func (o *Options) setDefaults() {
	if o.CleanCheckDelay == 0 {
		o.CleanCheckDelay = DefaultCleanCheckDelay
	}
	if o.indexDelay <= 0 {
		o.indexDelay = defaultIndexDelay
	}
	if o.QueueSize <= 0 {
		o.QueueSize = 65536
	}
	if o.QueueBytes <= 0 {
		o.QueueBytes = 16 << 20
	}
	if o.BatchSize <= 0 {
		o.BatchSize = 512
	}
	if o.BatchDelay <= 0 {
		o.BatchDelay = 50 * time.Millisecond
	}
	if o.MaxBatchDelay < o.BatchDelay {
		o.MaxBatchDelay = 4 * o.BatchDelay
	}
	if o.MaxAge == 0 {
		o.MaxAge = 30 * 24 * time.Hour
	}
	if o.MaxBytes == 0 {
		o.MaxBytes = 1 << 30
	}
	if o.RetentionInterval == 0 {
		o.RetentionInterval = 5 * time.Minute
	}
	if o.ArgumentsLimit <= 0 {
		o.ArgumentsLimit = 16 << 10
	}
	if o.PreviewLimit <= 0 {
		o.PreviewLimit = 2 << 10
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
}

// ErrClosed is returned by a Store's methods after Close.
var ErrClosed = errors.New("history: store is closed")

// A Store is an open history database. It records the gateway's calls
// (RecordCall has the gateway.Recorder method set), and
// its Observe method takes the servers' events (record.Event, which the
// daemon makes of the supervisor's). All its methods are safe for
// concurrent use.
type Store struct {
	path     string
	opts     Options
	db       atomic.Pointer[conns] // replaced when a corrupt database is moved aside
	recovery atomic.Pointer[Recovery]
	// unclean is true when the database's open marker was left behind: the
	// last store on it did not close (the daemon was killed or crashed).
	unclean bool

	// The queue: the records waiting for the writer (see writer.go),
	// under mu.
	mu      sync.Mutex
	pending []item // records waiting for the writer, oldest first
	// pendingBytes is the size of pending (see itemSize).
	pendingBytes int64
	spare        []item // the array the writer last emptied, for the next swap
	// taken, when a Flush waits for room in a full queue, is closed when
	// the writer next takes the queue.
	taken   chan struct{}
	wake    chan struct{} // the writer has work (see enqueue)
	dropped atomic.Uint64
	// maxAge and maxBytes are Options.MaxAge and MaxBytes, changed by
	// SetRetention while the store runs.
	maxAge, maxBytes atomic.Int64
	// keepValues is Options.KeepSecretValues, changed by SetKeepSecretValues.
	keepValues atomic.Bool
	closed     atomic.Bool

	stop       chan struct{} // closed by Close: writer drains and exits, retention exits
	writeCtx   context.Context
	cancelW    context.CancelFunc // aborts the writer's last commits if Close's ctx ends
	writerDone chan struct{}
	retainDone chan struct{}
	closeOnce  sync.Once
	closeErr   error

	// The integrity check runs in the background (see checkInBackground);
	// a corrupt result reaches the writer on corrupt, which replaces the
	// database between two batches.
	checking atomic.Bool
	corrupt  chan error

	checkCtx   context.Context
	stopCheck  context.CancelFunc
	background sync.WaitGroup
}

// conns are the connections to one database file: the writer's (one
// connection) and the read-only pool.
type conns struct {
	w *sql.DB // the one writer connection
	r *sql.DB // read-only pool
}

func (c *conns) close() error {
	var errR error
	if c.r != nil {
		errR = c.r.Close()
	}
	return errors.Join(errR, c.w.Close())
}

// A write on the writer connection must not be interrupted inside a
// statement: SQLite interrupted in one, or database/sql rolling back a
// transaction whose own context ended, makes database/sql drop the
// connection, and modernc.org/sqlite (v1.62.0) then leaves that
// connection's files open. On Windows the database could then not be
// deleted or replaced until the process exits
// (TestStoppedRetentionLeavesNoFileOpen). So retention, which Close stops,
// goes through these: each statement checks ctx before it starts and then
// runs to its end; every one is bounded (a chunk of rows, a few pages), so a
// stop waits for one at most. (The writer's batches already insert under a
// context that cannot end; a migration keeps Open's context, since an Open
// that gives up ends the daemon.)

// execer is a *sql.DB or a *sql.Tx.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// execStep runs one statement on db unless ctx has ended.
func execStep(ctx context.Context, db execer, query string, args ...any) (sql.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return db.ExecContext(context.WithoutCancel(ctx), query, args...)
}

// scanStep runs one query on db unless ctx has ended, and scans its row
// into dest.
func scanStep(ctx context.Context, db execer, query string, args []any, dest ...any) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return db.QueryRowContext(context.WithoutCancel(ctx), query, args...).Scan(dest...)
}

// beginTx starts a transaction on db unless ctx has ended; the end of ctx
// does not roll it back (the caller's deferred Rollback does).
func beginTx(ctx context.Context, db *sql.DB) (*sql.Tx, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return db.BeginTx(context.WithoutCancel(ctx), nil)
}

// wdb is the writer connection, rdb the read-only pool, of the database
// in use.
func (s *Store) wdb() *sql.DB { return s.db.Load().w }
func (s *Store) rdb() *sql.DB { return s.db.Load().r }

// item is one entry of the queue: a call, an event, or a flush request
// (with index, a search's: see indexTail).
type item struct {
	call  *record.Call
	event *record.Event
	flush chan error
	index bool
}

// Open opens (creating if needed) the history database at path, brings its
// schema up to date and starts the writer and retention goroutines. It does
// not read the whole file: the daemon serves at once, whatever the size of
// its history.
//
// A database with a newer schema than this binary knows is refused with a
// *VersionError. A file that is not a database is moved aside to
// <path>.corrupt-<timestamp> and a new database created: Recovered then
// reports it, and it is logged at ERROR. The integrity check (PRAGMA
// quick_check, which reads every page: about a minute for 1 GB) runs at
// every Open (after Options.CleanCheckDelay when the last store closed
// cleanly), and again when a commit finds the file damaged, always in
// the background: Open does not wait for it, records keep being queued and
// committed meanwhile, and a corrupt database is moved aside and replaced
// by a new one between two batches. A file can be damaged while no store
// has it open (a disk error, another program), so a clean stop before is
// no reason to skip the check; Unclean says whether the last store closed.
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	opts.setDefaults()
	if strings.ContainsAny(path, "?#") {
		return nil, fmt.Errorf("history: database path %q may not contain ? or #", path)
	}
	c, err := openConns(ctx, path)
	var rec *Recovery
	if err != nil && isCorrupt(err) {
		if rec, err = replaceCorrupt(path, err, opts.Now()); err != nil {
			return nil, err
		}
		opts.Logger.Error(rec.String(), "path", path, "movedTo", rec.MovedTo, "err", rec.Reason)
		c, err = openConns(ctx, path)
	}
	if err != nil {
		return nil, err
	}
	unclean, err := markOpen(path)
	if err != nil {
		c.close()
		return nil, err
	}
	s := &Store{path: path, opts: opts, unclean: unclean,
		wake:       make(chan struct{}, 1),
		stop:       make(chan struct{}),
		writerDone: make(chan struct{}),
		retainDone: make(chan struct{}),
		corrupt:    make(chan error, 1),
	}
	s.db.Store(c)
	if rec != nil {
		s.recovery.Store(rec)
	}
	s.maxAge.Store(int64(opts.MaxAge))
	s.maxBytes.Store(opts.MaxBytes)
	s.keepValues.Store(opts.KeepSecretValues)
	s.writeCtx, s.cancelW = context.WithCancel(context.Background())
	s.checkCtx, s.stopCheck = context.WithCancel(context.Background())
	go newWriter(s).run()
	go s.retainLoop()
	if rec == nil {
		delay := opts.CleanCheckDelay
		if unclean {
			opts.Logger.Info("history: the last daemon did not stop cleanly; checking the database in the background", "path", path)
			delay = 0
		}
		s.checkInBackground(delay)
	}
	return s, nil
}

// replaceCorrupt moves a corrupt database aside, for a new one to be
// created at path.
func replaceCorrupt(path string, reason error, now time.Time) (*Recovery, error) {
	moved, err := moveAside(path, now)
	if err != nil {
		return nil, fmt.Errorf("history: %s is corrupt (%v) and could not be moved aside: %w", path, reason, err)
	}
	return &Recovery{Path: path, MovedTo: moved, Reason: reason.Error(), Time: now}, nil
}

// Recovered reports whether the store replaced a corrupt database (at
// Open, or later when the background check found it damaged), and how;
// nil if it did not.
func (s *Store) Recovered() *Recovery { return s.recovery.Load() }

// Unclean reports whether the last store on this database did not close:
// the daemon before this one was killed or crashed.
func (s *Store) Unclean() bool { return s.unclean }

// Checking reports whether the background integrity check is running.
func (s *Store) Checking() bool { return s.checking.Load() }

// Path is the database file.
func (s *Store) Path() string { return s.path }

// markerSuffix names the file that exists while a store has the database
// open: left behind, it says the store did not close.
const markerSuffix = ".open"

// markOpen creates the open marker of path and says whether it was there.
func markOpen(path string) (bool, error) {
	f, err := os.OpenFile(path+markerSuffix, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("history: marking %s open: %w", path, err)
	}
	return false, f.Close()
}

func dsn(path string, params ...string) string {
	base := []string{"_busy_timeout=10000", "_foreign_keys=1", "_synchronous=NORMAL", "_pragma=temp_store(MEMORY)"}
	return path + "?" + strings.Join(append(base, params...), "&")
}

// openConns opens the database at path (creating it if needed) and brings
// its schema up to date.
func openConns(ctx context.Context, path string) (_ *conns, err error) {
	// The database holds what the user's tools were asked and answered:
	// only the user may read it. SQLite creates -wal and -shm with the
	// mode of the database file, so creating that 0600 first covers them.
	if err := makePrivate(path, true); err != nil {
		return nil, err
	}
	// auto_vacuum=INCREMENTAL takes effect only on a new database: it lets
	// retention hand freed pages back to the file system. The writer keeps
	// 1 MiB of pages (SQLite's default is 2 MB): appending calls touches
	// the right edges of the table and its indexes, far fewer pages; a
	// larger cache only kept what the search index's bulk steps read
	// (about 1 MiB more of the daemon's RSS under load, with no less CPU).
	w, err := sql.Open("sqlite", dsn(path, "_auto_vacuum=INCREMENTAL", "_journal_mode=WAL", "_txlock=immediate", "_pragma=cache_size(-1024)"))
	if err != nil {
		return nil, err
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	c := &conns{w: w}
	defer func() {
		if err != nil {
			c.close()
		}
	}()
	if err := w.PingContext(ctx); err != nil {
		return nil, fmt.Errorf("history: open %s: %w", path, err)
	}
	var version int
	if err := w.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return nil, fmt.Errorf("history: open %s: %w", path, err)
	}
	if version > SchemaVersion {
		return nil, &VersionError{Path: path, Have: version, Known: SchemaVersion}
	}
	// Reading the schema finds a file that is not a database at all; the
	// rest of it is checked in the background when there is reason to.
	if _, err := w.ExecContext(ctx, "SELECT count(*) FROM sqlite_master"); err != nil {
		return nil, fmt.Errorf("history: open %s: %w", path, err)
	}
	if err := migrate(ctx, w, path, SchemaVersion); err != nil {
		return nil, err
	}
	// Files left by an older Switchboard, or made under another umask.
	for _, suffix := range []string{"-wal", "-shm"} {
		if err := makePrivate(path+suffix, false); err != nil {
			return nil, err
		}
	}
	if c.r, err = sql.Open("sqlite", dsn(path, "_query_only=1")); err != nil {
		return nil, err
	}
	c.r.SetMaxOpenConns(4)
	c.r.SetMaxIdleConns(4)
	if err := c.r.PingContext(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// checkInBackground runs the integrity check on a connection of its own
// after delay (if positive), unless one is running; a corrupt result goes
// to the writer.
func (s *Store) checkInBackground(delay time.Duration) {
	if !s.checking.CompareAndSwap(false, true) {
		return
	}
	s.background.Go(func() {
		defer s.checking.Store(false)
		if delay > 0 {
			t := time.NewTimer(delay)
			defer t.Stop()
			select {
			case <-t.C:
			case <-s.checkCtx.Done():
				return
			}
		}
		if s.opts.beforeCheck != nil {
			s.opts.beforeCheck()
		}
		start := time.Now()
		db, err := sql.Open("sqlite", dsn(s.path, "_query_only=1"))
		if err != nil {
			s.opts.Logger.Warn("history: cannot check the database", "err", err)
			return
		}
		defer db.Close()
		db.SetMaxOpenConns(1)
		err = checkIntegrity(s.checkCtx, db)
		switch {
		case err == nil:
			s.opts.Logger.Info("history: the database is intact", "path", s.path, "took", time.Since(start).Round(time.Millisecond))
		case isCorrupt(err):
			select {
			case s.corrupt <- err:
			default:
			}
		case s.checkCtx.Err() != nil: // closing
		default:
			s.opts.Logger.Warn("history: cannot check the database", "err", err)
		}
	})
}

// replaceDatabase moves a database found corrupt aside and goes on with a
// new one. It runs on the writer goroutine, between batches; queries that
// were running on the old connections fail.
func (s *Store) replaceDatabase(reason error) {
	old := s.db.Load()
	if err := old.close(); err != nil {
		s.opts.Logger.Warn("history: closing the corrupt database", "err", err)
	}
	rec, err := replaceCorrupt(s.path, reason, s.opts.Now())
	if err != nil {
		s.opts.Logger.Error("history: the database is corrupt and could not be replaced", "err", err)
		return
	}
	ctx, cancel := context.WithTimeout(s.writeCtx, 30*time.Second)
	defer cancel()
	c, err := openConns(ctx, s.path)
	if err != nil {
		s.opts.Logger.Error("history: cannot create a new database after moving the corrupt one aside", "err", err)
		return
	}
	s.db.Store(c)
	s.recovery.Store(rec)
	s.opts.Logger.Error(rec.String(), "path", s.path, "movedTo", rec.MovedTo, "err", rec.Reason)
}

// FileMode is the mode of history.db and its -wal and -shm files.
const FileMode = 0o600

// makePrivate sets the file at path to FileMode, whatever the umask,
// creating it empty first if create is set (SQLite takes an empty file for
// a new database). A missing file is left missing when create is not set.
func makePrivate(path string, create bool) error {
	if create {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, FileMode)
		if err != nil {
			return fmt.Errorf("history: creating %s: %w", path, err)
		}
		f.Close()
	}
	info, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) && !create {
		return nil
	}
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	// Windows has no mode bits (Go reports 0666; Chmod only toggles the
	// read-only attribute), and the files are private by the ACL of the
	// per-user data directory. Chmod there only fails where SQLite holds
	// the -shm file open (Wine answers it with a sharing violation).
	if runtime.GOOS != "windows" && info.Mode().Perm() != FileMode {
		if err := os.Chmod(path, FileMode); err != nil {
			return fmt.Errorf("history: making %s private: %w", path, err)
		}
	}
	return nil
}

// RecordCall queues a call for the writer. It never blocks: when the queue is
// full, or the store is closed, the call is dropped and Dropped rises.
func (s *Store) RecordCall(c record.Call) {
	if len(c.Response) > previewLimitForRedaction {
		// Too big to be parsed for the preview, which is then only its
		// start: keep that, not the whole result while it waits.
		c.Response = bytes.Clone(c.Response[:s.opts.PreviewLimit+utf8.UTFMax])
	}
	s.enqueue(item{call: &c})
}

// itemOverhead is what a queued record costs beside its text.
const itemOverhead = 256

// itemSize is what it holds in memory while queued, roughly.
func itemSize(it item) int64 {
	switch {
	case it.call != nil:
		c := it.call
		return int64(itemOverhead + len(c.Arguments) + len(c.Response) + len(c.Error) + len(c.Name))
	case it.event != nil:
		return int64(itemOverhead + len(it.event.Message))
	}
	return 0
}

// Observe queues an event of a server: EventLog lines go to the logs,
// EventUsage samples to the samples, every other kind (the supervisor's
// lifecycle, and kinds the daemon defines itself, such as a config change)
// to the events. Like RecordCall it never blocks.
func (s *Store) Observe(ev record.Event) {
	if ev.Kind == record.EventUsage && ev.Usage == nil {
		return
	}
	s.enqueue(item{event: &ev})
}

// enqueue adds it to the pending records under a mutex: no channel send,
// so no goroutine is woken per record. The writer is woken only by the
// first record of a batch (it then waits BatchDelay for more) and by the
// record that fills a batch (see batchReady), not by each one after it: a
// wake left over from those would cut the next batch short.
func (s *Store) enqueue(it item) {
	if s.closed.Load() {
		s.drop(it)
		return
	}
	size := itemSize(it)
	s.mu.Lock()
	if len(s.pending) >= s.opts.QueueSize || s.pendingBytes+size > s.opts.QueueBytes {
		s.mu.Unlock()
		s.drop(it)
		return
	}
	s.pending = append(s.pending, it)
	filled := s.pendingBytes < s.batchBytes() && s.pendingBytes+size >= s.batchBytes()
	s.pendingBytes += size
	n := len(s.pending)
	s.mu.Unlock()
	if n == 1 || n == s.opts.BatchSize || filled {
		s.wakeWriter()
	}
}

// drop counts a record lost; a journaled call is ended in the journal, since
// it will not be stored.
func (s *Store) drop(it item) {
	s.dropped.Add(1)
	if it.call != nil && it.call.Journal != 0 && s.opts.Journal != nil {
		s.opts.Journal.End(it.call.Journal)
	}
}

// wakeWriter tells the writer there is work; a wake already pending is
// enough.
func (s *Store) wakeWriter() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// SetKeepSecretValues turns value redaction off (keep true) or on for the
// records committed from now on; see Options.KeepSecretValues.
func (s *Store) SetKeepSecretValues(keep bool) { s.keepValues.Store(keep) }

// RedactText returns text with credentials replaced as the store replaces
// them in what it records (as it is when value redaction is off), for the
// live views of the same records.
func (s *Store) RedactText(text string) string { return redactText(text, !s.keepValues.Load()) }

// Dropped counts the records lost since Open: dropped because the queue was
// full or the store closed, or lost in a batch that failed to commit.
func (s *Store) Dropped() uint64 { return s.dropped.Load() }

// Flush waits until every record queued before it is committed, and returns
// the error of the commit that included them, if any. Unlike RecordCall it
// blocks (until ctx ends) if the queue is full.
func (s *Store) Flush(ctx context.Context) error { return s.flush(ctx, false) }

// flush is Flush; with index, the writer also brings the search index up
// to date before it answers (see indexTail).
func (s *Store) flush(ctx context.Context, index bool) error {
	if s.closed.Load() {
		return ErrClosed
	}
	done := make(chan error, 1)
	// A flush waits for room rather than being dropped: until the writer
	// next takes the queue.
	for {
		s.mu.Lock()
		if len(s.pending) < s.opts.QueueSize+1 {
			s.pending = append(s.pending, item{flush: done, index: index})
			s.mu.Unlock()
			break
		}
		if s.taken == nil {
			s.taken = make(chan struct{})
		}
		taken := s.taken
		s.mu.Unlock()
		s.wakeWriter()
		select {
		case <-taken:
		case <-s.writerDone:
			return ErrClosed
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	s.wakeWriter()
	select {
	case err := <-done:
		return err
	case <-s.writerDone:
		// The writer answers every flush it took before it exits; one
		// still queued is lost with the store.
		select {
		case err := <-done:
			return err
		default:
			return ErrClosed
		}
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close commits what is queued, stops the goroutines and closes the
// database. If ctx ends first, the writer's commit in progress is abandoned
// and the rest of the queue lost. Records offered after Close are dropped.
func (s *Store) Close(ctx context.Context) error {
	s.closeOnce.Do(func() {
		s.closed.Store(true)
		s.stopCheck()
		s.background.Wait()
		close(s.stop)
		for _, done := range []chan struct{}{s.writerDone, s.retainDone} {
			select {
			case <-done:
			case <-ctx.Done():
				s.cancelW()
				<-done
				s.closeErr = ctx.Err()
			}
		}
		s.cancelW()
		s.closeErr = errors.Join(s.closeErr, s.db.Load().close())
		if s.closeErr == nil {
			// Closed cleanly: the next Open need not check the file.
			if err := os.Remove(s.path + markerSuffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
				s.closeErr = err
			}
		}
	})
	return s.closeErr
}

// batchReady reports whether the pending records should be committed
// without waiting: a full batch (BatchSize records, or a quarter of
// QueueBytes), a full queue (when QueueSize is below BatchSize), or a
// flush among them.
func (s *Store) batchReady() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.pending); n >= s.opts.BatchSize || n >= s.opts.QueueSize || s.pendingBytes >= s.batchBytes() {
		return true
	}
	for _, it := range s.pending {
		if it.flush != nil {
			return true
		}
	}
	return false
}

// batchBytes is the size of queued records that makes a batch full,
// however few they are: a quarter of QueueBytes.
func (s *Store) batchBytes() int64 { return s.opts.QueueBytes / 4 }

// hasPending reports whether any record or flush waits for the writer.
func (s *Store) hasPending() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.pending) > 0
}

// take hands the writer every pending record, and tells a Flush waiting
// for room that there is some.
func (s *Store) take() []item {
	s.mu.Lock()
	defer s.mu.Unlock()
	items := s.pending
	s.pending = s.spare[:0]
	s.spare = nil
	s.pendingBytes = 0
	if s.taken != nil {
		close(s.taken)
		s.taken = nil
	}
	return items
}

// giveBack returns the array of items, committed, for the next swap.
func (s *Store) giveBack(items []item) {
	clear(items)
	s.mu.Lock()
	s.spare = items[:0]
	s.mu.Unlock()
}

// insertEvent writes one server event of a batch: EventLog lines to
// the logs, EventUsage samples to the samples, every other kind to the
// events; values says whether credentials in its text are redacted.
func (s *Store) insertEvent(b *rawBatch, ev *record.Event, values bool) error {
	t := ev.Time
	if t.IsZero() {
		t = s.opts.Now()
	}
	var err error
	switch ev.Kind {
	case record.EventLog:
		_, err = b.exec(insertLog, t.UnixMicro(), ev.Server, ev.PID, ev.Stream, redactText(ev.Message, values))
	case record.EventUsage:
		u := ev.Usage
		_, err = b.exec(insertSample, t.UnixMicro(), ev.Server, u.CPUPercent, int64(u.RSSBytes), u.Processes)
	default:
		msg := redactText(ev.Message, values)
		if msg == "" && ev.Delay > 0 {
			msg = "next start in " + ev.Delay.String()
		}
		_, err = b.exec(insertEvent, t.UnixMicro(), ev.Server, string(ev.Kind), ev.PID, ev.Exit, msg, ev.State)
	}
	return err
}

// The statements of an event.
const (
	insertLog    = `INSERT INTO logs (time, server, pid, stream, text) VALUES (?,?,?,?,?)`
	insertEvent  = `INSERT INTO events (time, server, kind, pid, exit, message, state) VALUES (?,?,?,?,?,?,?)`
	insertSample = `INSERT INTO samples (time, server, cpu, rss, processes) VALUES (?,?,?,?,?)`
)
