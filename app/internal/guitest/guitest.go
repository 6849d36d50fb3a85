//go:build linux

// Package guitest holds what the window's and the tray's tests under Xvfb
// share: checking for the GUI tools, building the binaries, an X session with
// a screenshot, pixel checks, and polling with a deadline. Only tests import it.
package guitest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app/api/client"
	"github.com/switchboardhq/switchboard/app/daemon"
	"github.com/switchboardhq/switchboard/app/internal/testutil"
	"github.com/switchboardhq/switchboard/app/tokens"
	"github.com/switchboardhq/switchboard/supervisor/testmcp"
)

// Tools skips the test unless the GUI test tools of desktop.md are
// installed: `make test` in CI installs them.
func Tools(t *testing.T, extra ...string) {
	t.Helper()
	if testing.Short() {
		t.Skip("GUI test: skipped with -short")
	}
	for _, tool := range append([]string{"xvfb-run", "xauth", "dbus-run-session", "xdotool", "import", "pkg-config"}, extra...) {
		if _, err := exec.LookPath(tool); err != nil {
			Missing(t, "GUI test: %s is not installed (apt-get install xvfb xauth xdotool imagemagick trayer libgtk-3-dev libwebkit2gtk-4.1-dev libayatana-appindicator3-dev)", tool)
		}
	}
}

// RepoRoot is the module's root directory.
func RepoRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil || strings.TrimSpace(string(out)) == "" {
		t.Fatalf("finding the module root: %v", err)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}

// BuildSwitchboard builds the root package with tags (and cgo as given)
// into dir and returns the binary, skipping when the GUI libraries are
// missing.
func BuildSwitchboard(t *testing.T, dir, name, tags string, cgo bool) string {
	t.Helper()
	bin := filepath.Join(dir, name)
	args := []string{"build", "-o", bin}
	if tags != "" {
		args = append(args, "-tags", tags)
	}
	cmd := exec.Command("go", append(args, ".")...)
	cmd.Dir = RepoRoot(t)
	cmd.Env = append(os.Environ(), "CGO_ENABLED="+map[bool]string{true: "1", false: "0"}[cgo])
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		if bytes.Contains(out, []byte("Package")) && bytes.Contains(out, []byte("was not found")) {
			Missing(t, "GUI test: the GUI libraries are not installed:\n%s", out)
		}
		t.Fatalf("go build -tags %q: %v\n%s", tags, err, out)
	}
	t.Logf("built %s (-tags %q) in %s", name, tags, time.Since(start).Round(time.Millisecond))
	return bin
}

// An Session is an Xvfb display with a DBus session bus, for the test's
// GUI processes: the recipe of desktop.md, held open by a sleeping shell.
type Session struct {
	cmd *exec.Cmd
	env []string // DISPLAY, XAUTHORITY, DBUS_SESSION_BUS_ADDRESS
}

func StartX(t *testing.T) *Session {
	t.Helper()
	lockGUI(t)
	envFile := filepath.Join(t.TempDir(), "env")
	cmd := exec.Command("dbus-run-session", "--", "xvfb-run", "-a", "-s", "-screen 0 1280x800x24",
		"sh", "-c", `env > "$0.tmp" && mv "$0.tmp" "$0" && exec sleep 3600`, envFile)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Env = os.Environ()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	})
	x := &Session{cmd: cmd}
	WaitFor(t, 30*time.Second, "the X display", func() bool {
		data, err := os.ReadFile(envFile)
		if err != nil {
			return false
		}
		for _, kv := range strings.Split(string(data), "\n") {
			for _, k := range []string{"DISPLAY=", "XAUTHORITY=", "DBUS_SESSION_BUS_ADDRESS="} {
				if strings.HasPrefix(kv, k) {
					x.env = append(x.env, kv)
				}
			}
		}
		return true
	})
	if len(x.env) < 3 {
		t.Fatalf("the X session has no display or bus: %q\n%s", x.env, stderr.String())
	}
	return x
}

