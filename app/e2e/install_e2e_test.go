package e2e

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/config"
	"github.com/switchboardhq/switchboard/app/daemon"
	"github.com/switchboardhq/switchboard/app/internal/testutil"
)

// npmDaemon starts a daemon with no servers, for a test that installs
// from the npm registry (it needs npm and the registry, as CI has), with an
// npm cache of its own.
func npmDaemon(t *testing.T) (home string, d *daemonProc) {
	t.Helper()
	if _, err := exec.LookPath("npm"); err != nil {
		t.Fatalf("npm not found: install Node.js 20 with npm (the CI installs it): %v", err)
	}
	home = filepath.Join(t.TempDir(), "home")
	writeConfig(t, home) // no servers
	t.Setenv("npm_config_cache", filepath.Join(t.TempDir(), "npm-cache"))
	return home, startDaemon(t, home)
}

// TestInstallFromNPM installs @modelcontextprotocol/server-everything from
// the npm registry the way a user would (`switchboard install everything`),
// and ends with a running server whose tools the gateway lists; uninstall
// removes it all. It needs the npm registry (reachable in CI).
func TestInstallFromNPM(t *testing.T) {
	home, d := npmDaemon(t)

	code, out, errOut := cli(t, home, "install", "everything")
	if code != exitOK || !strings.Contains(out, "everything is installed and running") || !strings.Contains(out, "echo") {
		t.Fatalf("install: %d\n%s\n%s", code, out, errOut)
	}
	// "running" is what the daemon says, not what the install hoped: a
	// `servers` right after shows it so.
	if sv, err := d.client.Server(t.Context(), "everything"); err != nil || sv.State != wire.StateRunning {
		t.Errorf("right after install said running, the daemon says %q (%v)", sv.State, err)
	}
	// npm prints hundreds of lines; without --verbose the user sees the steps.
	if n := strings.Count(strings.TrimRight(out, "\n"), "\n") + 1; n > 15 {
		t.Errorf("install printed %d lines, want at most 15:\n%s", n, out)
	}

	cfg, err := config.Load(filepath.Join(home, daemon.ConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	sc := cfg.Servers["everything"]
	if sc.Install == nil || sc.Install.Type != "npm" || sc.Install.Version == "" || !filepath.IsAbs(sc.Command) ||
		len(sc.Args) == 0 || !strings.HasPrefix(sc.Args[0], filepath.Join(home, "servers", "everything", sc.Install.Version)) {
		t.Fatalf("config after install: %+v (install %+v)", sc, sc.Install)
	}
	if strings.Contains(strings.Join(sc.Args, " "), "npx") {
		t.Errorf("an installed server runs with npx: %v", sc.Args)
	}

	cs := mcpSession(t, d, "/mcp")
	var names []string
	testutil.Eventually(t, 60*time.Second, "the installed server's tools on /mcp", func() bool {
		res, err := cs.ListTools(t.Context(), nil)
		if err != nil {
			return false
		}
		names = names[:0]
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
		}
		return strings.Contains(strings.Join(names, " "), "everything__echo")
	})
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "everything__echo", Arguments: map[string]any{"message": "hi"}})
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "hi") {
		t.Fatalf("calling the installed server: %v %+v", err, res)
	}

	if code, out, errOut := cli(t, home, "uninstall", "everything"); code != exitOK {
		t.Fatalf("uninstall: %d %s %s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(home, "servers", "everything")); !os.IsNotExist(err) {
		t.Errorf("files left after uninstall: %v", err)
	}
}

