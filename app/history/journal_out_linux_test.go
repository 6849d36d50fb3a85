package history

import (
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/app/internal/testutil"
	"github.com/switchboardhq/switchboard/app/record"
)

// TestMappedJournalCutUnderIt: the journal's file truncated by another
// program under the mapping makes the next store fault; the journal goes
// on with pwrite(2), the call is noted all the same, and the next daemon
// reads it from behind the hole the truncation left.
func TestMappedJournalCutUnderIt(t *testing.T) {
	var logged testutil.SyncBuffer
	j, path := openEmptyJournal(t, slog.New(slog.NewTextHandler(&logged, nil)))
	first := j.Begin(&record.Call{Name: "before", Arguments: kilobyteArgs()})
	if _, ok := j.out.(*mappedOut); !ok || first == 0 {
		t.Fatalf("journal written through %T (id %d), want a mapping", j.out, first)
	}
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	second := j.Begin(&record.Call{Name: "after the cut", Arguments: kilobyteArgs()})
	third := j.Begin(&record.Call{Name: "and on"})
	if second == 0 || third == 0 {
		t.Fatalf("Begin after the cut: ids %d, %d", second, third)
	}
	if out := j.out.(*mappedOut); !out.failed || out.win != nil {
		t.Errorf("the mapping kept after a fault: failed %v, window of %d bytes", out.failed, len(out.win))
	}
	if !strings.Contains(logged.String(), "system call per line") {
		t.Errorf("the fault was not logged: %s", logged.String())
	}
	// The rewrites that follow (second and third stay open) keep to
	// pwrite, and say so no more.
	for range 9000 { // more than journalRewrite bytes
		j.End(j.Begin(&record.Call{Name: "n", Arguments: kilobyteArgs()}))
	}
	if out := j.out.(*mappedOut); !out.failed || out.win != nil {
		t.Errorf("the rewritten journal mapped again: failed %v, window of %d bytes", out.failed, len(out.win))
	}
	if n := strings.Count(logged.String(), "system call per line"); n != 1 {
		t.Errorf("the fallback logged %d times, want once: %s", n, logged.String())
	}
	j.die()
	left, _, err := readJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, b := range left {
		names = append(names, b.call.Name)
	}
	if strings.Join(names, ",") != "after the cut,and on" {
		t.Errorf("calls found after the cut: %q, want the two begun after it", names)
	}
}

// TestMappedJournalMovesItsWindow: lines past several windows, one longer
// than a window's rest, all land where the next daemon reads them, and a
// clean close leaves the file as long as its lines.
func TestMappedJournalMovesItsWindow(t *testing.T) {
	j, path := openEmptyJournal(t, nil)
	big := []byte(`"` + strings.Repeat("y", journalArgsLimit-2) + `"`) // the largest arguments noted
	var want int
	for i := range 3 * mapWindow / 1024 {
		args := kilobyteArgs()
		if i%50 == 7 {
			args = big
		}
		if j.Begin(&record.Call{Name: "n", Arguments: args}) == 0 {
			t.Fatalf("Begin %d failed", i)
		}
		want++
	}
	if out := j.out.(*mappedOut); out.failed {
		t.Fatal("the mapping failed")
	}
	size := j.size
	if fi, err := os.Stat(path); err != nil || fi.Size() < size || fi.Size() > size+journalTail+journalArgsLimit*2 {
		t.Fatalf("open file: %v bytes for %d bytes of lines (%v)", fi.Size(), size, err)
	}
	left, _, err := readJournal(path)
	if err != nil || len(left) != want {
		t.Fatalf("%d calls read back (%v), want %d", len(left), err, want)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() != size {
		t.Errorf("closed file: %v bytes, want its %d bytes of lines (%v)", fi.Size(), size, err)
	}
}
