package config

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// waitTimeout bounds every wait for the watcher; generous for slow CI.
const waitTimeout = 10 * time.Second

// recorder is a slog.Handler that keeps records for assertions.
type recorder struct {
	mu      sync.Mutex
	records []slog.Record
}

func (r *recorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.records = append(r.records, rec.Clone())
	return nil
}
func (r *recorder) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *recorder) WithGroup(string) slog.Handler      { return r }

// find returns the attributes of the first record at level, or nil.
func (r *recorder) find(level slog.Level) map[string]slog.Value {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rec := range r.records {
		if rec.Level != level {
			continue
		}
		attrs := map[string]slog.Value{}
		rec.Attrs(func(a slog.Attr) bool {
			attrs[a.Key] = a.Value
			return true
		})
		return attrs
	}
	return nil
}

// writeFile replaces path's content in place, like a simple editor.
func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// configWith returns a version 1 file with servers of the given names.
func configWith(names ...string) string {
	cfg := Default()
	for _, n := range names {
		cfg.Servers[n] = Server{Command: "run-" + n}
	}
	data, err := cfg.encode()
	if err != nil {
		panic(err)
	}
	return string(data)
}

func serverNames(c *Config) []string {
	var names []string
	for n := range c.Servers {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

type change struct {
	cfg *Config
	err error
}

// watched is a Store with Watch running on it, and channels reporting what
// the watcher does.
type watched struct {
	*Store
	log     *recorder
	changes chan change
	reloads chan string
}

// startWatch opens a Store on path, starts Watch, and waits for its first
// check of the file. Cleanup stops Watch and checks that it returns nil.
func startWatch(t *testing.T, path string) *watched {
	t.Helper()
	rec := &recorder{}
	s, err := NewStore(path, slog.New(rec))
	if err != nil {
		t.Fatal(err)
	}
	w := &watched{Store: s, log: rec, changes: make(chan change, 100), reloads: make(chan string, 100)}
	s.testHookReload = func(outcome string) { w.reloads <- outcome }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- s.Watch(ctx, func(cfg *Config, err error) { w.changes <- change{cfg, err} })
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Watch returned %v, want nil", err)
			}
		case <-time.After(waitTimeout):
			t.Errorf("Watch did not return after its context was cancelled")
		}
	})
	w.waitReload(t, "unchanged")
	return w
}

func (w *watched) waitReload(t *testing.T, want string) {
	t.Helper()
	select {
	case got := <-w.reloads:
		if got != want {
			t.Fatalf("reload outcome = %q, want %q", got, want)
		}
	case <-time.After(waitTimeout):
		t.Fatalf("no reload within %v", waitTimeout)
	}
}

func (w *watched) waitChange(t *testing.T) change {
	t.Helper()
	select {
	case c := <-w.changes:
		return c
	case <-time.After(waitTimeout):
		t.Fatalf("no onChange call within %v", waitTimeout)
		return change{}
	}
}

func (w *watched) noChange(t *testing.T) {
	t.Helper()
	select {
	case c := <-w.changes:
		t.Fatalf("unexpected onChange(%v, %v)", c.cfg, c.err)
	default:
	}
}

func TestStoreMissingFile(t *testing.T) {
	dir := t.TempDir()
	s, err := NewStore(filepath.Join(dir, FileName), nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Default(), s.Current(), cmpOpts); diff != "" {
		t.Errorf("Current() mismatch (-want +got):\n%s", diff)
	}
	if s.Problem() != nil || s.Path() != filepath.Join(dir, FileName) {
		t.Errorf("Problem() = %v, Path() = %q", s.Problem(), s.Path())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("NewStore created files")
	}
}

