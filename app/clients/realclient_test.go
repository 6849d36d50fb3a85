package clients

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The releases the real-program tests install (exact versions: a new
// release is checked by changing one of these).
const (
	openCodeVersion = "1.18.33"                // opencode-ai
	qwenCodeVersion = "0.24.4"                 // @qwen-code/qwen-code
	copilotVersion  = "1.0.102"                // @github/copilot
	ampVersion      = "0.0.1790142911-g7618fb" // @sourcegraph/amp
	qoderVersion    = "1.1.52"                 // @qoder-ai/qodercli
	droidVersion    = "0.225.2"                // @factory/cli-linux-x64 (droid's binary for Linux x64)
)

// npmInstall installs pkg@version into a fresh folder with npm and returns
// the path of its bin command. Without npm the test is skipped, unless
// SWITCHBOARD_REQUIRE_ALL=1 asks for every test to run.
func npmInstall(t *testing.T, pkg, version, bin string) string {
	t.Helper()
	path := filepath.Join(npmInstallDir(t, pkg, version), "node_modules", ".bin", bin)
	if runtime.GOOS == "windows" {
		path += ".cmd"
	}
	return path
}

// npmInstallDir installs pkg@version as npmInstall does and returns the
// folder it was installed into (for a package that links no bin command).
func npmInstallDir(t *testing.T, pkg, version string) string {
	t.Helper()
	npm, err := exec.LookPath("npm")
	if err != nil {
		if os.Getenv("SWITCHBOARD_REQUIRE_ALL") == "1" {
			t.Fatalf("npm is needed to install %s: %v", pkg, err)
		}
		t.Skipf("npm is not installed: %v", err)
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	cmd := exec.CommandContext(ctx, npm, "install", "--prefix", dir, "--no-audit", "--no-fund", "--no-save", pkg+"@"+version)
	// npm's cache stays inside the test's folder: a shared cache is no
	// part of what the test shows.
	cmd.Env = append(os.Environ(), "npm_config_cache="+filepath.Join(dir, ".npm"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("npm install %s@%s: %v\n%s", pkg, version, err, out)
	}
	t.Logf("npm install %s@%s took %s", pkg, version, time.Since(start).Round(time.Second))
	return dir
}

// loopbackMCP serves one MCP server with an echo tool on 127.0.0.1 and
// counts the requests that carried the bearer token.
func loopbackMCP(t *testing.T, token string) (url string, authorized *atomic.Int64) {
	t.Helper()
	server := mcp.NewServer(&mcp.Implementation{Name: "loopback", Version: "1"}, nil)
	type echoArgs struct {
		Text string `json:"text"`
	}
	mcp.AddTool(server, &mcp.Tool{Name: "echo", Description: "echoes its text"},
		func(ctx context.Context, req *mcp.CallToolRequest, a echoArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	authorized = &atomic.Int64{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "no or wrong token", http.StatusUnauthorized)
			return
		}
		authorized.Add(1)
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	return srv.URL + "/mcp", authorized
}

// TestRealPrograms installs each client's real program from npm (pinned
// versions, above) and checks that it reads what Switchboard wrote, each
// in a subtest of its own (TestRealPrograms/qoder-cli, …). The subtests
// run all at once: they wait on npm and on the programs rather than on
// the CPU, and t.Parallel would run only GOMAXPROCS of them at a time.
func TestRealPrograms(t *testing.T) {
	checks := []struct {
		client string
		run    func(*testing.T)
	}{
		{"opencode", realOpenCode},
		{"qwen-code", realQwenCode},
		{"copilot-cli", realCopilotCLI},
		{"amp", realAmp},
		{"qoder-cli", realQoderCLI},
		{"droid", realDroid},
	}
	var wg sync.WaitGroup
	for _, c := range checks {
		// t.Run may be called from several goroutines; each returns
		// before this test does.
		wg.Go(func() { t.Run(c.client, c.run) })
	}
	wg.Wait()
}

// realOpenCode installs the real opencode (opencode-ai on npm, a
// prebuilt binary of about 180 MB), connects it with Switchboard on a
// temporary home, and has `opencode mcp list` report the switchboard entry
// as connected to a loopback MCP server that takes only the entry's token;
// after disconnect, opencode lists no switchboard entry. opencode needs no
// account for `mcp list`.
func realOpenCode(t *testing.T) {
	if testing.Short() {
		t.Skip("installs opencode-ai from npm (about 180 MB)")
	}
	bin := npmInstall(t, "opencode-ai", openCodeVersion, "opencode")
	url, authorized := loopbackMCP(t, testToken)

	home := t.TempDir()
	env := Env{GOOS: runtime.GOOS, Home: home}
	c := mustClient(t, "opencode")
	if err := os.MkdirAll(filepath.Join(home, ".config", "opencode"), 0o700); err != nil {
		t.Fatal(err)
	}
	ed := testEditor(t)
	p := apply(t, ed, c, env, Connect{URL: url, Token: testToken})
	t.Logf("connect plan:\n%s", p.Diff)

	list := func() string { return runIn(t, home, bin, "mcp", "list") }

	out := list()
	if line := lineOf(out, EntryName); !strings.Contains(line, "connected") || strings.Contains(line, "failed") {
		t.Errorf("opencode does not list %q as connected:\n%s", EntryName, out)
	}
	if authorized.Load() == 0 {
		t.Error("the loopback server saw no request with the entry's token")
	}

	apply(t, ed, c, env, Disconnect{})
	if out := list(); strings.Contains(out, EntryName) {
		t.Errorf("after disconnect opencode still lists %q:\n%s", EntryName, out)
	}
}

// runIn runs bin with args on the temporary home, with every variable that
// could point a client at the real user's files pointed into it, and
// returns its output without colors.
func runIn(t *testing.T, home, bin string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "HOME="+home, "USERPROFILE="+home,
		"XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "XDG_DATA_HOME="+filepath.Join(home, ".local", "share"),
		"XDG_STATE_HOME="+filepath.Join(home, ".local", "state"), "XDG_CACHE_HOME="+filepath.Join(home, ".cache"),
		"OPENCODE_CONFIG=", "OPENCODE_CONFIG_DIR=", "OPENCODE_CONFIG_CONTENT=", "COPILOT_HOME=",
		"NO_COLOR=1", "OPENCODE_DISABLE_AUTOUPDATE=1")
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(bin), strings.Join(args, " "), err, out)
	}
	t.Logf("%s %s (%s):\n%s", filepath.Base(bin), strings.Join(args, " "), time.Since(start).Round(100*time.Millisecond), out)
	return stripANSI(string(out))
}

// lineOf is the first line of out that names the entry.
func lineOf(out, name string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, name) {
			return l
		}
	}
	return ""
}

