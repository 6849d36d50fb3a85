package history

import (
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app/internal/testutil"
	"github.com/switchboardhq/switchboard/app/internal/testutil/sqlitedamage"
	"github.com/switchboardhq/switchboard/app/record"
)

// rawDB opens path with no migrations applied.
func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path+"?_journal_mode=WAL")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	return db
}

// TestMigrationsFromEveryVersion builds a database at every earlier schema
// version by applying only the first N migrations, puts a call in it when it
// has a calls table, and checks that Open upgrades it and keeps (and indexes)
// the call.
func TestMigrationsFromEveryVersion(t *testing.T) {
	if SchemaVersion < 2 {
		t.Fatalf("SchemaVersion = %d", SchemaVersion)
	}
	ctx := context.Background()
	for from := 0; from < SchemaVersion; from++ {
		t.Run("v"+string(rune('0'+from)), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "history.db")
			db := rawDB(t, path)
			if err := migrate(ctx, db, path, from); err != nil {
				t.Fatal(err)
			}
			if from >= 1 {
				if _, err := db.Exec(`INSERT INTO calls (start, server, name, arguments, outcome, error)
					VALUES (?, 'old', 'legacy_tool', '{"q":"aardvark"}', 'tool_error', 'kaput')`, t0.UnixMicro()); err != nil {
					t.Fatal(err)
				}
				if from >= 2 { // from version 2 to 6, the writer indexed what it inserted with each batch
					if _, err := db.Exec(`INSERT INTO calls_fts(rowid, name, arguments, error) SELECT id, name, arguments, error FROM calls`); err != nil {
						t.Fatal(err)
					}
				}
			}
			var v int
			db.QueryRow("PRAGMA user_version").Scan(&v)
			if v != from {
				t.Fatalf("built version %d, want %d", v, from)
			}
			db.Close()

			s := openAt(t, path, testOptions())
			if err := s.rdb().QueryRow("PRAGMA user_version").Scan(&v); err != nil || v != SchemaVersion {
				t.Fatalf("user_version after Open = %d (%v), want %d", v, err, SchemaVersion)
			}
			if s.Recovered() != nil {
				t.Errorf("Recovered = %v", s.Recovered())
			}
			checkSchemaV3(t, s)
			fresh := call(5, "new", "fresh", `{"q":"aardvark"}`)
			fresh.Tier = "destructive"
			decided := time.Date(2026, 7, 1, 12, 0, 0, 123456789, time.UTC)
			fresh.Decision = &record.Decision{By: record.DecidedByDashboard, Allowed: true, At: decided}
			s.RecordCall(fresh)
			flush(t, s)
			// Version 4's tier: the new call's is kept, an older call has none.
			all, err := s.Calls(ctx, CallQuery{})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range all.Calls {
				if want := map[string]string{"fresh": "destructive"}[c.Name]; c.Tier != want {
					t.Errorf("call %s has tier %q after upgrade, want %q", c.Name, c.Tier, want)
				}
			}
			if got, err := s.Call(ctx, all.Calls[0].ID); err != nil || got.Tier != "destructive" {
				t.Errorf("Call(%d) tier = %q (%v), want destructive", all.Calls[0].ID, got.Tier, err)
			}
			// Version 5's decision: the new call's is kept (to the
			// microsecond), an older call has none.
			for _, c := range all.Calls {
				want := c.Name == "fresh"
				if (c.DecidedBy != "") != want || (c.DecidedAt != nil) != want {
					t.Errorf("call %s has decision %q %v after upgrade, want one: %v", c.Name, c.DecidedBy, c.DecidedAt, want)
				}
				if want && (c.DecidedBy != record.DecidedByDashboard || !c.DecisionAllowed || !c.DecidedAt.Equal(decided.Truncate(time.Microsecond))) {
					t.Errorf("call %s decision = %q %v %v, want allowed by dashboard at %v", c.Name, c.DecidedBy, c.DecisionAllowed, c.DecidedAt, decided)
				}
			}
			p, err := s.Calls(ctx, CallQuery{Text: "aardvark"})
			if err != nil {
				t.Fatal(err)
			}
			want := 1
			if from >= 1 {
				want = 2
			}
			if len(p.Calls) != want {
				t.Errorf("search after upgrade: %d calls, want %d", len(p.Calls), want)
			}
			if from >= 1 {
				if p, _ := s.Calls(ctx, CallQuery{Text: "kaput"}); len(p.Calls) != 1 || p.Calls[0].Name != "legacy_tool" {
					t.Errorf("old call's error not indexed: %+v", p)
				}
			}
		})
	}
}

