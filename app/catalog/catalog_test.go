package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

func newTestCatalog(t *testing.T, opts Options) *Catalog {
	t.Helper()
	if opts.Timeout == 0 {
		opts.Timeout = 5 * time.Second
	}
	if opts.RetryAfter == 0 {
		opts.RetryAfter = -1 // each test step asks the registry again
	}
	c, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func names(es []Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Name)
	}
	return out
}

func find(es []Entry, name string) (Entry, bool) {
	for _, e := range es {
		if e.Name == name {
			return e, true
		}
	}
	return Entry{}, false
}

func weatherServers() []fakeServer {
	return []fakeServer{
		npmServer("io.example/weather", "1.2.0", "@example/weather"),
		npmServer("io.example/weather-alerts", "0.3.0", "@example/weather-alerts"),
		npmServer("io.example/old-weather", "1.0.0", "@example/old-weather"),
	}
}

// TestFallback walks one catalog through a registry that works, is slow,
// fails, answers garbage and is gone, and checks that each time the best
// source left answers and says why.
func TestFallback(t *testing.T) {
	f := newFakeRegistry(t, weatherServers()...)
	dir := filepath.Join(t.TempDir(), "catalog")
	ctx := context.Background()
	opts := Options{RegistryURL: f.URL(), CacheDir: dir, Timeout: 300 * time.Millisecond}
	c := newTestCatalog(t, opts)

	res, err := c.Search(ctx, "weather", 0)
	if err != nil {
		t.Fatal(err)
	}
	if res.Source != SourceRegistry || res.Warning != "" || res.FetchedAt.IsZero() {
		t.Fatalf("live: source %q warning %q fetchedAt %v", res.Source, res.Warning, res.FetchedAt)
	}
	if got := names(res.Entries); len(got) != 3 || got[0] != "io.example/weather" {
		t.Fatalf("live entries %v, want the exact match first", got)
	}
	if _, err := os.Stat(filepath.Join(dir, CacheFileName)); err != nil {
		t.Fatalf("cache not written: %v", err)
	}

	steps := []struct {
		name        string
		mode        string
		wantWarning string
		maxTime     time.Duration
	}{
		{"slow", modeSlow, "no answer within 300ms", 3 * time.Second},
		{"HTTP 500", modeError, "HTTP 500", time.Second},
		{"bad JSON", modeBadJSON, "not the registry's JSON", time.Second},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			f.setMode(s.mode)
			start := time.Now()
			res, err := c.Search(ctx, "weather", 0)
			if err != nil {
				t.Fatal(err)
			}
			if d := time.Since(start); d > s.maxTime {
				t.Errorf("took %v, want under %v", d, s.maxTime)
			}
			if res.Source != SourceCache {
				t.Errorf("source %q, want cache", res.Source)
			}
			for _, w := range []string{"registry unreachable", s.wantWarning, "showing cached results from"} {
				if !strings.Contains(res.Warning, w) {
					t.Errorf("warning %q does not contain %q", res.Warning, w)
				}
			}
			if len(res.Entries) != 3 || res.FetchedAt.IsZero() {
				t.Errorf("cached entries %v, fetchedAt %v", names(res.Entries), res.FetchedAt)
			}
		})
	}

	// The registry goes away: a new catalog (a restart) reads the cache
	// from disk.
	f.srv.Close()
	c2 := newTestCatalog(t, opts)
	res, err = c2.Search(ctx, "weather", 0)
	if err != nil {
		t.Fatal(err)
	}
	if res.Source != SourceCache || !strings.Contains(res.Warning, "registry unreachable") || len(res.Entries) != 3 {
		t.Errorf("down, cached: source %q warning %q entries %v", res.Source, res.Warning, names(res.Entries))
	}
	// Searches run on the cache, with the catalog's own matching.
	res, _ = c2.Search(ctx, "alerts", 0)
	if got := names(res.Entries); len(got) != 1 || got[0] != "io.example/weather-alerts" {
		t.Errorf("cached search for alerts: %v", got)
	}

	// Without a cache, only the embedded catalog is left.
	c3 := newTestCatalog(t, Options{RegistryURL: f.URL(), CacheDir: filepath.Join(t.TempDir(), "empty")})
	res, err = c3.Search(ctx, "filesystem", 0)
	if err != nil {
		t.Fatal(err)
	}
	if res.Source != SourceEmbedded || !strings.Contains(res.Warning, "showing the built-in catalog only") {
		t.Errorf("down, no cache: source %q warning %q", res.Source, res.Warning)
	}
	if len(res.Entries) == 0 || res.Entries[0].ShortName != "filesystem" || res.Entries[0].Source != SourceEmbedded {
		t.Errorf("embedded fallback entries %v", names(res.Entries))
	}
	if _, err := c3.Get(ctx, "filesystem"); err != nil {
		t.Errorf("Get of a curated server with the registry down: %v", err)
	}
	if _, err := c3.Get(ctx, "io.example/weather"); err == nil || !strings.Contains(err.Error(), "not cached") {
		t.Errorf("Get of an uncached registry server with the registry down: %v", err)
	}
}