func TestNewStoreErrors(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	writeFile(t, path, `{"version": 9}`)
	if _, err := NewStore(path, nil); !errors.Is(err, ErrNewerVersion) {
		t.Errorf("NewStore(newer file) error = %v, want ErrNewerVersion", err)
	}
	// A mistake in the file: the store runs on defaults, reports the
	// problem with its position, and refuses to overwrite the user's file.
	writeFile(t, path, `{"version": 1,}`)
	s, err := NewStore(path, nil)
	if err != nil {
		t.Fatalf("NewStore(broken file) = %v, want a store reporting the problem", err)
	}
	if e := asError(t, s.Problem()); e.Line != 1 || e.Column != 15 {
		t.Errorf("Problem() = %v, want position 1:15", s.Problem())
	}
	if got := s.Current(); len(got.Servers) != 0 || got.Listen != DefaultListen {
		t.Errorf("Current() with a broken file = %+v, want the defaults", got)
	}
	if _, err := s.Update(func(c *Config) error { return nil }); err == nil {
		t.Error("Update overwrote a broken hand-edited file")
	}
	if data, _ := os.ReadFile(path); string(data) != `{"version": 1,}` {
		t.Errorf("broken file changed to %q", data)
	}
}

func TestStoreUpdate(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	s, err := NewStore(path, nil)
	if err != nil {
		t.Fatal(err)
	}

	fnErr := errors.New("not today")
	if _, err := s.Update(func(c *Config) error {
		c.Servers["a"] = Server{Command: "a"}
		return fnErr
	}); !errors.Is(err, fnErr) {
		t.Errorf("Update with failing fn = %v, want %v", err, fnErr)
	}
	_, err = s.Update(func(c *Config) error {
		c.Servers["a"] = Server{Command: "a", Pool: Pool{Max: 100}}
		return nil
	})
	if e := asError(t, err); e.Field != "servers.a.pool.max" || e.File != path {
		t.Errorf("Update with invalid result = %v, want an error for %s servers.a.pool.max", err, path)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("failed Updates wrote the file: %v", err)
	}
	if len(s.Current().Servers) != 0 {
		t.Fatalf("failed Updates changed Current(): %v", s.Current().Servers)
	}

	got, err := s.Update(func(c *Config) error {
		c.Servers["a"] = Server{Command: "a", Args: []string{"x"}}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	onDisk, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(got, onDisk, cmpOpts); diff != "" {
		t.Errorf("file differs from Update's result (-update +file):\n%s", diff)
	}
	if diff := cmp.Diff(got, s.Current(), cmpOpts); diff != "" {
		t.Errorf("Current() differs from Update's result (-update +current):\n%s", diff)
	}
	got.Servers["a"].Args[0] = "mutated"
	if s.Current().Servers["a"].Args[0] != "x" {
		t.Errorf("changing Update's result changed the store")
	}

	// An Update that changes nothing does not rewrite the file.
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update(func(*Config) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); !fi.ModTime().Equal(old) {
		t.Errorf("no-op Update rewrote the file")
	}
}

func TestStoreUpdateAfterHandEdit(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	writeFile(t, path, configWith("a"))
	s, err := NewStore(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, configWith("a", "hand"))

	got, err := s.Update(func(c *Config) error {
		c.Servers["gui"] = Server{Command: "gui"}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a", "gui", "hand"}
	if diff := cmp.Diff(want, serverNames(got)); diff != "" {
		t.Errorf("Update result servers (-want +got):\n%s", diff)
	}
	onDisk, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, serverNames(onDisk)); diff != "" {
		t.Errorf("file servers (-want +got):\n%s", diff)
	}
}

func TestStoreUpdateRefusesBrokenHandEdit(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	writeFile(t, path, configWith("a"))
	s, err := NewStore(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	const broken = "{\n  \"version\": 1,\n  \"servers\": {\"a\": {\"command\": \"a\",}}\n}\n"
	writeFile(t, path, broken)

	_, err = s.Update(func(c *Config) error {
		c.Servers["gui"] = Server{Command: "gui"}
		return nil
	})
	if e := asError(t, err); e.Line != 3 || e.Column != 36 {
		t.Errorf("Update error = %v, want the file's syntax error at 3:36", err)
	}
	if got, _ := os.ReadFile(path); string(got) != broken {
		t.Errorf("Update overwrote the broken hand edit:\n%s", got)
	}
	if s.Problem() == nil {
		t.Errorf("Problem() = nil after a broken hand edit")
	}
	if diff := cmp.Diff([]string{"a"}, serverNames(s.Current())); diff != "" {
		t.Errorf("Current() servers (-want +got):\n%s", diff)
	}

	writeFile(t, path, configWith("a", "fixed"))
	got, err := s.Update(func(c *Config) error {
		c.Servers["gui"] = Server{Command: "gui"}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a", "fixed", "gui"}, serverNames(got)); diff != "" {
		t.Errorf("servers after the fix (-want +got):\n%s", diff)
	}
	if s.Problem() != nil {
		t.Errorf("Problem() = %v after a good Update", s.Problem())
	}
}

func TestStoreUpdateRewritesRemovedFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	writeFile(t, path, configWith("a"))
	s, err := NewStore(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update(func(*Config) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(path); err != nil || string(got) != configWith("a") {
		t.Errorf("file after Update = %q, %v; want it written again", got, err)
	}
}

func TestStoreWatchGoodBadFixed(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	writeFile(t, path, configWith("a"))
	w := startWatch(t, path)

	// A good edit is delivered and becomes current.
	writeFile(t, path, configWith("a", "b"))
	c := w.waitChange(t)
	if c.err != nil || c.cfg == nil {
		t.Fatalf("onChange(%v, %v), want a config", c.cfg, c.err)
	}
	if diff := cmp.Diff([]string{"a", "b"}, serverNames(c.cfg)); diff != "" {
		t.Errorf("delivered servers (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(c.cfg, w.Current(), cmpOpts); diff != "" {
		t.Errorf("Current() differs from the delivered config (-delivered +current):\n%s", diff)
	}

	// A bad edit keeps the old configuration and reports a Problem.
	const bad = "{\n  \"version\": 1,\n  \"servers\": {\n    \"a\": {\"command\": \"a\", \"pool\": {\"max\": \"two\"}}\n  }\n}\n"
	writeFile(t, path, bad)
	c = w.waitChange(t)
	if c.cfg != nil || c.err == nil {
		t.Fatalf("onChange(%v, %v), want only an error", c.cfg, c.err)
	}
	e := asError(t, c.err)
	line, col := position(t, bad, `"two"`)
	if e.File != path || e.Line != line || e.Column != col || e.Field != "servers.a.pool.max" {
		t.Errorf("error = %v, want %s:%d:%d servers.a.pool.max", c.err, path, line, col)
	}
	if w.Problem() != c.err {
		t.Errorf("Problem() = %v, want %v", w.Problem(), c.err)
	}
	if diff := cmp.Diff([]string{"a", "b"}, serverNames(w.Current())); diff != "" {
		t.Errorf("Current() after a bad edit (-want +got):\n%s", diff)
	}
	attrs := w.log.find(slog.LevelWarn)
	if attrs == nil || attrs["file"].String() != path || attrs["line"].Int64() != int64(line) || attrs["column"].Int64() != int64(col) {
		t.Errorf("Warn log attributes = %v, want file, line %d and column %d", attrs, line, col)
	}

	// A fixed edit clears the Problem.
	writeFile(t, path, configWith("a", "c"))
	c = w.waitChange(t)
	if c.err != nil || c.cfg == nil {
		t.Fatalf("onChange(%v, %v), want a config", c.cfg, c.err)
	}
	if diff := cmp.Diff([]string{"a", "c"}, serverNames(c.cfg)); diff != "" {
		t.Errorf("delivered servers (-want +got):\n%s", diff)
	}
	if w.Problem() != nil {
		t.Errorf("Problem() = %v after the fix", w.Problem())
	}
}

func TestStoreWatchIgnoresOwnUpdate(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	writeFile(t, path, configWith("a"))
	w := startWatch(t, path)

	if _, err := w.Update(func(c *Config) error {
		c.Servers["gui"] = Server{Command: "gui"}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// The watcher sees the write, reads the file and finds its own bytes.
	w.waitReload(t, "unchanged")
	w.noChange(t)

	// The next hand edit is the next thing delivered.
	writeFile(t, path, configWith("a", "gui", "hand"))
	c := w.waitChange(t)
	if diff := cmp.Diff([]string{"a", "gui", "hand"}, serverNames(c.cfg)); diff != "" {
		t.Errorf("delivered servers (-want +got):\n%s", diff)
	}
}

func TestStoreWatchEditorRename(t *testing.T) {
	for _, tt := range []struct {
		name   string
		before string // initial content; "" means no file
	}{
		{"replace existing file", configWith("a")},
		{"create missing file", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, FileName)
			if tt.before != "" {
				writeFile(t, path, tt.before)
			}
			w := startWatch(t, path)

			// Save the way vim and VS Code can: write a new file, rename it over.
			tmp := filepath.Join(dir, FileName+".swp")
			writeFile(t, tmp, configWith("a", "renamed"))
			if err := os.Rename(tmp, path); err != nil {
				t.Fatal(err)
			}
			c := w.waitChange(t)
			if c.err != nil {
				t.Fatal(c.err)
			}
			if diff := cmp.Diff([]string{"a", "renamed"}, serverNames(c.cfg)); diff != "" {
				t.Errorf("delivered servers (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStoreWatchMigratesPastedClaudeFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	writeFile(t, path, configWith("a"))
	w := startWatch(t, path)

	claude, err := os.ReadFile("testdata/v0.json")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, string(claude))
	c := w.waitChange(t)
	if c.err != nil {
		t.Fatal(c.err)
	}
	if diff := cmp.Diff([]string{"filesystem", "github"}, serverNames(c.cfg)); diff != "" {
		t.Errorf("delivered servers (-want +got):\n%s", diff)
	}
	if archived, err := os.ReadFile(path + ".v0"); err != nil || string(archived) != string(claude) {
		t.Errorf("archive = %v; want the pasted bytes", err)
	}
	if _, from, err := parse(path, mustRead(t, path)); err != nil || from != CurrentVersion {
		t.Errorf("file after migration: version %d, %v; want %d", from, err, CurrentVersion)
	}
	// The migrated file the store wrote is not reported again.
	w.waitReload(t, "changed")
	w.waitReload(t, "unchanged")
	w.noChange(t)
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestStoreWatchRemovedFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	writeFile(t, path, configWith("a"))
	w := startWatch(t, path)

	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	c := w.waitChange(t)
	if c.cfg != nil || !errors.Is(c.err, fs.ErrNotExist) {
		t.Fatalf("onChange(%v, %v), want an error matching fs.ErrNotExist", c.cfg, c.err)
	}
	if diff := cmp.Diff([]string{"a"}, serverNames(w.Current())); diff != "" {
		t.Errorf("Current() after removal (-want +got):\n%s", diff)
	}
	if w.Problem() == nil {
		t.Errorf("Problem() = nil after removal")
	}

	if _, err := w.Update(func(*Config) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if w.Problem() != nil {
		t.Errorf("Problem() = %v after Update wrote the file", w.Problem())
	}
	if got := string(mustRead(t, path)); got != configWith("a") {
		t.Errorf("file after Update:\n%s", got)
	}
}

func TestWatchNeedsDirectory(t *testing.T) {
	s, err := NewStore(filepath.Join(t.TempDir(), "missing", FileName), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := s.Watch(ctx, nil); err == nil {
		t.Errorf("Watch on a missing directory returned nil")
	}
}

func TestStoreConcurrentUse(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	w := startWatch(t, path)

	var wg sync.WaitGroup
	const n = 8
	for i := range n {
		wg.Add(2)
		go func() {
			defer wg.Done()
			if _, err := w.Update(func(c *Config) error {
				name := fmt.Sprintf("s%d", i)
				c.Servers[name] = Server{Command: name}
				return nil
			}); err != nil {
				t.Error(err)
			}
		}()
		go func() {
			defer wg.Done()
			_ = w.Current()
			_ = w.Problem()
		}()
	}
	wg.Wait()
	if got := len(w.Current().Servers); got != n {
		t.Errorf("Current() has %d servers, want %d", got, n)
	}
	onDisk, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(w.Current(), onDisk, cmpOpts); diff != "" {
		t.Errorf("file differs from Current() (-current +file):\n%s", diff)
	}
}