// realQwenCode installs the real Qwen Code, connects it on a temporary
// home, and has `qwen mcp list` (which connects to each server, without an
// account) report the switchboard entry as connected to a loopback MCP
// server that takes only the entry's token; after disconnect, qwen lists
// no switchboard entry.
func realQwenCode(t *testing.T) {
	if testing.Short() {
		t.Skip("installs @qwen-code/qwen-code from npm (about 140 MB)")
	}
	bin := npmInstall(t, "@qwen-code/qwen-code", qwenCodeVersion, "qwen")
	url, authorized := loopbackMCP(t, testToken)
	home := t.TempDir()
	env := Env{GOOS: runtime.GOOS, Home: home}
	c := mustClient(t, "qwen-code")
	ed := testEditor(t)
	apply(t, ed, c, env, Connect{URL: url, Token: testToken})

	out := runIn(t, home, bin, "mcp", "list")
	if l := lineOf(out, EntryName); !strings.Contains(l, "Connected") || strings.Contains(l, "Disconnected") {
		t.Errorf("qwen does not list %q as connected:\n%s", EntryName, out)
	}
	if authorized.Load() == 0 {
		t.Error("the loopback server saw no request with the entry's token")
	}
	apply(t, ed, c, env, Disconnect{})
	if out := runIn(t, home, bin, "mcp", "list"); strings.Contains(out, EntryName) {
		t.Errorf("after disconnect qwen still lists %q:\n%s", EntryName, out)
	}
}

// realCopilotCLI installs the real GitHub Copilot CLI, connects it on
// a temporary home, and has `copilot mcp get switchboard` read the entry
// back as an enabled http server at the gateway's URL with its
// Authorization header and all its tools. Copilot CLI connects to MCP
// servers only in a signed-in session, so the test checks what it reads,
// not a connection; after disconnect, `copilot mcp list` has no
// switchboard entry.
func realCopilotCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("installs @github/copilot from npm (about 190 MB)")
	}
	bin := npmInstall(t, "@github/copilot", copilotVersion, "copilot")
	home := t.TempDir()
	env := Env{GOOS: runtime.GOOS, Home: home}
	c := mustClient(t, "copilot-cli")
	ed := testEditor(t)
	apply(t, ed, c, env, Connect{URL: testURL, Token: testToken})

	out := runIn(t, home, bin, "mcp", "get", EntryName)
	for _, want := range []string{"Status: Enabled", "Type: http", "URL: " + testURL, "Authorization: ***", "Tools: * (all)", "Source: User"} {
		if !strings.Contains(out, want) {
			t.Errorf("copilot mcp get %s: no %q in\n%s", EntryName, want, out)
		}
	}
	apply(t, ed, c, env, Disconnect{})
	if out := runIn(t, home, bin, "mcp", "list"); strings.Contains(out, EntryName) {
		t.Errorf("after disconnect copilot still lists %q:\n%s", EntryName, out)
	}
}