// checkSchemaV3 checks what version 3 changed: the failed calls' partial
// index instead of the outcome index, a search index without its table of
// token counts (columnsize=0), merging 16 segments at a time.
func checkSchemaV3(t *testing.T, s *Store) {
	t.Helper()
	var names string
	if err := s.rdb().QueryRow(`SELECT group_concat(name, ' ') FROM
		(SELECT name FROM sqlite_master WHERE name IN ('calls_outcome_start', 'calls_failed_start', 'calls_fts_docsize') ORDER BY name)`).Scan(&names); err != nil {
		t.Fatal(err)
	}
	if names != "calls_failed_start" {
		t.Errorf("schema objects = %q, want calls_failed_start only", names)
	}
	var automerge int
	if err := s.rdb().QueryRow(`SELECT v FROM calls_fts_config WHERE k = 'automerge'`).Scan(&automerge); err != nil || automerge != 16 {
		t.Errorf("search index automerge = %d (%v), want 16", automerge, err)
	}
}

func TestMigrationIsAtomic(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "history.db")
	db := rawDB(t, path)
	defer db.Close()
	// A table in the way makes migration 1 fail halfway: nothing of it may stay.
	if _, err := db.Exec(`CREATE TABLE events (x)`); err != nil {
		t.Fatal(err)
	}
	if err := migrate(ctx, db, path, SchemaVersion); err == nil {
		t.Fatal("migration over a conflicting table succeeded")
	}
	var v, calls int
	db.QueryRow("PRAGMA user_version").Scan(&v)
	db.QueryRow("SELECT count(*) FROM sqlite_master WHERE name = 'calls'").Scan(&calls)
	if v != 0 || calls != 0 {
		t.Errorf("after a failed migration: user_version %d, calls table %d; want 0, 0", v, calls)
	}
}

func TestNewerDatabaseRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.db")
	db := rawDB(t, path)
	if _, err := db.Exec("CREATE TABLE future (x); PRAGMA user_version = 99"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err := Open(context.Background(), path, testOptions())
	var ve *VersionError
	if !errors.As(err, &ve) || ve.Have != 99 || ve.Known != SchemaVersion || ve.Path != path {
		t.Fatalf("Open = %v, want a VersionError", err)
	}
	for _, want := range []string{path, "99", "version " + strconv.Itoa(SchemaVersion)} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	// The file is left alone.
	if _, err := os.Stat(path); err != nil {
		t.Error(err)
	}
	if m, _ := filepath.Glob(path + ".corrupt-*"); len(m) != 0 {
		t.Errorf("newer database moved aside: %v", m)
	}
}

