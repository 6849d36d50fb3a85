//go:build desktop

package window

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/wailsapp/wails/v2"
	"github.com/wailsapp/wails/v2/pkg/options"
	"github.com/wailsapp/wails/v2/pkg/options/assetserver"
	"github.com/wailsapp/wails/v2/pkg/options/linux"
	wailsruntime "github.com/wailsapp/wails/v2/pkg/runtime"
)

// InBuild reports whether this binary can open the window.
const InBuild = true

// shutdownTimeout bounds how long closing the window waits for its
// requests to the daemon to end.
const shutdownTimeout = 2 * time.Second

// Run opens the dashboard window and returns when it is closed (SIGINT and
// SIGTERM close it: Wails handles them). The window's requests to the
// daemon carry ctx's values; they end when the window closes, not with
// ctx. It must be called on the main goroutine.
//
// When a window is already open for opts.Home, Wails hands this launch's
// arguments to it (which shows itself and goes to its --path) and ends this
// process at once with status 1.
//
// Without a web view to draw with (no WebView2 runtime on Windows) it
// returns an error wrapping ErrNoWebView, before showing anything.
func Run(ctx context.Context, opts Options) error {
	if err := opts.Validate(); err != nil {
		return err
	}
	if err := webViewProblem(); err != nil {
		return err
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// The proxied requests end in OnBeforeClose, not with ctx: SIGINT and
	// SIGTERM end ctx at the moment Wails starts tearing the window down.
	handler := NewHandler(context.WithoutCancel(ctx), opts.Daemon, opts.Assets, log)
	defer handler.Close()

	var (
		mu       sync.Mutex
		wailsCtx context.Context // set by OnStartup; the runtime calls need it
	)
	show := func(path string) {
		mu.Lock()
		wc := wailsCtx
		mu.Unlock()
		if wc == nil {
			return
		}
		wailsruntime.WindowUnminimise(wc)
		wailsruntime.WindowShow(wc)
		if js, err := NavigateJS(path); err != nil {
			log.Warn("window: ignoring the path of a second launch", "err", err)
		} else if js != "" {
			wailsruntime.WindowExecJS(wc, js)
		}
	}
	// Wails ends the window itself on SIGINT and SIGTERM. Quitting here as
	// well would call gtk_main_quit twice from two threads, which crashes
	// GTK.
	app := AppOptions(opts, handler)
	app.OnBeforeClose = func(context.Context) (prevent bool) {
		// Closing by the window manager, by Wails' signal handler or by
		// the tray all come here before the webview is torn down.
		ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		defer cancel()
		if err := handler.Shutdown(ctx); err != nil {
			log.Warn("window: closing with requests in flight", "err", err)
		}
		return false
	}
	app.OnStartup = func(wc context.Context) {
		mu.Lock()
		wailsCtx = wc
		mu.Unlock()
	}
	app.OnDomReady = func(wc context.Context) {
		// Only the first load goes to --path; later loads are the user's.
		if p := opts.Path; p != "" {
			opts.Path = ""
			show(p)
		}
	}
	app.SingleInstanceLock.OnSecondInstanceLaunch = func(d options.SecondInstanceData) {
		log.Info("window: another launch asked to show the window", "args", d.Args)
		show(PathFromArgs(d.Args))
	}
	if err := wails.Run(app); err != nil {
		return fmt.Errorf("running the window: %w", err)
	}
	return nil
}

// AppOptions are the Wails options of the window; Run adds the callbacks.
func AppOptions(opts Options, handler *Handler) *options.App {
	assets := opts.Assets
	if assets == nil {
		assets = FallbackAssets()
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &options.App{
		Title:     Title,
		Width:     Width,
		Height:    Height,
		MinWidth:  MinWidth,
		MinHeight: MinHeight,
		AssetServer: &assetserver.Options{
			Assets:  assets,
			Handler: handler,
		},
		BackgroundColour: options.NewRGB(255, 255, 255),
		SingleInstanceLock: &options.SingleInstanceLock{
			UniqueId: UniqueID(opts.Home),
		},
		Linux: &linux.Options{
			ProgramName: "switchboard",
			// Software rendering works everywhere (Xvfb, VMs, old GPUs);
			// the dashboard needs no GPU.
			WebviewGpuPolicy: linux.WebviewGpuPolicyNever,
		},
		Logger: wailsLogger{log},
	}
}
