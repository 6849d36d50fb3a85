package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/daemon"
	"github.com/switchboardhq/switchboard/app/internal/testutil"
)

// TestInstallRemoteFromCatalog: a registry entry with only a remote (its
// URL templated with {port}, a secret Authorization header) is shown by
// `catalog show` with its inputs and installed by `switchboard install
// NAME --set ...` through a real daemon. The remote, on loopback, answers
// 401 as a server that wants a sign-in does: the install succeeds and says
// the server needs a sign-in, config.json names the secret header without
// its value, the file secret store holds it, and the remote received it.
func TestInstallRemoteFromCatalog(t *testing.T) {
	const secret = "Bearer tk_e2e_7a6b5c4d3e2f1g0h"
	var mu sync.Mutex
	var gotAuth []string
	remote := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		gotAuth = append(gotAuth, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+"http://"+r.Host+`/.well-known/oauth-protected-resource"`)
		http.Error(w, "sign in first", http.StatusUnauthorized)
	}))
	defer remote.Close()
	port := remote.URL[strings.LastIndex(remote.URL, ":")+1:]

	const name = "com.example/hosted-tickets"
	registry := remoteEntryRegistry(t, name)
	t.Setenv(daemon.RegistryEnv, registry.URL)
	home := filepath.Join(t.TempDir(), "home")
	writeConfig(t, home)
	d := startDaemon(t, home)

	code, out, errOut := cli(t, home, "catalog", "show", name)
	if code != exitOK || !strings.Contains(out, "remote:  streamable-http http://127.0.0.1:{port}/mcp") ||
		!strings.Contains(out, "Authorization  required, secret") || !strings.Contains(out, "port") {
		t.Errorf("catalog show: %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = cli(t, home, "install", name, "--name", "tickets", "--set", "Authorization="+secret)
	if code != exitError || !strings.Contains(errOut, "input port: required, but no value was given") || !strings.Contains(errOut, "--set port=VALUE") {
		t.Errorf("install without the port: %d\n%s%s", code, out, errOut)
	}
	start := time.Now()
	code, out, errOut = cli(t, home, "install", name, "--name", "tickets", "--set", "Authorization="+secret, "--set", "port="+port)
	t.Logf("install took %v:\n%s", time.Since(start).Round(time.Millisecond), out)
	if code != exitOK || !strings.Contains(out, "[2/3] configure") || !strings.Contains(out, "tickets is installed; it needs a sign-in") {
		t.Fatalf("install: %d\n%s%s", code, out, errOut)
	}

	raw, err := os.ReadFile(filepath.Join(home, daemon.ConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Servers map[string]struct {
			URL           string            `json:"url"`
			Transport     string            `json:"transport"`
			Headers       map[string]string `json:"headers"`
			SecretHeaders map[string]string `json:"secretHeaders"`
			Install       struct{ Entry, Version, Type string }
		} `json:"servers"`
	}
	if err := json.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	sc := cfg.Servers["tickets"]
	if sc.URL != remote.URL+"/mcp" || sc.Transport != "streamable-http" || sc.Headers["X-Region"] != "eu" ||
		sc.SecretHeaders["Authorization"] != "Authorization" || sc.Install.Type != "remote" || sc.Install.Entry != name {
		t.Errorf("config.json entry: %+v\n%s", sc, raw)
	}
	if strings.Contains(string(raw), "tk_e2e") {
		t.Errorf("config.json holds the secret header:\n%s", raw)
	}
	if store, err := os.ReadFile(filepath.Join(home, "secrets.json")); err != nil || !strings.Contains(string(store), "tk_e2e") {
		t.Errorf("the file secret store lacks the header's value: %v", err)
	}
	mu.Lock()
	sent := slices.Contains(gotAuth, secret)
	mu.Unlock()
	if !sent {
		t.Errorf("the remote never got the secret header; it got %q", gotAuth)
	}
	testutil.Eventually(t, 10*time.Second, "the install in the server's lifecycle", func() bool {
		evs, err := d.client.Lifecycle(t.Context(), url.Values{"server": {"tickets"}})
		for _, ev := range evs {
			if err == nil && strings.Contains(ev.Message, "installed "+name+" 3.0.0 as a remote server; it needs a sign-in") {
				return true
			}
		}
		return false
	})
	// The server's state says why it is not connected: the 401 made it
	// need a sign-in, and its error says how to give one.
	v, err := d.client.Server(t.Context(), "tickets")
	if err != nil || v.Auth == nil || v.Auth.State != wire.AuthNeedsSignIn || !strings.Contains(v.LastError, "switchboard auth login tickets") {
		t.Errorf("the server's state does not show that it needs a sign-in: %+v %v", v, err)
	}
	code, out, errOut = cli(t, home, "uninstall", "tickets")
	if code != exitOK {
		t.Errorf("uninstall: %d\n%s%s", code, out, errOut)
	}
	if store, _ := os.ReadFile(filepath.Join(home, "secrets.json")); strings.Contains(string(store), "tk_e2e") {
		t.Error("uninstall left the secret header in the store")
	}
}

// remoteEntryRegistry is a loopback registry listing one entry, name, with
// only a remote: streamable HTTP at http://127.0.0.1:{port}/mcp, a required
// secret Authorization header and an X-Region header defaulting to eu.
func remoteEntryRegistry(t *testing.T, name string) *httptest.Server {
	t.Helper()
	registry := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		server := map[string]any{"name": name, "description": "Tickets, hosted", "version": "3.0.0",
			"remotes": []map[string]any{{"type": "streamable-http", "url": "http://127.0.0.1:{port}/mcp",
				"variables": map[string]any{"port": map[string]any{"isRequired": true, "description": "the port"}},
				"headers": []map[string]any{
					{"name": "Authorization", "isRequired": true, "isSecret": true, "description": "Bearer YOUR_KEY"},
					{"name": "X-Region", "default": "eu"}}}}}
		envelope := map[string]any{"server": server, "_meta": map[string]any{"io.modelcontextprotocol.registry/official": map[string]any{"status": "active", "isLatest": true}}}
		if strings.HasSuffix(r.URL.Path, "/versions/latest") {
			json.NewEncoder(w).Encode(envelope)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"servers": []any{envelope}, "metadata": map[string]any{"count": 1}})
	}))
	t.Cleanup(registry.Close)
	return registry
}

