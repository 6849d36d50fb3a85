package window

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"go.uber.org/goleak"

	"github.com/switchboardhq/switchboard/supervisor/testmcp"
)

func TestMain(m *testing.M) {
	// The GUI test's daemon runs this test binary as its MCP server.
	testmcp.RunIfRequested()
	goleak.VerifyTestMain(m)
}

const secret = "sb_test-secret"

// fakeDaemon is a loopback HTTP server that plays the daemon: it refuses
// requests without the window's bearer token or with a foreign Origin, like
// the real API does, and records what it saw.
type fakeDaemon struct {
	srv    *httptest.Server
	events chan string // lines the SSE handler writes, one event each
	seen   chan *http.Request
}

func newFakeDaemon(t *testing.T) *fakeDaemon {
	t.Helper()
	d := &fakeDaemon{events: make(chan string), seen: make(chan *http.Request, 16)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/status", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"version": "test", "servers": 1})
	})
	mux.HandleFunc("POST /api/v1/servers", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"echo":%s}`, body)
	})
	mux.HandleFunc("GET /api/v1/events", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		rc := http.NewResponseController(w)
		rc.Flush()
		for {
			select {
			case <-r.Context().Done():
				return
			case line := <-d.events:
				fmt.Fprintf(w, "id: 1\nevent: state\ndata: %s\n\n", line)
				rc.Flush()
			}
		}
	})
	d.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case d.seen <- r.Clone(context.Background()):
		default:
		}
		if r.Header.Get("Authorization") != "Bearer "+secret {
			w.WriteHeader(http.StatusUnauthorized)
			json.NewEncoder(w).Encode(map[string]string{"error": "invalid token"})
			return
		}
		if o := r.Header.Get("Origin"); o != "" {
			w.WriteHeader(http.StatusForbidden)
			json.NewEncoder(w).Encode(map[string]string{"error": "cross-origin request refused: " + o})
			return
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(d.srv.Close)
	return d
}

func (d *fakeDaemon) resolver() Resolver {
	u, _ := url.Parse(d.srv.URL)
	return func(context.Context) (Target, error) { return Target{URL: u, Token: secret}, nil }
}

// serveWindow serves h on loopback, as the WebView's requests would reach
// it (wails:// origin headers included by the tests).
func serveWindow(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestProxyAddsTokenAndDropsWebViewHeaders(t *testing.T) {
	d := newFakeDaemon(t)
	h := NewHandler(t.Context(), d.resolver(), nil, nil)
	defer h.Close()
	base := serveWindow(t, h)

	tests := []struct {
		name, method, path, body string
		wantStatus               int
		wantBody                 string
	}{
		{"get", http.MethodGet, "/api/v1/status", "", http.StatusOK, `"version":"test"`},
		{"post with body", http.MethodPost, "/api/v1/servers", `{"name":"fs"}`, http.StatusCreated, `{"echo":{"name":"fs"}}`},
		{"unknown route is the daemon's 404", http.MethodGet, "/api/v1/nope", "", http.StatusNotFound, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, base+tt.path, strings.NewReader(tt.body))
			// What WebKitGTK sends from a wails:// page.
			req.Header.Set("Origin", "wails://wails")
			req.Header.Set("Sec-Fetch-Site", "same-origin")
			req.Header.Set("Cookie", "x=y")
			req.Header.Set("Authorization", "Bearer from-the-page")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.wantStatus || !strings.Contains(string(body), tt.wantBody) {
				t.Fatalf("%s %s = %d %s, want %d with %s", tt.method, tt.path, resp.StatusCode, body, tt.wantStatus, tt.wantBody)
			}
			var got *http.Request
			for got == nil || got.URL.Path != tt.path {
				got = <-d.seen
			}
			if got.Header.Get("Cookie") != "" || got.Header.Get("Sec-Fetch-Site") != "" {
				t.Errorf("daemon saw page headers: %v", got.Header)
			}
			if host, _, _ := net.SplitHostPort(got.Host); host != "127.0.0.1" {
				t.Errorf("daemon saw Host %q, want the daemon's own loopback address", got.Host)
			}
		})
	}
}

func TestProxyStreamsEventsUnbuffered(t *testing.T) {
	d := newFakeDaemon(t)
	h := NewHandler(t.Context(), d.resolver(), nil, nil)
	defer h.Close()
	base := serveWindow(t, h)

	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/v1/events", nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type = %q", ct)
	}
	rd := bufio.NewReader(resp.Body)
	// Each event must arrive while the stream stays open: a buffering
	// proxy would hold them until the daemon ends the response.
	for i := range 3 {
		want := fmt.Sprintf(`{"server":"fs","n":%d}`, i)
		select {
		case d.events <- want:
		case <-ctx.Done():
			t.Fatal("the daemon's stream handler is not running")
		}
		var lines []string
		for len(lines) < 4 {
			line, err := rd.ReadString('\n')
			if err != nil {
				t.Fatalf("event %d: %v (got %q)", i, err, lines)
			}
			lines = append(lines, strings.TrimRight(line, "\n"))
		}
		if lines[2] != "data: "+want || lines[3] != "" {
			t.Fatalf("event %d = %q", i, lines)
		}
	}
}

// TestProxyStreamEndsWithWindow: the open event stream ends when the
// window's context ends, and when Shutdown is called; Shutdown returns once
// the stream's handler has, and refuses the requests that come later.
func TestProxyStreamEndsWithWindow(t *testing.T) {
	for _, how := range []string{"context", "Shutdown"} {
		t.Run(how, func(t *testing.T) {
			d := newFakeDaemon(t)
			winCtx, endWindow := context.WithCancel(t.Context())
			defer endWindow()
			h := NewHandler(winCtx, d.resolver(), nil, nil)
			defer h.Close()
			base := serveWindow(t, h)

			resp, err := http.Get(base + "/api/v1/events")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			done := make(chan error, 1)
			go func() { _, err := io.Copy(io.Discard, resp.Body); done <- err }()
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			if how == "Shutdown" {
				if err := h.Shutdown(ctx); err != nil {
					t.Fatal(err)
				}
			} else {
				endWindow()
			}
			select {
			case <-done:
			case <-ctx.Done():
				t.Fatal("the event stream outlived the window")
			}
			if how != "Shutdown" {
				return
			}
			later, err := http.Get(base + "/api/v1/status")
			if err != nil {
				t.Fatal(err)
			}
			later.Body.Close()
			if later.StatusCode != http.StatusServiceUnavailable {
				t.Errorf("a request after Shutdown got %d, want 503", later.StatusCode)
			}
			if err := h.Shutdown(ctx); err != nil { // again: nothing left to wait for
				t.Errorf("second Shutdown: %v", err)
			}
		})
	}
}

func TestProxyDaemonUnreachable(t *testing.T) {
	// A port nothing listens on: bind one and close it.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	u, _ := url.Parse("http://" + addr)

	tests := []struct {
		name    string
		resolve Resolver
		want    string
	}{
		{"daemon gone", func(context.Context) (Target, error) { return Target{URL: u, Token: secret}, nil }, "cannot reach the Switchboard daemon at " + addr},
		{"cannot start", func(context.Context) (Target, error) { return Target{}, errors.New("switchboard exited at start") }, "switchboard exited at start"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := NewHandler(t.Context(), tt.resolve, nil, nil)
			defer h.Close()
			resp, err := http.Get(serveWindow(t, h) + "/api/v1/status")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var e struct{ Error string }
			json.NewDecoder(resp.Body).Decode(&e)
			if resp.StatusCode != http.StatusBadGateway || !strings.Contains(e.Error, tt.want) {
				t.Fatalf("got %d %q, want 502 with %q", resp.StatusCode, e.Error, tt.want)
			}
		})
	}
}

func TestAppRoutes(t *testing.T) {
	assets := fstest.MapFS{
		"index.html":    {Data: []byte("<!doctype html><title>dash</title>")},
		"assets/app.js": {Data: []byte("console.log(1)")},
	}
	h := NewHandler(t.Context(), func(context.Context) (Target, error) { return Target{}, errors.New("unused") }, assets, nil)
	defer h.Close()
	base := serveWindow(t, h)
	tests := []struct {
		method, path string
		status       int
		body, ctype  string
	}{
		{"GET", "/servers/fs/logs", 200, "<title>dash</title>", "text/html; charset=utf-8"},
		{"GET", "/", 200, "<title>dash</title>", "text/html; charset=utf-8"},
		{"GET", "/assets/app.js", 200, "console.log(1)", "text/javascript; charset=utf-8"},
		{"GET", "/assets/missing.js", 404, "", ""},
		{"POST", "/servers", 405, "not allowed", "application/json"},
	}
	for _, tt := range tests {
		req, _ := http.NewRequest(tt.method, base+tt.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.status || !strings.Contains(string(body), tt.body) ||
			(tt.ctype != "" && resp.Header.Get("Content-Type") != tt.ctype) {
			t.Errorf("%s %s = %d %q %q", tt.method, tt.path, resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
	}
}

func TestFallbackPageUsesTheAPI(t *testing.T) {
	data, err := io.ReadAll(must(FallbackAssets().Open("index.html")))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"/api/v1/status", "/api/v1/servers", "new EventSource('/api/v1/events')", "not built into this binary"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("fallback page lacks %q", want)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestOptions(t *testing.T) {
	ok := func(context.Context) (Target, error) { return Target{}, nil }
	tests := []struct {
		name string
		o    Options
		want string
	}{
		{"valid", Options{Home: "/h", Daemon: ok, Path: "/servers/fs?tab=logs#x"}, ""},
		{"no daemon", Options{Home: "/h"}, "Daemon is required"},
		{"no home", Options{Daemon: ok}, "Home is required"},
		{"other origin", Options{Home: "/h", Daemon: ok, Path: "https://evil.example/"}, "invalid --path"},
		{"protocol-relative", Options{Home: "/h", Daemon: ok, Path: "//evil.example/x"}, "invalid --path"},
		{"javascript", Options{Home: "/h", Daemon: ok, Path: "javascript:alert(1)"}, "invalid --path"},
		{"relative", Options{Home: "/h", Daemon: ok, Path: "servers"}, "invalid --path"},
	}
	for _, tt := range tests {
		err := tt.o.Validate()
		if (tt.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%s: Validate() = %v, want %q", tt.name, err, tt.want)
		}
	}
}

func TestNavigateAndArgs(t *testing.T) {
	js, err := NavigateJS("/servers/a\u2028b")
	if err != nil || js != `window.location.assign("/servers/a%E2%80%A8b")` {
		t.Errorf("NavigateJS = %q, %v", js, err)
	}
	js, err = NavigateJS(`/history?q="</script>`)
	if err != nil || !strings.HasPrefix(js, `window.location.assign("/history?q=`) || strings.Contains(js, `"</script>`) {
		t.Errorf("NavigateJS with a query = %q, %v", js, err)
	}
	if js, err := NavigateJS(""); js != "" || err != nil {
		t.Errorf("NavigateJS(\"\") = %q, %v", js, err)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"window", "--path", "/servers/fs"}, "/servers/fs"},
		{[]string{"window", "--path=/history"}, "/history"},
		{[]string{"--home", "/x", "window"}, ""},
	} {
		if got := PathFromArgs(tt.args); got != tt.want {
			t.Errorf("PathFromArgs(%q) = %q, want %q", tt.args, got, tt.want)
		}
	}
	if a, b := UniqueID("/home/a"), UniqueID("/home/b"); a == b || strings.ContainsAny(a, "-./") {
		t.Errorf("UniqueID: %q, %q", a, b)
	}
}