// TestInstallFailureRollsBack: a registry entry whose npm package does not
// exist fails in the download phase with npm's own words, and leaves no
// files and no config entry behind.
func TestInstallFailureRollsBack(t *testing.T) {
	if _, err := exec.LookPath("npm"); err != nil {
		t.Fatalf("npm not found: %v", err)
	}
	const name = "io.github.switchboard-test/missing"
	registry := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		server := map[string]any{"name": name, "description": "A server whose package does not exist", "version": "1.0.0",
			"packages": []map[string]any{{"registryType": "npm", "identifier": "@switchboard-test/no-such-package-x7q", "version": "1.0.0",
				"transport": map[string]string{"type": "stdio"}}}}
		envelope := map[string]any{"server": server, "_meta": map[string]any{"io.modelcontextprotocol.registry/official": map[string]any{"status": "active", "isLatest": true}}}
		if strings.HasSuffix(r.URL.Path, "/versions/latest") {
			json.NewEncoder(w).Encode(envelope)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"servers": []any{envelope}, "metadata": map[string]any{"count": 1}})
	}))
	defer registry.Close()
	t.Setenv(daemon.RegistryEnv, registry.URL)
	t.Setenv("npm_config_cache", filepath.Join(t.TempDir(), "npm-cache"))
	home := filepath.Join(t.TempDir(), "home")
	writeConfig(t, home)
	d := startDaemon(t, home)
	before, _ := os.ReadFile(filepath.Join(home, daemon.ConfigFile))

	code, out, errOut := cli(t, home, "catalog", "missing")
	if code != exitOK || !strings.Contains(out, "1.0.0") {
		t.Errorf("catalog search through the fake registry: %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = cli(t, home, "install", name, "--name", "missing")
	if code != exitError || !strings.Contains(errOut, "during download") || !strings.Contains(strings.ToLower(errOut), "404") {
		t.Fatalf("install of a missing package: %d\n%s\n%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(home, "servers", "missing")); !os.IsNotExist(err) {
		t.Errorf("files left after a failed install: %v", err)
	}
	if after, _ := os.ReadFile(filepath.Join(home, daemon.ConfigFile)); string(after) != string(before) {
		t.Errorf("config changed by a failed install:\n%s", after)
	}
	testutil.Eventually(t, 10*time.Second, "the failed install in the server's lifecycle", func() bool {
		evs, err := d.client.Lifecycle(t.Context(), url.Values{"server": {"missing"}})
		return err == nil && len(evs) == 1 && evs[0].Kind == string(daemon.EventInstall) &&
			strings.Contains(evs[0].Message, "install of "+name+" failed") && strings.Contains(evs[0].Message, "404")
	})
}

// TestMemoryDataSurvivesUninstall installs the memory server from npm
// (`switchboard install memory`), stores an entity in its knowledge graph,
// uninstalls it without --purge, installs it again and reads the entity
// back: the graph lives in servers/memory/data, outside the versioned
// install folder, and uninstall keeps it and says where.
func TestMemoryDataSurvivesUninstall(t *testing.T) {
	home, d := npmDaemon(t)
	graph := filepath.Join(home, "servers", "memory", "data", "memory.jsonl")

	install := func() {
		t.Helper()
		code, out, errOut := cli(t, home, "install", "memory")
		if code != exitOK || !strings.Contains(out, "memory is installed and running") {
			t.Fatalf("install memory: %d\n%s\n%s", code, out, errOut)
		}
		cfg, err := config.Load(filepath.Join(home, daemon.ConfigFile))
		if err != nil {
			t.Fatal(err)
		}
		if got := cfg.Servers["memory"].Env["MEMORY_FILE_PATH"]; got != graph {
			t.Fatalf("MEMORY_FILE_PATH = %q, want %q", got, graph)
		}
	}
	// call calls a memory tool in a new session, once the gateway lists it.
	call := func(tool string, args map[string]any) string {
		t.Helper()
		cs := mcpSession(t, d, "/mcp")
		defer cs.Close()
		var text string
		testutil.Eventually(t, 60*time.Second, "memory__"+tool+" to answer", func() bool {
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "memory__" + tool, Arguments: args})
			if err != nil || res.IsError || len(res.Content) == 0 {
				return false
			}
			tc, ok := res.Content[0].(*mcp.TextContent)
			text = tc.Text
			return ok
		})
		return text
	}

	install()
	call("create_entities", map[string]any{"entities": []map[string]any{
		{"name": "Ada Lovelace", "entityType": "person", "observations": []string{"wrote the first program"}}}})
	if runtime.GOOS == "linux" {
		// A catalog install is confined by default: the graph was written
		// under Landlock, in the data folder the policy grants.
		v, err := d.client.Server(t.Context(), "memory")
		if err != nil {
			t.Fatal(err)
		}
		if sb := v.Sandbox; !sb.Confined || !sb.Enforced || sb.Network || !slices.Contains(sb.Write, filepath.Dir(graph)) {
			t.Fatalf("memory's sandbox view = %+v; want enforced, no network, %s writable", sb, filepath.Dir(graph))
		}
	}
	if data, err := os.ReadFile(graph); err != nil || !strings.Contains(string(data), "wrote the first program") {
		t.Fatalf("the graph file %s: %v\n%s", graph, err, data)
	}

	code, out, errOut := cli(t, home, "uninstall", "memory")
	if code != exitOK || !strings.Contains(out, "its data stays in "+filepath.Dir(graph)) {
		t.Fatalf("uninstall: %d\n%s%s", code, out, errOut)
	}
	if vs, _ := os.ReadDir(filepath.Join(home, "servers", "memory")); len(vs) != 1 || vs[0].Name() != "data" {
		t.Errorf("after uninstall servers/memory holds %v, want only data", vs)
	}

	install()
	if got := call("search_nodes", map[string]any{"query": "Ada"}); !strings.Contains(got, "wrote the first program") {
		t.Errorf("after reinstalling, the graph lost the entity: %s", got)
	}

	if code, out, errOut := cli(t, home, "uninstall", "--purge", "memory"); code != exitOK || !strings.Contains(out, "data deleted") {
		t.Fatalf("uninstall --purge: %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(home, "servers", "memory")); !os.IsNotExist(err) {
		t.Errorf("files left after uninstall --purge: %v", err)
	}
}
