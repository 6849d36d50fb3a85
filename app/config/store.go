package config

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/app/atomicfile"
)

// debounce is how long Watch waits after the last event for the file
// before reading it: editors write a file in several steps.
const debounce = 100 * time.Millisecond

// A Store holds the daemon's live configuration: the last good content of
// the config file. It is safe for concurrent use. Create it with NewStore;
// the zero Store is not usable.
//
// Two things change the configuration: Update (the daemon's own changes,
// e.g. from the GUI), which writes the file, and Watch, which picks up
// edits made by hand. They are serialized, and the store remembers the
// bytes it last read or wrote, so that
//
//   - Watch ignores the store's own writes (no callback for them);
//   - Update first adopts a hand edit that Watch has not picked up yet,
//     so the edit is not overwritten;
//   - Update refuses to overwrite a hand edit that has an error.
//
// A bad edit never replaces the configuration in force; it is reported by
// Problem until the file is fixed or Update writes a good one.
//
//	Update ──┐                      ┌── cur, good, seen, problem (mu)
//	         ├─ writeMu ─ read file ┤
//	Watch ───┘  (held while         └── onChange (Watch only)
//	            onChange runs)
type Store struct {
	path string
	log  *slog.Logger

	// writeMu serializes Update with Watch's reload-and-notify, so the file
	// is read, compared and written by one of them at a time and onChange
	// calls are ordered with Update's results.
	writeMu sync.Mutex

	mu sync.Mutex // guards the fields below
	// cur is the configuration in force; never handed out, only clones.
	cur *Config
	// problem is the error of the last failed (re)load; nil when the
	// file on disk is the one in force.
	problem error
	// good is the file content cur came from (or was written as).
	good fileState
	// seen is the file content Watch last looked at (or Update wrote), so
	// that the same content is not processed or reported twice.
	seen fileState

	// testHookReload, when set (by tests, before Watch), is called at
	// the end of each reload with "unchanged", "changed" or "problem".
	testHookReload func(outcome string)
}

// fileState is what a read of the config file found.
type fileState struct {
	exists bool
	data   []byte
}

func (a fileState) equal(b fileState) bool {
	return a.exists == b.exists && bytes.Equal(a.data, b.data)
}

func readState(path string) (fileState, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fileState{}, nil
	}
	if err != nil {
		return fileState{}, err
	}
	return fileState{exists: true, data: data}, nil
}

// NewStore loads the config file at path, as Load does (a missing file
// gives the defaults and is not created; an older version is archived and
// migrated), and returns a Store holding it. A file with a mistake in it
// (a syntax, type or validation error) gives a Store with the defaults and
// that error as its Problem, so the daemon runs and says what is wrong; a
// file too new for this binary, or one that cannot be read, is an error and
// there is no Store. A relative path is made absolute. A nil logger
// discards.
//
// Logging: Info when a file is migrated or a hand edit is adopted, Warn
// when a hand edit is rejected (with file, line, column and field).
func NewStore(path string, logger *slog.Logger) (*Store, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("config file %s: %w", path, err)
	}
	s := &Store{path: abs, log: logger}
	st, err := readState(abs)
	if err != nil {
		return nil, fmt.Errorf("loading config: %w", err)
	}
	cfg := Default()
	if st.exists {
		adopted, data, from, err := adopt(abs, st.data)
		var cerr *Error
		switch {
		case errors.Is(err, ErrNewerVersion) || (err != nil && !errors.As(err, &cerr)):
			return nil, err
		case err != nil:
			// A file with a mistake in it: run with no servers and report the
			// problem until the user fixes the file (Watch picks the fix up).
			// good stays empty, so Update will not overwrite the user's file.
			logger.Warn("config file has an error; running without its servers until it is fixed",
				"file", abs, "err", err)
			s.cur, s.seen, s.problem = cfg, st, err
			return s, nil
		}
		cfg, st.data = adopted, data
		s.logMigration(from)
	}
	s.cur, s.good, s.seen = cfg, st, st
	return s, nil
}

func (s *Store) logMigration(from int) {
	if from != CurrentVersion {
		s.log.Info("migrated config file", "file", s.path, "from", from, "to", CurrentVersion,
			"original", archivePath(s.path, from))
	}
}

// Path returns the absolute path of the config file.
func (s *Store) Path() string { return s.path }

// Current returns a copy of the configuration in force: the last good one.
func (s *Store) Current() *Config {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur.Clone()
}

// Problem returns the error of the last failed load of the file (an *Error
// for a bad edit; an error matching fs.ErrNotExist when the file was
// removed), or nil when the file on disk is the one in force.
func (s *Store) Problem() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.problem
}

