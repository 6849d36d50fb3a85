package history

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app/record"
)

func TestRetentionByAge(t *testing.T) {
	ctx := context.Background()
	clock := &fakeClock{now: t0}
	opts := testOptions()
	opts.Now = clock.Now
	opts.MaxAge = 30 * 24 * time.Hour
	s := openTest(t, opts)
	day := 24 * time.Hour
	// 2500 calls a day old each from 40 days ago to 1 day ago: more than one
	// chunk to delete.
	for d := 40; d >= 1; d-- {
		at := t0.Add(-time.Duration(d) * day)
		for i := range 100 {
			c := call(0, "a", "b", "")
			c.Start = at.Add(time.Duration(i) * time.Second)
			s.RecordCall(c)
		}
		s.Observe(record.Event{Time: at, Server: "a", Kind: record.EventLog, Message: "line"})
		s.Observe(record.Event{Time: at, Server: "a", Kind: record.EventReady})
		s.Observe(record.Event{Time: at, Server: "a", Kind: record.EventUsage, Usage: &record.Usage{CPUPercent: 1}})
	}
	flush(t, s)
	rep, err := s.Retain(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Days 40..31 are past 30 days (day 30 is exactly at the cutoff: kept).
	if rep.Calls != 1000 || rep.Logs != 10 || rep.Events != 10 || rep.Samples != 10 {
		t.Errorf("report = %+v, want 1000 calls and 10 of each other", rep)
	}
	p, _ := s.Calls(ctx, CallQuery{Limit: 1000, Until: t0.Add(-29 * day)})
	oldest := p.Calls[len(p.Calls)-1].Start
	if want := t0.Add(-30 * day); !oldest.Equal(want) {
		t.Errorf("oldest call kept %v, want %v", oldest, want)
	}
	logs, _ := s.Logs(ctx, "", time.Time{}, 1000)
	evs, _ := s.Events(ctx, "", time.Time{}, 1000)
	if len(logs) != 30 || len(evs) != 30 {
		t.Errorf("kept %d logs, %d events; want 30 each", len(logs), len(evs))
	}
	// A second pass finds nothing more.
	if rep, _ := s.Retain(ctx); rep.Calls+rep.Logs+rep.Events+rep.Samples != 0 {
		t.Errorf("second pass deleted %+v", rep)
	}
	// A day later, another day goes.
	clock.now = clock.now.Add(day)
	if rep, _ := s.Retain(ctx); rep.Calls != 100 {
		t.Errorf("next day deleted %d calls, want 100", rep.Calls)
	}
}

func TestRetentionBySize(t *testing.T) {
	ctx := context.Background()
	opts := testOptions()
	opts.MaxAge = -1
	opts.MaxBytes = 256 << 10
	s := openTest(t, opts)
	arg := `{"text":"` + strings.Repeat("lorem ipsum dolor ", 50) + `"}`
	const n = 800
	for i := range n {
		s.RecordCall(call(i, "a", "b", arg))
		if i%20 == 0 {
			s.Observe(record.Event{Time: t0.Add(time.Duration(i)*time.Second + 1), Server: "a", Kind: record.EventLog,
				Message: strings.Repeat("x", 500)})
		}
		if i == n/2 {
			// A search indexes the first half: retention then deletes
			// indexed calls and calls of the index's tail.
			if p, err := s.Calls(ctx, CallQuery{Text: "lorem", Limit: 1000}); err != nil || len(p.Calls) != i+1 {
				t.Fatalf("search after %d calls: %d found (%v)", i+1, len(p.Calls), err)
			}
		}
	}
	flush(t, s)
	before, err := s.usedBytes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if before <= opts.MaxBytes {
		t.Fatalf("test database only %d bytes, under the %d bound", before, opts.MaxBytes)
	}
	rep, err := s.Retain(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("used %d → %d bytes; deleted %d calls, %d logs", before, rep.UsedBytes, rep.Calls, rep.Logs)
	if rep.UsedBytes > opts.MaxBytes || rep.Calls == 0 {
		t.Errorf("after retention: %+v (bound %d)", rep, opts.MaxBytes)
	}
	// The oldest went, the newest stayed, and no gap in between.
	p, _ := s.Calls(ctx, CallQuery{Limit: 1000})
	if newest := p.Calls[0].Start; !newest.Equal(t0.Add((n - 1) * time.Second)) {
		t.Errorf("newest call %v was deleted", newest)
	}
	var left int
	s.rdb().QueryRow("SELECT count(*) FROM calls").Scan(&left)
	var minStart int64
	s.rdb().QueryRow("SELECT min(start) FROM calls").Scan(&minStart)
	if want := t0.Add(time.Duration(n-left) * time.Second).UnixMicro(); minStart != want || int64(left) != n-rep.Calls {
		t.Errorf("%d calls left from %d, want the newest %d", left, minStart, n-rep.Calls)
	}
	// Older log lines went too (they interleave with the calls by time).
	logs, _ := s.Logs(ctx, "", time.Time{}, 1000)
	if len(logs) == 0 || len(logs) == n/20 {
		t.Errorf("%d log lines left", len(logs))
	}
	// The search index followed the deletes: a search (which indexes
	// the tail left) finds every call left, and the index holds them and
	// no other.
	if p, err := s.Calls(ctx, CallQuery{Text: "lorem", Limit: 1000}); err != nil || len(p.Calls) != left {
		t.Errorf("search after retention: %d found (%v), want %d", len(p.Calls), err, left)
	}
	var fts int
	s.rdb().QueryRow("SELECT count(*) FROM calls_fts WHERE calls_fts MATCH 'lorem'").Scan(&fts)
	if fts != left {
		t.Errorf("search index has %d rows, calls %d", fts, left)
	}
	var check string
	s.rdb().QueryRow("PRAGMA integrity_check").Scan(&check)
	if check != "ok" {
		t.Errorf("integrity_check: %s", check)
	}
	if _, err := s.wdb().Exec("INSERT INTO calls_fts(calls_fts) VALUES ('integrity-check')"); err != nil {
		t.Errorf("fts integrity-check: %v", err)
	}
}

func TestDownsampling(t *testing.T) {
	ctx := context.Background()
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	clock := &fakeClock{now: base.Add(3 * time.Hour)}
	opts := testOptions()
	opts.Now = clock.Now
	s := openTest(t, opts)
	// A sample every 2 s for 3 hours, for two servers. a's CPU alternates
	// 10/30 (mean 20), RSS climbs; b is constant.
	for i := 0; i < 3*3600/2; i++ {
		at := base.Add(time.Duration(2*i) * time.Second)
		s.Observe(record.Event{Time: at, Server: "a", Kind: record.EventUsage,
			Usage: &record.Usage{CPUPercent: float64(10 + 20*(i%2)), RSSBytes: uint64(1000 + i), Processes: 1 + i%3}})
		s.Observe(record.Event{Time: at, Server: "b", Kind: record.EventUsage,
			Usage: &record.Usage{CPUPercent: 5, RSSBytes: 7, Processes: 1}})
	}
	flush(t, s)
	if _, err := s.Retain(ctx); err != nil {
		t.Fatal(err)
	}
	pts, err := s.Samples(ctx, "a", time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	// First 2 hours: 120 one-minute points; last hour: 1800 raw samples.
	var minute, raw int
	for _, p := range pts {
		switch p.Span {
		case time.Minute:
			minute++
			if p.CPUPercent != 20 || p.Time.Second() != 0 {
				t.Fatalf("minute point %+v", p)
			}
			i := int(p.Time.Sub(base) / (2 * time.Second))
			if want := uint64(1000 + i + 29); p.RSSBytes != want || p.Processes != 3 {
				t.Fatalf("minute point %+v, want rss %d (max), processes 3", p, want)
			}
		case 0:
			raw++
			if p.Time.Before(base.Add(2 * time.Hour)) {
				t.Fatalf("raw sample older than an hour kept: %+v", p)
			}
		default:
			t.Fatalf("unexpected span %+v", p)
		}
	}
	if minute != 120 || raw != 1800 {
		t.Errorf("%d minute points, %d raw; want 120, 1800", minute, raw)
	}

	// Two days later everything but the last hour is 15-minute points; the
	// average stays the average of the raw samples.
	clock.now = base.Add(2*24*time.Hour + 2*time.Hour)
	if _, err := s.Retain(ctx); err != nil {
		t.Fatal(err)
	}
	pts, _ = s.Samples(ctx, "a", time.Time{}, time.Time{})
	if len(pts) != 12 { // 3 hours / 15 minutes
		t.Fatalf("%d points after a day, want 12: %+v", len(pts), pts)
	}
	for _, p := range pts {
		if p.Span != 15*time.Minute || p.CPUPercent != 20 || p.Time.Minute()%15 != 0 {
			t.Errorf("15-minute point %+v", p)
		}
	}
	bs, _ := s.Samples(ctx, "b", base, base.Add(time.Hour))
	if len(bs) != 4 || bs[0].CPUPercent != 5 || bs[0].RSSBytes != 7 {
		t.Errorf("server b: %+v", bs)
	}
	// Nothing left to merge.
	if rep, _ := s.Retain(ctx); rep.Downsample != 0 {
		t.Errorf("second pass merged %d", rep.Downsample)
	}
}

// TestBackgroundRetention checks the ticker path once: with a short interval
// the old call goes without anyone calling Retain (polled with a deadline).
func TestBackgroundRetention(t *testing.T) {
	ctx := context.Background()
	opts := Options{RetentionInterval: 10 * time.Millisecond, MaxAge: time.Hour,
		Now: func() time.Time { return t0.Add(2 * time.Hour) }}
	s := openTest(t, opts)
	s.RecordCall(call(0, "a", "b", ""))
	s.RecordCall(call(2*3600, "a", "b", ""))
	flush(t, s)
	deadline := time.Now().Add(10 * time.Second)
	for {
		p, err := s.Calls(ctx, CallQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Calls) == 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("old call still there: %d calls", len(p.Calls))
		}
		time.Sleep(5 * time.Millisecond) // polling with a deadline
	}
}

// SetRetention changes the bounds of a running store; zero restores the
// defaults.
func TestSetRetention(t *testing.T) {
	clock := &fakeClock{now: t0}
	opts := testOptions()
	opts.Now = clock.Now
	s := openTest(t, opts)
	for i := range 10 {
		s.RecordCall(call(-i*24*3600, "fs", "read_file", ""))
	}
	flush(t, s)
	if age, size := s.Retention(); age != 30*24*time.Hour || size != 1<<30 {
		t.Fatalf("defaults: %v %d", age, size)
	}
	s.SetRetention(3*24*time.Hour+time.Minute, 0)
	if _, err := s.Retain(context.Background()); err != nil {
		t.Fatal(err)
	}
	page, err := s.Calls(context.Background(), CallQuery{})
	if err != nil || len(page.Calls) != 4 {
		t.Fatalf("after keeping 3 days: %d calls (%v), want 4", len(page.Calls), err)
	}
	s.SetRetention(0, 0)
	if age, size := s.Retention(); age != 30*24*time.Hour || size != 1<<30 {
		t.Errorf("back to defaults: %v %d", age, size)
	}
}
