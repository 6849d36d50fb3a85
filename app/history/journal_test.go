package history

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app/internal/testutil"
	"github.com/switchboardhq/switchboard/app/record"
)

// TestJournalInterruptedCalls: calls begun and not stored are found by the
// next OpenJournal as interrupted, with what was known; stored ones are not.
func TestJournalInterruptedCalls(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "calls.journal")
	j, left, err := OpenJournal(path, nil)
	if err != nil || len(left) != 0 {
		t.Fatalf("new journal: %v %v", left, err)
	}
	s := openAt(t, filepath.Join(dir, "history.db"), Options{Journal: j, RetentionInterval: -1})
	start := time.Date(2026, 3, 1, 12, 0, 0, 123456000, time.UTC)
	var ids []uint64
	for i, name := range []string{"read", "write \"quoted\"\nnewline", "slow"} {
		c := record.Call{Start: start.Add(time.Duration(i) * time.Second), ClientLabel: "cursor", ClientName: "Cursor",
			ClientVersion: "1.2", Session: "sess", Endpoint: "files", Server: "files", Method: "tools/call", Name: name,
			Arguments: []byte(`{"path": "/a b", "n": ` + string(rune('0'+i)) + `}`)}
		c.Journal = j.Begin(&c)
		if c.Journal == 0 {
			t.Fatal("Begin returned 0")
		}
		ids = append(ids, c.Journal)
		if i == 0 { // the first one ends and is stored
			c.Outcome, c.Duration = record.OutcomeOK, time.Millisecond
			s.RecordCall(c)
		}
	}
	flush(t, s)
	j.die()
	j2, left, err := OpenJournal(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer j2.Close()
	if len(left) != 2 {
		t.Fatalf("interrupted calls: %+v, want 2", left)
	}
	c := left[0]
	if c.Name != "write \"quoted\"\nnewline" || c.Server != "files" || c.ClientName != "Cursor" || c.ClientLabel != "cursor" ||
		c.ClientVersion != "1.2" || c.Session != "sess" || c.Endpoint != "files" || c.Method != "tools/call" ||
		string(c.Arguments) != `{"path": "/a b", "n": 1}` || !c.Start.Equal(start.Add(time.Second)) ||
		c.Outcome != record.OutcomeInterrupted || c.Error == "" || c.Journal != ids[1] {
		t.Errorf("interrupted call: %+v", c)
	}
	if left[1].Name != "slow" {
		t.Errorf("second interrupted call: %+v", left[1])
	}
	// Ids go on after the largest seen.
	if id := j2.Begin(&record.Call{Name: "next"}); id <= ids[2] {
		t.Errorf("id after reopen %d, want > %d", id, ids[2])
	}
	// Once the interrupted calls are stored, they are ended: a third open
	// finds only the new call.
	s2 := openAt(t, filepath.Join(dir, "history2.db"), Options{Journal: j2, RetentionInterval: -1})
	for _, c := range left {
		s2.RecordCall(c)
	}
	flush(t, s2)
	page, err := s2.Calls(context.Background(), CallQuery{Outcome: record.OutcomeInterrupted})
	if err != nil || len(page.Calls) != 2 {
		t.Fatalf("interrupted calls in the history: %+v %v", page, err)
	}
	j2.die() // this daemon dies too
	j3, left, err := OpenJournal(path, nil)
	if err != nil || len(left) != 1 || left[0].Name != "next" {
		t.Errorf("third open: %+v %v", left, err)
	}
	if j3 != nil {
		j3.Close()
	}
}

// TestAppendQuoted: Begin's quoting writes what strconv.AppendQuote would,
// whether a string takes its plain path or not.
func TestAppendQuoted(t *testing.T) {
	for _, s := range []string{"", "read_file", "0123456789abcdef", "~ !#$%&'()*+,-./:;<=>?@[]^_`{|}",
		`say "hi"`, `C:\Users`, "tab\there", "new\nline", "\x00", "\x1f", "\x7f", "café", "日本", "\xff\xfe", "\u2028"} {
		got, want := string(appendQuoted([]byte("x "), s)), string(strconv.AppendQuote([]byte("x "), s))
		if got != want {
			t.Errorf("appendQuoted(%q) = %s, want %s", s, got, want)
		}
	}
}

