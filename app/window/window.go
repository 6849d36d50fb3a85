// Package window is Switchboard's dashboard window: a Wails v2 WebView that
// shows the dashboard UI and talks to the running daemon as a client, like
// the CLI.
//
// The page is served by Wails' AssetServer: the embedded dashboard build
// answers the files it has, and every other request (all of /api/, all
// non-GET requests) reaches [Handler], which reverse-proxies /api/ to the
// daemon's loopback address with the window's bearer token. So the page
// uses the same relative URLs as in a browser (fetch('/api/v1/servers'),
// new EventSource('/api/v1/events')) and never sees the token.
//
// Only this package imports Wails, and only in a file built with the
// "desktop" tag (see run_desktop.go); without it, [Run] returns
// [ErrNotInBuild]. Everything else here is plain Go, tested without GUI
// libraries.
package window

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"strings"
)

// ErrNotInBuild is returned by Run in a build without the window.
var ErrNotInBuild = errors.New("the window is not in this build; build with -tags desktop,production,webkit2_41")

// Title is the window's title (and what xdotool finds it by).
const Title = "Switchboard"

// Window size in pixels: the dashboard is laid out for at least MinWidth x
// MinHeight.
const (
	Width     = 1200
	Height    = 780
	MinWidth  = 900
	MinHeight = 600
)

// TokenLabel labels the token the window sends to the daemon, so that the
// daemon's request log and the token list tell the window apart from the CLI.
const TokenLabel = "window"

// Target is the daemon the window talks to.
type Target struct {
	// URL is the daemon's base address, e.g. http://127.0.0.1:7391.
	URL *url.URL
	// Token is the bearer secret sent with every proxied request.
	Token string
}

// Resolver returns the daemon to talk to. The proxy calls it for every
// request, so a daemon that was restarted on another port is found again;
// it should be cheap (read daemon.json) and start the daemon only when none
// runs.
type Resolver func(ctx context.Context) (Target, error)

// Options configure Run.
type Options struct {
	// Home is the data directory; it makes the single-instance lock per
	// data directory, so a test's window does not focus the user's.
	Home string
	// Daemon finds (or starts) the daemon. Required.
	Daemon Resolver
	// Assets is the dashboard build (index.html at its root). Nil shows a
	// built-in status page saying the dashboard is not in this build.
	Assets fs.FS
	// Path is the page to show first, relative to the dashboard's root
	// (e.g. "/#/servers/fs": the dashboard routes by hash); "" is the start
	// page. A second `switchboard window --path P` sends P to the window
	// already open.
	Path string
	// Logger receives the window's own messages; nil discards.
	Logger *slog.Logger
}

// Validate reports what is missing or wrong in opts.
func (o Options) Validate() error {
	switch {
	case o.Daemon == nil:
		return errors.New("window: Options.Daemon is required")
	case o.Home == "":
		return errors.New("window: Options.Home is required")
	}
	if _, err := cleanPath(o.Path); err != nil {
		return err
	}
	return nil
}

// UniqueID is the single-instance id of the window for a data directory:
// one window per data directory, so a second `switchboard window` for the
// same directory focuses the first. Wails turns it into a DBus name on
// Linux, so it is made of letters, digits and underscores only.
func UniqueID(home string) string {
	sum := sha256.Sum256([]byte(home))
	return "io_switchboard_window_" + hex.EncodeToString(sum[:8])
}

// cleanPath checks a start path given on the command line: a path within
// the dashboard, with an optional query and fragment, never another origin.
func cleanPath(p string) (string, error) {
	if p == "" {
		return "", nil
	}
	u, err := url.Parse(p)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") {
		return "", fmt.Errorf("window: invalid --path %q: want a path within the dashboard, like /servers/NAME", p)
	}
	return u.String(), nil
}

// PathFromArgs finds the --path value in the arguments a second instance
// was started with (Wails hands them over verbatim), or "".
func PathFromArgs(args []string) string {
	for i, a := range args {
		switch {
		case a == "--path" || a == "-path":
			if i+1 < len(args) {
				return args[i+1]
			}
		case strings.HasPrefix(a, "--path="):
			return strings.TrimPrefix(a, "--path=")
		case strings.HasPrefix(a, "-path="):
			return strings.TrimPrefix(a, "-path=")
		}
	}
	return ""
}

// NavigateJS is the script that shows path p in the page: a plain location
// change, which a single-page app's router picks up like a typed URL.
func NavigateJS(p string) (string, error) {
	clean, err := cleanPath(p)
	if err != nil || clean == "" {
		return "", err
	}
	// A JSON string is a valid JavaScript string literal (encoding/json
	// escapes U+2028 and U+2029, which JavaScript would not accept).
	lit, err := json.Marshal(clean)
	if err != nil {
		return "", fmt.Errorf("window: path %q: %w", p, err)
	}
	return "window.location.assign(" + string(lit) + ")", nil
}
