package history

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/app/record"
)

func TestTimeline(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, testOptions())
	// files: one call a second for 100 s (durations i%100+1 ms), one more at
	// 250 s that timed out; web: one call at 30 s; one call before the window.
	want := map[int][]int64{} // bucket → durations (µs) of files' calls
	for i := 1; i <= 100; i++ {
		s.RecordCall(call(i, "files", "read", ""))
		want[i/60] = append(want[i/60], int64(i%100+1)*1000)
	}
	late := call(250, "files", "read", "")
	late.Outcome = record.OutcomeTimeout
	s.RecordCall(late)
	want[4] = append(want[4], int64(250%100+1)*1000)
	s.RecordCall(call(30, "web", "get", ""))
	s.RecordCall(call(-120, "files", "read", ""))
	flush(t, s)

	// since is 10 s past a minute: the first bucket starts on the minute.
	since, until := t0.Add(10*time.Second), t0.Add(4*time.Minute+30*time.Second)
	got, err := s.Timeline(ctx, "files", since, until, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	var expect []TimeStat
	for b := range 5 {
		ts := TimeStat{Time: t0.Add(time.Duration(b) * time.Minute)}
		if d := want[b]; len(d) > 0 {
			ts.Count = int64(len(d))
			ts.P50 = time.Duration(percentile(append([]int64(nil), d...), 50)) * time.Microsecond
			ts.P95 = time.Duration(percentile(append([]int64(nil), d...), 95)) * time.Microsecond
		}
		if b == 4 {
			ts.Errors = 1
		}
		expect = append(expect, ts)
	}
	if diff := cmp.Diff(expect, got); diff != "" {
		t.Errorf("Timeline of files (-want +got):\n%s", diff)
	}
	if got[0].Count != 59 || got[1].Count != 41 || got[2].Count != 0 {
		t.Errorf("counts %d %d %d, want 59 41 0", got[0].Count, got[1].Count, got[2].Count)
	}

	all, err := s.Timeline(ctx, "", since, until, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if all[0].Count != 60 {
		t.Errorf("every server, first minute: %d calls, want 60", all[0].Count)
	}

	// A window with no calls still has its buckets; an hour step puts the
	// one bucket on the hour.
	empty, err := s.Timeline(ctx, "", t0.Add(-3*time.Hour+17*time.Minute), t0.Add(-time.Hour), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if len(empty) != 2 || !empty[0].Time.Equal(t0.Add(-3*time.Hour)) || empty[0].Count+empty[1].Count != 0 {
		t.Errorf("empty window: %+v", empty)
	}

	for _, tc := range []struct {
		name string
		step time.Duration
		span time.Duration
	}{
		{"step under a second", time.Millisecond, time.Hour},
		{"too many buckets", time.Second, 2 * time.Hour},
	} {
		if _, err := s.Timeline(ctx, "", t0, t0.Add(tc.span), tc.step); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

// TestStatsByToolOwnName: a tool called through the aggregated endpoint
// (as files__read) and through the server's own (as read) is one tool.
func TestStatsByToolOwnName(t *testing.T) {
	s := openTest(t, testOptions())
	for i, ep := range []string{"", "", "files"} {
		c := call(i+1, "files", "read", "")
		if ep == "" {
			c.Name = "files__read"
		}
		c.Endpoint = ep
		s.RecordCall(c)
	}
	own := call(9, "files", "a__b", "") // a server's own name with "__", on its own endpoint
	own.Endpoint = "files"
	s.RecordCall(own)
	flush(t, s)
	got, err := s.Stats(context.Background(), t0, t0.Add(time.Hour), "tool")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Tool != "a__b" || got[0].Count != 1 || got[1].Tool != "read" || got[1].Count != 3 {
		t.Errorf("stats by tool: %+v", got)
	}
}
