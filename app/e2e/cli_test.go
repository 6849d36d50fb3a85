package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/internal/testutil"
)

// cli runs the command line in-process, as a user would type it.
func cli(t *testing.T, home string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	t.Setenv("HOME", t.TempDir())
	code = run(append([]string{"--home", home}, args...), &out, &errOut)
	return code, out.String(), errOut.String()
}

// TestCommandLineAgainstDaemon drives the verbs against a real daemon, and
// checks that hand edits of config.json reach only the servers they touch.
func TestCommandLineAgainstDaemon(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	writeConfig(t, home, "alpha", "beta")
	d := startDaemon(t, home)
	d.waitRunning(t, "alpha", "beta")

	code, out, errOut := cli(t, home, "status")
	if code != exitOK || !strings.Contains(out, "servers: 2 configured, 2 running") {
		t.Fatalf("status: %d\n%s%s", code, out, errOut)
	}
	code, out, _ = cli(t, home, "servers")
	if code != exitOK || !strings.Contains(out, "NAME") || !strings.Contains(out, "alpha") || !strings.Contains(out, "running") {
		t.Errorf("servers table:\n%s", out)
	}
	code, out, _ = cli(t, home, "servers", "--json")
	var list []wire.ServerView
	if err := json.Unmarshal([]byte(out), &list); code != exitOK || err != nil || len(list) != 2 {
		t.Fatalf("servers --json: %d %v\n%s", code, err, out)
	}

	// Start on a running server answers at once (it used to wait for a
	// ready event that never came, for 2 min 15 s).
	startedAt := time.Now()
	if code, out, errOut := cli(t, home, "start", "beta"); code != exitOK || out != "beta: running\n" {
		t.Errorf("start of a running server: %d %q %q", code, out, errOut)
	}
	if took := time.Since(startedAt); took > time.Second {
		t.Errorf("start of a running server took %s, want under 1 s", took)
	} else {
		t.Logf("start of a running server took %s (the CLI process included)", took)
	}

	if code, out, errOut := cli(t, home, "stop", "alpha"); code != exitOK || out != "alpha: stopped\n" {
		t.Errorf("stop: %d %q %q", code, out, errOut)
	}
	if code, out, errOut := cli(t, home, "start", "alpha"); code != exitOK || out != "alpha: running\n" {
		t.Errorf("start: %d %q %q", code, out, errOut)
	}
	if code, _, errOut := cli(t, home, "restart", "nosuch"); code != exitError || !strings.Contains(errOut, `"nosuch"`) {
		t.Errorf("restart of an unknown server: %d %q", code, errOut)
	}
	code, out, _ = cli(t, home, "logs", "-n", "5", "alpha")
	if code != exitOK || !strings.Contains(out, "testmcp: serving pid") {
		t.Errorf("logs:\n%s", out)
	}

	// A hand edit of beta restarts beta only.
	before := pidsByServer(t, d)
	cfgPath := filepath.Join(home, "config.json")
	var raw map[string]any
	data, _ := os.ReadFile(cfgPath)
	json.Unmarshal(data, &raw)
	raw["servers"].(map[string]any)["beta"].(map[string]any)["env"].(map[string]any)["EDITED"] = "yes"
	data, _ = json.MarshalIndent(raw, "", "  ")
	if err := os.WriteFile(cfgPath, data, 0o600); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 30*time.Second, "beta replaced", func() bool {
		now := pidsByServer(t, d)
		return len(now["beta"]) == 1 && !slices.Equal(now["beta"], before["beta"])
	})
	if now := pidsByServer(t, d); !slices.Equal(now["alpha"], before["alpha"]) {
		t.Errorf("alpha was touched by an edit of beta: pids %v → %v", before["alpha"], now["alpha"])
	}

	// A broken edit keeps the servers running and is reported with its position.
	if err := os.WriteFile(cfgPath, []byte("{\n  \"version\": 1,\n  \"servers\": {\n}"), 0o600); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, "the problem reported", func() bool {
		_, out, _ := cli(t, home, "status")
		return strings.Contains(out, "PROBLEM: "+cfgPath+":4:")
	})
	if code, out, errOut := cli(t, home, "status"); code != exitConfigProblem || !strings.Contains(errOut, "config file has a problem") {
		t.Errorf("status with a config problem: exit %d, want %d\n%s%s", code, exitConfigProblem, out, errOut)
	}
	if st, err := d.client.Servers(t.Context()); err != nil || len(st) != 2 || st[0].State != wire.StateRunning {
		t.Errorf("servers after a broken edit: %v %+v", err, st)
	}
}

