package daemon

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/gofrs/flock"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/switchboardhq/switchboard/app/internal/testutil"
	"github.com/switchboardhq/switchboard/supervisor/testmcp"
)

// TestRunFailsAtEachStep: a step of Run that fails makes Run return an
// error naming the step, and leaves nothing behind: no goroutine, no child
// process (the reaper, a server the config started), no listener, no
// daemon.json, and the lock released.
func TestRunFailsAtEachStep(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv("XDG_CONFIG_HOME", "")
	for _, tc := range []struct {
		step string
		// setup breaks the step, in a home that does not exist yet, with
		// opts set to a real reaper and a free loopback port.
		setup func(t *testing.T, home string, opts *Options)
	}{
		{"creating the data directory", func(t *testing.T, home string, opts *Options) {
			writeFile(t, filepath.Join(filepath.Dir(home), "file"), "")
			opts.Home = filepath.Join(filepath.Dir(home), "file", "home")
		}},
		{"locking the data directory", func(t *testing.T, home string, _ *Options) {
			mkdir(t, home)
			held := flock.New(filepath.Join(home, lockFile))
			if ok, err := held.TryLock(); !ok || err != nil {
				t.Fatalf("taking the lock: %v, %v", ok, err)
			}
			t.Cleanup(func() { held.Unlock() })
		}},
		{"opening the config", func(t *testing.T, home string, _ *Options) {
			writeFile(t, filepath.Join(home, ConfigFile), `{"version": 99}`)
		}},
		{"opening the tokens", func(t *testing.T, home string, _ *Options) {
			mkdir(t, filepath.Join(home, TokensFile, "x"))
		}},
		{"opening the history", func(t *testing.T, home string, _ *Options) {
			mkdir(t, filepath.Join(home, HistoryFile, "x"))
		}},
		{"opening the tool approvals", func(t *testing.T, home string, _ *Options) {
			writeFile(t, filepath.Join(home, "approvals.json"), "{")
		}},
		{"starting the supervisor", func(t *testing.T, home string, opts *Options) {
			opts.Reaper = []string{filepath.Join(home, "no-such-reaper")}
		}},
		{"opening the catalog", func(t *testing.T, home string, opts *Options) {
			opts.RegistryURL = "ftp://registry.invalid"
		}},
		{"opening the listener", func(t *testing.T, home string, opts *Options) {
			taken, err := net.Listen("tcp", opts.Listen)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { taken.Close() })
		}},
		// Everything is running by then, a server of the config included.
		{"writing daemon.json", func(t *testing.T, home string, _ *Options) {
			mkdir(t, filepath.Join(home, InfoFile, "x"))
			env := map[string]string{"GORACE": "atexit_sleep_ms=0"}
			for _, kv := range testmcp.Env(testmcp.Options{}) {
				k, v, _ := strings.Cut(kv, "=")
				env[k] = v
			}
			cfg, err := json.Marshal(map[string]any{"version": 1, "servers": map[string]any{
				"echo": map[string]any{"command": os.Args[0], "env": env, "pool": map[string]any{"min": 1, "max": 1}}}})
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(home, ConfigFile), string(cfg))
		}},
	} {
		t.Run(tc.step, func(t *testing.T) {
			home := filepath.Join(t.TempDir(), "home")
			opts := Options{
				Home:    home,
				Listen:  freeLoopbackAddress(t),
				Version: "test",
				Logger:  testutil.Logger(t),
				Reaper:  []string{os.Args[0]},
			}
			tc.setup(t, home, &opts)
			running := goleak.IgnoreCurrent()
			ready := false
			opts.Ready = func(Info) { ready = true }

			err := Run(t.Context(), opts)
			se, ok := errors.AsType[*stepError](err)
			if !ok || se.step != tc.step || !strings.HasPrefix(err.Error(), tc.step+": ") {
				t.Fatalf("Run = %v, want the error of step %q", err, tc.step)
			}
			if ready {
				t.Error("Ready was called")
			}

			goleak.VerifyNone(t, running)
			// Run returns once every child it started has been waited for.
			if kids := childProcesses(t); len(kids) > 0 {
				t.Errorf("child processes left running: %v", kids)
			}
			if tc.step != "opening the listener" {
				ln, err := net.Listen("tcp", opts.Listen)
				if err != nil {
					t.Errorf("the listener was left open: %v", err)
				} else {
					ln.Close()
				}
			}
			if tc.step == "creating the data directory" || tc.step == "locking the data directory" {
				return
			}
			lock := flock.New(filepath.Join(home, lockFile))
			if ok, err := lock.TryLock(); !ok || err != nil {
				t.Errorf("the lock was not released: %v, %v", ok, err)
			}
			lock.Unlock()
			if tc.step != "writing daemon.json" {
				if _, err := os.Stat(filepath.Join(home, InfoFile)); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("daemon.json was left behind: %v", err)
				}
			}
		})
	}
}

// freeLoopbackAddress is a loopback address that nothing listens on now.
func freeLoopbackAddress(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// childProcesses lists this process's children (Linux: from /proc, where
// one not waited for yet is listed too); nil elsewhere.
func childProcesses(t *testing.T) []string {
	t.Helper()
	if runtime.GOOS != "linux" {
		return nil
	}
	tasks, err := filepath.Glob("/proc/self/task/*/children")
	if err != nil {
		t.Fatal(err)
	}
	var kids []string
	for _, task := range tasks {
		data, err := os.ReadFile(task)
		if err != nil {
			continue // the thread ended
		}
		kids = append(kids, strings.Fields(string(data))...)
	}
	return kids
}

func mkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	mkdir(t, filepath.Dir(path))
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestTeardownRunsInReverse: the closers run last pushed first, every one
// of them even after one fails, whose error is logged under its name.
func TestTeardownRunsInReverse(t *testing.T) {
	var logged testutil.SyncBuffer
	down := teardown{log: slog.New(slog.NewTextHandler(&logged, nil))}
	var ran []string
	for _, name := range []string{"first", "second", "third"} {
		down.push("stopping "+name, func() error {
			ran = append(ran, name)
			if name == "second" {
				return errors.New("stuck")
			}
			return nil
		})
	}
	down.run()
	if diff := cmp.Diff([]string{"third", "second", "first"}, ran); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	if got := logged.String(); !strings.Contains(got, `level=ERROR msg="stopping second" err=stuck`) || strings.Count(got, "\n") != 1 {
		t.Errorf("logged %q, want one error line naming the closer", got)
	}
}
