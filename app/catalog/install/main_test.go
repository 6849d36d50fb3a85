package install

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/switchboardhq/switchboard/app/secrets"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// isolate points HOME and SWITCHBOARD_HOME (and npm's cache, which lives in
// HOME) at a fresh directory and returns the data directory.
func isolate(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("HOME", dir)
	t.Setenv("USERPROFILE", dir)
	home := filepath.Join(dir, "switchboard")
	t.Setenv("SWITCHBOARD_HOME", home)
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	return home
}

func newStore(t testing.TB, home string) *secrets.Store {
	t.Helper()
	s, err := secrets.Open(context.Background(), secrets.Options{Dir: home, NoKeychain: true})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func newInstaller(t testing.TB, opts Options) *Installer {
	t.Helper()
	if opts.Home == "" {
		opts.Home = isolate(t)
	}
	if opts.Secrets == nil {
		opts.Secrets = newStore(t, opts.Home)
	}
	in, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// needNPM skips the test without npm and node, or fails it under
// `make test`, which sets SWITCHBOARD_REQUIRE_ALL: CI has them, and there
// a skip would hide a broken setup.
func needNPM(t testing.TB) {
	t.Helper()
	for _, tool := range []string{"npm", "node"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("SWITCHBOARD_REQUIRE_ALL") != "" {
				t.Fatalf("%s is not installed, and make test needs it (SWITCHBOARD_REQUIRE_ALL is set)", tool)
			}
			t.Skipf("%s is not installed", tool)
		}
	}
}

// packFixture runs `npm pack` on testdata/fixture-server (copied, so the
// source tree is not written to) and returns the tarball's path.
func packFixture(t testing.TB) string {
	t.Helper()
	needNPM(t)
	src, err := filepath.Abs("testdata/fixture-server")
	if err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(t.TempDir(), "fixture")
	if err := os.CopyFS(work, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	cmd := exec.Command("npm", "pack", "--pack-destination", out, "--loglevel=error")
	cmd.Dir = work
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm pack: %v\n%s", err, b)
	}
	tgz := filepath.Join(out, "switchboard-fixture-server-1.2.3.tgz")
	if _, err := os.Stat(tgz); err != nil {
		t.Fatalf("npm pack made no tarball: %v", err)
	}
	return tgz
}

// recorder collects progress reports.
type recorder struct {
	mu  sync.Mutex
	all []Progress
}

func (r *recorder) add(p Progress) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.all = append(r.all, p)
}

func (r *recorder) reports() []Progress {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.all)
}

func (r *recorder) phases() []Phase {
	var out []Phase
	for _, p := range r.reports() {
		if !p.Done && (len(out) == 0 || out[len(out)-1] != p.Phase) {
			out = append(out, p.Phase)
		}
	}
	return out
}

func (r *recorder) text() string {
	b, _ := json.Marshal(r.reports())
	return string(b)
}

// processesMentioning lists live pids whose command line or working
// directory contains s (Linux). npm rewrites its command line (its process
// title), so the working directory is what identifies it.
func processesMentioning(s string) []string {
	if runtime.GOOS != "linux" {
		return nil
	}
	entries, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(b) == 0 {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if i := strings.LastIndexByte(string(stat), ')'); i > 0 && len(stat) > i+2 && stat[i+2] == 'Z' {
			continue
		}
		cwd, _ := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
		if strings.Contains(strings.ReplaceAll(string(b), "\x00", " "), s) || strings.Contains(cwd, s) {
			out = append(out, e.Name()+": "+strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return out
}
