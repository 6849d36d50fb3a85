package history

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/app/internal/testutil"
	"github.com/switchboardhq/switchboard/app/record"
)

func TestRecordAndReadBack(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, testOptions())
	c := call(1, "files", "read_file", `{"path":"/tmp/a.txt","apiKey":"sk-123"}`)
	c.Endpoint = "files"
	s.RecordCall(c)
	s.Observe(record.Event{Time: t0, Server: "files", Kind: record.EventLog, PID: 7, Stream: "stderr", Message: "listening"})
	s.Observe(record.Event{Time: t0, Server: "files", Kind: record.EventCrashed, PID: 7, Exit: "exit status 1", Message: "boom"})
	s.Observe(record.Event{Time: t0.Add(time.Second), Server: "files", Kind: record.EventState, State: "backoff"})
	s.Observe(record.Event{Time: t0.Add(2 * time.Second), Server: "files", Kind: record.EventBackoff, Delay: 2 * time.Second})
	s.Observe(record.Event{Time: t0, Server: "files", Kind: record.EventUsage,
		Usage: &record.Usage{CPUPercent: 12.5, RSSBytes: 1 << 20, Processes: 3}})
	s.Observe(record.Event{Time: t0, Server: "files", Kind: record.EventUsage}) // no usage: ignored
	flush(t, s)

	page, err := s.Calls(ctx, CallQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Calls) != 1 || page.Next != "" {
		t.Fatalf("page = %+v", page)
	}
	want := Call{ID: page.Calls[0].ID, Start: c.Start, Duration: c.Duration, ClientLabel: "cursor",
		ClientName: "Cursor", ClientVersion: "1.0", Session: "s1", Endpoint: "files", Server: "files",
		Method: "tools/call", Name: "read_file", Tool: "read_file", Outcome: "ok", ResponseSize: 42, PID: 4242}
	if diff := cmp.Diff(want, page.Calls[0]); diff != "" {
		t.Errorf("Calls (-want +got):\n%s", diff)
	}
	full, err := s.Call(ctx, want.ID)
	if err != nil {
		t.Fatal(err)
	}
	want.Arguments = json.RawMessage(`{"path":"/tmp/a.txt","apiKey":"[redacted]"}`)
	want.ResponsePreview = `{"content":[{"type":"text","text":"done"}]}`
	if diff := cmp.Diff(want, full); diff != "" {
		t.Errorf("Call (-want +got):\n%s", diff)
	}
	if _, err := s.Call(ctx, 999); !errors.Is(err, ErrNotFound) {
		t.Errorf("Call(999) = %v, want ErrNotFound", err)
	}

	logs, err := s.Logs(ctx, "files", time.Time{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]LogLine{{ID: 1, Time: t0, Server: "files", PID: 7, Stream: "stderr", Text: "listening"}}, logs); diff != "" {
		t.Errorf("Logs (-want +got):\n%s", diff)
	}
	evs, err := s.Events(ctx, "", time.Time{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	wantEvs := []Event{
		{ID: 1, Time: t0, Server: "files", Kind: "crashed", PID: 7, Exit: "exit status 1", Message: "boom"},
		{ID: 2, Time: t0.Add(time.Second), Server: "files", Kind: "state", State: "backoff"},
		{ID: 3, Time: t0.Add(2 * time.Second), Server: "files", Kind: "backoff", Message: "next start in 2s"},
	}
	if diff := cmp.Diff(wantEvs, evs); diff != "" {
		t.Errorf("Events (-want +got):\n%s", diff)
	}
	if evs, _ := s.Events(ctx, "other", time.Time{}, 0); len(evs) != 0 {
		t.Errorf("Events(other) = %v", evs)
	}
	samples, err := s.Samples(ctx, "files", time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Sample{{Time: t0, Server: "files", CPUPercent: 12.5, RSSBytes: 1 << 20, Processes: 3}}, samples); diff != "" {
		t.Errorf("Samples (-want +got):\n%s", diff)
	}
	if s.Dropped() != 0 {
		t.Errorf("Dropped = %d", s.Dropped())
	}
}

func TestLogsLimitKeepsNewest(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, testOptions())
	for i := range 10 {
		s.Observe(record.Event{Time: t0.Add(time.Duration(i) * time.Second), Server: "a", Kind: record.EventLog, Message: string(rune('0' + i))})
	}
	flush(t, s)
	logs, err := s.Logs(ctx, "a", t0.Add(2*time.Second), 3)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range logs {
		got = append(got, l.Text)
	}
	if diff := cmp.Diff([]string{"7", "8", "9"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestFilters(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, testOptions())
	for i := range 60 {
		c := call(i, []string{"files", "github", "web"}[i%3], []string{"read", "write"}[i%2], "")
		if i%5 == 0 {
			c.Outcome, c.Error = record.OutcomeToolError, "failed"
		}
		if i%4 == 0 {
			c.ClientLabel, c.ClientName = "claude-desktop", "claude-ai"
		}
		s.RecordCall(c)
	}
	flush(t, s)
	count := func(q CallQuery) int {
		t.Helper()
		q.Limit = 1000
		p, err := s.Calls(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		return len(p.Calls)
	}
	for _, tc := range []struct {
		name string
		q    CallQuery
		want int
	}{
		{"all", CallQuery{}, 60},
		{"server", CallQuery{Server: "files"}, 20},
		{"tool", CallQuery{Tool: "read"}, 30},
		{"server+tool", CallQuery{Server: "files", Tool: "read"}, 10},
		{"client label", CallQuery{Client: "claude-desktop"}, 15},
		{"client name", CallQuery{Client: "claude-ai"}, 15},
		{"client other", CallQuery{Client: "cursor"}, 45},
		{"outcome", CallQuery{Outcome: record.OutcomeToolError}, 12},
		{"any error", CallQuery{Outcome: OutcomeError}, 12},
		{"ok", CallQuery{Outcome: record.OutcomeOK}, 48},
		{"since", CallQuery{Since: t0.Add(50 * time.Second)}, 10},
		{"until", CallQuery{Until: t0.Add(10 * time.Second)}, 10},
		{"range", CallQuery{Since: t0.Add(10 * time.Second), Until: t0.Add(20 * time.Second)}, 10},
		{"unknown server", CallQuery{Server: "nope"}, 0},
	} {
		if got := count(tc.q); got != tc.want {
			t.Errorf("%s: %d calls, want %d", tc.name, got, tc.want)
		}
	}
	if _, err := s.Calls(ctx, CallQuery{Cursor: "not a cursor!"}); !errors.Is(err, ErrBadCursor) {
		t.Errorf("bad cursor: %v", err)
	}
}

func TestStats(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, testOptions())
	// files/read: durations 1..100 ms, 10 errors. files/write: 1 call. web/get: 20 calls of 5 ms.
	for i := 1; i <= 100; i++ {
		c := call(i, "files", "read", "")
		c.Duration = time.Duration(101-i) * time.Millisecond // inserted out of order
		if i <= 10 {
			c.Outcome = record.OutcomeTimeout
		}
		s.RecordCall(c)
	}
	w := call(200, "files", "write", "")
	w.Duration = 7 * time.Millisecond
	s.RecordCall(w)
	for i := range 20 {
		c := call(300+i, "web", "get", "")
		c.Duration = 5 * time.Millisecond
		s.RecordCall(c)
	}
	old := call(-10, "web", "get", "") // outside the window
	s.RecordCall(old)
	flush(t, s)

	got, err := s.Stats(ctx, t0, t0.Add(time.Hour), "tool")
	if err != nil {
		t.Fatal(err)
	}
	want := []Stat{
		{Server: "files", Tool: "read", Count: 100, Errors: 10, ErrorRate: 0.1, P50: 50 * time.Millisecond, P95: 95 * time.Millisecond},
		{Server: "files", Tool: "write", Count: 1, P50: 7 * time.Millisecond, P95: 7 * time.Millisecond},
		{Server: "web", Tool: "get", Count: 20, P50: 5 * time.Millisecond, P95: 5 * time.Millisecond},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("by tool (-want +got):\n%s", diff)
	}
	got, err = s.Stats(ctx, t0, t0.Add(time.Hour), "server")
	if err != nil {
		t.Fatal(err)
	}
	// files: 1..100 ms plus 7 ms: 101 values; rank ceil(.5*101)=51 → 50 ms
	// (7 ms sorts among them); rank ceil(.95*101)=96 → 95 ms.
	want = []Stat{
		{Server: "files", Count: 101, Errors: 10, ErrorRate: 10.0 / 101, P50: 50 * time.Millisecond, P95: 95 * time.Millisecond},
		{Server: "web", Count: 20, P50: 5 * time.Millisecond, P95: 5 * time.Millisecond},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("by server (-want +got):\n%s", diff)
	}
	if _, err := s.Stats(ctx, time.Time{}, time.Time{}, "client"); err == nil {
		t.Error("unknown grouping accepted")
	}
}

func TestPercentile(t *testing.T) {
	for _, tc := range []struct {
		xs   []int64
		p    int
		want int64
	}{
		{nil, 50, 0},
		{[]int64{5}, 95, 5},
		{[]int64{1, 2}, 50, 1},
		{[]int64{3, 1, 2, 4}, 50, 2},
		{[]int64{3, 1, 2, 4}, 95, 4},
		{[]int64{10, 20, 30, 40, 50, 60, 70, 80, 90, 100}, 95, 100},
		{[]int64{10, 20, 30, 40, 50, 60, 70, 80, 90, 100}, 50, 50},
	} {
		if got := percentile(tc.xs, tc.p); got != tc.want {
			t.Errorf("percentile(%v, %d) = %d, want %d", tc.xs, tc.p, got, tc.want)
		}
	}
}

func TestSearch(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, testOptions())
	s.RecordCall(call(1, "files", "read_file", `{"path":"/home/ann/notes/zebra.txt"}`))
	s.RecordCall(call(2, "github", "create_issue", `{"title":"Crash in parser","body":"it panics"}`))
	bad := call(3, "web", "fetch", `{"url":"https://example.com/a?b=c"}`)
	bad.Outcome, bad.Error = record.OutcomeProtocol, "connection refused by upstream"
	s.RecordCall(bad)
	s.RecordCall(call(4, "files", "write_file", `{"path":"/tmp/x","token":"supersecretvalue"}`))
	flush(t, s)

	names := func(text string) []string {
		t.Helper()
		p, err := s.Calls(ctx, CallQuery{Text: text})
		if err != nil {
			t.Fatalf("search %q: %v", text, err)
		}
		out := []string{}
		for _, c := range p.Calls {
			out = append(out, c.Name)
		}
		return out
	}
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"zebra", []string{"read_file"}},
		{"ZEBRA.txt", []string{"read_file"}},
		{"refused", []string{"fetch"}},             // in the error
		{"connection upstream", []string{"fetch"}}, // every word
		{"connection zebra", []string{}},           // no call has both
		{"crash parser", []string{"create_issue"}}, // case-insensitive
		{"write_file", []string{"write_file"}},     // the name
		{"example.com/a?b=c", []string{"fetch"}},   // URL punctuation
		{"supersecretvalue", []string{}},           // redacted before indexing
		{`"unbalanced`, []string{}},                // quote
		{`a OR b NOT c AND (d`, []string{}},        // operators are words
		{`title:crash`, []string{"create_issue"}},  // not a column filter
		{`*^-+:()[]{}"'\`, []string{}},             // punctuation only
		{`near(zebra notes)`, []string{}},          // not NEAR syntax
		{"notes*", []string{"read_file"}},          // not a prefix query
	} {
		got := names(tc.text)
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("search %q (-want +got):\n%s", tc.text, diff)
		}
	}
}

func TestFTSQuery(t *testing.T) {
	for in, want := range map[string]string{
		"foo":             `"foo"`,
		`a "b" c`:         `"a" """b""" "c"`,
		"x.y*":            `"x.y*"`,
		"!!! ?? ok":       `"ok"`,
		"   ":             ``,
		"naïve café":      `"naïve" "café"`,
		`OR AND NOT`:      `"OR" "AND" "NOT"`,
		"tab\tnewline\nx": `"tab" "newline" "x"`,
	} {
		if got := ftsQuery(in); got != want {
			t.Errorf("ftsQuery(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestPaginationStableUnderInserts(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, testOptions())
	const older = 500
	for i := range older {
		c := call(i/3, "files", "read", "") // three calls share each start: the id breaks ties
		s.RecordCall(c)
	}
	flush(t, s)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // newer calls keep arriving while we page
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			s.RecordCall(call(10000+i, "files", "read", ""))
			if i%10 == 0 {
				if err := s.Flush(ctx); err != nil {
					t.Error(err)
					return
				}
			}
		}
	}()

	seen := map[int64]bool{}
	var order []Call
	q := CallQuery{Limit: 37}
	for pages := 0; ; pages++ {
		p, err := s.Calls(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range p.Calls {
			if seen[c.ID] {
				t.Fatalf("call %d seen twice (page %d)", c.ID, pages)
			}
			seen[c.ID] = true
			order = append(order, c)
		}
		if p.Next == "" {
			break
		}
		q.Cursor = p.Next
		if pages == 3 {
			flush(t, s) // make sure inserts land mid-walk
		}
	}
	close(stop)
	wg.Wait()

	// Every older call appears exactly once, in (start, id) descending order.
	var olderSeen int
	for i, c := range order {
		if i > 0 {
			p := order[i-1]
			if c.Start.After(p.Start) || (c.Start.Equal(p.Start) && c.ID > p.ID) {
				t.Fatalf("out of order at %d: %v/%d after %v/%d", i, c.Start, c.ID, p.Start, p.ID)
			}
		}
		if c.Start.Before(t0.Add(10000 * time.Second)) {
			olderSeen++
		}
	}
	if olderSeen != older {
		t.Errorf("saw %d of the %d older calls", olderSeen, older)
	}
}

func TestCloseFlushesAndDropsAfter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.db")
	s, err := Open(context.Background(), path, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	for i := range 1000 {
		s.RecordCall(call(i, "a", "b", `{"i":1}`))
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	s.RecordCall(call(1, "a", "b", "")) // must not panic or block
	if s.Dropped() != 1 {
		t.Errorf("Dropped after close = %d, want 1", s.Dropped())
	}
	if err := s.Flush(context.Background()); !errors.Is(err, ErrClosed) {
		t.Errorf("Flush after Close = %v", err)
	}
	s2 := openAt(t, path, testOptions())
	p, err := s2.Calls(context.Background(), CallQuery{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Calls) != 1000 {
		t.Errorf("%d calls after reopen, want 1000", len(p.Calls))
	}
}

func TestQueueFullDropsWithoutBlocking(t *testing.T) {
	opts := testOptions()
	opts.QueueSize = 16
	opts.BatchSize = 8
	entered, release := holdWriter(&opts)
	s := openTest(t, opts)
	defer release() // before the Cleanup's Close

	s.RecordCall(call(0, "a", "b", ""))
	s.Observe(record.Event{Server: "a", Kind: record.EventCrashed})
	go s.Flush(context.Background()) // forces a commit, which blocks in beforeCommit
	<-entered

	const n = 100_000
	start := time.Now()
	deadline := start.Add(5 * time.Second)
	for i := range n {
		s.RecordCall(call(i, "a", "b", `{"x":1}`))
		if i%1000 == 0 && time.Now().After(deadline) {
			t.Fatalf("RecordCall blocked: %d calls took over 5s", i)
		}
	}
	elapsed := time.Since(start)
	// The writer is held: at most the queue (16) can be accepted.
	if d := s.Dropped(); d < n-16 {
		t.Errorf("Dropped = %d, want at least %d", d, n-16)
	}
	t.Logf("%d RecordCall with a full queue took %v (%v each)", n, elapsed, elapsed/n)
	release()
	flush(t, s)
}

// TestSearchCommonWord covers the plan for words with many matches: the page
// must be the same as the one the default plan gives.
func TestSearchCommonWord(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, testOptions())
	for i := range commonWord + 300 {
		args := `{"q":"common"}`
		if i%2 == 0 {
			args = `{"q":"common rare"}`
		}
		c := call(i, "files", "read", args)
		c.Start = t0.Add(time.Duration((i*7919)%5000) * time.Second) // starts out of id order
		s.RecordCall(c)
	}
	flush(t, s)
	for _, text := range []string{"common", "rare"} {
		var walked []int64
		q := CallQuery{Text: text, Limit: 200}
		for {
			p, err := s.Calls(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range p.Calls {
				walked = append(walked, c.ID)
			}
			if p.Next == "" {
				break
			}
			q.Cursor = p.Next
		}
		var want []int64
		rows, err := s.rdb().Query(`SELECT id FROM calls WHERE id IN (SELECT rowid FROM calls_fts WHERE calls_fts MATCH ?)
			ORDER BY start DESC, id DESC`, text)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var id int64
			rows.Scan(&id)
			want = append(want, id)
		}
		rows.Close()
		if diff := cmp.Diff(want, walked); diff != "" || len(want) < commonWord/2 {
			t.Errorf("search %q: %d results (-want +got):\n%s", text, len(want), diff)
		}
	}
}

// OnCommit hands the live feed each stored call as Calls would return it.
func TestOnCommitReportsStoredCalls(t *testing.T) {
	ctx := context.Background()
	s, committed := openCollecting(t)
	for i := range 5 {
		s.RecordCall(call(i, "files", "read_file", `{"path":"/x"}`))
		s.Observe(record.Event{Time: t0, Server: "files", Kind: record.EventLog, Message: "line"})
	}
	flush(t, s)
	page, err := s.Calls(ctx, CallQuery{})
	if err != nil {
		t.Fatal(err)
	}
	slices.Reverse(page.Calls) // newest first → the order of recording
	if diff := cmp.Diff(page.Calls, committed()); diff != "" {
		t.Errorf("OnCommit calls differ from Calls (-Calls +OnCommit):\n%s", diff)
	}
}

// openCollecting opens a test store whose OnCommit collects every call it
// hands the live feed; committed returns them so far.
func openCollecting(t *testing.T) (s *Store, committed func() []Call) {
	var mu sync.Mutex
	var got []Call
	opts := testOptions()
	opts.OnCommit = func(calls []Call, _ uint64) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, calls...)
	}
	return openTest(t, opts), func() []Call {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(got)
	}
}

// Calls are inserted several to a statement (callsPerInsert); every call
// of a batch larger than that, among other records, is stored with the id
// OnCommit reports, its arguments redacted, and found by a search.
func TestManyCallsInABatch(t *testing.T) {
	ctx := context.Background()
	s, committed := openCollecting(t)
	const n = 2*callsPerInsert + 7
	for i := range n {
		s.RecordCall(call(i, "files", fmt.Sprintf("tool%d", i), fmt.Sprintf(`{"path":"word%d","token":"abc"}`, i)))
		if i%5 == 0 {
			s.Observe(record.Event{Time: t0, Server: "files", Kind: record.EventLog, Message: "line"})
		}
	}
	flush(t, s)
	page, err := s.Calls(ctx, CallQuery{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Calls) != n {
		t.Fatalf("%d calls stored, want %d", len(page.Calls), n)
	}
	slices.Reverse(page.Calls) // newest first → the order of recording
	for i, c := range page.Calls {
		if want := fmt.Sprintf("tool%d", i); c.Name != want {
			t.Errorf("call %d: name %q, want %q", i, c.Name, want)
		}
	}
	if diff := cmp.Diff(page.Calls, committed()); diff != "" {
		t.Errorf("OnCommit calls differ from Calls (-Calls +OnCommit):\n%s", diff)
	}
	for _, i := range []int{0, callsPerInsert - 1, callsPerInsert, n - 1} {
		found, err := s.Calls(ctx, CallQuery{Text: fmt.Sprintf("word%d", i)})
		if err != nil {
			t.Fatal(err)
		}
		if len(found.Calls) != 1 || found.Calls[0].Name != fmt.Sprintf("tool%d", i) {
			t.Fatalf("search word%d: %+v", i, found.Calls)
		}
		full, err := s.Call(ctx, found.Calls[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf(`{"path":"word%d","token":"[redacted]"}`, i); string(full.Arguments) != want {
			t.Errorf("call %d: arguments %s, want %s", i, full.Arguments, want)
		}
	}
}

// A common word's first page comes from the newest part of the search
// index; it must be the page a search of every call gives, also when calls
// end out of start order (long calls that started earlier end later).
func TestCommonWordFirstPageIsExact(t *testing.T) {
	opts := testOptions()
	opts.recentWindow = 500
	s := openTest(t, opts)
	rng := rand.New(rand.NewPCG(3, 4))
	// Calls are recorded when they end, as the gateway does: ids follow the
	// end, starts are up to two minutes earlier.
	const n = 6000
	for i := range n {
		end := t0.Add(time.Duration(i) * 100 * time.Millisecond)
		dur := time.Duration(rng.Int64N(int64(2 * time.Minute)))
		word := "common"
		if i%50 == 0 {
			word = "rare"
		}
		c := call(0, "fs", "read_file", fmt.Sprintf(`{"q":"%s %d"}`, word, i))
		c.Start, c.Duration = end.Add(-dur), dur
		s.RecordCall(c)
	}
	flush(t, s)
	ctx := context.Background()
	for _, text := range []string{"common", "rare", "common 5999"} {
		for _, limit := range []int{1, 50, 500} {
			q := CallQuery{Text: text, Limit: limit}
			got, err := s.Calls(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			where, args := q.where()
			want, _, err := s.page(ctx, "calls", where, args, limit)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%q limit %d: first page differs from a full search (-full +got):\n%s", text, limit, diff)
			}
		}
	}
	if from, err := s.callsSource(ctx, CallQuery{Text: "common"}); err != nil || from != commonWordSource {
		t.Errorf("callsSource(common) = %q, %v: the test does not reach the common-word path", from, err)
	}
}

// TestQueueBoundedInBytes: with the writer held, long log lines are
// accepted up to QueueBytes and dropped past it; a call with a huge result
// is queued with only the start of it (its preview).
func TestQueueBoundedInBytes(t *testing.T) {
	opts := testOptions()
	opts.QueueBytes = 1 << 20
	entered, release := holdWriter(&opts)
	s := openTest(t, opts)
	defer release()
	s.Observe(record.Event{Server: "a", Kind: record.EventCrashed})
	go s.Flush(context.Background())
	<-entered

	big := make([]byte, 20<<20)
	head := `{"content":[{"type":"text","text":"`
	copy(big, head)
	for i := len(head); i < len(big)-4; i++ {
		big[i] = 'x'
	}
	copy(big[len(big)-4:], `"}]}`)
	c := call(1, "a", "big", "")
	c.Response, c.ResponseSize = big, len(big)
	s.RecordCall(c)
	if d := s.Dropped(); d != 0 {
		t.Fatalf("a call with a 20 MB result was dropped (the queue holds 1 MiB)")
	}
	line := strings.Repeat("y", 8192)
	for range 1000 { // 8 MB of lines into a 1 MiB queue
		s.Observe(record.Event{Server: "a", Kind: record.EventLog, Stream: "stderr", Message: line})
	}
	s.mu.Lock()
	queued := s.pendingBytes
	s.mu.Unlock()
	if queued > opts.QueueBytes {
		t.Errorf("%d bytes queued, bound %d", queued, opts.QueueBytes)
	}
	if d := s.Dropped(); d < 1000-(1<<20)/8192 {
		t.Errorf("Dropped = %d, want at least %d", d, 1000-(1<<20)/8192)
	}
	release()
	flush(t, s)
	page, err := s.Calls(context.Background(), CallQuery{Tool: "big"})
	if err != nil || len(page.Calls) != 1 || page.Calls[0].ResponseSize != len(big) {
		t.Fatalf("the big call: %+v %v", page, err)
	}
	full, err := s.Call(context.Background(), page.Calls[0].ID)
	if err != nil || len(full.ResponsePreview) != 2<<10 || !strings.HasPrefix(full.ResponsePreview, `{"content":[{"type":"text","text":"xxx`) {
		t.Errorf("preview of the big call (%d bytes): %.80q %v", len(full.ResponsePreview), full.ResponsePreview, err)
	}
}

// Columns that hold one value in every row of an INSERT are bound once
// (shareColumns): whichever columns vary from call to call, in whatever
// rows, every call is stored as it was recorded.
func TestSharedColumnsInABatch(t *testing.T) {
	for _, tc := range []struct {
		name string
		vary func(i int, c *record.Call)
	}{
		{"all alike", func(i int, c *record.Call) {}},
		{"starts only", func(i int, c *record.Call) { c.Duration = time.Millisecond }},
		{"one call differs", func(i int, c *record.Call) {
			if i == callsPerInsert+3 {
				c.ClientName, c.Error, c.Outcome, c.Arguments = "Other", "boom", record.OutcomeToolError, nil
			}
		}},
		{"every column varies", func(i int, c *record.Call) {
			c.ClientLabel, c.ClientName, c.ClientVersion = fmt.Sprint("l", i%2), fmt.Sprint("n", i%3), fmt.Sprint("v", i%5)
			c.Session, c.Endpoint, c.Server, c.Method = fmt.Sprint("s", i%7), fmt.Sprint("e", i%2), fmt.Sprint("srv", i%3), "tools/call"
			c.Name, c.Tool, c.Tier, c.Unknown = fmt.Sprint("t", i%4), fmt.Sprint("t", i%4), []string{"", "read"}[i%2], []string{"", "tool"}[i%3/2]
			c.PID, c.ResponseSize = 1000+i%4, i
			if i%3 == 0 {
				c.Outcome, c.Error = record.OutcomeToolError, fmt.Sprint("failed ", i)
			}
			if i%4 == 1 {
				c.Decision = &record.Decision{By: record.DecidedByDashboard, Allowed: i%8 == 1, At: t0.Add(time.Duration(i) * time.Second)}
			}
			if i%5 == 2 {
				c.Arguments = nil
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			s, committed := openCollecting(t)
			const n = 2*callsPerInsert + 7
			want := make([]record.Call, n)
			for i := range n {
				c := call(0, "files", "read_file", fmt.Sprintf(`{"path":"word%d"}`, i%3))
				c.Start = t0.Add(time.Duration(i) * time.Second)
				tc.vary(i, &c)
				want[i] = c
				s.RecordCall(c)
			}
			flush(t, s)
			page, err := s.Calls(ctx, CallQuery{Limit: 1000})
			if err != nil {
				t.Fatal(err)
			}
			if len(page.Calls) != n {
				t.Fatalf("%d calls stored, want %d", len(page.Calls), n)
			}
			slices.Reverse(page.Calls) // newest first → the order of recording
			if diff := cmp.Diff(page.Calls, committed()); diff != "" {
				t.Errorf("stored calls differ from the ones recorded (-Calls +OnCommit):\n%s", diff)
			}
			for i, got := range page.Calls {
				w := want[i]
				full, err := s.Call(ctx, got.ID)
				if err != nil {
					t.Fatal(err)
				}
				var args string
				if w.Arguments != nil {
					args = string(w.Arguments)
				}
				if !full.Start.Equal(w.Start) || full.Duration != w.Duration || string(full.Arguments) != args ||
					full.ClientName != w.ClientName || full.Session != w.Session || full.PID != w.PID || full.Error != w.Error ||
					(full.DecidedAt != nil) != (w.Decision != nil) || full.ResponsePreview != string(w.Response) {
					t.Errorf("call %d stored as %+v, recorded %+v", i, full, w)
				}
			}
		})
	}
}

// A Flush that finds the queue full waits for the writer to take it (no
// polling), then for the commit of what was queued before it; one whose
// context ends first returns that error.
func TestFlushWaitsForRoomInAFullQueue(t *testing.T) {
	opts := testOptions()
	opts.QueueSize = 8
	entered, release := holdWriter(&opts)
	s := openTest(t, opts)
	defer release()
	s.RecordCall(call(0, "a", "first", ""))
	go s.Flush(context.Background()) // the writer takes it and is held in beforeCommit
	<-entered
	for i := range opts.QueueSize + 1 { // the queue is full again (one more flush fits), one call dropped
		s.RecordCall(call(i+1, "a", "queued", ""))
	}
	if d := s.Dropped(); d != 1 {
		t.Fatalf("Dropped = %d, want 1", d)
	}
	// A flush has room beyond QueueSize: one takes it.
	first := make(chan error, 1)
	go func() { first <- s.Flush(context.Background()) }()
	for deadline := time.Now().Add(10 * time.Second); ; {
		s.mu.Lock()
		n := len(s.pending)
		s.mu.Unlock()
		if n == opts.QueueSize+1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the first flush was not queued: %d pending", n)
		}
		runtime.Gosched()
	}

	short, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := s.Flush(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Flush of a full queue with the writer held = %v, want the context's error", err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Flush(context.Background()) }()
	release()
	if err := <-done; err != nil {
		t.Fatalf("Flush: %v", err)
	}
	if err := <-first; err != nil {
		t.Fatalf("the first Flush: %v", err)
	}
	page, err := s.Calls(context.Background(), CallQuery{Tool: "queued", Limit: 100})
	if err != nil || len(page.Calls) != opts.QueueSize {
		t.Fatalf("%d queued calls stored (%v), want %d", len(page.Calls), err, opts.QueueSize)
	}
}

// The INSERT's column list names every value insertCalls binds.
func TestCallColumnList(t *testing.T) {
	if got := len(strings.Split(callColumnList, ", ")); got != callColumns {
		t.Errorf("callColumnList names %d columns, insertCalls binds %d", got, callColumns)
	}
}

// A batch whose INSERT fails part of the way through is lost whole: the
// rows before the failing one, in the same statement, are not kept
// (insertCallsPrefix's OR FAIL leaves them in the transaction, which the
// writer rolls back), and the next batch is stored.
func TestFailedBatchIsLostWhole(t *testing.T) {
	opts := testOptions()
	entered, release := holdWriter(&opts)
	s := openTest(t, opts)
	defer release()
	if _, err := s.wdb().Exec(`CREATE TRIGGER boom BEFORE INSERT ON calls WHEN NEW.name = 'boom'
		BEGIN SELECT RAISE(FAIL, 'boom'); END`); err != nil {
		t.Fatal(err)
	}
	s.RecordCall(call(0, "a", "first", ""))
	go s.Flush(context.Background())
	<-entered
	const n = 40 // the failing call is the 21st of the first INSERT's 32
	for i := range n {
		name := "batch"
		if i == 20 {
			name = "boom"
		}
		s.RecordCall(call(i+1, "a", name, ""))
	}
	release()
	_ = s.Flush(context.Background()) // the batch's error or none: what was stored is the test
	if d := s.Dropped(); d != n {
		t.Errorf("Dropped = %d, want the failed batch's %d", d, n)
	}
	for _, tool := range []string{"first", "batch", "boom"} {
		page, err := s.Calls(context.Background(), CallQuery{Tool: tool, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		if want := map[string]int{"first": 1}[tool]; len(page.Calls) != want {
			t.Errorf("%d calls of %q stored, want %d", len(page.Calls), tool, want)
		}
	}
	s.RecordCall(call(n+1, "a", "after", ""))
	flush(t, s)
	if page, err := s.Calls(context.Background(), CallQuery{Tool: "after", Limit: 10}); err != nil || len(page.Calls) != 1 {
		t.Errorf("the batch after the failed one: %d calls stored (%v), want 1", len(page.Calls), err)
	}
}

// TestWriterWokenTwicePerBatch: a batch wakes the writer with its first
// record and with the one that fills it, not with every record after
// that. A wake left over from those, taken after the batch was, started
// the next batch's wait early and cut it short at its first record: under
// a steady load every other batch was one tick's worth of calls.
func TestWriterWokenTwicePerBatch(t *testing.T) {
	opts := testOptions()
	opts.BatchSize = 8
	entered, release := holdWriter(&opts)
	s := openTest(t, opts)
	defer release() // before the Cleanup's Close

	s.RecordCall(call(0, "a", "b", ""))
	go s.Flush(context.Background()) // the writer takes it and is held in beforeCommit
	<-entered

	// The writer is held: the wakes are the test's to count.
	wakes := 0
	const n = 3 * 8
	for i := 1; i <= n; i++ {
		s.RecordCall(call(i, "a", "b", `{"x":1}`))
		select {
		case <-s.wake:
			wakes++
		default:
		}
	}
	if wakes != 2 {
		t.Errorf("%d records, batches of 8: the writer was woken %d times, want 2 (the first record, the eighth)", n, wakes)
	}
	release()
	flush(t, s)
	page, err := s.Calls(context.Background(), CallQuery{Limit: 100})
	if err != nil || len(page.Calls) != n+1 || s.Dropped() != 0 {
		t.Errorf("%d calls stored (%v), %d dropped; want %d stored", len(page.Calls), err, s.Dropped(), n+1)
	}
}

// TestBatchFullByBytes: records that hold a quarter of QueueBytes are
// committed without waiting for the batch delay, so that results of tens
// of KiB at a high rate fill the queue only if the writer falls behind,
// not while it waits.
func TestBatchFullByBytes(t *testing.T) {
	opts := testOptions()
	opts.QueueBytes = 1 << 20
	opts.BatchDelay = time.Hour // only a full batch is committed
	s := openTest(t, opts)
	response := json.RawMessage(`{"content":[{"type":"text","text":"` + strings.Repeat("x", 60<<10) + `"}]}`)
	const n = 5 // 300 KiB: more than a quarter of QueueBytes, far fewer than BatchSize records
	for i := range n {
		c := call(i, "a", "b", `{"x":1}`)
		c.Response = response
		s.RecordCall(c)
	}
	testutil.Eventually(t, 10*time.Second, "the calls committed before the batch delay", func() bool {
		page, err := s.Calls(context.Background(), CallQuery{Limit: 10})
		return err == nil && len(page.Calls) == n
	})
}

// TestStaleWakeDoesNotCutABatch: a wake that finds nothing pending (one
// that came as the last batch was taken) does not start the next batch's
// wait, and a wake while the batch is not full does not end it: with a
// batch delay of an hour, two records with wakes between them and a Flush
// are one batch.
func TestStaleWakeDoesNotCutABatch(t *testing.T) {
	opts := testOptions()
	opts.BatchDelay = time.Hour
	var mu sync.Mutex
	var batches []int
	opts.OnCommit = func(calls []Call, _ uint64) {
		mu.Lock()
		batches = append(batches, len(calls))
		mu.Unlock()
	}
	s := openTest(t, opts)
	taken := func(what string) {
		t.Helper()
		testutil.Eventually(t, 10*time.Second, "the writer to take "+what, func() bool { return len(s.wake) == 0 })
	}
	s.wakeWriter() // nothing pending
	taken("a wake with nothing pending")
	s.RecordCall(call(1, "a", "first", ""))
	taken("the first record's wake")
	s.wakeWriter() // the batch is not full
	taken("a wake before the batch is full")
	s.RecordCall(call(2, "a", "second", ""))
	flush(t, s)
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(batches, []int{2}) {
		t.Errorf("batches of %v calls, want one of 2", batches)
	}
}
