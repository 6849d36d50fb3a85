// Package sqlitedamage damages SQLite files for the tests of what a
// damaged history does (its own package, so that only those tests link the
// SQLite driver).
package sqlitedamage

import (
	"bytes"
	"database/sql"
	"os"
	"testing"

	_ "modernc.org/sqlite" // the "sqlite" driver, as app/history uses
)

// LeafPages writes garbage over n leaf pages of table in the SQLite file at
// path (closed), spread evenly over the table: rows, not the header or the
// schema. It returns how many leaf pages the table has; fewer than 4n
// fails the test, as the damage would not be spread.
func LeafPages(t testing.TB, path, table string, n int) int {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	var pages []int64
	rows, err := db.Query(`SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf' ORDER BY pageno`, table)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var p int64
		if err := rows.Scan(&p); err != nil {
			t.Fatal(err)
		}
		pages = append(pages, p)
	}
	rows.Close()
	var pageSize int64
	if err := db.QueryRow("PRAGMA page_size").Scan(&pageSize); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if len(pages) < 4*n {
		t.Fatalf("%s fills only %d leaf pages", table, len(pages))
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	garbage := bytes.Repeat([]byte("\xde\xad\xbe\xef"), int(pageSize)/4)
	for i := 1; i <= n; i++ {
		if _, err := f.WriteAt(garbage, (pages[i*len(pages)/(n+1)]-1)*pageSize); err != nil {
			f.Close()
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return len(pages)
}
