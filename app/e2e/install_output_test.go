package e2e

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/switchboardhq/switchboard/app/daemon"
	"github.com/switchboardhq/switchboard/supervisor/testmcp"
)

// fakeRegistry serves one MCP registry entry, name, whose package is this
// test binary run as the test MCP server, with extra inputs.
func fakeRegistry(t *testing.T, name string, inputs ...map[string]any) *httptest.Server {
	t.Helper()
	registry, _ := fakeRegistryOf(t, registryEntry{Name: name, Title: "Notes (test)", Inputs: inputs})
	return registry
}

// A registryEntry is a server of fakeRegistryOf: the test MCP server
// (this test binary), with inputs and more fixed environment entries.
type registryEntry struct {
	Name, Title string
	Inputs      []map[string]any
	Env         map[string]string
}

// fakeRegistryOf serves entries as an MCP registry's v0.1 API does (the
// list and each one's latest version). The returned switch takes it
// offline: every request then fails with 503, as a registry behind a
// failing proxy does.
func fakeRegistryOf(t *testing.T, entries ...registryEntry) (*httptest.Server, *atomic.Bool) {
	t.Helper()
	exe, _ := os.Executable()
	envelopes := make([]any, len(entries))
	for i, e := range entries {
		var env []map[string]any
		for _, kv := range testmcp.Env(testmcp.Options{}) {
			k, v, _ := strings.Cut(kv, "=")
			if v != "" {
				env = append(env, map[string]any{"name": k, "value": v})
			}
		}
		for _, k := range slices.Sorted(maps.Keys(e.Env)) {
			env = append(env, map[string]any{"name": k, "value": e.Env[k]})
		}
		env = append(env, e.Inputs...)
		server := map[string]any{"name": e.Name, "title": e.Title, "description": "A test server installed from a fake registry",
			"version": "1.0.0", "packages": []map[string]any{{"registryType": "command", "identifier": exe, "version": "1.0.0",
				"transport": map[string]string{"type": "stdio"}, "environmentVariables": env}}}
		envelopes[i] = map[string]any{"server": server, "_meta": map[string]any{
			"io.modelcontextprotocol.registry/official": map[string]any{"status": "active", "isLatest": true}}}
	}
	offline := new(atomic.Bool)
	registry := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if offline.Load() {
			http.Error(w, "registry unavailable", http.StatusServiceUnavailable)
			return
		}
		if strings.HasSuffix(r.URL.Path, "/versions/latest") {
			for i, e := range entries {
				if strings.Contains(r.URL.Path, "/servers/"+e.Name+"/") {
					json.NewEncoder(w).Encode(envelopes[i])
					return
				}
			}
			http.NotFound(w, r)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"servers": envelopes, "metadata": map[string]any{"count": len(envelopes)}})
	}))
	t.Cleanup(registry.Close)
	return registry, offline
}

// TestInstallOutputIsShort: `switchboard install` says what it does in a
// few lines (its steps, then the tools on a few lines), however much the
// package manager prints; a secret left out is named with the flag that
// passes it.
// installedLine is install's closing line; the count is the test server's
// tools, which grow with its modes.
var installedLine = regexp.MustCompile(`is installed and running, with \d+ tools`)

func TestInstallOutputIsShort(t *testing.T) {
	const entry = "io.github.switchboard-test/notes"
	registry := fakeRegistry(t, entry, map[string]any{"name": "NOTES_API_KEY", "description": "API key of the notes service", "isRequired": true, "isSecret": true})
	t.Setenv(daemon.RegistryEnv, registry.URL)
	home := filepath.Join(t.TempDir(), "home")
	writeConfig(t, home) // no servers
	startDaemon(t, home)

	code, out, errOut := cli(t, home, "install", entry)
	if code == exitOK || !strings.Contains(errOut, "--set-from-env NOTES_API_KEY") {
		t.Errorf("install without the secret: %d\n%s\n%s", code, out, errOut)
	}

	t.Setenv("NOTES_API_KEY", "s3cret")
	code, out, errOut = cli(t, home, "install", "--set-from-env", "NOTES_API_KEY", entry)
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if code != exitOK || !installedLine.MatchString(out) || !strings.Contains(out, "echo") {
		t.Fatalf("install: %d\n%s\n%s", code, out, errOut)
	}
	if len(lines) > 15 {
		t.Errorf("install printed %d lines, want at most 15:\n%s", len(lines), out)
	}
	for _, step := range []string{"[1/4] resolve", "[4/4] verify"} {
		if !strings.Contains(out, step) {
			t.Errorf("install output does not show the step %q:\n%s", step, out)
		}
	}
	t.Logf("install output (%d lines):\n%s", len(lines), out)
}
