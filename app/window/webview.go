package window

import "errors"

// ErrNoWebView is returned by Run when the system lacks the web view the
// window is drawn with: on Windows, the WebView2 runtime (Windows 10 and 11
// ship it; an older or stripped system, and Wine, do not). The caller then
// shows the dashboard another way: `switchboard window` opens it in the
// default browser, signed in.
var ErrNoWebView = errors.New("the window cannot open: no web view")
