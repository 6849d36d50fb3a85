package config

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func runtimeHasUnixModes() bool { return runtime.GOOS != "windows" }

func TestSave(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	cfg := validConfig()
	if err := cfg.Save(path); err != nil {
		t.Fatal(err)
	}
	first, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(first, []byte("}\n")) || bytes.HasSuffix(first, []byte("\n\n")) {
		t.Errorf("file does not end with exactly one newline:\n%q", first)
	}
	if runtimeHasUnixModes() {
		if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
			t.Errorf("new file mode = %v, want 0600", fi.Mode().Perm())
		}
	}
	got, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(cfg, got, cmpOpts); diff != "" {
		t.Errorf("Load(Save(c)) mismatch (-want +got):\n%s", diff)
	}

	// Deterministic output, and an existing file keeps its mode.
	if runtimeHasUnixModes() {
		if err := os.Chmod(path, 0o640); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		if err := got.Clone().Save(path); err != nil {
			t.Fatal(err)
		}
		if again, _ := os.ReadFile(path); !bytes.Equal(again, first) {
			t.Errorf("saving the same config again gave different bytes:\n%s", again)
		}
	}
	if runtimeHasUnixModes() {
		if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
			t.Errorf("existing file mode = %v, want 0640 kept", fi.Mode().Perm())
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("directory has %d entries, want just %s (temporary files left?)", len(entries), FileName)
	}
}

func TestSaveRefusesInvalid(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := validConfig()
	cfg.Servers["bad"] = Server{}
	err := cfg.Save(path)
	if e := asError(t, err); e.File != path || e.Field != "servers.bad.command" {
		t.Errorf("Save() error = %v, want one for %s field servers.bad.command", err, path)
	}
	if got, _ := os.ReadFile(path); string(got) != "old" {
		t.Errorf("invalid config was written:\n%s", got)
	}
}

func TestSaveFollowsSymlink(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	dir := t.TempDir()
	target := filepath.Join(dir, "dotfiles-config.json")
	if err := os.WriteFile(target, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, FileName)
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := Default().Save(link); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v, %v", fi.Mode(), err)
	}
	if cfg, err := Load(target); err != nil || cfg.Listen != DefaultListen {
		t.Errorf("Load(target) = %+v, %v; want the saved default", cfg, err)
	}
}
