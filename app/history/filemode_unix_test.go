//go:build unix

package history

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestFilesArePrivate checks history.db, -wal and -shm are 0600 under a
// permissive umask, for a new database and for one left world-readable.
func TestFilesArePrivate(t *testing.T) {
	old := syscall.Umask(0)
	t.Cleanup(func() { syscall.Umask(old) })

	check := func(path string) {
		t.Helper()
		for _, p := range []string{path, path + "-wal", path + "-shm"} {
			info, err := os.Stat(p)
			if err != nil {
				t.Errorf("%s: %v", p, err)
				continue
			}
			if m := info.Mode().Perm(); m != 0o600 {
				t.Errorf("%s has mode %o, want 600", filepath.Base(p), m)
			}
		}
	}
	path := filepath.Join(t.TempDir(), "history.db")
	s, err := Open(context.Background(), path, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	check(path) // after open
	s.RecordCall(call(1, "a", "b", `{"x":1}`))
	flush(t, s)
	check(path) // after the WAL has been written
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}

	// A database made world-readable by an older version.
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	s = openAt(t, path, testOptions())
	s.RecordCall(call(2, "a", "b", `{"x":2}`))
	flush(t, s)
	check(path)
}