// realAmp installs the real Amp CLI, connects it on a temporary home,
// and has `amp mcp list` read the switchboard entry back from its global
// settings as a url server at the gateway. Amp connects to MCP servers
// only in a signed-in thread, so the test checks what it reads, not a
// connection (without network, amp also says it could not load the
// servers of an Amp account, and goes on); after disconnect, amp lists no
// switchboard entry.
func realAmp(t *testing.T) {
	if testing.Short() {
		t.Skip("installs @sourcegraph/amp from npm (about 100 MB)")
	}
	bin := npmInstall(t, "@sourcegraph/amp", ampVersion, "amp")
	home := t.TempDir()
	env := Env{GOOS: runtime.GOOS, Home: home}
	c := mustClient(t, "amp")
	ed := testEditor(t)
	apply(t, ed, c, env, Connect{URL: testURL, Token: testToken})

	out := runIn(t, home, bin, "mcp", "list")
	if l := lineOf(out, EntryName); !strings.Contains(l, "url") || !strings.Contains(l, testURL) {
		t.Errorf("amp mcp list does not read %q as a url server at %s:\n%s", EntryName, testURL, out)
	}
	apply(t, ed, c, env, Disconnect{})
	if out := runIn(t, home, bin, "mcp", "list"); strings.Contains(out, EntryName) {
		t.Errorf("after disconnect amp still lists %q:\n%s", EntryName, out)
	}
}

// realQoderCLI installs the real Qoder CLI, connects it on a
// temporary home, and has `qodercli mcp list` (which connects to each
// server, without an account) report the switchboard entry as connected
// to a loopback MCP server that takes only the entry's token; after
// disconnect, qodercli lists no switchboard entry.
func realQoderCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("installs @qoder-ai/qodercli from npm (about 90 MB)")
	}
	bin := npmInstall(t, "@qoder-ai/qodercli", qoderVersion, "qodercli")
	url, authorized := loopbackMCP(t, testToken)
	home := t.TempDir()
	env := Env{GOOS: runtime.GOOS, Home: home}
	c := mustClient(t, "qoder-cli")
	ed := testEditor(t)
	apply(t, ed, c, env, Connect{URL: url, Token: testToken})

	out := runIn(t, home, bin, "mcp", "list")
	if l := lineOf(out, EntryName); !strings.Contains(l, "Connected") || strings.Contains(l, "Disconnected") || !strings.Contains(l, url) {
		t.Errorf("qodercli does not list %q as connected at %s:\n%s", EntryName, url, out)
	}
	if authorized.Load() == 0 {
		t.Error("the loopback server saw no request with the entry's token")
	}
	apply(t, ed, c, env, Disconnect{})
	if out := runIn(t, home, bin, "mcp", "list"); strings.Contains(out, EntryName) {
		t.Errorf("after disconnect qodercli still lists %q:\n%s", EntryName, out)
	}
}

// realDroid installs the real droid (Factory's CLI: its Linux x64
// binary, @factory/cli-linux-x64, about 240 MB), connects it on a
// temporary home, and has `droid mcp list` (which connects to each server,
// without an account) report the switchboard entry as connected to a
// loopback MCP server that takes only the entry's token; after
// disconnect, droid lists no switchboard entry.
func realDroid(t *testing.T) {
	if testing.Short() {
		t.Skip("installs @factory/cli-linux-x64 from npm (about 240 MB)")
	}
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skipf("droid's npm binary is installed for linux/amd64 here, not %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	bin := filepath.Join(npmInstallDir(t, "@factory/cli-linux-x64", droidVersion), "node_modules", "@factory", "cli-linux-x64", "bin", "droid")
	url, authorized := loopbackMCP(t, testToken)
	home := t.TempDir()
	env := Env{GOOS: runtime.GOOS, Home: home}
	c := mustClient(t, "droid")
	ed := testEditor(t)
	apply(t, ed, c, env, Connect{URL: url, Token: testToken})

	out := runIn(t, home, bin, "mcp", "list")
	if l := lineOf(out, EntryName); !strings.Contains(l, "connected") || strings.Contains(l, "failed") {
		t.Errorf("droid does not list %q as connected:\n%s", EntryName, out)
	}
	if authorized.Load() == 0 {
		t.Error("the loopback server saw no request with the entry's token")
	}
	apply(t, ed, c, env, Disconnect{})
	if out := runIn(t, home, bin, "mcp", "list"); strings.Contains(out, EntryName) {
		t.Errorf("after disconnect droid still lists %q:\n%s", EntryName, out)
	}
}

// stripANSI removes terminal color sequences (ESC [ … letter).
func stripANSI(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && !(s[j] >= 'A' && s[j] <= 'Z' || s[j] >= 'a' && s[j] <= 'z') {
				j++
			}
			i = j
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
