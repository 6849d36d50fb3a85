package history

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"
	"time"

	"modernc.org/sqlite"
)

// Migrations are the files migrations/NNNN_name.sql, applied in order. The
// schema version of a database is PRAGMA user_version: the number of the last
// migration applied. A migration is never edited once released; a change to
// the schema is a new file.
//
//go:embed migrations/*.sql
var migrationFS embed.FS

type migration struct {
	version int
	name    string
	sql     string
}

// migrations is the ordered migration table, checked at init: numbered from 1
// without gaps.
var migrations = mustLoadMigrations()

// SchemaVersion is the schema version this binary writes.
var SchemaVersion = len(migrations)

func mustLoadMigrations() []migration {
	entries, err := fs.ReadDir(migrationFS, "migrations")
	if err != nil {
		panic(err)
	}
	var ms []migration
	for _, e := range entries { // ReadDir sorts by name
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v != len(ms)+1 {
			panic(fmt.Sprintf("history: migration %s is out of sequence", e.Name()))
		}
		data, err := migrationFS.ReadFile(path.Join("migrations", e.Name()))
		if err != nil {
			panic(err)
		}
		ms = append(ms, migration{version: v, name: e.Name(), sql: string(data)})
	}
	return ms
}

// A VersionError reports a database written by a newer Switchboard, whose
// schema this binary does not know. Open refuses it rather than guess.
type VersionError struct {
	Path  string
	Have  int // the database's schema version
	Known int // the newest version this binary knows
}

func (e *VersionError) Error() string {
	return fmt.Sprintf("history: %s has schema version %d but this Switchboard knows only up to version %d; "+
		"run a newer Switchboard, or move the file aside to start a new history", e.Path, e.Have, e.Known)
}

// migrate brings the database to version target (at most SchemaVersion) in one
// transaction: either every pending migration applies or none does.
func migrate(ctx context.Context, db *sql.DB, file string, target int) error {
	var have int
	if err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&have); err != nil {
		return err
	}
	if have > SchemaVersion {
		return &VersionError{Path: file, Have: have, Known: SchemaVersion}
	}
	if have >= target {
		return nil
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, m := range migrations[have:target] {
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			return fmt.Errorf("history: migration %s: %w", m.name, err)
		}
	}
	// PRAGMA takes no parameters; target is an int.
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", target)); err != nil {
		return err
	}
	return tx.Commit()
}

// errCorrupt marks a database that opened but failed its integrity check.
var errCorrupt = errors.New("history: database failed its integrity check")

// isCorrupt reports whether err means the file is not a usable SQLite
// database (as opposed to, say, a permission problem or a newer schema).
func isCorrupt(err error) bool {
	if errors.Is(err, errCorrupt) {
		return true
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case 11, 26: // SQLITE_CORRUPT, SQLITE_NOTADB
			return true
		}
	}
	return false
}

// checkIntegrity runs PRAGMA quick_check (integrity_check without the
// index-content cross-check: the same page and b-tree checks in a fraction of
// the time) and reads the schema.
func checkIntegrity(ctx context.Context, db *sql.DB) error {
	rows, err := db.QueryContext(ctx, "PRAGMA quick_check")
	if err != nil {
		return err
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return err
		}
		if line != "ok" {
			problems = append(problems, line)
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(problems) > 0 {
		if len(problems) > 3 {
			problems = append(problems[:3], "...")
		}
		return fmt.Errorf("%w: %s", errCorrupt, strings.Join(problems, "; "))
	}
	return nil
}

// A Recovery reports that Open found the database corrupt, moved it aside and
// started a new, empty one. The daemon logs it and shows it to the user.
type Recovery struct {
	Path    string    `json:"path"`    // the database file
	MovedTo string    `json:"movedTo"` // where the corrupt file now is
	Reason  string    `json:"reason"`  // what was wrong with it
	Time    time.Time `json:"time"`
}

func (r *Recovery) String() string {
	return fmt.Sprintf("history database %s was corrupt (%s); it was moved to %s and a new history started",
		r.Path, r.Reason, r.MovedTo)
}

// moveAside renames file and its -wal and -shm companions to
// <file>.corrupt-<timestamp>[-wal|-shm].
func moveAside(file string, now time.Time) (string, error) {
	dest := file + ".corrupt-" + now.UTC().Format("20060102T150405Z")
	if _, err := os.Stat(dest); err == nil {
		dest += "-" + strconv.FormatInt(now.UnixNano(), 36)
	}
	if err := os.Rename(file, dest); err != nil {
		return "", err
	}
	for _, suffix := range []string{"-wal", "-shm"} {
		if err := os.Rename(file+suffix, dest+suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return dest, err
		}
	}
	return dest, nil
}
