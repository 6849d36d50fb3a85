//go:build desktop && windows

package window

import (
	"fmt"

	"github.com/wailsapp/go-webview2/webviewloader"
)

// minWebView2 is the oldest WebView2 runtime Wails v2.13 accepts
// (wails internal/wv2installer.MinimumRuntimeVersion).
const minWebView2 = "94.0.992.31"

// webViewProblem says why the window cannot open here, wrapping
// ErrNoWebView, or returns nil when the WebView2 runtime is installed.
// Without this check, Wails itself would ask the user to download WebView2
// from a dialog, and on refusal (or without a network) the window does
// nothing at all. It is the same lookup Wails makes.
func webViewProblem() error {
	v, err := webviewloader.GetAvailableCoreWebView2BrowserVersionString("")
	if err != nil {
		return fmt.Errorf("%w: looking for the WebView2 runtime: %w", ErrNoWebView, err)
	}
	if v == "" {
		return fmt.Errorf("%w: the WebView2 runtime is not installed", ErrNoWebView)
	}
	cmp, err := webviewloader.CompareBrowserVersions(v, minWebView2)
	if err != nil {
		return fmt.Errorf("%w: comparing WebView2 version %s with %s: %w", ErrNoWebView, v, minWebView2, err)
	}
	if cmp < 0 {
		return fmt.Errorf("%w: WebView2 %s is older than %s", ErrNoWebView, v, minWebView2)
	}
	return nil
}
