//go:build linux

package tray

import (
	"context"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app/daemon"
	"github.com/switchboardhq/switchboard/app/internal/guitest"
)

// TestTrayUnderXvfb runs the real tray build (daemon in-process, systray's
// XEmbed icon) under Xvfb with trayer as the tray host: the icon appears, a
// click opens the menu (screenshot saved and checked), Quit chosen with the
// keyboard ends the tray, the daemon and the test server, checked by pid.
func TestTrayUnderXvfb(t *testing.T) {
	guitest.Tools(t, "trayer")
	trayLibraries(t)
	bin := t.TempDir()
	trayBin := guitest.BuildSwitchboard(t, bin, "switchboard-tray", "tray", true)
	// The window program beside the tray, for Open Switchboard.
	windowBin := ""
	if exec.Command("pkg-config", "--exists", "webkit2gtk-4.1").Run() == nil {
		windowBin = guitest.BuildSwitchboard(t, bin, "switchboard-window", "desktop,production,webkit2_41", true)
	}

	home, userHome, tmp := t.TempDir(), t.TempDir(), t.TempDir()
	guitest.WriteTestConfig(t, home)
	x := guitest.StartX(t)
	env := x.Environ(home, userHome, tmp)

	host := exec.Command("trayer", "--edge", "top", "--align", "left", "--widthtype", "request", "--height", "32", "--SetDockType", "true")
	host.Env = env
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	hostDone := make(chan struct{})
	go func() { host.Wait(); close(hostDone) }()
	t.Cleanup(func() { host.Process.Kill(); <-hostDone })

	// The tray build without a command runs the tray.
	cmd := exec.Command(trayBin)
	cmd.Env = env
	tr := guitest.Start(t, "tray", cmd)
	out, start := tr.Out, tr.Started

	var info daemon.Info
	guitest.WaitFor(t, 30*time.Second, "the daemon in the tray process", func() bool {
		var err error
		info, err = daemon.ReadInfo(home)
		return err == nil
	})
	if info.PID != tr.Cmd.Process.Pid {
		t.Errorf("daemon.json names pid %d, the tray is %d: the daemon is not in-process", info.PID, tr.Cmd.Process.Pid)
	}
	_, serverPIDs := guitest.TestServerRunning(t, home, info, "testsrv running")

	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	icons, err := x.FindWindows(ctx, "--classname", "systray")
	if err != nil {
		t.Fatalf("finding the tray icon: %v", err)
	}
	iconID := icons[0]
	t.Logf("icon window %s appeared after %s", iconID, time.Since(start).Round(time.Millisecond))

	shots := t.TempDir()
	before := x.Screenshot(t, "root", filepath.Join(shots, "before.png"))
	openMenu := func(what string) image.Image {
		t.Helper()
		if _, err := x.Run(ctx, "xdotool", "mousemove", "--window", iconID, "8", "8", "click", "1"); err != nil {
			t.Fatal(err)
		}
		var img image.Image
		var changed int
		guitest.WaitFor(t, 20*time.Second, what, func() bool {
			img = x.Screenshot(t, "root", filepath.Join(shots, "menu.png"))
			changed = guitest.Differing(before, img)
			// The menu has several rows of text: tens of thousands of pixels.
			return changed > 20000 && guitest.LuminanceStdDev(img) > 10
		})
		t.Logf("%s: %d pixels changed", what, changed)
		return img
	}
	keys := func(k ...string) {
		t.Helper()
		if _, err := x.Run(ctx, "xdotool", append([]string{"key", "--delay", "150"}, k...)...); err != nil {
			t.Fatal(err)
		}
	}
	menu := openMenu("the menu to open")

	// The server's submenu: second row, opened with the keyboard.
	keys("Down", "Down", "Right")
	var sub image.Image
	guitest.WaitFor(t, 20*time.Second, "the server submenu", func() bool {
		sub = x.Screenshot(t, "root", filepath.Join(shots, "submenu.png"))
		return guitest.Differing(menu, sub) > 5000
	})
	saveCropped(t, before, sub, filepath.Join(shots, "tray-menu.png"))
	guitest.SaveScreenshot(t, filepath.Join(shots, "tray-menu.png"), "tray-menu.png")
	keys("Escape", "Escape")
	guitest.WaitFor(t, 20*time.Second, "the menu to close", func() bool {
		return guitest.Differing(before, x.Screenshot(t, "root", filepath.Join(shots, "closed.png"))) < 2000
	})

	// Open Switchboard starts the window process (when the window build
	// is possible here): it is the third row.
	windowPID := 0
	if windowBin != "" {
		openMenu("the menu to open again")
		keys("Down", "Down", "Down", "Return")
		if _, err := x.FindWindows(ctx, "--name", "^Switchboard$"); err != nil {
			t.Fatalf("Open Switchboard showed no window: %v", err)
		}
		m := regexp.MustCompile(`tray: window started" pid=(\d+)`).FindStringSubmatch(out.String())
		if m == nil {
			t.Fatalf("no window pid in the tray's log")
		}
		windowPID, _ = strconv.Atoi(m[1])
		t.Logf("window %d open", windowPID)

		// A second launch of the app opens (here: hands over to) the
		// window instead of starting another daemon.
		second := exec.CommandContext(ctx, trayBin)
		second.Env = env
		secondOut, err := second.CombinedOutput()
		if err != nil || !strings.Contains(string(secondOut), "already running") {
			t.Errorf("second launch: %v\n%s", err, secondOut)
		}
		if info2, err := daemon.ReadInfo(home); err != nil || info2.PID != info.PID {
			t.Errorf("after the second launch the daemon is %+v, %v; want pid %d", info2, err, info.PID)
		}
	}

	// Quit: Up from an unselected menu selects its last item.
	openMenu("the menu to open for Quit")
	keys("Up", "Return")
	if exited, err := tr.Exit(45 * time.Second); !exited {
		t.Fatal("Quit did not end the tray")
	} else if err != nil {
		t.Errorf("the tray exited with %v", err)
	}
	t.Logf("quit after %s", time.Since(start).Round(time.Millisecond))
	pids := append(serverPIDs, tr.Cmd.Process.Pid)
	if windowPID != 0 {
		pids = append(pids, windowPID)
	}
	for _, pid := range pids {
		if s := guitest.ProcessState(pid); s != "" {
			t.Errorf("process %d is left after Quit: %s", pid, s)
		}
	}
	if !strings.Contains(out.String(), "quit chosen") {
		t.Errorf("the tray did not end by its Quit item:\n%s", out.String())
	}
}

