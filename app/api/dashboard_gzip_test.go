package api_test

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"
)

// TestDashboardCompressed: the page's text files go out gzip-compressed to
// a browser that accepts it, hashed files cached for good, index.html
// revalidated; a client that does not accept gzip gets them plain.
func TestDashboardCompressed(t *testing.T) {
	e := newEnv(t)
	script := strings.Repeat("console.log('switchboard');\n", 2000)
	assets := fstest.MapFS{
		"index.html":             {Data: []byte("<!doctype html><title>Switchboard</title>" + strings.Repeat(" ", 2000))},
		"assets/index-abc123.js": {Data: []byte(script)},
		"assets/logo.png":        {Data: []byte("\x89PNG not text")},
	}
	srv := httptest.NewServer(e.api.Dashboard(assets))
	defer srv.Close()

	get := func(path, accept string) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		// Set by hand: the transport then hands back the body as sent.
		req.Header.Set("Accept-Encoding", accept)
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp, body
	}
	gunzip := func(b []byte) string {
		t.Helper()
		zr, err := gzip.NewReader(strings.NewReader(string(b)))
		if err != nil {
			t.Fatalf("not gzip: %v", err)
		}
		out, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}

	for _, tc := range []struct {
		path, want, cache, ctype string
	}{
		{"/assets/index-abc123.js", script, "immutable", "javascript"},
		{"/", "<title>Switchboard", "no-cache", "text/html"},
		{"/servers/alpha", "<title>Switchboard", "no-cache", "text/html"}, // a route of the page
	} {
		resp, body := get(tc.path, "br;q=1.0, gzip;q=0.8")
		if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != "gzip" {
			t.Fatalf("GET %s: %d, Content-Encoding %q", tc.path, resp.StatusCode, resp.Header.Get("Content-Encoding"))
		}
		if got := gunzip(body); !strings.Contains(got, tc.want) {
			t.Errorf("GET %s: body %.60q", tc.path, got)
		}
		if len(body) > len(tc.want)/4 && tc.want == script {
			t.Errorf("GET %s: %d bytes compressed of %d", tc.path, len(body), len(script))
		}
		h := resp.Header
		if !strings.Contains(h.Get("Cache-Control"), tc.cache) || !strings.Contains(h.Get("Content-Type"), tc.ctype) || h.Get("Vary") != "Accept-Encoding" {
			t.Errorf("GET %s: Cache-Control %q, Content-Type %q, Vary %q", tc.path, h.Get("Cache-Control"), h.Get("Content-Type"), h.Get("Vary"))
		}
	}

	for _, accept := range []string{"", "identity", "gzip;q=0"} {
		resp, body := get("/assets/index-abc123.js", accept)
		if resp.Header.Get("Content-Encoding") != "" || string(body) != script {
			t.Errorf("Accept-Encoding %q: Content-Encoding %q, %d bytes", accept, resp.Header.Get("Content-Encoding"), len(body))
		}
	}
	if resp, body := get("/assets/logo.png", "gzip"); resp.Header.Get("Content-Encoding") != "" || !strings.HasPrefix(string(body), "\x89PNG") {
		t.Errorf("a PNG was compressed: %q", resp.Header.Get("Content-Encoding"))
	}
}
