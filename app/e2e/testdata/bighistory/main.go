// Command bighistory makes a history.db of at least a given size, for the
// test that measures how soon the daemon serves with a big history
// (TestServesAtOnceWithBigHistory). It is built without the race detector,
// under which SQLite writes 1 GB about 30 times slower.
//
//	bighistory PATH BYTES
package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strconv"

	"github.com/switchboardhq/switchboard/app/history"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bighistory:", err)
		os.Exit(1)
	}
}

func run() error {
	if len(os.Args) != 3 {
		return fmt.Errorf("usage: bighistory PATH BYTES")
	}
	path := os.Args[1]
	size, err := strconv.ParseInt(os.Args[2], 10, 64)
	if err != nil {
		return err
	}
	// The schema, as the daemon makes it; closed cleanly.
	h, err := history.Open(context.Background(), path, history.Options{RetentionInterval: -1})
	if err != nil {
		return err
	}
	if err := h.Close(context.Background()); err != nil {
		return err
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	// Log lines of 1000 bytes (many rows and index entries, which is what
	// makes an integrity check slow) in one statement with no rollback
	// journal (the fastest way SQLite grows a file), then back to WAL mode
	// as the daemon leaves the file. A row takes about 1.4 KB of the file.
	const perRow = 1300
	rows := size / perRow
	for _, q := range []string{
		"PRAGMA journal_mode=OFF",
		"PRAGMA synchronous=OFF",
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
		 INSERT INTO logs (time, server, pid, stream, text)
		 SELECT 1767225600000000 + i * 1000, 'alpha', 4242, 'stderr', printf('line %d %.*c', i, 1000, 'x') FROM n`,
		"PRAGMA journal_mode=WAL",
	} {
		if _, err := db.Exec(q, rows); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if fi.Size() < size {
		return fmt.Errorf("%s is %d bytes, want at least %d", path, fi.Size(), size)
	}
	return nil
}