// trayLibraries fails (or, outside SWITCHBOARD_REQUIRE_ALL, skips) the test
// unless the libraries the tray build needs are installed.
func trayLibraries(t *testing.T) {
	t.Helper()
	if err := exec.Command("pkg-config", "--exists", "ayatana-appindicator3-0.1", "gtk+-3.0").Run(); err != nil {
		guitest.Missing(t, "GUI test: libayatana-appindicator3-dev and libgtk-3-dev are not installed")
	}
}

// saveCropped writes the part of after that differs from before (the open
// menu), with a margin, as a PNG.
func saveCropped(t *testing.T, before, after image.Image, file string) {
	t.Helper()
	b := after.Bounds()
	box := image.Rectangle{Min: b.Max, Max: b.Min}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if before.At(x, y) != after.At(x, y) {
				box = box.Union(image.Rect(x, y, x+1, y+1))
			}
		}
	}
	box = image.Rect(box.Min.X-8, box.Min.Y-8, box.Max.X+8, box.Max.Y+8).Intersect(b)
	// The icon (top left) is part of the picture.
	box = box.Union(image.Rect(0, 0, 40, 40)).Intersect(b)
	type subImager interface {
		SubImage(image.Rectangle) image.Image
	}
	si, ok := after.(subImager)
	if !ok {
		t.Fatalf("cannot crop a %T", after)
	}
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := png.Encode(f, si.SubImage(box)); err != nil {
		t.Fatal(err)
	}
}

// TestTrayWithoutDisplay: without a display the tray build says so and
// keeps serving headless until SIGTERM, which stops every server.
func TestTrayWithoutDisplay(t *testing.T) {
	if testing.Short() {
		t.Skip("GUI build test: skipped with -short")
	}
	trayLibraries(t)
	trayBin := guitest.BuildSwitchboard(t, t.TempDir(), "switchboard-tray", "tray", true)
	home, userHome, tmp := t.TempDir(), t.TempDir(), t.TempDir()
	guitest.WriteTestConfig(t, home)
	env := (&guitest.Session{}).Environ(home, userHome, tmp) // no DISPLAY, no bus

	cmd := exec.Command(trayBin, "--host-wait", "0s")
	cmd.Env = env
	tr := guitest.Start(t, "tray", cmd)
	out := tr.Out
	guitest.WaitFor(t, 30*time.Second, "the no-display message", func() bool {
		return strings.Contains(out.String(), "no display") && strings.Contains(out.String(), "Running without a tray icon")
	})
	info, err := daemon.ReadInfo(home)
	if err != nil {
		t.Fatalf("the daemon does not serve headless: %v\n%s", err, out.String())
	}
	_, pids := guitest.TestServerRunning(t, home, info, "testsrv running headless")
	tr.Cmd.Process.Signal(syscall.SIGTERM)
	if exited, err := tr.Exit(45 * time.Second); !exited {
		t.Fatal("SIGTERM did not stop the headless tray")
	} else if err != nil {
		t.Errorf("exit: %v\n%s", err, out.String())
	}
	for _, pid := range pids {
		if s := guitest.ProcessState(pid); s != "" {
			t.Errorf("server process %d left: %s", pid, s)
		}
	}
}