func TestCorruptDatabaseMovedAside(t *testing.T) {
	clock := &fakeClock{now: t0}
	for _, tc := range []struct {
		name  string
		spoil func(t *testing.T, path string)
	}{
		{"not a database", func(t *testing.T, path string) {
			if err := os.WriteFile(path, []byte(strings.Repeat("this is not sqlite\n", 1000)), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"damaged pages", func(t *testing.T, path string) {
			s, err := Open(context.Background(), path, testOptions())
			if err != nil {
				t.Fatal(err)
			}
			for i := range 3000 {
				s.RecordCall(call(i, "files", "read", `{"path":"/some/long/path/to/make/pages"}`))
			}
			if err := s.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			// Checkpointed at close: the data is in the main file. Overwrite
			// pages past the schema with garbage.
			f, err := os.OpenFile(path, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			fi, _ := f.Stat()
			if fi.Size() < 64<<10 {
				t.Fatalf("database only %d bytes", fi.Size())
			}
			if _, err := f.WriteAt([]byte(strings.Repeat("\xde\xad\xbe\xef", 4096)), 16<<10); err != nil {
				t.Fatal(err)
			}
			// As if the store had not closed (the daemon was killed): the
			// next Open checks the file, in the background.
			if err := os.WriteFile(path+markerSuffix, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "history.db")
			tc.spoil(t, path)
			opts := testOptions()
			opts.Now = clock.Now
			s := openAt(t, path, opts)
			testutil.Eventually(t, 20*time.Second, "the corrupt database to be recovered", func() bool { return s.Recovered() != nil })
			rec := s.Recovered()
			wantMoved := path + ".corrupt-20260301T120000Z"
			if rec.MovedTo != wantMoved || rec.Path != path || rec.Reason == "" {
				t.Errorf("Recovery = %+v, want MovedTo %s", rec, wantMoved)
			}
			if _, err := os.Stat(wantMoved); err != nil {
				t.Errorf("corrupt file not kept: %v", err)
			}
			if !strings.Contains(rec.String(), wantMoved) {
				t.Errorf("message %q does not say where the file went", rec)
			}
			// The new database works.
			s.RecordCall(call(1, "a", "b", ""))
			flush(t, s)
			if p, err := s.Calls(context.Background(), CallQuery{}); err != nil || len(p.Calls) != 1 {
				t.Errorf("fresh database: %v, %v", p, err)
			}
		})
	}
}

// TestIntegrityCheckAtEveryOpen: every Open checks the file in the
// background, after a clean close too; Unclean says whether the marker of a
// store that did not close was left, and an intact file is kept either way.
func TestIntegrityCheckAtEveryOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.db")
	s, err := Open(context.Background(), path, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	if s.Unclean() {
		t.Error("new database: Unclean")
	}
	if _, err := os.Stat(path + markerSuffix); err != nil {
		t.Errorf("no open marker while open: %v", err)
	}
	s.RecordCall(call(1, "files", "read", `{"path":"/a"}`))
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + markerSuffix); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("open marker left after a clean close: %v", err)
	}
	var out testutil.SyncBuffer
	opts := testOptions()
	opts.Logger = slog.New(slog.NewTextHandler(&out, nil))
	s = openAt(t, path, opts)
	if s.Unclean() {
		t.Error("after a clean close: Unclean")
	}
	testutil.Eventually(t, 20*time.Second, "the background integrity check to end", func() bool { return !s.Checking() })
	if !strings.Contains(out.String(), "the database is intact") || s.Recovered() != nil {
		t.Errorf("after a clean close: no check, or the intact file replaced (%v); log:\n%s", s.Recovered(), out.String())
	}

	// Unclean: the marker of a store that never closed.
	path2 := filepath.Join(t.TempDir(), "history.db")
	if err := os.WriteFile(path2+markerSuffix, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	s2 := openAt(t, path2, testOptions())
	if !s2.Unclean() {
		t.Error("Unclean = false with the marker left behind")
	}
	testutil.Eventually(t, 20*time.Second, "the background integrity check to end", func() bool { return !s2.Checking() })
	if s2.Recovered() != nil {
		t.Errorf("intact database replaced: %v", s2.Recovered())
	}
}

// TestDamagedAfterCleanStopMovedAside: a database damaged while no store
// had it open (garbage in two pages of its calls, after a clean close) is
// found by the check the next Open starts in the background. Open does not
// wait for it: the store records and answers while the check is held.
// Once the check runs, the file is moved aside, the user is told at ERROR,
// and new calls go to a fresh database.
func TestDamagedAfterCleanStopMovedAside(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.db")
	s, err := Open(context.Background(), path, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3000 {
		s.RecordCall(call(i, "files", "read", `{"path":"/some/long/path/to/make/pages"}`))
	}
	flush(t, s)
	if err := s.Close(context.Background()); err != nil { // clean: checkpointed, no marker
		t.Fatal(err)
	}
	// Two leaf pages of the calls table, in the middle of the file.
	if n := sqlitedamage.LeafPages(t, path, "calls", 2); n < 10 {
		t.Fatalf("the calls fill only %d leaf pages", n)
	}

	var out testutil.SyncBuffer
	opts := testOptions()
	opts.Logger = slog.New(slog.NewTextHandler(&out, nil))
	clock := &fakeClock{now: t0}
	opts.Now = clock.Now
	held, release := make(chan struct{}), make(chan struct{})
	opts.beforeCheck = func() {
		close(held)
		<-release
	}
	s = openAt(t, path, opts)
	releaseOnce := sync.OnceFunc(func() { close(release) })
	t.Cleanup(releaseOnce) // before Close, which waits for the check
	select {
	case <-held:
	case <-time.After(20 * time.Second):
		t.Fatal("Open after a clean close started no integrity check")
	}
	// Open has returned and the check has not read a page: the store
	// works meanwhile.
	if s.Unclean() || !s.Checking() || s.Recovered() != nil {
		t.Fatalf("while the check is held: Unclean %v, Checking %v, Recovered %v", s.Unclean(), s.Checking(), s.Recovered())
	}
	s.RecordCall(call(5000, "files", "read", `{"path":"/during/the/check"}`))
	flush(t, s)
	if p, err := s.Calls(context.Background(), CallQuery{Limit: 1}); err != nil || len(p.Calls) != 1 || p.Calls[0].Start != t0.Add(5000*time.Second) {
		t.Fatalf("the store while the check is held: %v, %+v", err, p)
	}

	releaseOnce()
	testutil.Eventually(t, 20*time.Second, "the damaged database to be moved aside", func() bool { return s.Recovered() != nil })
	rec := s.Recovered()
	wantMoved := path + ".corrupt-20260301T120000Z"
	if rec.MovedTo != wantMoved || rec.Reason == "" {
		t.Errorf("Recovery = %+v, want MovedTo %s and the check's finding", rec, wantMoved)
	}
	if !strings.Contains(out.String(), "level=ERROR") || !strings.Contains(out.String(), wantMoved) {
		t.Errorf("the user is not told at ERROR where the file went; log:\n%s", out.String())
	}
	// The file moved aside is the damaged one.
	moved, err := sql.Open("sqlite", dsn(wantMoved, "_query_only=1"))
	if err != nil {
		t.Fatal(err)
	}
	defer moved.Close()
	if err := checkIntegrity(context.Background(), moved); !isCorrupt(err) {
		t.Errorf("quick_check of the file moved aside: %v, want it corrupt", err)
	}
	// New calls go to a fresh database.
	s.RecordCall(call(6000, "files", "read", `{"path":"/after"}`))
	flush(t, s)
	p, err := s.Calls(context.Background(), CallQuery{})
	if err != nil || len(p.Calls) != 1 || p.Calls[0].Start != t0.Add(6000*time.Second) {
		t.Errorf("fresh database: %v, %+v", err, p)
	}
}

func TestOpenSettings(t *testing.T) {
	s := openTest(t, testOptions())
	var mode string
	var av, fk, timeout int
	if err := s.wdb().QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q, %v", mode, err)
	}
	s.wdb().QueryRow("PRAGMA auto_vacuum").Scan(&av)
	s.wdb().QueryRow("PRAGMA foreign_keys").Scan(&fk)
	s.wdb().QueryRow("PRAGMA busy_timeout").Scan(&timeout)
	if av != 2 || fk != 1 || timeout < 1000 {
		t.Errorf("auto_vacuum %d, foreign_keys %d, busy_timeout %d", av, fk, timeout)
	}
	if s.wdb().Stats().MaxOpenConnections != 1 {
		t.Errorf("writer allows %d connections", s.wdb().Stats().MaxOpenConnections)
	}
	if _, err := s.rdb().Exec("DELETE FROM calls"); err == nil {
		t.Error("read pool can write")
	}
	if _, err := Open(context.Background(), filepath.Join(t.TempDir(), "what?.db"), testOptions()); err == nil {
		t.Error("path with ? accepted")
	}
	_ = time.Second
}

// TestMigration6DerivesServerAndTool builds a version-5 database holding
// calls of every kind version 6 tells apart, upgrades it, and checks the
// server, tool and unknown each gets: a call on /mcp is its server's tool
// after the prefix, one on /mcp/<server> keeps its name, a profile's call
// is read as /mcp's, one that found no server is the prefix's (unknown
// server), one the go-sdk answered "unknown tool" is an unknown tool of
// its server; and the tool filter finds a tool through every endpoint.
func TestMigration6DerivesServerAndTool(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "history.db")
	db := rawDB(t, path)
	if err := migrate(ctx, db, path, 5); err != nil {
		t.Fatal(err)
	}
	rows := []struct{ endpoint, server, method, name, outcome, errText string }{
		{"", "alpha", "tools/call", "alpha__echo", "ok", ""},
		{"alpha", "alpha", "tools/call", "echo", "ok", ""},
		{"p/coding", "alpha", "tools/call", "alpha__echo", "ok", ""},
		{"", "", "tools/call", "nosuch__tool", "protocol_error", `calling "tools/call": unknown tool "nosuch__tool"`},
		{"", "", "tools/call", "bare", "protocol_error", `unknown tool "bare"`},
		{"", "alpha", "tools/call", "alpha__nosuch", "protocol_error", `unknown tool "alpha__nosuch"`},
		{"alpha", "alpha", "resources/read", "test://static/hello", "ok", ""},
		{"", "alpha", "prompts/get", "alpha__greet", "ok", ""},
		{"", "alpha", "resources/read", "file:///tmp/a__b.txt", "ok", ""},
	}
	for i, r := range rows {
		if _, err := db.Exec(`INSERT INTO calls (start, endpoint, server, method, name, outcome, error) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			t0.Add(time.Duration(i)*time.Second).UnixMicro(), r.endpoint, r.server, r.method, r.name, r.outcome, r.errText); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	s := openAt(t, path, testOptions())
	page, err := s.Calls(ctx, CallQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range slices.Backward(page.Calls) {
		got = append(got, c.Endpoint+"|"+c.Server+"|"+c.Tool+"|"+c.Unknown+"|"+c.Name)
	}
	want := []string{
		"|alpha|echo||alpha__echo",
		"alpha|alpha|echo||echo",
		"p/coding|alpha|echo||alpha__echo",
		"|nosuch|tool|server|nosuch__tool",
		"||bare|server|bare",
		"|alpha|nosuch|tool|alpha__nosuch",
		"alpha|alpha|test://static/hello||test://static/hello",
		"|alpha|greet||alpha__greet",
		"|alpha|file:///tmp/a__b.txt||file:///tmp/a__b.txt",
	}
	if !slices.Equal(got, want) {
		t.Errorf("after the upgrade (endpoint|server|tool|unknown|name):\n got  %q\n want %q", got, want)
	}
	for _, tc := range []struct {
		tool string
		n    int
	}{{"echo", 3}, {"alpha__echo", 2}, {"nosuch", 1}} {
		if p, err := s.Calls(ctx, CallQuery{Tool: tc.tool}); err != nil || len(p.Calls) != tc.n {
			t.Errorf("Calls(tool %q) = %d calls (%v), want %d", tc.tool, len(p.Calls), err, tc.n)
		}
	}
	stats, err := s.Stats(ctx, time.Time{}, time.Time{}, "tool")
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range stats {
		if st.Server == "alpha" && st.Tool == "echo" && st.Count != 3 {
			t.Errorf("stats of alpha's echo: %d calls, want the 3 of every endpoint", st.Count)
		}
	}
}