func TestSearchRanksAndMerges(t *testing.T) {
	f := newFakeRegistry(t,
		// The same server as the curated filesystem entry, newer.
		npmServer("io.github.modelcontextprotocol/server-filesystem", "2099.1.1", "@modelcontextprotocol/server-filesystem"),
		// Another name for the curated memory server's package.
		npmServer("io.github.someone/memory-mirror", "2099.2.2", "@modelcontextprotocol/server-memory"),
		npmServer("io.example/filesystem-plus", "1.0.0", "@example/filesystem-plus"),
		npmServer("io.example/tools", "1.0.0", "@example/tools"),
	)
	// This one's description mentions the query, its name does not.
	f.servers[3].doc["description"] = "Works with the filesystem"
	c := newTestCatalog(t, Options{RegistryURL: f.URL(), CacheDir: t.TempDir()})
	ctx := context.Background()

	res, err := c.Search(ctx, "filesystem", 10)
	if err != nil {
		t.Fatal(err)
	}
	got := names(res.Entries)
	want := []string{"io.github.modelcontextprotocol/server-filesystem", "io.example/filesystem-plus"}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("entries %v, want %v (the registry searches names only)", got, want)
	}
	fs := res.Entries[0]
	if fs.Source != SourceEmbedded || fs.Version != "2026.8.31" || fs.LatestVersion != "2099.1.1" || fs.ShortName != "filesystem" {
		t.Errorf("merged filesystem: source %q version %q latest %q short %q", fs.Source, fs.Version, fs.LatestVersion, fs.ShortName)
	}

	// A registry entry for the same package under another name is folded
	// into the curated one.
	res, _ = c.Search(ctx, "memory", 10)
	if _, ok := find(res.Entries, "io.github.someone/memory-mirror"); ok {
		t.Errorf("the mirror of a curated package is listed separately: %v", names(res.Entries))
	}
	if m, ok := find(res.Entries, "io.github.modelcontextprotocol/server-memory"); !ok || m.LatestVersion != "2099.2.2" {
		t.Errorf("memory: %+v, %v", m, ok)
	}

	// Empty query: every curated entry and every registry one, curated
	// first, within the limit.
	res, _ = c.Search(ctx, "", 500)
	emb, _ := Embedded()
	if len(res.Entries) != len(emb)+2 {
		t.Errorf("empty query: %d entries, want %d: %v", len(res.Entries), len(emb)+2, names(res.Entries))
	}
	for i, e := range res.Entries[:len(emb)] {
		if e.Source != SourceEmbedded {
			t.Errorf("entry %d %s is not curated", i, e.Name)
		}
	}
	res, _ = c.Search(ctx, "", 5)
	if len(res.Entries) != 5 || !res.More {
		t.Errorf("limit 5: %d entries, more %v", len(res.Entries), res.More)
	}

	// Words anywhere, and curated descriptions.
	res, _ = c.Search(ctx, "pull requests", 10)
	if _, ok := find(res.Entries, "io.github.github/github-mcp-server"); !ok {
		t.Errorf("github not found by description words: %v", names(res.Entries))
	}
}

