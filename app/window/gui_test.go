//go:build linux

package window

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app/daemon"
	"github.com/switchboardhq/switchboard/app/internal/guitest"
	"github.com/switchboardhq/switchboard/app/tokens"
)

// Colours of the built-in page (fallback/index.html).
var (
	headerOK   = color.NRGBA{0x1f, 0x88, 0x3d, 0xff} // the daemon answered through the proxy
	liveBadge  = color.NRGBA{0x09, 0x69, 0xda, 0xff} // the event stream is open through the proxy
	runningDot = color.NRGBA{0x2d, 0xa4, 0x4e, 0xff} // a running server's row
)

// TestWindowUnderXvfb builds the real window (Wails, WebKitGTK), points it
// at a daemon running the project's test server, and looks at it: the page
// rendered, the API answered through the proxy with the window's token, the
// event stream is live, the test server's row is there; a second launch
// hands over to the first window; SIGTERM closes it with status 0.
func TestWindowUnderXvfb(t *testing.T) {
	guitest.Tools(t)
	if err := exec.Command("pkg-config", "--exists", "webkit2gtk-4.1", "gtk+-3.0").Run(); err != nil {
		guitest.Missing(t, "GUI test: libwebkit2gtk-4.1-dev and libgtk-3-dev are not installed")
	}
	bin := t.TempDir()
	windowBin := guitest.BuildSwitchboard(t, bin, "switchboard-window", "desktop,production,webkit2_41", true)
	daemonBin := guitest.BuildSwitchboard(t, bin, "switchboard", "", false)

	home, userHome, tmp := t.TempDir(), t.TempDir(), t.TempDir()
	guitest.WriteTestConfig(t, home)
	x := guitest.StartX(t)
	env := x.Environ(home, userHome, tmp)

	// The daemon, headless, as `switchboard serve` runs it.
	serveCmd := exec.Command(daemonBin, "serve", "--log-level", "debug")
	serveCmd.Env = env
	serveOut := guitest.Start(t, "daemon", serveCmd).Out
	var info daemon.Info
	guitest.WaitFor(t, 30*time.Second, "the daemon", func() bool {
		var err error
		info, err = daemon.ReadInfo(home)
		return err == nil
	})
	c, _ := guitest.TestServerRunning(t, home, info, "testsrv running")

	// The window.
	// First the built-in page (whose colours the test knows), served with
	// --assets, whatever the binary embeds.
	pageDir := t.TempDir()
	page, err := fs.ReadFile(FallbackAssets(), "index.html")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pageDir, "index.html"), page, 0o644); err != nil {
		t.Fatal(err)
	}
	win := exec.Command(windowBin, "window", "--log-level", "debug", "--assets", pageDir)
	win.Env = env
	w := guitest.Start(t, "window", win)
	winOut, start := w.Out, w.Started
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	ids, err := x.FindWindows(ctx, "--name", "^Switchboard$")
	if err != nil {
		t.Fatalf("finding the window: %v", err)
	}
	t.Logf("window %v appeared after %s", ids, time.Since(start).Round(time.Millisecond))

	// The page is drawn once the header turns green (the proxy answered)
	// and the live badge blue (the event stream is open).
	shot := filepath.Join(t.TempDir(), "window.png")
	var last string
	guitest.WaitFor(t, 60*time.Second, "the page to render", func() bool {
		img := x.Screenshot(t, ids[0], shot)
		sd := guitest.LuminanceStdDev(img)
		ok, live, dot := guitest.CountColour(img, headerOK), guitest.CountColour(img, liveBadge), guitest.CountColour(img, runningDot)
		last = fmt.Sprintf("luminance stddev %.1f, header %d px, live badge %d px, running dot %d px", sd, ok, live, dot)
		return sd > 10 && ok > 20000 && live > 300 && dot > 60
	})
	t.Logf("rendered after %s: %s", time.Since(start).Round(time.Millisecond), last)
	if !builtDashboard(t) {
		guitest.SaveScreenshot(t, shot, "window.png")
	}
	if b := x.Screenshot(t, ids[0], shot).Bounds(); b.Dx() < MinWidth || b.Dy() < MinHeight {
		t.Errorf("window is %dx%d, smaller than %dx%d", b.Dx(), b.Dy(), MinWidth, MinHeight)
	}
	// The window's own token made the requests.
	store, err := tokens.Open(filepath.Join(home, daemon.TokensFile))
	if err != nil {
		t.Fatal(err)
	}
	if toks := store.List(); !hasLabel(toks, TokenLabel) {
		t.Errorf("no %q token issued: %v", TokenLabel, toks)
	}

	// A second launch hands over to the open window and exits.
	second := exec.CommandContext(ctx, windowBin, "window", "--path", "/servers/testsrv")
	second.Env = env
	out, err := second.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Errorf("second launch: %v (want Wails' hand-over, status 1)\n%s", err, out)
	}
	guitest.WaitFor(t, 10*time.Second, "the first window to hear of the second launch", func() bool {
		return strings.Contains(winOut.String(), "another launch asked to show the window")
	})
	if got, _ := x.Run(ctx, "xdotool", "search", "--name", "^Switchboard$"); len(strings.Fields(got)) != len(ids) {
		t.Errorf("windows after the second launch: %q, before: %q", got, ids)
	}

	// SIGTERM closes the window, status 0; the daemon keeps running.
	win.Process.Signal(syscall.SIGTERM)
	if exited, err := w.Exit(20 * time.Second); !exited {
		t.Fatal("the window did not close on SIGTERM")
	} else if err != nil {
		t.Errorf("window exited with %v", err)
	}
	if _, err := c.Status(t.Context()); err != nil {
		t.Errorf("the daemon stopped with the window: %v", err)
	}
	if builtDashboard(t) {
		dashboardWindow(t, x, windowBin, env, serveOut)
	}
}

