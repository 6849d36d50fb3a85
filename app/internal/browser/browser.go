// Package browser opens a link in the user's default browser, quietly: what
// the opener prints (xdg-open lists every browser it did not find) is kept
// for the error instead of reaching the user's terminal.
package browser

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os/exec"
	"runtime"
)

// Open opens link, an http(s) URL, with open on macOS, the URL protocol
// handler on Windows and xdg-open elsewhere. It fails when the opener
// does (no browser, no display), with the opener's last words.
func Open(ctx context.Context, link string) error {
	u, err := url.Parse(link)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return fmt.Errorf("refusing to open %q in a browser: not an http(s) URL", link)
	}
	return open(ctx, link)
}

// OpenApp opens link, a deep link of an installed app (scheme "cherrystudio"
// for cherrystudio://…), with the same openers as Open: the system hands
// it to the app that registered the scheme. A link of another scheme is
// refused.
func OpenApp(ctx context.Context, link, scheme string) error {
	u, err := url.Parse(link)
	if err != nil || scheme == "" || u.Scheme != scheme || u.Host == "" {
		return fmt.Errorf("refusing to open a link that is not a %s:// link", scheme)
	}
	return open(ctx, link)
}

func open(ctx context.Context, link string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.CommandContext(ctx, "open", link)
	case "windows":
		cmd = exec.CommandContext(ctx, "rundll32", "url.dll,FileProtocolHandler", link)
	default:
		cmd = exec.CommandContext(ctx, "xdg-open", link)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
		return fmt.Errorf("opening a browser with %s: %w: %.200s", cmd.Args[0], err, lines[len(lines)-1])
	}
	return nil
}
