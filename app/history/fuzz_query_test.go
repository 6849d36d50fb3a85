package history

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// FuzzCallQuery runs arbitrary query parameters (the API passes them from
// the URL as they are) against a real database: every query either
// answers, at most limit calls that match its filters, or fails with
// ErrBadCursor for a cursor no page gave. Free text never reaches FTS5 as
// syntax. Seeds are in testdata/fuzz/FuzzCallQuery.
func FuzzCallQuery(f *testing.F) {
	s := openTest(f, testOptions())
	for i, args := range []string{`{"path":"/tmp/a.txt"}`, `{"query":"select * from t"}`, `{"text":"héllo wörld \"quoted\""}`, ``} {
		c := call(i+1, []string{"files", "db", "files", "web"}[i], []string{"read_file", "query", "write_file", "fetch"}[i], args)
		if i == 2 {
			c.Outcome, c.Error = "tool_error", "permission denied: /etc"
		}
		s.RecordCall(c)
	}
	flush(f, s)
	f.Add("files", "", "", "", "tmp", "", 10)
	f.Fuzz(func(t *testing.T, server, tool, client, outcome, text, cursor string, limit int) {
		q := CallQuery{Server: server, Tool: tool, Client: client, Outcome: outcome, Text: text, Cursor: cursor, Limit: limit}
		page, err := s.Calls(context.Background(), q)
		if err != nil {
			if errors.Is(err, ErrBadCursor) && cursor != "" {
				return
			}
			t.Fatalf("Calls(%+v): %v", q, err)
		}
		max := limit
		if max <= 0 {
			max = 50
		}
		if len(page.Calls) > min(max, 1000) {
			t.Fatalf("Calls(%+v) gave %d calls, over the limit", q, len(page.Calls))
		}
		for _, c := range page.Calls {
			if server != "" && c.Server != server || tool != "" && c.Name != tool {
				t.Fatalf("Calls(%+v) gave a call that does not match: %+v", q, c)
			}
			if outcome == OutcomeError && c.Outcome == "ok" || outcome != "" && outcome != OutcomeError && c.Outcome != outcome {
				t.Fatalf("Calls(%+v) gave a call of outcome %q", q, c.Outcome)
			}
		}
		if page.Next != "" {
			if _, _, err := decodeCursor(page.Next); err != nil {
				t.Fatalf("Calls(%+v) gave a cursor that does not decode: %q", q, page.Next)
			}
		}
		if fq := ftsQuery(text); fq != "" && strings.Count(fq, `"`)%2 != 0 {
			t.Fatalf("ftsQuery(%q) = %q: unbalanced quotes", text, fq)
		}
	})
}
