package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app/api"
	"github.com/switchboardhq/switchboard/app/history"
	"github.com/switchboardhq/switchboard/app/record"
)

// TestStatsByTime serves /api/v1/stats?by=time from a real history
// database: buckets on clock boundaries over the whole window, empty ones
// included.
func TestStatsByTime(t *testing.T) {
	store, err := history.Open(t.Context(), filepath.Join(t.TempDir(), "history.db"), history.Options{RetentionInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close(context.Background()) })
	base := time.Now().UTC().Truncate(time.Hour).Add(-2 * time.Hour)
	for _, c := range []record.Call{
		{Start: base.Add(5 * time.Minute), Server: "fs", Outcome: record.OutcomeOK, Duration: 2 * time.Millisecond},
		{Start: base.Add(5*time.Minute + time.Second), Server: "fs", Outcome: record.OutcomeOK, Duration: 4 * time.Millisecond},
		{Start: base.Add(20 * time.Minute), Server: "fs", Outcome: record.OutcomeToolError, Duration: 9 * time.Millisecond},
		{Start: base.Add(21 * time.Minute), Server: "git", Outcome: record.OutcomeOK, Duration: time.Millisecond},
	} {
		c.Method, c.Name = "tools/call", "x"
		store.RecordCall(c)
	}
	if err := store.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, func(o *api.Options) { o.History = store })

	get := func(q url.Values) ([]history.TimeStat, int) {
		t.Helper()
		resp := e.request(t, http.MethodGet, "/api/v1/stats?"+q.Encode(), "", nil)
		defer resp.Body.Close()
		var out []history.TimeStat
		if resp.StatusCode == http.StatusOK {
			if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
				t.Fatal(err)
			}
		}
		return out, resp.StatusCode
	}
	rfc := func(d time.Duration) string { return base.Add(d).Format(time.RFC3339) }

	// since 3 min past the hour: the first bucket starts on the hour.
	q := url.Values{"by": {"time"}, "since": {rfc(3 * time.Minute)}, "until": {rfc(33 * time.Minute)}, "step": {"15m"}}
	got, status := get(q)
	if status != http.StatusOK || len(got) != 3 {
		t.Fatalf("by=time: %d %+v", status, got)
	}
	for i, want := range []struct {
		count, errors int64
		p95           time.Duration
	}{{2, 0, 4 * time.Millisecond}, {2, 1, 9 * time.Millisecond}, {0, 0, 0}} {
		g := got[i]
		if !g.Time.Equal(base.Add(time.Duration(i)*15*time.Minute)) || g.Count != want.count || g.Errors != want.errors || g.P95 != want.p95 {
			t.Errorf("bucket %d: %+v, want %s count %d errors %d p95 %s", i, g, base.Add(time.Duration(i)*15*time.Minute), want.count, want.errors, want.p95)
		}
	}
	q.Set("server", "git")
	if got, _ := get(q); len(got) != 3 || got[0].Count != 0 || got[1].Count != 1 {
		t.Errorf("by=time of git: %+v", got)
	}

	// Without a step: about 60 buckets over the window, the newest holding now.
	got, status = get(url.Values{"by": {"time"}, "since": {"1h"}})
	if status != http.StatusOK || len(got) < 60 || len(got) > 61 || got[len(got)-1].Time.After(time.Now()) {
		t.Errorf("by=time since 1h: %d, %d buckets", status, len(got))
	}

	for _, bad := range []url.Values{
		{"by": {"time"}, "step": {"soon"}},
		{"by": {"time"}, "step": {"10ms"}},
		{"by": {"time"}, "since": {"168h"}, "step": {"1s"}},
		{"by": {"time"}, "since": {rfc(time.Hour)}, "until": {rfc(0)}},
	} {
		if _, status := get(bad); status != http.StatusBadRequest {
			t.Errorf("GET /api/v1/stats?%s: %d, want 400", bad.Encode(), status)
		}
	}
}