// lockGUI makes the GUI tests of every package take turns: `go test ./...`
// runs the window's and the tray's tests at once, and two WebKit windows,
// tray hosts and their timing checks on two cores starve each other. The
// lock is a file in the system's temp directory (not the tests' own), held
// until the test ends.
func lockGUI(t *testing.T) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(os.TempDir(), "switchboard-guitest.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	})
}

// environ is the environment of a GUI process of the test: the display,
// the bus, and temporary HOME, TMPDIR and data directory.
func (x *Session) Environ(home, userHome, tmp string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "HOME", "TMPDIR", "SWITCHBOARD_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR",
			"DISPLAY", "XAUTHORITY", "DBUS_SESSION_BUS_ADDRESS", "WAYLAND_DISPLAY":
			continue
		}
		env = append(env, kv)
	}
	return append(append(env, x.env...), "HOME="+userHome, "TMPDIR="+tmp, "SWITCHBOARD_HOME="+home)
}

// run runs a tool (xdotool, import) on the display.
func (x *Session) Run(ctx context.Context, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), x.env...)
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); ok {
		err = fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, ee.Stderr)
	}
	return strings.TrimSpace(string(out)), err
}

// FindWindows runs `xdotool search` with args until it names a window, or
// ctx ends. xdotool's own --sync fails outright with BadWindow when a
// window closes while it walks the tree (a menu, a splash): that is tried
// again, not taken for an answer.
func (x *Session) FindWindows(ctx context.Context, args ...string) ([]string, error) {
	var last error
	for {
		out, err := x.Run(ctx, "xdotool", append([]string{"search"}, args...)...)
		if ids := strings.Fields(out); err == nil && len(ids) > 0 {
			return ids, nil
		} else if err != nil {
			last = err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("no window for xdotool search %s: %w (last: %v)", strings.Join(args, " "), ctx.Err(), last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// screenshot captures the window (or "root") into a PNG file and decodes it.
func (x *Session) Screenshot(t *testing.T, window, file string) image.Image {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if _, err := x.Run(ctx, "import", "-window", window, file); err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("decoding %s: %v", file, err)
	}
	return img
}

// LuminanceStdDev is the standard deviation of the image's luminance: 0
// for a blank (one colour) image.
func LuminanceStdDev(img image.Image) float64 {
	b := img.Bounds()
	var sum, sq, n float64
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			l := (0.2126*float64(r) + 0.7152*float64(g) + 0.0722*float64(bl)) / 257
			sum += l
			sq += l * l
			n++
		}
	}
	mean := sum / n
	return math.Sqrt(sq/n - mean*mean)
}

// CountColour counts the pixels of exactly c.
func CountColour(img image.Image, c color.NRGBA) int {
	b := img.Bounds()
	n := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if uint8(r>>8) == c.R && uint8(g>>8) == c.G && uint8(bl>>8) == c.B {
				n++
			}
		}
	}
	return n
}

// Differing counts the pixels that differ between two images of one size.
func Differing(a, b image.Image) int {
	n := 0
	r := a.Bounds().Intersect(b.Bounds())
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if a.At(x, y) != b.At(x, y) {
				n++
			}
		}
	}
	return n
}

// RequireAllEnv, set by `make test`, turns a missing GUI tool or library
// from a skipped test into a failed one: CI installs them all (.ci/run), so
// there a skip would hide a broken setup. A plain `go test ./...` on a
// machine without them still passes, skipping.
const RequireAllEnv = "SWITCHBOARD_REQUIRE_ALL"

// Missing skips the test for something the machine lacks, or fails it
// when RequireAllEnv is set.
func Missing(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv(RequireAllEnv) != "" {
		t.Fatalf(format+" ($"+RequireAllEnv+" is set: make test needs it)", args...)
	}
	t.Skipf(format, args...)
}