// Update changes the configuration: it calls fn with a copy of the
// configuration in force, validates the result, saves it atomically and
// makes it the configuration in force, and returns a copy of it. Calls are
// serialized.
//
// If fn or validation fails, nothing is written and the error is returned
// as is (validation errors are *Error values with File set). If saving
// would not change the file, it is not rewritten.
//
// If the file was changed on disk since the store last read or wrote it
// (a hand edit Watch has not picked up yet), Update first loads it and
// applies fn to that, so the edit is kept. The returned configuration then
// includes the edit and Watch does not report it again; but if fn or
// validation fails, Watch still reports the edit to its callback. If that
// file has an error (or is too new), Update refuses and writes nothing, so
// the user's edit is not lost; the error is also recorded as the Problem.
// A removed file is written again.
//
// Update must not be called from a Watch callback: it would deadlock.
func (s *Store) Update(fn func(*Config) error) (*Config, error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()

	st, err := readState(s.path)
	if err != nil {
		return nil, fmt.Errorf("updating config: %w", err)
	}
	s.mu.Lock()
	base, good := s.cur, s.good
	s.mu.Unlock()

	disk := st
	if st.exists && !st.equal(good) {
		cfg, onDisk, from, err := adopt(s.path, st.data)
		if err != nil {
			s.mu.Lock()
			s.problem = err
			s.mu.Unlock()
			return nil, fmt.Errorf("%s was changed on disk and cannot be used, so it was left as it is; fix it first: %w", s.path, err)
		}
		s.logMigration(from)
		s.logAdopted(base, cfg)
		disk = fileState{exists: true, data: onDisk}
		s.mu.Lock()
		s.cur, s.good, s.problem = cfg, disk, nil
		s.mu.Unlock()
		base = cfg
	}

	next := base.Clone()
	if err := fn(next); err != nil {
		return nil, err
	}
	if e := next.validate(); e != nil {
		e.File = s.path
		return nil, e
	}
	data, err := next.encode()
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", s.path, err)
	}
	if !disk.exists || !bytes.Equal(data, disk.data) {
		if err := atomicfile.Write(s.path, data, defaultMode); err != nil {
			return nil, fmt.Errorf("saving config: %w", err)
		}
	}
	written := fileState{exists: true, data: data}
	s.mu.Lock()
	s.cur, s.good, s.seen, s.problem = next.Clone(), written, written, nil
	s.mu.Unlock()
	return next, nil
}

func (s *Store) logAdopted(old, cfg *Config) {
	added, changed, removed := DiffServers(old, cfg)
	s.log.Info("config file changed", "file", s.path,
		"added", added, "changed", changed, "removed", removed)
}

// Watch follows hand edits of the config file until ctx is done, then
// returns nil. It returns an error only if it cannot start watching (the
// directory must exist). Call it once, on its own goroutine.
//
// It watches the file's directory, not the file, because editors save by
// writing a new file and renaming it over the old one, and the file may
// not exist yet. (So when the path is a symbolic link, edits made through
// the link's target elsewhere are not seen.) After events for the file settle (about 100ms), it reads
// the file; if the content is what the store last read or wrote (its own
// Update, for instance), nothing happens. Otherwise:
//
//   - a good file (an older version is archived and migrated, as in Load)
//     becomes the configuration in force, Problem is cleared, and
//     onChange(cfg, nil) is called with a copy;
//   - a bad file leaves the configuration in force as it is, sets Problem,
//     is logged at Warn with its file, line and column, and
//     onChange(nil, err) is called;
//   - a removed file is treated like a bad one: the configuration in force
//     stays, and the next Update writes the file again.
//
// onChange (which may be nil) runs on Watch's goroutine while Update waits:
// keep it short, and do not call Update from it. Current and Problem may be
// called from it. Watch first checks the file once, to catch edits made
// between NewStore and Watch.
func (s *Store) Watch(ctx context.Context, onChange func(cfg *Config, err error)) error {
	if onChange == nil {
		onChange = func(*Config, error) {}
	}
	dir, name := filepath.Dir(s.path), filepath.Base(s.path)
	w, err := newDirWatcher(dir, name)
	if err != nil {
		return fmt.Errorf("watching config file %s: %w", s.path, err)
	}
	defer w.Close()

	s.reload(onChange)

	timer := time.NewTimer(debounce)
	timer.Stop()
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case changed, ok := <-w.Names():
			if !ok {
				return nil
			}
			if changed != name {
				continue
			}
			timer.Reset(debounce)
		case err, ok := <-w.Errors():
			if !ok {
				return nil
			}
			s.log.Warn("watching config file", "dir", dir, "err", err)
			// Events may have been lost; look at the file again.
			timer.Reset(debounce)
		case <-timer.C:
			s.reload(onChange)
		}
	}
}

// reload reads the file and, if it changed since last seen, adopts or
// reports it.
func (s *Store) reload(onChange func(*Config, error)) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()

	outcome := "unchanged"
	defer func() {
		if s.testHookReload != nil {
			s.testHookReload(outcome)
		}
	}()

	st, readErr := readState(s.path)
	s.mu.Lock()
	if readErr == nil && st.equal(s.seen) {
		s.mu.Unlock()
		return
	}
	s.seen = st
	old := s.cur
	s.mu.Unlock()

	var (
		cfg    *Config
		onDisk []byte
		from   int
		err    = readErr
	)
	switch {
	case err != nil:
		err = fmt.Errorf("reading config: %w", err)
	case !st.exists:
		err = &Error{File: s.path, Err: fmt.Errorf("the file was removed; the configuration loaded before stays in force and the file is written again on the next change: %w", fs.ErrNotExist)}
	default:
		cfg, onDisk, from, err = adopt(s.path, st.data)
	}

	if err != nil {
		outcome = "problem"
		s.mu.Lock()
		s.problem = err
		s.mu.Unlock()
		attrs := []any{"file", s.path, "err", err}
		var e *Error
		if errors.As(err, &e) {
			attrs = append(attrs, "line", e.Line, "column", e.Column, "field", e.Field)
		}
		s.log.Warn("config file has an error; keeping the configuration in force", attrs...)
		onChange(nil, err)
		return
	}

	outcome = "changed"
	s.logMigration(from)
	s.logAdopted(old, cfg)
	state := fileState{exists: true, data: onDisk}
	s.mu.Lock()
	s.cur, s.good, s.seen, s.problem = cfg, state, state, nil
	s.mu.Unlock()
	onChange(cfg.Clone(), nil)
}