func FuzzAppendQuoted(f *testing.F) {
	f.Add("read_file")
	f.Add(`"quoted"\n`)
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := appendQuoted(nil, s), strconv.AppendQuote(nil, s); string(got) != string(want) {
			t.Errorf("appendQuoted(%q) = %s, want %s", s, got, want)
		}
	})
}

// die is the daemon dying with j open: nothing more is written or touched,
// and the OS lets go of the file (which Windows needs before the next
// daemon replaces it).
func (j *Journal) die() {
	close(j.stopAlive)
	<-j.aliveDone
	j.mu.Lock()
	defer j.mu.Unlock()
	j.out.release()
	j.out = nil // Close has nothing left to do
}

// TestJournalInterruptedDuration: an interrupted call is recorded as having
// run until the journal's daemon was last known alive (the journal touches
// its file while a call is open), not 0 and not until the next start; a
// call carried over keeps that duration through a second crash.
func TestJournalInterruptedDuration(t *testing.T) {
	path := filepath.Join(t.TempDir(), "calls.journal")
	j, _, err := OpenJournal(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	c := record.Call{Start: start, Server: "files", Method: "tools/call", Name: "slow"}
	if c.Journal = j.Begin(&c); c.Journal == 0 {
		t.Fatal("Begin returned 0")
	}
	// Nothing is written while the call runs: only the touches move the
	// file's time on.
	ran := 4 * AliveInterval
	testutil.Eventually(t, 20*time.Second, "the journal touched while the call runs", func() bool {
		alive, err := lastAlive(path)
		return err == nil && alive.Sub(start) >= ran
	})
	j.die()
	died := time.Now()
	// The next start comes much later: the file's time says when the
	// daemon was last alive, not when this one reads it.
	j2, left, err := OpenJournal(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 1 {
		t.Fatalf("interrupted calls: %+v", left)
	}
	got := left[0].Duration
	if got < ran || got > died.Sub(start) || got < died.Sub(start)-AliveInterval-100*time.Millisecond {
		t.Errorf("interrupted call's duration %v; it ran %v (touched every %v)", got, died.Sub(start), AliveInterval)
	}
	// The call carried over is open in this journal until it is stored:
	// this one touches the file too.
	reopened := time.Now()
	testutil.Eventually(t, 20*time.Second, "the journal touched while the carried call waits", func() bool {
		alive, err := lastAlive(path)
		return err == nil && alive.Sub(reopened) >= AliveInterval/2
	})
	// This daemon dies too, an hour later, before it stored the call.
	j2.die()
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	j3, left, err := OpenJournal(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer j3.Close()
	if len(left) != 1 || left[0].Duration != got {
		t.Errorf("after a second crash: %+v, want the duration %v kept", left, got)
	}
}

// openEmptyJournal opens a new journal in a temporary directory, closed
// when the test ends, and returns it with its file's path.
func openEmptyJournal(t *testing.T, log *slog.Logger) (*Journal, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "calls.journal")
	j, _, err := OpenJournal(path, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	return j, path
}

// kilobyteArgs are a call's arguments of about a kilobyte, so that a few
// thousand calls pass the journal's compaction thresholds.
func kilobyteArgs() []byte { return []byte(`{"text":"` + strings.Repeat("x", 1000) + `"}`) }

// TestJournalCompacts: the file stays small under many calls, with calls
// still open (rewritten) and without (emptied).
func TestJournalCompacts(t *testing.T) {
	j, path := openEmptyJournal(t, nil)
	args := kilobyteArgs()
	open := j.Begin(&record.Call{Name: "kept open", Arguments: args})
	for i := range 20000 {
		id := j.Begin(&record.Call{Name: "n", Arguments: args})
		j.End(id)
		if fi, _ := os.Stat(path); fi.Size() > journalRewrite+journalTail+4096 {
			t.Fatalf("journal %d bytes after %d calls", fi.Size(), i)
		}
	}
	left, _, err := readJournal(path)
	if err != nil || len(left) != 1 || left[0].call.Name != "kept open" {
		t.Fatalf("after compaction: %+v %v", left, err)
	}
	j.End(open)
	for range 2000 {
		j.End(j.Begin(&record.Call{Name: "n", Arguments: args}))
	}
	if fi, _ := os.Stat(path); fi.Size() > journalCompact+journalTail+4096 {
		t.Errorf("journal %d bytes with no call open", fi.Size())
	}
}

// TestJournalRewriteKeepsOpenCallsInOrder: calls left open across several
// rewrites stay in the file, in the order they began, each where the next
// rewrite looks for it, until they end.
func TestJournalRewriteKeepsOpenCallsInOrder(t *testing.T) {
	j, path := openEmptyJournal(t, nil)
	args := kilobyteArgs()
	var open []uint64
	names := []string{"first", "second", "third"}
	for _, name := range names {
		open = append(open, j.Begin(&record.Call{Name: name, Arguments: args}))
		for range 9000 { // more than journalRewrite bytes
			j.End(j.Begin(&record.Call{Name: "n", Arguments: args}))
		}
	}
	left, _, err := readJournal(path)
	if err != nil || len(left) != 3 {
		t.Fatalf("after rewrites: %d open calls (%v), want 3", len(left), err)
	}
	for i, b := range left {
		if b.call.Name != names[i] || b.id != open[i] || string(b.call.Arguments) != string(args) {
			t.Errorf("open call %d: %s (id %d), want %s (id %d) with its arguments", i, b.call.Name, b.id, names[i], open[i])
		}
	}
	j.End(open[1])
	for range 9000 {
		j.End(j.Begin(&record.Call{Name: "n", Arguments: args}))
	}
	if left, _, err = readJournal(path); err != nil || len(left) != 2 || left[0].id != open[0] || left[1].id != open[2] {
		t.Fatalf("after the second ended and a rewrite: %+v %v", left, err)
	}
	j.End(open[0], open[2])
	j.End(j.Begin(&record.Call{Name: "n", Arguments: args}))
	if fi, _ := os.Stat(path); fi.Size() > journalCompact+journalTail+4096 {
		t.Errorf("journal %d bytes with no call open", fi.Size())
	}
}

// TestJournalChangedUnderItStillCompacts: a journal file changed by
// something else (emptied here) is read whole when it is rewritten, not
// where the open calls were: the journal says so and stays small.
func TestJournalChangedUnderItStillCompacts(t *testing.T) {
	var logged testutil.SyncBuffer
	j, path := openEmptyJournal(t, slog.New(slog.NewTextHandler(&logged, nil)))
	args := kilobyteArgs()
	j.Begin(&record.Call{Name: "kept open", Arguments: args})
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	for i := range 20000 {
		j.End(j.Begin(&record.Call{Name: "n", Arguments: args}))
		if fi, _ := os.Stat(path); fi.Size() > journalRewrite+journalTail+4096 {
			t.Fatalf("journal %d bytes after %d calls", fi.Size(), i)
		}
	}
	if !strings.Contains(logged.String(), "reading the call journal whole") || strings.Contains(logged.String(), "cannot compact") {
		t.Errorf("log: %s", logged.String())
	}
}

// BenchmarkJournalBeginEnd: what journaling costs a call (Begin on the
// call's path; End, batched by the writer, is shown one by one here).
func BenchmarkJournalBeginEnd(b *testing.B) {
	j, _, err := OpenJournal(filepath.Join(b.TempDir(), "calls.journal"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer j.Close()
	c := record.Call{Start: time.Now(), ClientLabel: "cli", ClientName: "Cursor", ClientVersion: "1.2",
		Session: "0123456789abcdef", Endpoint: "files", Server: "files", Method: "tools/call", Name: "read_file",
		Arguments: []byte(`{"path":"/home/me/projects/switchboard/README.md"}`)}
	b.ReportAllocs()
	for b.Loop() {
		j.End(j.Begin(&c))
	}
}

// BenchmarkJournalBeginEndUnderLoad: the same with a call always open, as
// under a steady load: the journal is never empty when a batch ends, so it
// is rewritten with the open calls' lines every journalRewrite bytes.
func BenchmarkJournalBeginEndUnderLoad(b *testing.B) {
	j, _, err := OpenJournal(filepath.Join(b.TempDir(), "calls.journal"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer j.Close()
	c := record.Call{Start: time.Now(), ClientLabel: "cli", ClientName: "Cursor", ClientVersion: "1.2",
		Session: "0123456789abcdef", Endpoint: "files", Server: "files", Method: "tools/call", Name: "read_file",
		Arguments: []byte(`{"path":"/home/me/projects/switchboard/README.md"}`)}
	open := j.Begin(&c)
	b.ReportAllocs()
	for b.Loop() {
		next := j.Begin(&c)
		j.End(open)
		open = next
	}
}