// dashboardWindow opens the window with the embedded dashboard build and
// saves its screenshot once the page has drawn itself and stopped changing.
func dashboardWindow(t *testing.T, x *guitest.Session, windowBin string, env []string, serveLog *guitest.SyncBuffer) {
	cmd := exec.Command(windowBin, "window")
	cmd.Env = env
	win := guitest.Start(t, "dashboard window", cmd)
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		if exited, err := win.Exit(20 * time.Second); !exited {
			t.Error("the dashboard window did not close on SIGTERM")
		} else if err != nil {
			t.Errorf("dashboard window exited with %v", err)
		}
	}()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	ids, err := x.FindWindows(ctx, "--name", "^Switchboard$")
	if err != nil {
		t.Fatalf("finding the dashboard window: %v", err)
	}
	id := ids[0]
	shot := filepath.Join(t.TempDir(), "dashboard.png")
	// A page that failed to start is one flat colour; a drawn one has
	// text, borders and a sidebar.
	drawn := func() bool {
		img := x.Screenshot(t, id, shot)
		return distinctColours(img) > 50 && guitest.LuminanceStdDev(img) > 2
	}
	guitest.WaitFor(t, 60*time.Second, "the dashboard to render", drawn)
	// Let it finish drawing: two shots a second apart that differ in less
	// than 1% of the pixels (live charts keep moving a little).
	prev := x.Screenshot(t, id, shot)
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
		time.Sleep(time.Second)
		img := x.Screenshot(t, id, shot)
		b := img.Bounds()
		if guitest.Differing(prev, img) < b.Dx()*b.Dy()/100 {
			break
		}
		prev = img
	}
	if !drawn() {
		t.Fatal("the dashboard window went blank")
	}
	// The dashboard asked for the servers through the window's proxy.
	if !strings.Contains(serveLog.String(), `path=/api/v1/servers status=200`) {
		t.Error("the dashboard did not read /api/v1/servers through the window")
	}
	guitest.SaveScreenshot(t, shot, "window.png")
}

// builtDashboard reports whether the window binary embeds the frontend
// build, whose colours this test does not know.
func builtDashboard(t *testing.T) bool {
	root := guitest.RepoRoot(t)
	_, err1 := os.Stat(filepath.Join(root, "frontend", "embed.go"))
	_, err2 := os.Stat(filepath.Join(root, "frontend", "dist", "index.html"))
	src, _ := os.ReadFile(filepath.Join(root, "app", "cli", "dashboard_assets.go"))
	return err1 == nil && err2 == nil && bytes.Contains(src, []byte("frontend.Assets()"))
}

func hasLabel(toks []tokens.Token, label string) bool {
	for _, tk := range toks {
		if tk.Label == label {
			return true
		}
	}
	return false
}

// distinctColours counts the colours of an image (up to 1000).
func distinctColours(img image.Image) int {
	seen := map[color.Color]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y && len(seen) < 1000; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			seen[img.At(x, y)] = true
		}
	}
	return len(seen)
}
