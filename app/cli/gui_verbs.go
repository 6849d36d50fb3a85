package cli

// The GUI verbs: `window` (the Wails dashboard window, in the build with
// -tags desktop,production,webkit2_41) and `tray` (the tray icon with the
// daemon in-process, in the build with -tags tray). Both verbs exist in
// every build; app/window and app/tray say clearly when their GUI is not
// linked in.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/app/api/client"
	"github.com/switchboardhq/switchboard/app/autostart"
	"github.com/switchboardhq/switchboard/app/daemon"
	"github.com/switchboardhq/switchboard/app/internal/browser"
	"github.com/switchboardhq/switchboard/app/tokens"
	"github.com/switchboardhq/switchboard/app/tray"
	"github.com/switchboardhq/switchboard/app/window"
)

// daemonStartTimeout bounds starting the daemon for the window.
const daemonStartTimeout = 30 * time.Second

func windowVerb() verb {
	var path, assets, logLevel *string
	return verb{
		name:    "window",
		noArgs:  true,
		summary: "open the dashboard window (starts the daemon if needed; focuses an open window)",
		flags: func(fs *flag.FlagSet) {
			path = fs.String("path", "", "dashboard page to show, e.g. /#/servers/NAME")
			assets = fs.String("assets", "", "serve the dashboard from this directory (a frontend build) instead of the embedded one")
			logLevel = fs.String("log-level", "warn", "debug, info, warn or error (logs go to stderr)")
		},
		run: func(ctx context.Context, e *env, _ *flag.FlagSet) error {
			if !window.InBuild {
				return window.ErrNotInBuild
			}
			logger, exe, err := loggerAndSelf(e, *logLevel, " to start the daemon")
			if err != nil {
				return err
			}
			resolve, err := windowDaemon(ctx, e.home, exe)
			if err != nil {
				return err
			}
			var files fs.FS
			if *assets != "" {
				if _, err := os.Stat(filepath.Join(*assets, "index.html")); err != nil {
					return usageError{fmt.Sprintf("--assets %s: not a dashboard build (%v)", *assets, err)}
				}
				files = os.DirFS(*assets)
			} else if dist, ok := dashboardAssets(); ok {
				files = dist
			}
			err = window.Run(ctx, window.Options{Home: e.home, Daemon: resolve, Assets: files, Path: *path, Logger: logger})
			if errors.Is(err, window.ErrNoWebView) {
				// Windows without the WebView2 runtime: the same dashboard,
				// in the default browser, signed in.
				logger.Warn("window: opening the dashboard in the browser instead", "err", err)
				fmt.Fprintf(e.stderr, "switchboard: %v; opening the dashboard in your browser instead.\n", err)
				return openDashboardInBrowser(ctx, resolve, *path)
			}
			return err
		},
	}
}

// openDashboardInBrowser is the window's fallback: a one-time sign-in link
// asked for with the window's token, opened in the default browser. The
// link's fragment is the page of path (the dashboard routes by fragment,
// e.g. /#/servers/NAME), which the browser keeps across the sign-in's
// redirect to /.
func openDashboardInBrowser(ctx context.Context, resolve window.Resolver, path string) error {
	t, err := resolve(ctx)
	if err != nil {
		return err
	}
	c := &client.Client{BaseURL: t.URL.String(), Token: t.Token}
	lc, err := c.LoginCode(ctx)
	if err != nil {
		return fmt.Errorf("asking the daemon for a sign-in link: %w", err)
	}
	link := lc.URL
	if _, frag, ok := strings.Cut(path, "#"); ok && frag != "" {
		link += "#" + frag
	}
	if err := browser.Open(ctx, link); err != nil {
		return fmt.Errorf("opening the dashboard in a browser: %w", err)
	}
	return nil
}

// windowDaemon starts the daemon if none runs and returns how the window
// finds it for each request: daemon.json (one small read), and the daemon
// started again should it have gone.
func windowDaemon(ctx context.Context, home, exe string) (window.Resolver, error) {
	startCtx, cancel := context.WithTimeout(ctx, daemonStartTimeout)
	defer cancel()
	if _, err := daemon.Ensure(startCtx, home, exe); err != nil {
		return nil, err
	}
	store, err := tokens.Open(filepath.Join(home, daemon.TokensFile))
	if err != nil {
		return nil, err
	}
	tok, err := store.Ensure(window.TokenLabel)
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex // one restart at a time
	return func(ctx context.Context) (window.Target, error) {
		info, err := daemon.ReadInfo(home)
		if errors.Is(err, daemon.ErrNotRunning) {
			mu.Lock()
			defer mu.Unlock()
			ctx, cancel := context.WithTimeout(ctx, daemonStartTimeout)
			defer cancel()
			info, err = daemon.Ensure(ctx, home, exe)
		}
		if err != nil {
			return window.Target{}, err
		}
		u, err := url.Parse(info.Address)
		if err != nil {
			return window.Target{}, fmt.Errorf("daemon.json has a bad address %q: %w", info.Address, err)
		}
		return window.Target{URL: u, Token: tok.Secret}, nil
	}, nil
}

