//go:build tray

package tray

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"time"

	"github.com/gen2brain/beeep"
	"github.com/getlantern/systray"
)

// InBuild reports whether this binary has the tray.
const InBuild = true

// RunOptions configure Run.
type RunOptions struct {
	Options
	// HostWait is how long to wait for a tray host to appear (a panel that
	// starts after Switchboard at login) before running without an icon.
	HostWait time.Duration
}

// ErrNoTrayHost is wrapped by Run's error when there is no display or no
// tray host to show the icon in.
var ErrNoTrayHost = errors.New("no tray host")

// Run shows the tray icon and menu and returns when Quit is chosen
// (ErrQuit) or ctx ends. It must run on the main goroutine: systray owns
// the main thread (the GTK main loop on Linux, AppKit on macOS). Without a
// display or tray host it returns an error wrapping ErrNoTrayHost at once.
func Run(ctx context.Context, opts RunOptions) error {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := waitForHost(ctx, opts.HostWait, log); err != nil {
		return err
	}
	if opts.Clipboard == nil {
		opts.Clipboard = copyText
	}
	if opts.Notify == nil {
		beeep.AppName = "Switchboard"
		icons, _ := MakeIcons()
		opts.Notify = func(title, msg string) error { return beeep.Notify(title, msg, icons.PNG[Failing]) }
	}
	app, err := NewApp(opts.Options)
	if err != nil {
		return err
	}
	icons, err := MakeIcons()
	if err != nil {
		return err
	}
	result := make(chan error, 1)
	onReady := func() {
		systray.SetTitle("") // macOS: icon only
		r := NewRenderer(systrayBackend{}, app.Capacity(), icons)
		go func() {
			result <- app.Run(ctx, r)
			systray.Quit()
		}()
	}
	systray.Run(onReady, func() {})
	select {
	case err := <-result:
		return err
	default:
		return fmt.Errorf("the tray's main loop ended by itself")
	}
}

// waitForHost returns nil once a tray host is there, or an error wrapping
// ErrNoTrayHost after wait.
func waitForHost(ctx context.Context, wait time.Duration, log *slog.Logger) error {
	deadline := time.Now().Add(wait)
	said := false
	for {
		problem := hostProblem()
		if problem == "" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: %s", ErrNoTrayHost, problem)
		}
		if !said {
			log.Info("tray: waiting for a tray host", "problem", problem, "up to", wait)
			said = true
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// systrayBackend draws on getlantern/systray.
type systrayBackend struct{}

func (systrayBackend) AddItem(checkbox bool) Handle {
	if checkbox && runtime.GOOS == "linux" {
		return sysItem{systray.AddMenuItemCheckbox("", "", false)}
	}
	return sysItem{systray.AddMenuItem("", "")}
}

func (systrayBackend) AddSubItem(parent Handle) Handle {
	return sysItem{parent.(sysItem).AddSubMenuItem("", "")}
}

func (systrayBackend) AddSeparator() { systray.AddSeparator() }

func (systrayBackend) SetIcon(png, ico []byte) {
	if runtime.GOOS == "windows" {
		systray.SetIcon(ico)
		return
	}
	systray.SetIcon(png)
}

func (systrayBackend) SetTooltip(t string) { systray.SetTooltip(t) }

type sysItem struct{ *systray.MenuItem }

func (i sysItem) Clicked() <-chan struct{} { return i.ClickedCh }
