package catalog

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"
)

func manyServers(n int) []fakeServer {
	var s []fakeServer
	for i := range n {
		s = append(s, npmServer(fmt.Sprintf("io.example/server-%03d", i), "1.0.0", fmt.Sprintf("@example/server-%03d", i)))
	}
	return s
}

func newTestRegistry(t *testing.T, opts RegistryOptions) *Registry {
	t.Helper()
	r, err := NewRegistry(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r
}

func TestRegistryPaging(t *testing.T) {
	f := newFakeRegistry(t, manyServers(250)...)
	ctx := context.Background()

	tests := []struct {
		name      string
		opts      RegistryOptions
		list      ListOptions
		wantN     int
		wantPages int
		wantMore  bool
	}{
		{"all pages", RegistryOptions{}, ListOptions{}, 250, 3, false},
		{"small pages", RegistryOptions{PageSize: 40}, ListOptions{}, 250, 7, false},
		{"page bound", RegistryOptions{MaxPages: 2}, ListOptions{}, 200, 2, true},
		{"limit", RegistryOptions{}, ListOptions{Limit: 30}, 30, 1, true},
		{"limit across pages", RegistryOptions{PageSize: 20}, ListOptions{Limit: 45}, 45, 3, true},
		{"search", RegistryOptions{PageSize: 5}, ListOptions{Search: "SERVER-01"}, 10, 2, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.URL = f.URL()
			r := newTestRegistry(t, tt.opts)
			before := f.requestCount()
			res, err := r.List(ctx, tt.list)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Entries) != tt.wantN || res.Pages != tt.wantPages || res.More != tt.wantMore {
				t.Errorf("got %d entries in %d pages (more %v), want %d in %d (more %v)",
					len(res.Entries), res.Pages, res.More, tt.wantN, tt.wantPages, tt.wantMore)
			}
			if got := f.requestCount() - before; got != res.Pages {
				t.Errorf("%d requests for %d pages", got, res.Pages)
			}
			seen := map[string]bool{}
			for i, e := range res.Entries {
				if seen[e.Name] {
					t.Errorf("%s listed twice", e.Name)
				}
				seen[e.Name] = true
				if i > 0 && res.Entries[i-1].Name >= e.Name {
					t.Errorf("out of order: %s after %s", e.Name, res.Entries[i-1].Name)
				}
				if e.Source != SourceRegistry || e.Status != StatusActive || e.ShortName == "" {
					t.Errorf("%s: source %q status %q shortName %q", e.Name, e.Source, e.Status, e.ShortName)
				}
			}
		})
	}

	// The cursor goes back exactly as the registry gave it, URL-encoded.
	log := f.requestLog()
	found := false
	for _, u := range log {
		if c := u.Query().Get("cursor"); c == "io.example/server-099:1.0.0" {
			found = true
			if !strings.Contains(u.RawQuery, "cursor=io.example%2Fserver-099%3A1.0.0") {
				t.Errorf("cursor not URL-encoded: %s", u.RawQuery)
			}
		}
	}
	if !found {
		t.Errorf("no request carried the first page's cursor; requests: %v", log)
	}
	for _, u := range log {
		if u.Query().Get("version") != "latest" {
			t.Errorf("request without version=latest: %s", u)
		}
	}
}

func TestRegistryCursorLoop(t *testing.T) {
	f := newFakeRegistry(t, manyServers(3)...)
	f.setMode(modeLoop)
	r := newTestRegistry(t, RegistryOptions{URL: f.URL()})
	_, err := r.List(context.Background(), ListOptions{})
	if err == nil || !strings.Contains(err.Error(), "came back twice") {
		t.Fatalf("err = %v, want the repeated cursor named", err)
	}
}

func TestRegistryErrors(t *testing.T) {
	f := newFakeRegistry(t, manyServers(3)...)
	tests := []struct {
		mode string
		want []string
	}{
		{modeBadJSON, []string{"not the registry's JSON", f.URL() + "/v0.1/servers?"}},
		{modeError, []string{"HTTP 500 Internal Server Error", f.URL() + "/v0.1/servers?", "Internal Server Error"}},
		{modeSlow, []string{"no answer within 200ms", f.URL()}},
		{modeHuge, []string{"response larger than 1048576 bytes", f.URL()}},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			f.setMode(tt.mode)
			timeout := 10 * time.Second
			if tt.mode == modeSlow {
				timeout = 200 * time.Millisecond
			}
			r := newTestRegistry(t, RegistryOptions{URL: f.URL(), Timeout: timeout, MaxResponseBytes: 1 << 20})
			start := time.Now()
			_, err := r.List(context.Background(), ListOptions{})
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if d := time.Since(start); d > timeout+2*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}

	t.Run("down", func(t *testing.T) {
		r := newTestRegistry(t, RegistryOptions{URL: closedURL(t)})
		_, err := r.List(context.Background(), ListOptions{})
		if err == nil || !strings.Contains(err.Error(), "connection refused") && !strings.Contains(err.Error(), "actively refused") {
			t.Fatalf("err = %v", err)
		}
	})
}

// closedURL returns the URL of a loopback port nobody listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

func TestRegistryLatest(t *testing.T) {
	f := newFakeRegistry(t,
		npmServer("io.example/weather", "2.0.0", "@example/weather"),
		fakeServer{doc: map[string]any{ // a subregistry's entry: no _meta
			"name": "io.example/plain", "description": "d", "version": "1.0.0",
		}},
	)
	r := newTestRegistry(t, RegistryOptions{URL: f.URL()})
	ctx := context.Background()

	e, err := r.Latest(ctx, "io.example/weather")
	if err != nil {
		t.Fatal(err)
	}
	if e.Version != "2.0.0" || e.ShortName != "weather" || e.Source != SourceRegistry || e.Status != StatusActive {
		t.Errorf("got %+v", e)
	}
	if p, err := e.RunnablePackage(); err != nil || p.Identifier != "@example/weather" {
		t.Errorf("RunnablePackage = %+v, %v", p, err)
	}
	if len(e.Packages[0].EnvironmentVars) != 1 || !e.Packages[0].EnvironmentVars[0].IsSecret {
		t.Errorf("environment variables not parsed: %+v", e.Packages[0])
	}
	log := f.requestLog()
	if got := log[len(log)-1].EscapedPath(); got != "/v0.1/servers/io.example%2Fweather/versions/latest" {
		t.Errorf("path %s, want the name's slash escaped", got)
	}

	if e, err := r.Latest(ctx, "io.example/plain"); err != nil || e.Status != StatusActive {
		t.Errorf("an entry without _meta: %+v, %v; want it active", e, err)
	}
	if _, err := r.Latest(ctx, "io.example/missing"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing server: err = %v, want ErrNotFound", err)
	}
	if _, err := r.Latest(ctx, "no-slash"); err == nil || !strings.Contains(err.Error(), "not a server name") {
		t.Errorf("bad name: err = %v", err)
	}
}

func TestNewRegistryBadURL(t *testing.T) {
	for _, u := range []string{"ftp://x", "registry.example.com", "http://", "https://x/?q=1", "://"} {
		if r, err := NewRegistry(RegistryOptions{URL: u}); err == nil {
			r.Close()
			t.Errorf("NewRegistry(%q) succeeded", u)
		}
	}
}