func pidsByServer(t *testing.T, d *daemonProc) map[string][]int {
	t.Helper()
	list, err := d.client.Servers(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]int{}
	for _, s := range list {
		for _, p := range s.Processes {
			out[s.Name] = append(out[s.Name], p.PID)
		}
	}
	return out
}

// TestConnectingAClient writes Cursor's config through the daemon (diff
// first), then uses the entry exactly as Cursor would: its URL and its own
// token, which history then names.
func TestConnectingAClient(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	writeConfig(t, home, "alpha")
	d := startDaemon(t, home)
	d.waitRunning(t, "alpha")
	cursorFile := filepath.Join(d.userHome, ".cursor", "mcp.json")

	code, out, errOut := cli(t, home, "clients", "connect", "cursor", "--dry-run")
	if code != exitOK || !strings.Contains(out, "+") || !strings.Contains(out, "dry run") {
		t.Fatalf("dry run: %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(cursorFile); !os.IsNotExist(err) {
		t.Fatalf("a dry run wrote %s", cursorFile)
	}
	code, out, errOut = cli(t, home, "clients", "connect", "cursor")
	if code != exitOK || !strings.Contains(out, "cursor: connected") {
		t.Fatalf("connect: %d\n%s%s", code, out, errOut)
	}
	var file struct {
		MCPServers map[string]struct {
			URL     string            `json:"url"`
			Headers map[string]string `json:"headers"`
		} `json:"mcpServers"`
	}
	data, err := os.ReadFile(cursorFile)
	if err != nil || json.Unmarshal(data, &file) != nil {
		t.Fatalf("reading %s: %v\n%s", cursorFile, err, data)
	}
	entry := file.MCPServers["switchboard"]
	if entry.URL != d.info.Address+"/mcp" || !strings.HasPrefix(entry.Headers["Authorization"], "Bearer sb_") {
		t.Fatalf("cursor entry = %+v", entry)
	}
	token := strings.TrimPrefix(entry.Headers["Authorization"], "Bearer ")
	transport := &mcp.StreamableClientTransport{Endpoint: entry.URL, HTTPClient: &http.Client{Transport: bearerTransport(token)}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "Cursor", Version: "2"}, nil).Connect(t.Context(), transport, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": "from cursor"}}); err != nil || res.IsError {
		t.Fatalf("call with cursor's entry: %v %+v", err, res)
	}
	cs.Close()
	testutil.Eventually(t, 10*time.Second, "the call in the history under cursor's token", func() bool {
		page, err := d.client.History(t.Context(), url.Values{"client": {"cursor"}})
		return err == nil && len(page.Calls) == 1 && page.Calls[0].ClientLabel == "cursor"
	})

	list, err := d.client.Clients(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range list {
		if v.ID == "cursor" && !v.Connected {
			t.Errorf("cursor listed as not connected: %+v", v)
		}
	}
	code, out, _ = cli(t, home, "clients", "disconnect", "cursor")
	if code != exitOK || !strings.Contains(out, "cursor: disconnected") {
		t.Errorf("disconnect: %d\n%s", code, out)
	}
	data, _ = os.ReadFile(cursorFile)
	if strings.Contains(string(data), "switchboard") {
		t.Errorf("after disconnect %s still holds Switchboard's entry:\n%s", cursorFile, data)
	}
}

// TestLifecycleInTheHistory: the history keeps a server's story, not only
// the supervisor's part of it: a server added to config.json by hand, a
// client's config written, the server removed again, with its process's
// start and stop between, in /api/v1/lifecycle.
func TestLifecycleInTheHistory(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	writeConfig(t, home, "alpha")
	d := startDaemon(t, home)
	d.waitRunning(t, "alpha")

	writeConfig(t, home, "alpha", "beta") // a hand edit
	d.waitRunning(t, "alpha", "beta")
	if code, out, errOut := cli(t, home, "clients", "connect", "cursor"); code != exitOK {
		t.Fatalf("connect: %d\n%s%s", code, out, errOut)
	}
	writeConfig(t, home, "alpha")

	want := []string{"beta config added to the config", "beta ready", " client-config wrote Cursor's config",
		"beta config removed from the config", "beta stopped"}
	var got []string
	testutil.Eventually(t, 20*time.Second, "the lifecycle events", func() bool {
		evs, err := d.client.Lifecycle(t.Context(), url.Values{"limit": {"1000"}})
		if err != nil {
			t.Fatal(err)
		}
		got = got[:0]
		for _, e := range evs {
			if e.Server != "alpha" {
				got = append(got, e.Server+" "+string(e.Kind)+" "+e.Message)
			}
		}
		// In this order, among the others.
		i := 0
		for _, line := range got {
			if i < len(want) && strings.HasPrefix(line, want[i]) {
				i++
			}
		}
		return i == len(want)
	})
	if t.Failed() {
		t.Logf("lifecycle events: %q", got)
	}

	// The same from the command line.
	code, out, errOut := cli(t, home, "history", "--lifecycle", "--server", "beta")
	if code != exitOK || !strings.HasPrefix(out, "TIME") {
		t.Fatalf("history --lifecycle: %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"beta    config", "added to the config", "beta    ready", "removed from the config", "beta    stopped"} {
		if !strings.Contains(out, want) {
			t.Errorf("history --lifecycle --server beta lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "alpha") {
		t.Errorf("history --lifecycle --server beta shows alpha's events:\n%s", out)
	}
	if code, _, errOut := cli(t, home, "history", "--lifecycle", "--tool", "echo"); code != exitUsage || !strings.Contains(errOut, "--lifecycle takes --server, --since and -n only") {
		t.Errorf("history --lifecycle --tool: %d %q", code, errOut)
	}
}

// TestOfferingAClientWithoutAFile: `clients connect cherry-studio` writes
// no file; it prints the install link and hands it to the system's opener
// (a stand-in xdg-open here, which records it), and the client is then
// listed as offered, never connected. `clients connect gemini-cli` says
// that Gemini CLI disables Switchboard in folders it does not trust.
func TestOfferingAClientWithoutAFile(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the stand-in opener is an xdg-open script")
	}
	isolateClientEnv(t)
	home := filepath.Join(t.TempDir(), "home")
	writeConfig(t, home, "alpha")
	d := startDaemon(t, home)
	d.waitRunning(t, "alpha")
	bin := t.TempDir()
	opened := filepath.Join(bin, "opened")
	if err := os.WriteFile(filepath.Join(bin, "xdg-open"), []byte("#!/bin/sh\nprintf '%s' \"$1\" > "+opened+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))

	code, out, errOut := cli(t, home, "clients", "connect", "cherry-studio", "--dry-run")
	if code != exitOK || !strings.Contains(out, "nothing is written") || !strings.Contains(out, "dry run") {
		t.Fatalf("dry run: %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(opened); !os.IsNotExist(err) {
		t.Fatal("a dry run opened the link")
	}
	code, out, errOut = cli(t, home, "clients", "connect", "cherry-studio")
	if code != exitOK || !strings.Contains(out, "cherry-studio: opened the link") || !strings.Contains(out, "offered, confirm in Cherry Studio") {
		t.Fatalf("connect: %d\n%s%s", code, out, errOut)
	}
	link, err := os.ReadFile(opened)
	if err != nil || !strings.HasPrefix(string(link), "cherrystudio://mcp/install?servers=") || !strings.Contains(out, string(link)) {
		t.Fatalf("the opener got %q (%v); the output:\n%s", link, err, out)
	}
	if strings.Contains(out, "cherry-studio: connected") {
		t.Errorf("Cherry Studio is said to be connected:\n%s", out)
	}
	if entries, _ := os.ReadDir(d.userHome); len(entries) != 0 {
		t.Errorf("the offer wrote into the home folder: %v", entries)
	}
	code, out, _ = cli(t, home, "clients")
	if code != exitOK || !strings.Contains(lineWith(out, "cherry-studio"), "offered, confirm in Cherry Studio") {
		t.Errorf("clients:\n%s", out)
	}

	code, out, errOut = cli(t, home, "clients", "connect", "gemini-cli")
	if code != exitOK || !strings.Contains(out, "gemini-cli: connected") || !strings.Contains(out, `gemini-cli: but: Gemini CLI lists Switchboard as "Disabled" in folders it does not trust`) {
		t.Fatalf("gemini-cli: %d\n%s%s", code, out, errOut)
	}
}

func lineWith(out, s string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	return ""
}
