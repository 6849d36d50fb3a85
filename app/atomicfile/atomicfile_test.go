package atomicfile

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// holdEnv makes the test binary the other process of
// TestReplaceWhileAnotherProcessHoldsIt: it opens the named file, says
// "open", waits for its stdin to close, and prints what it read.
const holdEnv = "ATOMICFILE_TEST_HOLD"

func TestMain(m *testing.M) {
	if path := os.Getenv(holdEnv); path != "" {
		f, err := os.Open(path)
		if err != nil {
			os.Stdout.WriteString("error " + err.Error() + "\n")
			os.Exit(1)
		}
		os.Stdout.WriteString("open\n")
		io.Copy(io.Discard, os.Stdin)
		data, _ := io.ReadAll(f)
		f.Close()
		os.Stdout.WriteString("read " + string(data) + "\n")
		os.Exit(0)
	}
	os.Exit(m.Run())
}

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

// TestReplaceWhileAnotherProcessHoldsIt: another process has the file open
// (as a client reading its config does). On Unix the replace goes through at
// once; on Windows, where an open handle blocks the rename, Write waits for
// the reader to let go instead of failing. The reader sees the old content.
func TestReplaceWhileAnotherProcessHoldsIt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "held.json")
	if err := Write(path, []byte("one"), 0o600); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), holdEnv+"="+path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer stdin.Close()
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() || lines.Text() != "open" {
		t.Fatalf("holder said %q, want open", lines.Text())
	}

	if runtime.GOOS == "windows" {
		// The OS refuses a plain rename over the held file: the case Write handles.
		other := filepath.Join(filepath.Dir(path), "other")
		if err := os.WriteFile(other, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(other, path); err == nil {
			t.Fatal("renamed over a file another process holds open; the test proves nothing here")
		}
		os.Remove(other)
	}
	done := make(chan error, 1)
	go func() { done <- Write(path, []byte("two"), 0o600) }()
	if runtime.GOOS != "windows" {
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("replace while held: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("replace while held did not finish")
		}
	}
	stdin.Close() // the holder reads and lets go
	if runtime.GOOS == "windows" {
		if err := <-done; err != nil {
			t.Fatalf("replace once the holder let go: %v", err)
		}
	}
	if !lines.Scan() || lines.Text() != "read one" {
		t.Errorf("holder %q, want %q: its open file is the old one", lines.Text(), "read one")
	}
	if got, _ := os.ReadFile(path); string(got) != "two" {
		t.Errorf("content %q, want two", got)
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("directory holds %s, want only held.json", strings.Join(names, ", "))
	}
}
