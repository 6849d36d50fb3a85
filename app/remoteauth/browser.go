package remoteauth

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/switchboardhq/switchboard/app/internal/browser"
)

// A Browser shows the user a sign-in link. Open may return before the user
// has done anything (a desktop browser) or after the redirect back (an HTTP
// client that follows redirects): the sign-in waits for the redirect
// either way, and a link that cannot be opened can still be opened by hand
// (it is in [Status.SignInURL]).
type Browser interface {
	Open(ctx context.Context, link string) error
}

// SystemBrowser opens links in the user's default browser: open on macOS,
// the URL protocol handler on Windows, xdg-open elsewhere.
type SystemBrowser struct{}

// Open implements Browser.
func (SystemBrowser) Open(ctx context.Context, link string) error {
	if err := checkLink(link); err != nil {
		return err
	}
	return browser.Open(ctx, link)
}

// FollowRedirects "opens" a link with an HTTP GET that follows redirects:
// the browser for authorization servers that approve without a user and
// redirect straight back to [CallbackPath], as the MCP conformance suite's
// do. Client nil means a client of its own (which follows up to 10
// redirects and keeps no cookies).
type FollowRedirects struct {
	Client *http.Client
}

// Open implements Browser.
func (b FollowRedirects) Open(ctx context.Context, link string) error {
	if err := checkLink(link); err != nil {
		return err
	}
	client := b.Client
	if client == nil {
		client = &http.Client{}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, link, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("following the sign-in link: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode >= 400 {
		return fmt.Errorf("following the sign-in link: HTTP %d at %s", resp.StatusCode, resp.Request.URL.Redacted())
	}
	return nil
}

// checkLink refuses to hand anything but an http(s) URL to a browser (the
// authorization endpoint comes from the remote server's metadata).
func checkLink(link string) error {
	u, err := url.Parse(link)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return fmt.Errorf("refusing to open a sign-in link that is not an http(s) URL")
	}
	return nil
}
