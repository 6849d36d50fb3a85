package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.json")

	if err := Write(path, []byte("one"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != "one" {
		t.Errorf("content %q", got)
	}
	if runtime.GOOS != "windows" {
		if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
			t.Errorf("new file mode %v, want 0600", fi.Mode().Perm())
		}
		os.Chmod(path, 0o640)
		if err := Write(path, []byte("two"), 0o600); err != nil {
			t.Fatal(err)
		}
		if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
			t.Errorf("existing file mode %v, want 0640 kept", fi.Mode().Perm())
		}

		// A symlink is followed: the target changes, the link stays.
		link := filepath.Join(dir, "link.json")
		if err := os.Symlink(path, link); err != nil {
			t.Fatal(err)
		}
		if err := Write(link, []byte("three"), 0o600); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("the link was replaced: %v", err)
		}
		if got, _ := os.ReadFile(path); string(got) != "three" {
			t.Errorf("target content %q", got)
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Name() != "f.json" && e.Name() != "link.json" {
			t.Errorf("left behind: %s", e.Name())
		}
	}
	if err := Write(filepath.Join(dir, "missing", "f"), []byte("x"), 0o600); err == nil {
		t.Error("writing into a missing directory succeeded")
	}
}

// WriteChecked renames only when the check passes: a failing check leaves
// the target as it is and no temporary file behind.
func TestWriteChecked(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.json")
	if err := os.WriteFile(path, []byte("theirs"), 0o600); err != nil {
		t.Fatal(err)
	}
	stop := errors.New("changed meanwhile")
	var sawTemp bool
	err := WriteChecked(path, []byte("ours"), 0o600, func() error {
		entries, _ := os.ReadDir(dir)
		sawTemp = len(entries) == 2 // the target and the synced temporary file
		return stop
	})
	if !errors.Is(err, stop) || !sawTemp {
		t.Fatalf("WriteChecked = %v (temporary file written before the check: %v)", err, sawTemp)
	}
	if got, _ := os.ReadFile(path); string(got) != "theirs" {
		t.Errorf("content %q, want theirs kept", got)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
	if err := WriteChecked(path, []byte("ours"), 0o600, func() error { return nil }); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != "ours" {
		t.Errorf("content %q, want ours", got)
	}
}
