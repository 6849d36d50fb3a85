package catalog

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDownWarningNamesNoOtherServer: once the registry failed for one
// server, the lookups of others say the registry is unreachable in plain
// words — without the first server's URL, the URL twice, or a resolver.
func TestDownWarningNamesNoOtherServer(t *testing.T) {
	f := newFakeRegistry(t, weatherServers()...)
	ctx := context.Background()
	c := newTestCatalog(t, Options{RegistryURL: f.URL(), CacheDir: filepath.Join(t.TempDir(), "catalog"), RetryAfter: time.Minute})
	if _, err := c.Search(ctx, "weather", 0); err != nil {
		t.Fatal(err)
	}
	f.srv.Close()
	first, err := c.Lookup(ctx, "io.example/weather-alerts")
	if err != nil {
		t.Fatal(err)
	}
	second, err := c.Lookup(ctx, "io.example/old-weather")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{first.Warning, second.Warning} {
		if !strings.Contains(w, "registry unreachable") || !strings.Contains(w, "connection refused") || strings.Contains(w, `Get "`) {
			t.Errorf("warning %q", w)
		}
	}
	if strings.Contains(second.Warning, "alerts") {
		t.Errorf("old-weather's warning quotes the lookup of weather-alerts: %q", second.Warning)
	}
}