// WaitFor polls cond until it holds or d passes, every 100 ms: a GUI
// condition usually runs an X tool.
func WaitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	testutil.EventuallyEvery(t, d, 100*time.Millisecond, what, cond)
}

// ProcessState is the State line of /proc/PID/status ("" when the process
// is gone): kill -0 would call a zombie alive.
func ProcessState(pid int) string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		if s, ok := strings.CutPrefix(line, "State:"); ok {
			return strings.TrimSpace(s)
		}
	}
	return ""
}

// WriteTestConfig writes a config.json with one server, "testsrv": this
// test binary as the project's test MCP server.
func WriteTestConfig(t *testing.T, home string) {
	t.Helper()
	env := map[string]string{}
	for _, kv := range testmcp.Env(testmcp.Options{}) {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg := map[string]any{"version": 1, "listen": "127.0.0.1:0", "servers": map[string]any{
		"testsrv": map[string]any{"command": exe, "env": env, "pool": map[string]any{"min": 1}},
	}}
	data, _ := json.MarshalIndent(cfg, "", "  ")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "config.json"), data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestServerRunning calls the daemon that info describes as the CLI does
// (with the "cli" token of home, issued if need be) until the test server
// of WriteTestConfig runs, at most a minute; it returns the client and the
// server's process ids. what names the wait.
func TestServerRunning(t *testing.T, home string, info daemon.Info, what string) (*client.Client, []int) {
	t.Helper()
	store, err := tokens.Open(filepath.Join(home, daemon.TokensFile))
	if err != nil {
		t.Fatal(err)
	}
	cli, err := store.Ensure("cli")
	if err != nil {
		t.Fatal(err)
	}
	c := &client.Client{BaseURL: info.Address, Token: cli.Secret}
	var pids []int
	WaitFor(t, time.Minute, what, func() bool {
		v, err := c.Server(t.Context(), "testsrv")
		pids = pids[:0]
		for _, p := range v.Processes {
			pids = append(pids, p.PID)
		}
		return err == nil && v.State == "running" && len(pids) > 0
	})
	return c, pids
}

// SaveScreenshot copies a screenshot to name in testutil.ScreenshotsDir.
func SaveScreenshot(t *testing.T, file, name string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	dir := testutil.ScreenshotsDir(t)
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("saved %s", filepath.Join(dir, name))
}

// SyncBuffer is a bytes.Buffer safe for a process's output and the test.
type SyncBuffer = testutil.SyncBuffer

// A Proc is a program a GUI test started, with its output.
type Proc struct {
	Cmd     *exec.Cmd
	Out     *SyncBuffer
	Started time.Time
	exited  chan struct{}
	err     error // Cmd.Wait's, once exited is closed
}

// Start starts cmd with its stdout and stderr in p.Out. A window the
// program starts inherits that output, so waiting gives up on it 5 s after
// the program exits. When the test ends, a program still running gets
// SIGTERM, and SIGKILL 30 s later, and is waited for; if the test failed,
// its output is logged under name.
func Start(t *testing.T, name string, cmd *exec.Cmd) *Proc {
	t.Helper()
	p := &Proc{Cmd: cmd, Out: &SyncBuffer{}, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.Out, p.Out
	cmd.WaitDelay = 5 * time.Second
	p.Started = time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			cmd.Process.Signal(syscall.SIGTERM)
			if exited, _ := p.Exit(30 * time.Second); !exited {
				cmd.Process.Kill()
				<-p.exited
			}
		}
		if t.Failed() {
			t.Logf("%s output:\n%s", name, p.Out.String())
		}
	})
	return p
}

// Exit waits up to d for the program to exit: exited is false if it still
// runs, else err is how it ended.
func (p *Proc) Exit(d time.Duration) (exited bool, err error) {
	select {
	case <-p.exited:
		return true, p.err
	case <-time.After(d):
		return false, nil
	}
}
