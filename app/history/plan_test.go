package history

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestQueryPlans checks, with EXPLAIN QUERY PLAN, how SQLite reads calls
// for each filter of a page of calls: each filter that has an index of its
// own searches that index, and no page reads the calls table in full
// (a SCAN of calls without an index). The database has no statistics
// (ANALYZE never runs on a user's database), so these are the plans users
// get.
func TestQueryPlans(t *testing.T) {
	s := openTest(t, testOptions())
	ctx := context.Background()
	week := t0.Add(-7 * 24 * time.Hour)
	for _, tc := range []struct {
		name string
		q    CallQuery
		from string
		want string // in the plan: the index used, and how
	}{
		{"all", CallQuery{}, "calls", "SCAN calls USING INDEX calls_start"},
		{"server", CallQuery{Server: "files"}, "calls", "USING INDEX calls_server_start (server=?)"},
		{"tool", CallQuery{Tool: "read_file"}, "calls", "USING INDEX calls_tool_start (tool=?)"}, // and calls_name_start (name=?),
		{"server and tool", CallQuery{Server: "files", Tool: "read_file"}, "calls", "USING INDEX calls_"},
		{"errors", CallQuery{Outcome: OutcomeError}, "calls", "USING INDEX calls_failed_start"},
		{"one kind of error", CallQuery{Outcome: "timeout"}, "calls", "USING INDEX calls_failed_start"},
		{"ok", CallQuery{Outcome: "ok"}, "calls", "SCAN calls USING INDEX calls_start"},
		{"since", CallQuery{Since: week}, "calls", "USING INDEX calls_start (start>?)"},
		{"window", CallQuery{Since: week, Until: t0}, "calls", "USING INDEX calls_start (start>? AND start<?)"},
		{"server, errors, since", CallQuery{Server: "files", Outcome: OutcomeError, Since: week}, "calls", "USING INDEX calls_"},
		{"client", CallQuery{Client: "cursor"}, "calls", "SCAN calls USING INDEX calls_start"},
		{"text", CallQuery{Text: "needle"}, "calls", "VIRTUAL TABLE INDEX"},
		{"common word", CallQuery{Text: "alpha"}, commonWordSource, "SCAN calls USING INDEX calls_start"},
		{"text and tool", CallQuery{Text: "needle", Tool: "read_file"}, "calls", "USING INDEX calls_tool_start (tool=?)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			where, args := tc.q.where()
			rows, err := s.rdb().QueryContext(ctx, "EXPLAIN QUERY PLAN "+pageQuery(tc.from, where, 50), args...)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			var plan []string
			for rows.Next() {
				var id, parent, notused int
				var detail string
				if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
					t.Fatal(err)
				}
				plan = append(plan, detail)
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			text := strings.Join(plan, "\n")
			t.Logf("%s:\n%s", tc.name, text)
			if !strings.Contains(text, tc.want) {
				t.Errorf("plan of %+v does not contain %q:\n%s", tc.q, tc.want, text)
			}
			for _, line := range plan {
				if line == "SCAN calls" || strings.HasPrefix(line, "SCAN calls ") && !strings.Contains(line, "USING") {
					t.Errorf("plan of %+v reads every call: %q", tc.q, line)
				}
			}
		})
	}
}