// TestInstallRemoteConnects: a remote that accepts the secret header given
// at install connects in the verify phase; the install lists its tools,
// and a call through the daemon's /mcp reaches it.
func TestInstallRemoteConnects(t *testing.T) {
	const secret = "Bearer tk_ok_0123456789abcdef"
	server := mcp.NewServer(&mcp.Implementation{Name: "hosted", Version: "1"}, nil)
	type echoArgs struct {
		Text string `json:"text"`
	}
	mcp.AddTool(server, &mcp.Tool{Name: "echo"}, func(ctx context.Context, req *mcp.CallToolRequest, a echoArgs) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	remote := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != secret || r.Header.Get("X-Region") != "eu" {
			http.Error(w, "wrong key", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		remote.CloseClientConnections()
		remote.Close()
		for ss := range server.Sessions() {
			ss.Close()
		}
	})
	port := remote.URL[strings.LastIndex(remote.URL, ":")+1:]
	const name = "com.example/hosted-ok"
	t.Setenv(daemon.RegistryEnv, remoteEntryRegistry(t, name).URL)
	t.Setenv("Authorization", secret) // --set-from-env reads the variable of the input's name
	home := filepath.Join(t.TempDir(), "home")
	writeConfig(t, home)
	d := startDaemon(t, home)

	start := time.Now()
	code, out, errOut := cli(t, home, "install", name, "--name", "hosted", "--set-from-env", "Authorization", "--set", "port="+port)
	t.Logf("install took %v:\n%s", time.Since(start).Round(time.Millisecond), out)
	if code != exitOK || !strings.Contains(out, "hosted is installed and connected, with 1 tools") || !strings.Contains(out, "echo") {
		t.Fatalf("install: %d\n%s%s", code, out, errOut)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "install-remote-e2e", Version: "1"}, nil).Connect(t.Context(),
		&mcp.StreamableClientTransport{Endpoint: d.info.Address + "/mcp/hosted",
			HTTPClient: &http.Client{Transport: headerTransport{"Authorization": "Bearer " + d.client.Token}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if got, err := testutil.CallText(t.Context(), cs, "echo", map[string]any{"text": "through"}); err != nil || got != "through" {
		t.Errorf("echo through the installed remote = %q, %v", got, err)
	}
}
