package clients

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Connect with a profile points the "switchboard" entry at the profile's
// endpoint (the bridge at `connect --profile`), and connecting again
// without one points it back at /mcp.
func TestConnectProfile(t *testing.T) {
	env, ed := testEnv(t), testEditor(t)
	// Claude Desktop's entry needs an absolute program path, and
	// "/opt/..." is not one on Windows (the Wine lane): make it one there.
	bin, err := filepath.Abs(testBinary)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		id   string
		want func(e Entry) bool
	}{
		{"cursor", func(e Entry) bool {
			return e.URL == testURL+"/p/coding" && e.Headers["Authorization"] == "Bearer "+testToken
		}},
		{"vscode", func(e Entry) bool { return e.URL == testURL+"/p/coding" }},
		{"codex", func(e Entry) bool { return e.URL == testURL+"/p/coding" }},
		{"continue", func(e Entry) bool { return e.URL == testURL+"/p/coding" }},
		{"claude-desktop", func(e Entry) bool {
			return e.Command == bin && slices.Equal(e.Args, []string{"connect", "--profile", "coding"})
		}},
	} {
		c := mustClient(t, tt.id)
		apply(t, ed, c, env, Connect{URL: testURL, Token: testToken, BinaryPath: bin, Profile: "coding"})
		st := status(t, ed, env, tt.id)
		if !st.Connected || len(st.Entries) != 1 || !tt.want(st.Entries[0]) {
			t.Errorf("%s connected to a profile: %+v", tt.id, st)
		}
		apply(t, ed, c, env, Connect{URL: testURL, Token: testToken, BinaryPath: bin})
		st = status(t, ed, env, tt.id)
		if e := st.Entries[0]; !st.Connected || strings.Contains(e.URL, "/p/") || slices.Contains(e.Args, "--profile") {
			t.Errorf("%s connected again without a profile: %+v", tt.id, st)
		}
	}
}

func TestConnectProfileRefused(t *testing.T) {
	env, ed := testEnv(t), testEditor(t)
	for _, cn := range []Connect{
		{URL: testURL, Profile: "a/b"},
		{URL: testURL, Profile: "a b"},
		{URL: testURL, Profile: "coding", PerServer: []string{"fs"}},
	} {
		if _, err := ed.Plan(mustClient(t, "cursor"), env, cn); err == nil || !strings.Contains(err.Error(), "profile") {
			t.Errorf("%+v: error %v", cn, err)
		}
	}
	if path, _ := mustClient(t, "cursor").Path(env); exists(path) {
		t.Error("a refused plan wrote the file")
	}
}

// Every known tool limit names its source; unknown ones are 0.
func TestToolLimits(t *testing.T) {
	want := map[string]int{"cursor": 40, "vscode": 128, "vscode-workspace": 128, "vscode-insiders": 128, "windsurf": 100,
		"vscode-server": 128, "windsurf-jetbrains": 100}
	for _, c := range Table {
		if c.ToolLimit != want[c.ID] {
			t.Errorf("%s: ToolLimit %d, want %d", c.ID, c.ToolLimit, want[c.ID])
		}
		if (c.ToolLimit != 0) != (c.ToolLimitSource != "") {
			t.Errorf("%s: limit %d with source %q", c.ID, c.ToolLimit, c.ToolLimitSource)
		}
	}
}

func status(t *testing.T, ed *Editor, env Env, id string) Status {
	t.Helper()
	for _, st := range ed.Detect(env) {
		if st.Client.ID == id {
			return st
		}
	}
	t.Fatalf("no status of %s", id)
	return Status{}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