func trayVerb() verb {
	var listen, logLevel, windowBin *string
	var hostWait *time.Duration
	return verb{
		name:    "tray",
		noArgs:  true,
		summary: "run the daemon with the tray icon (the default of the tray build)",
		flags: func(fs *flag.FlagSet) {
			listen, logLevel = daemonFlags(fs)
			windowBin = fs.String("window-binary", "", "the window program (default: switchboard-window, else switchboard, beside this one)")
			hostWait = fs.Duration("host-wait", 10*time.Second, "how long to wait for a tray host before running without an icon")
		},
		run: func(ctx context.Context, e *env, _ *flag.FlagSet) error {
			if !tray.InBuild {
				return tray.ErrNotInBuild
			}
			logger, exe, err := loggerAndSelf(e, *logLevel, "")
			if err != nil {
				return err
			}
			winCmd := []string{findWindowBinary(*windowBin, exe), "window", "--home", e.home}
			// A second launch opens the running instance's window.
			if info, err := daemon.ReadInfo(e.home); err == nil {
				fmt.Fprintf(e.stdout, "Switchboard is already running (pid %d); opening its window.\n", info.PID)
				return openWindowOnce(ctx, winCmd)
			}
			return runTray(ctx, e, logger, exe, *listen, *hostWait, winCmd)
		},
	}
}

// runTray runs the daemon in this process and the tray on the main
// goroutine, until Quit or a signal; then the daemon stops every server
// (within daemon.ShutdownTimeout) before it returns.
func runTray(ctx context.Context, e *env, logger *slog.Logger, exe, listen string, hostWait time.Duration, winCmd []string) error {
	daemonCtx, stopDaemon := context.WithCancel(context.Background())
	defer stopDaemon()
	defer adaptProcs(daemonCtx, logger)()
	ready := make(chan daemon.Info, 1)
	done := make(chan error, 1)
	go func() {
		done <- daemon.Run(daemonCtx, daemon.Options{Home: e.home, Listen: listen, Version: e.version, Logger: logger,
			Reaper: []string{exe}, Binary: exe, Dashboard: builtDashboard(),
			AutostartCommand: []string{exe}, Ready: func(i daemon.Info) { ready <- i }})
	}()
	var info daemon.Info
	select {
	case info = <-ready:
	case err := <-done:
		if errors.Is(err, daemon.ErrAlreadyRunning) {
			fmt.Fprintln(e.stdout, "Switchboard is already running; opening its window.")
			return openWindowOnce(ctx, winCmd)
		}
		return err
	case <-ctx.Done():
		stopDaemon()
		return <-done
	}
	fmt.Fprintf(e.stdout, "Switchboard %s is running (pid %d) at %s/mcp\n", e.version, info.PID, info.Address)

	wait := func() error {
		stopDaemon()
		select {
		case err := <-done:
			return err
		case <-time.After(daemon.ShutdownTimeout + 15*time.Second):
			return errors.New("the daemon did not stop in time")
		}
	}
	store, err := tokens.Open(filepath.Join(e.home, daemon.TokensFile))
	if err != nil {
		return errors.Join(err, wait())
	}
	tok, err := store.Ensure("tray")
	if err != nil {
		return errors.Join(err, wait())
	}
	windows, err := tray.NewWindows(winCmd, logger)
	if err != nil {
		return errors.Join(err, wait())
	}
	opts := tray.RunOptions{HostWait: hostWait, Options: tray.Options{
		Client:   &client.Client{BaseURL: info.Address, Token: tok.Secret},
		Endpoint: info.Address + "/mcp",
		Windows:  windows,
		Logger:   logger,
	}}
	if env, err := autostart.EnvFromOS(); err != nil {
		logger.Warn("start at login is not available", "err", err)
	} else if opts.Autostart, err = autostart.New(env); err != nil {
		logger.Warn("start at login is not available", "err", err)
	}
	opts.AutostartCommand = []string{exe}
	if def, err := daemon.DefaultHome(); err != nil || def != e.home {
		opts.AutostartCommand = append(opts.AutostartCommand, "--home", e.home)
	}

	err = tray.Run(ctx, opts)
	switch {
	case errors.Is(err, tray.ErrNoTrayHost):
		fmt.Fprintf(e.stderr, "switchboard: %v.\nRunning without a tray icon; the daemon keeps serving at %s/mcp. Press Ctrl-C to stop it.\n",
			err, info.Address)
		select {
		case <-ctx.Done():
		case err := <-done:
			return err
		}
	case errors.Is(err, tray.ErrQuit), errors.Is(err, context.Canceled):
	case err != nil:
		return errors.Join(err, wait())
	}
	logger.Info("stopping every server")
	return wait()
}

// findWindowBinary picks the window program: the flag, else
// switchboard-window or switchboard beside this program, else
// switchboard-window on PATH.
func findWindowBinary(flagValue, exe string) string {
	if flagValue != "" {
		return flagValue
	}
	dir := filepath.Dir(exe)
	for _, name := range []string{"switchboard-window", "switchboard"} {
		p := filepath.Join(dir, name+filepath.Ext(exe))
		if p == exe {
			continue
		}
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p
		}
	}
	if p, err := exec.LookPath("switchboard-window"); err == nil {
		return p
	}
	return filepath.Join(dir, "switchboard-window")
}

// openWindowOnce starts the window program and waits for it: it opens the
// window, or hands over to the open one and exits.
func openWindowOnce(ctx context.Context, command []string) error {
	cmd := exec.CommandContext(ctx, command[0], command[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		// Status 1 right away is Wails' second instance handing over.
		if errors.As(err, &exit) && exit.ExitCode() == 1 {
			return nil
		}
		return fmt.Errorf("opening the window (%s): %w", command[0], err)
	}
	return nil
}

// withDefaultVerb puts the build's default verb (the tray build's "tray")
// in front of a command line that names no command, so that
// `switchboard-tray` and `switchboard-tray --home DIR --log-level debug`
// run the tray. Help flags and commands pass unchanged.
func withDefaultVerb(args []string) []string {
	if defaultVerb == "" {
		return args
	}
	if len(args) > 0 {
		switch a := args[0]; {
		case !strings.HasPrefix(a, "-"), a == "-h", a == "--help", a == "-help":
			return args
		}
	}
	return append([]string{defaultVerb}, args...)
}