func TestHiddenStatuses(t *testing.T) {
	f := newFakeRegistry(t,
		npmServer("io.example/weather", "1.0.0", "@example/weather"),
		withStatus(npmServer("io.example/weather-old", "1.0.0", "@example/weather-old"), StatusDeprecated),
		withStatus(npmServer("io.example/weather-spam", "1.0.0", "@example/weather-spam"), StatusDeleted),
	)
	dir := t.TempDir()
	ctx := context.Background()
	c := newTestCatalog(t, Options{RegistryURL: f.URL(), CacheDir: dir})

	res, err := c.Search(ctx, "weather", 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(res.Entries); len(got) != 1 || got[0] != "io.example/weather" {
		t.Errorf("live: %v, want only the active server", got)
	}
	for _, name := range []string{"io.example/weather-old", "io.example/weather-spam"} {
		if _, err := c.Get(ctx, name); !errors.Is(err, ErrNotFound) {
			t.Errorf("Get(%s) err = %v, want ErrNotFound", name, err)
		}
	}

	// The active one becomes deprecated: the next answer replaces its
	// cached copy, and the cache hides it once the registry is gone.
	f.setServers(withStatus(npmServer("io.example/weather", "1.0.1", "@example/weather"), StatusDeprecated))
	if res, _ := c.Search(ctx, "weather", 0); len(res.Entries) != 0 {
		t.Errorf("after deprecation: %v", names(res.Entries))
	}
	f.srv.Close()
	c2 := newTestCatalog(t, Options{RegistryURL: f.URL(), CacheDir: dir})
	res, _ = c2.Search(ctx, "weather", 0)
	if res.Source != SourceCache || len(res.Entries) != 0 {
		t.Errorf("cached after deprecation: source %q entries %v", res.Source, names(res.Entries))
	}
	if _, err := c2.Get(ctx, "io.example/weather"); !errors.Is(err, ErrNotFound) {
		t.Errorf("cached deprecated Get err = %v", err)
	}
}

func TestUnrunnableRegistryEntry(t *testing.T) {
	f := newFakeRegistry(t,
		fakeServer{status: StatusActive, doc: map[string]any{
			"name": "io.example/dotnet-tool", "description": "A .NET server", "version": "3.1.0",
			"packages": []any{map[string]any{
				"registryType": "nuget", "identifier": "Example.Tool", "version": "3.1.0",
				"transport": map[string]any{"type": "stdio"},
			}},
		}},
		fakeServer{status: StatusActive, doc: map[string]any{
			"name": "io.example/hosted", "description": "Hosted only", "version": "1.0.0",
			"remotes": []any{map[string]any{"type": "streamable-http", "url": "https://mcp.example.com/mcp"}},
		}},
	)
	c := newTestCatalog(t, Options{RegistryURL: f.URL(), CacheDir: t.TempDir()})
	ctx := context.Background()

	e, err := c.Get(ctx, "io.example/dotnet-tool")
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.RunnablePackage()
	if !errors.Is(err, ErrNotInstallable) || !strings.Contains(err.Error(), "package type nuget is not supported") {
		t.Errorf("nuget: err = %v", err)
	}
	e, err = c.Get(ctx, "io.example/hosted")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.RunnablePackage(); err == nil || !strings.Contains(err.Error(), "remote-only (streamable-http at https://mcp.example.com/mcp)") {
		t.Errorf("remote-only: err = %v", err)
	}
}

func TestCacheFile(t *testing.T) {
	f := newFakeRegistry(t, weatherServers()...)
	dir := filepath.Join(t.TempDir(), "catalog")
	path := filepath.Join(dir, CacheFileName)
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	c := newTestCatalog(t, Options{RegistryURL: f.URL(), CacheDir: dir, Now: clock})

	if _, err := c.Search(ctx, "weather", 0); err != nil {
		t.Fatal(err)
	}
	first, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && first.Mode().Perm() != 0o600 {
		t.Errorf("cache mode %v, want 0600", first.Mode().Perm())
	}
	var doc cacheDoc
	data, _ := os.ReadFile(path)
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("cache is not JSON: %v", err)
	}
	if doc.Format != cacheFormat || doc.Registry != f.URL() || !doc.UpdatedAt.Equal(now) || len(doc.Entries) != 3 {
		t.Errorf("cache doc: format %d registry %q updated %v entries %d", doc.Format, doc.Registry, doc.UpdatedAt, len(doc.Entries))
	}

	// Nothing changed and little time passed: the file is not rewritten.
	now = now.Add(time.Minute)
	c.Search(ctx, "weather", 0)
	if st, _ := os.Stat(path); !os.SameFile(first, st) {
		t.Error("an unchanged answer rewrote the cache")
	}
	// A new version: the file is replaced by a new one (a rename, never an
	// in-place write that a crash could leave half done).
	f.setServers(npmServer("io.example/weather", "1.3.0", "@example/weather"))
	c.Search(ctx, "weather", 0)
	second, _ := os.Stat(path)
	if runtime.GOOS != "windows" && os.SameFile(first, second) {
		t.Error("the cache file was rewritten in place, not replaced")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("files left in the cache directory: %v", entries)
	}

	// A full refresh replaces the cache: servers gone from the registry
	// leave it.
	if err := c.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	f.srv.Close()
	c2 := newTestCatalog(t, Options{RegistryURL: f.URL(), CacheDir: dir, Now: clock})
	res, _ := c2.Search(ctx, "weather", 0)
	if got := names(res.Entries); res.Source != SourceCache || len(got) != 1 || res.Entries[0].Version != "1.3.0" {
		t.Errorf("after refresh: source %q entries %v", res.Source, got)
	}
	if !strings.Contains(res.Warning, "cached results from "+now.Local().Format("2006-01-02 15:04")) {
		t.Errorf("warning %q does not give the fetch time", res.Warning)
	}

	// A cache of another registry is not used.
	c3 := newTestCatalog(t, Options{RegistryURL: closedURL(t), CacheDir: dir})
	if res, _ := c3.Search(ctx, "weather", 0); res.Source != SourceEmbedded {
		t.Errorf("another registry's cache was used: %q", res.Source)
	}

	// A corrupt cache is ignored, not fatal.
	if err := os.WriteFile(path, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	c4 := newTestCatalog(t, Options{RegistryURL: f.URL(), CacheDir: dir})
	res, err = c4.Search(ctx, "filesystem", 0)
	if err != nil || res.Source != SourceEmbedded || len(res.Entries) == 0 {
		t.Errorf("corrupt cache: %v source %q entries %v", err, res.Source, names(res.Entries))
	}
}

func TestRetryAfter(t *testing.T) {
	f := newFakeRegistry(t, weatherServers()...)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	c := newTestCatalog(t, Options{RegistryURL: f.URL(), CacheDir: t.TempDir(), RetryAfter: time.Minute, Now: clock})
	ctx := context.Background()

	c.Search(ctx, "weather", 0)
	f.setMode(modeError)
	res, _ := c.Search(ctx, "weather", 0)
	if res.Source != SourceCache {
		t.Fatalf("source %q", res.Source)
	}
	n := f.requestCount()
	res, _ = c.Search(ctx, "weather", 0)
	if f.requestCount() != n {
		t.Error("the registry was asked again within RetryAfter")
	}
	if res.Source != SourceCache || !strings.Contains(res.Warning, "HTTP 500") {
		t.Errorf("within RetryAfter: source %q warning %q", res.Source, res.Warning)
	}
	f.setMode(modeOK)
	mu.Lock()
	now = now.Add(time.Minute + time.Second)
	mu.Unlock()
	res, _ = c.Search(ctx, "weather", 0)
	if f.requestCount() == n || res.Source != SourceRegistry {
		t.Errorf("after RetryAfter: source %q, requests %d → %d", res.Source, n, f.requestCount())
	}
}

func TestLookup(t *testing.T) {
	f := newFakeRegistry(t,
		npmServer("io.github.modelcontextprotocol/server-everything", "2099.1.1", "@modelcontextprotocol/server-everything"),
		npmServer("io.example/weather", "1.0.0", "@example/weather"),
	)
	dir := t.TempDir()
	c := newTestCatalog(t, Options{RegistryURL: f.URL(), CacheDir: dir})
	ctx := context.Background()

	tests := []struct {
		name       string
		wantName   string
		wantSource string
		wantLatest string
		wantErr    error
	}{
		{"everything", "io.github.modelcontextprotocol/server-everything", SourceRegistry, "2099.1.1", nil},
		{"io.github.modelcontextprotocol/server-everything", "io.github.modelcontextprotocol/server-everything", SourceRegistry, "2099.1.1", nil},
		// Curated, unknown to the registry: the curated entry.
		{"time", "io.github.modelcontextprotocol/server-time", SourceRegistry, "", nil},
		{"io.example/weather", "io.example/weather", SourceRegistry, "", nil},
		{"io.example/nothing", "", "", "", ErrNotFound},
		{"nothing", "", "", "", ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := c.Lookup(ctx, tt.name)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			e := res.Entries[0]
			if e.Name != tt.wantName || res.Source != tt.wantSource || e.LatestVersion != tt.wantLatest {
				t.Errorf("got %s from %s, latest %q", e.Name, res.Source, e.LatestVersion)
			}
		})
	}

	// Entries handed out are copies.
	e, _ := c.Get(ctx, "filesystem")
	e.Packages[0].PackageArguments[0].Description = "changed"
	if e2, _ := c.Get(ctx, "filesystem"); e2.Packages[0].PackageArguments[0].Description == "changed" {
		t.Error("Get returned the catalog's own entry")
	}

	f.srv.Close()
	res, err := c.Lookup(ctx, "io.example/weather")
	if err != nil || res.Source != SourceCache || !strings.Contains(res.Warning, "registry unreachable") {
		t.Errorf("down: %+v, %v", res, err)
	}
	res, err = c.Lookup(ctx, "everything")
	if err != nil || res.Source != SourceCache || res.Entries[0].LatestVersion != "2099.1.1" {
		t.Errorf("down, curated: %+v, %v", res, err)
	}
}

