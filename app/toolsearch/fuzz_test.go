package toolsearch

import (
	"context"
	"strings"
	"testing"
)

// FuzzMatchExpression feeds free text to the query builder and runs what
// it builds against a real FTS5 table: whatever a user types (quotes,
// stars, NEAR, parentheses, column filters, control bytes, invalid UTF-8),
// the query is valid FTS5 and searching never fails.
func FuzzMatchExpression(f *testing.F) {
	for _, s := range []string{
		"read file", `"unterminated`, `a" OR "b`, "NEAR(a b, 3)", "name:read", "read*", "^start",
		"a AND NOT b", "(((", "-x +y", "\x00\xff\xfe", "ünïcödé 文件 読む", strings.Repeat("word ", 100), "",
	} {
		f.Add(s)
	}
	ix, err := New()
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { ix.Close() })
	if err := ix.Replace(context.Background(), "fs", []Tool{
		{Key: "fs__read_file", Name: "read_file", Description: "Read a file"},
		{Key: "fs__near", Name: "near", Description: "AND OR NOT NEAR"},
	}); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, q string) {
		expr := matchExpression(q)
		if n := strings.Count(expr, " OR ") + 1; expr != "" && n > 2*maxQueryTerms {
			t.Fatalf("%q built %d terms", q, n)
		}
		if _, err := ix.Search(context.Background(), q, 5); err != nil {
			t.Fatalf("search %q (FTS5 query %s): %v", q, expr, err)
		}
	})
}
