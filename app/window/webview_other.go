//go:build desktop && !windows

package window

// webViewProblem: WebKitGTK (Linux) and WKWebView (macOS) are linked in;
// a missing library stops the program before it starts.
func webViewProblem() error { return nil }