func TestCheckUpdate(t *testing.T) {
	f := newFakeRegistry(t,
		npmServer("io.github.modelcontextprotocol/server-memory", "2099.1.1", "@modelcontextprotocol/server-memory"),
		npmServer("io.example/weather", "1.2.0", "@example/weather"),
	)
	c := newTestCatalog(t, Options{RegistryURL: f.URL(), CacheDir: t.TempDir()})
	ctx := context.Background()

	tests := []struct {
		name, installed string
		wantAvailable   bool
		wantLatest      string
		wantSource      string // of the entry to install
	}{
		{"io.example/weather", "1.0.0", true, "1.2.0", SourceRegistry},
		{"io.example/weather", "1.2.0", false, "1.2.0", ""},
		{"io.example/weather", "v2.0.0", false, "v2.0.0", ""},
		{"io.example/weather", "weird", false, "weird", ""},
		// Curated, with a newer registry version: the registry's entry.
		{"memory", "2026.8.31", true, "2099.1.1", SourceRegistry},
		// Curated, older than the curated version, registry unaware.
		{"fetch", "2025.4.7", true, "2026.8.18", SourceEmbedded},
	}
	for _, tt := range tests {
		t.Run(tt.name+"@"+tt.installed, func(t *testing.T) {
			u, err := c.CheckUpdate(ctx, tt.name, tt.installed)
			if err != nil {
				t.Fatal(err)
			}
			if u.Available != tt.wantAvailable || u.Latest != tt.wantLatest {
				t.Errorf("available %v latest %q", u.Available, u.Latest)
			}
			if tt.wantAvailable {
				if u.Entry == nil || u.Entry.Source != tt.wantSource || u.Entry.Version != tt.wantLatest {
					t.Errorf("entry %+v", u.Entry)
				}
			} else if u.Entry != nil {
				t.Errorf("an entry without an update: %+v", u.Entry)
			}
		})
	}
}

func TestCanceled(t *testing.T) {
	f := newFakeRegistry(t, weatherServers()...)
	f.setMode(modeSlow)
	c := newTestCatalog(t, Options{RegistryURL: f.URL(), CacheDir: t.TempDir(), Timeout: time.Minute})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := c.Search(ctx, "weather", 0); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Search err = %v, want the context's", err)
	}
	if _, err := c.Get(ctx, "io.example/weather"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Get err = %v, want the context's", err)
	}
}

func TestOffline(t *testing.T) {
	f := newFakeRegistry(t, weatherServers()...)
	c := newTestCatalog(t, Options{RegistryURL: f.URL(), Offline: true})
	res, err := c.Search(context.Background(), "git", 0)
	if err != nil {
		t.Fatal(err)
	}
	if f.requestCount() != 0 || res.Source != SourceEmbedded || !strings.Contains(res.Warning, "offline") {
		t.Errorf("offline: %d requests, source %q, warning %q", f.requestCount(), res.Source, res.Warning)
	}
	if got := names(res.Entries); len(got) < 2 || res.Entries[0].ShortName != "git" {
		t.Errorf("offline search for git: %v", got)
	}
}
