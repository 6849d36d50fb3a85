package clients

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPaths(t *testing.T) {
	h := filepath.Join("/", "home", "zoë")
	j := func(p ...string) string { return filepath.Join(append([]string{h}, p...)...) }
	envs := map[string]Env{
		"darwin":  {GOOS: "darwin", Home: h},
		"linux":   {GOOS: "linux", Home: h},
		"windows": {GOOS: "windows", Home: h, AppData: j("AppData", "Roaming"), LocalAppData: j("AppData", "Local")},
	}
	roaming := j("AppData", "Roaming")
	tests := []struct {
		id                     string
		darwin, linux, windows string
	}{
		{"claude-desktop", j("Library", "Application Support", "Claude", "claude_desktop_config.json"),
			j(".config", "Claude", "claude_desktop_config.json"), filepath.Join(roaming, "Claude", "claude_desktop_config.json")},
		{"claude-code", j(".claude.json"), j(".claude.json"), j(".claude.json")},
		{"cursor", j(".cursor", "mcp.json"), j(".cursor", "mcp.json"), j(".cursor", "mcp.json")},
		{"vscode", j("Library", "Application Support", "Code", "User", "mcp.json"), j(".config", "Code", "User", "mcp.json"),
			filepath.Join(roaming, "Code", "User", "mcp.json")},
		{"windsurf", j(".codeium", "windsurf", "mcp_config.json"), j(".codeium", "windsurf", "mcp_config.json"), j(".codeium", "windsurf", "mcp_config.json")},
		{"gemini-cli", j(".gemini", "settings.json"), j(".gemini", "settings.json"), j(".gemini", "settings.json")},
		{"codex", j(".codex", "config.toml"), j(".codex", "config.toml"), j(".codex", "config.toml")},
		{"zed", j(".config", "zed", "settings.json"), j(".config", "zed", "settings.json"), filepath.Join(roaming, "Zed", "settings.json")},
		{"cline", j("Library", "Application Support", "Code", "User", "globalStorage", "saoudrizwan.claude-dev", "settings", "cline_mcp_settings.json"),
			j(".config", "Code", "User", "globalStorage", "saoudrizwan.claude-dev", "settings", "cline_mcp_settings.json"),
			filepath.Join(roaming, "Code", "User", "globalStorage", "saoudrizwan.claude-dev", "settings", "cline_mcp_settings.json")},
		{"lm-studio", j(".lmstudio", "mcp.json"), j(".lmstudio", "mcp.json"), j(".lmstudio", "mcp.json")},
		{"continue", j(".continue", "config.yaml"), j(".continue", "config.yaml"), j(".continue", "config.yaml")},
		{"vscode-insiders", j("Library", "Application Support", "Code - Insiders", "User", "mcp.json"),
			j(".config", "Code - Insiders", "User", "mcp.json"), filepath.Join(roaming, "Code - Insiders", "User", "mcp.json")},
		{"roo-code", j("Library", "Application Support", "Code", "User", "globalStorage", "rooveterinaryinc.roo-cline", "settings", "mcp_settings.json"),
			j(".config", "Code", "User", "globalStorage", "rooveterinaryinc.roo-cline", "settings", "mcp_settings.json"),
			filepath.Join(roaming, "Code", "User", "globalStorage", "rooveterinaryinc.roo-cline", "settings", "mcp_settings.json")},
		// OpenCode follows XDG on every OS (xdg-basedir), Windows too.
		{"opencode", j(".config", "opencode", "opencode.json"), j(".config", "opencode", "opencode.json"), j(".config", "opencode", "opencode.json")},
		{"kiro", j(".kiro", "settings", "mcp.json"), j(".kiro", "settings", "mcp.json"), j(".kiro", "settings", "mcp.json")},
		{"qwen-code", j(".qwen", "settings.json"), j(".qwen", "settings.json"), j(".qwen", "settings.json")},
		{"amp", j(".config", "amp", "settings.json"), j(".config", "amp", "settings.json"), j(".config", "amp", "settings.json")},
		{"copilot-cli", j(".copilot", "mcp-config.json"), j(".copilot", "mcp-config.json"), j(".copilot", "mcp-config.json")},
		{"trae", j("Library", "Application Support", "Trae", "User", "mcp.json"), j(".config", "Trae", "User", "mcp.json"),
			filepath.Join(roaming, "Trae", "User", "mcp.json")},
		{"vscode-server", j(".vscode-server", "data", "User", "mcp.json"), j(".vscode-server", "data", "User", "mcp.json"),
			j(".vscode-server", "data", "User", "mcp.json")},
		{"windsurf-jetbrains", j(".codeium", "mcp_config.json"), j(".codeium", "mcp_config.json"), j(".codeium", "mcp_config.json")},
		{"antigravity", j(".gemini", "antigravity", "mcp_config.json"), j(".gemini", "antigravity", "mcp_config.json"),
			j(".gemini", "antigravity", "mcp_config.json")},
		{"kimi-cli", j(".kimi", "mcp.json"), j(".kimi", "mcp.json"), j(".kimi", "mcp.json")},
		{"kimi-code", j(".kimi-code", "mcp.json"), j(".kimi-code", "mcp.json"), j(".kimi-code", "mcp.json")},
		{"qoder-cli", j(".qoder", "settings.json"), j(".qoder", "settings.json"), j(".qoder", "settings.json")},
		{"droid", j(".factory", "mcp.json"), j(".factory", "mcp.json"), j(".factory", "mcp.json")},
		{"goose", j(".config", "goose", "config.yaml"), j(".config", "goose", "config.yaml"),
			filepath.Join(roaming, "Block", "goose", "config", "config.yaml")},
		{"vibe", j(".vibe", "config.toml"), j(".vibe", "config.toml"), j(".vibe", "config.toml")},
		// Cherry Studio's data folder (no file is edited: see OfferLink).
		{"cherry-studio", j("Library", "Application Support", "CherryStudio"), j(".config", "CherryStudio"), filepath.Join(roaming, "CherryStudio")},
	}
	for _, tt := range tests {
		for goos, want := range map[string]string{"darwin": tt.darwin, "linux": tt.linux, "windows": tt.windows} {
			got, err := mustClient(t, tt.id).Path(envs[goos])
			if err != nil || got != want {
				t.Errorf("%s on %s: Path = %q, %v; want %q", tt.id, goos, got, err, want)
			}
		}
	}

	// Overrides.
	c := mustClient(t, "codex")
	if got, _ := c.Path(Env{GOOS: "linux", Home: h, CodexHome: "/codex"}); got != filepath.Join("/codex", "config.toml") {
		t.Errorf("codex with CODEX_HOME: %q", got)
	}
	if got, _ := mustClient(t, "zed").Path(Env{GOOS: "linux", Home: h, XDGConfigHome: "/xdg"}); got != filepath.Join("/xdg", "zed", "settings.json") {
		t.Errorf("zed with XDG_CONFIG_HOME: %q", got)
	}
	if got, _ := mustClient(t, "opencode").Path(Env{GOOS: "darwin", Home: h, XDGConfigHome: "/xdg"}); got != filepath.Join("/xdg", "opencode", "opencode.json") {
		t.Errorf("opencode with XDG_CONFIG_HOME: %q", got)
	}
	// OpenCode reads opencode.jsonc too: a user who keeps only that one
	// gets it edited, not a second file beside it.
	ocHome := t.TempDir()
	ocDir := filepath.Join(ocHome, ".config", "opencode")
	if err := os.MkdirAll(ocDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ocDir, "opencode.jsonc"), []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, _ := mustClient(t, "opencode").Path(Env{GOOS: "linux", Home: ocHome}); got != filepath.Join(ocDir, "opencode.jsonc") {
		t.Errorf("opencode with only opencode.jsonc: %q", got)
	}
	if err := os.WriteFile(filepath.Join(ocDir, "opencode.json"), []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, _ := mustClient(t, "opencode").Path(Env{GOOS: "linux", Home: ocHome}); got != filepath.Join(ocDir, "opencode.json") {
		t.Errorf("opencode with both files: %q", got)
	}
	if got, _ := mustClient(t, "kimi-code").Path(Env{Home: h, KimiCodeHome: "/kc"}); got != filepath.Join("/kc", "mcp.json") {
		t.Errorf("kimi-code with KIMI_CODE_HOME: %q", got)
	}
	if got, _ := mustClient(t, "vibe").Path(Env{Home: h, VibeHome: "/vh"}); got != filepath.Join("/vh", "config.toml") {
		t.Errorf("vibe with VIBE_HOME: %q", got)
	}
	if got, _ := mustClient(t, "copilot-cli").Path(Env{Home: h, CopilotHome: "/ch"}); got != filepath.Join("/ch", "mcp-config.json") {
		t.Errorf("copilot-cli with COPILOT_HOME: %q", got)
	}
	if got, _ := mustClient(t, "claude-code").Path(Env{Home: h, ClaudeConfig: "/cc"}); got != filepath.Join("/cc", ".claude.json") {
		t.Errorf("claude-code with CLAUDE_CONFIG_DIR: %q", got)
	}
	if got, _ := mustClient(t, "vscode-workspace").Path(Env{Workspace: "/w"}); got != filepath.Join("/w", ".vscode", "mcp.json") {
		t.Errorf("vscode-workspace: %q", got)
	}
	if _, err := mustClient(t, "vscode-workspace").Path(Env{Home: h}); !errors.Is(err, ErrNoWorkspace) {
		t.Errorf("vscode-workspace without a workspace: %v, want ErrNoWorkspace", err)
	}
	if _, err := mustClient(t, "cursor").Path(Env{}); err == nil {
		t.Error("no home: no error")
	}
}

// The MSIX install's folder wins when it exists.
func TestClaudeDesktopMSIX(t *testing.T) {
	home := t.TempDir()
	env := Env{GOOS: "windows", Home: home}
	c := mustClient(t, "claude-desktop")
	plain := filepath.Join(home, "AppData", "Roaming", "Claude", "claude_desktop_config.json")
	if got, _ := c.Path(env); got != plain {
		t.Errorf("without MSIX: %q, want %q", got, plain)
	}
	msix := filepath.Join(home, "AppData", "Local", "Packages", MSIXPackage, "LocalCache", "Roaming", "Claude")
	if err := os.MkdirAll(msix, 0o700); err != nil {
		t.Fatal(err)
	}
	if got, _ := c.Path(env); got != filepath.Join(msix, "claude_desktop_config.json") {
		t.Errorf("with MSIX: %q", got)
	}
}

// A file that does not parse is refused with its line and column, and not
// written.
func TestParseErrors(t *testing.T) {
	tests := []struct {
		id        string
		data      string
		line, col int
	}{
		{"cursor", "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"\n  }\n", 5, 1},
		{"claude-desktop", "{\n  \"mcpServers\": {\n    \"a\": {\"command\": x}\n  }\n}\n", 3, 22},
		{"zed", "// settings\n{\n  \"context_servers\": [1,, 2]\n}\n", 3, 25},
		{"cursor", "{\"mcpServers\": [\"not an object\"]}\n", 1, 16},
		{"codex", "model = \"o3\"\n[mcp_servers.a]\ncommand = \n", 3, 11},
		{"continue", "name: x\nmcpServers:\n  - name: a\n    command: [x\n", 4, 0},       // the line where the flow list starts (yaml.v3 says 3), no column
		{"vscode", "{\n  \"servers\": {\n    \"a\": {\"command\": \"x\n  }\n}\n", 3, 22}, // the unclosed string's own line (hujson says 6)
		{"zed", "// c\n{\n  \"context_servers\": {\"a\": {\"url\": \"http://x}}\n}\n", 3, 36},
		{"cursor", "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"},\n  }\n}\n", 3, 26}, // trailing comma: strict JSON
		{"gemini-cli", "{\n  // mine\n  \"mcpServers\": {}\n}\n", 2, 3},                         // comment: strict JSON
		{"continue", "name: x\nmcpServers: 3\n", 2, 13},
		// A key twice: a JSON parser keeps the last, the editor would edit
		// the first (strict JSON: anywhere; JSONC: on the way to the servers).
		{"cursor", "{\n  \"mcpServers\": {\"a\": {\"command\": \"x\"}},\n  \"mcpServers\": {}\n}\n", 3, 3},
		{"claude-desktop", "{\"mcpServers\": {\"a\": {\"command\": \"x\", \"comm\\u0061nd\": \"y\"}}}", 1, 39},
		{"vscode", "{\n  \"servers\": {},\n  // again\n  \"servers\": {}\n}\n", 4, 3},
		{"zed", "{\"context_servers\": {\"a\": {\"command\": \"x\"}, \"a\": {}}}", 1, 45},
		// What a YAML decoder refuses, though the node tree holds it.
		{"continue", "name: x\nmcpServers: []\nname: y\n", 3, 1},
		{"continue", "name: x\na: &b\n  - *b\n", 3, 5},
		{"continue", "name: x\n<<:\n", 2, 1},
		{"continue", "name: !!int x\n", 1, 7},
		{"continue", "name: x\n---\nname: y\n", 2, 1},                    // a second document
		{"continue", "  name: x\n  version: 1\nmcpServers: []\n", 3, 0},  // yaml.v3 ignores a line outside the indented root, Continue does not
		{"continue", "name: x\r\nversion: 1\rmcpServers: []\r\n", 2, 11}, // a lone CR: a line break to YAML
		{"continue", "name: x\nversion: \"1\u2028\"\n", 2, 12},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			c, env, ed := mustClient(t, tt.id), testEnv(t), testEditor(t)
			path := writeConfig(t, c, env, []byte(tt.data))
			for name, err := range map[string]error{
				"Plan": func() error { _, err := ed.Plan(c, env, Connect{URL: testURL, BinaryPath: testBinary}); return err }(),
				"Read": func() error { _, err := Read(c, env); return err }(),
			} {
				var pe *ParseError
				if !errors.As(err, &pe) {
					t.Fatalf("%s: error %v is not a *ParseError", name, err)
				}
				if pe.File != path || pe.Line != tt.line || pe.Column != tt.col {
					t.Errorf("%s: %v: want %s:%d:%d", name, err, path, tt.line, tt.col)
				}
				if !strings.HasPrefix(err.Error(), path+":") {
					t.Errorf("%s: error %q does not start with the file", name, err)
				}
			}
			if got, _ := os.ReadFile(path); string(got) != tt.data {
				t.Error("the file was changed")
			}
		})
	}
}

// A change made between Plan and Apply stops the write.
func TestChangedBetweenPlanAndApply(t *testing.T) {
	for _, kase := range []string{"edited", "created", "removed"} {
		t.Run(kase, func(t *testing.T) {
			c, env, ed := mustClient(t, "cursor"), testEnv(t), testEditor(t)
			path, _ := c.Path(env)
			if kase != "created" {
				writeConfig(t, c, env, []byte(`{"mcpServers": {}}`))
			}
			p, err := ed.Plan(c, env, Connect{URL: testURL, Token: testToken})
			if err != nil {
				t.Fatal(err)
			}
			var now []byte
			switch kase {
			case "edited", "created":
				now = []byte(`{"mcpServers": {"mine": {"command": "x"}}}`)
				writeConfig(t, c, env, now)
			case "removed":
				os.Remove(path)
			}
			if err := ed.Apply(p); !errors.Is(err, ErrChanged) {
				t.Fatalf("Apply = %v, want ErrChanged", err)
			}
			got, err := os.ReadFile(path)
			if kase == "removed" {
				if !os.IsNotExist(err) {
					t.Errorf("the removed file was written")
				}
			} else if string(got) != string(now) {
				t.Errorf("file = %q, want the other writer's %q", got, now)
			}
			if bs, _ := ed.Backups(c.ID); len(bs) != 0 {
				t.Errorf("backups made: %v", bs)
			}
		})
	}
}

// A backup is made before the first change only; Restore puts it back.
func TestBackupAndRestore(t *testing.T) {
	c, env, ed := mustClient(t, "zed"), testEnv(t), testEditor(t)
	original, err := os.ReadFile("testdata/zed/realistic/original")
	if err != nil {
		t.Fatal(err)
	}
	path := writeConfig(t, c, env, original)
	cn := Connect{URL: testURL, Token: testToken}
	apply(t, ed, c, env, cn)
	apply(t, ed, c, env, Disconnect{})
	apply(t, ed, c, env, Connect{URL: testURL, Token: "other"})
	bs, err := ed.Backups(c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 1 || bs[0].Path != path || bs[0].Absent {
		t.Fatalf("backups = %+v, want one of %s", bs, path)
	}
	if got, _ := os.ReadFile(bs[0].File); string(got) != string(original) {
		t.Errorf("backup content differs from the original")
	}
	if fi, err := os.Stat(bs[0].File); err != nil || (runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600) {
		t.Errorf("backup file: %v, %v", fi.Mode(), err)
	}
	if want := "20260301T120001.000000000Z-settings.json"; filepath.Base(bs[0].File) != want {
		t.Errorf("backup name %q, want %q", filepath.Base(bs[0].File), want)
	}
	if err := ed.Restore(c, env, bs[0]); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != string(original) {
		t.Errorf("restored file differs from the original")
	}

	// A file that did not exist: the backup records that, and restoring
	// removes the file.
	c2 := mustClient(t, "cursor")
	path2, _ := c2.Path(env)
	apply(t, ed, c2, env, cn)
	bs, _ = ed.Backups(c2.ID)
	if len(bs) != 1 || !bs[0].Absent || bs[0].File != "" {
		t.Fatalf("backups = %+v, want one absent", bs)
	}
	if err := ed.Restore(c2, env, bs[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path2); !os.IsNotExist(err) {
		t.Errorf("restoring an absent backup left the file: %v", err)
	}
	// Another client's backup is refused.
	if err := ed.Restore(c, env, bs[0]); err == nil {
		t.Error("restoring cursor's backup into zed's file: no error")
	}
}

// A symbolic link to the config is followed: the target is edited, the
// link stays.
func TestSymlink(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	c, env, ed := mustClient(t, "cursor"), testEnv(t), testEditor(t)
	target := filepath.Join(t.TempDir(), "dotfiles", "cursor-mcp.json")
	os.MkdirAll(filepath.Dir(target), 0o700)
	original := []byte("{\n  \"mcpServers\": {}\n}\n")
	if err := os.WriteFile(target, original, 0o644); err != nil {
		t.Fatal(err)
	}
	path, _ := c.Path(env)
	os.MkdirAll(filepath.Dir(path), 0o700)
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
	apply(t, ed, c, env, Connect{URL: testURL, Token: testToken})
	if fi, err := os.Lstat(path); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v %v", fi.Mode(), err)
	}
	got, _ := os.ReadFile(target)
	if !strings.Contains(string(got), `"switchboard"`) {
		t.Errorf("target not edited:\n%s", got)
	}
	if fi, _ := os.Stat(target); fi.Mode().Perm() != 0o644 {
		t.Errorf("target mode %v, want 0644", fi.Mode().Perm())
	}
	apply(t, ed, c, env, Disconnect{})
	if got, _ := os.ReadFile(target); string(got) != string(original) {
		t.Errorf("after disconnect:\n%s", got)
	}
}

func TestModes(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix modes")
	}
	c, env, ed := mustClient(t, "gemini-cli"), testEnv(t), testEditor(t)
	path := writeConfig(t, c, env, []byte("{}\n"))
	os.Chmod(path, 0o640)
	apply(t, ed, c, env, Connect{URL: testURL})
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640 kept", fi.Mode().Perm())
	}

	// New files are 0600 in new folders 0700.
	c = mustClient(t, "continue")
	apply(t, ed, c, env, Connect{URL: testURL})
	path, _ = c.Path(env)
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("new file mode %v, want 0600", fi.Mode().Perm())
	}
	if fi, _ := os.Stat(filepath.Dir(path)); fi.Mode().Perm() != 0o700 {
		t.Errorf("new folder mode %v, want 0700", fi.Mode().Perm())
	}
}

// Concurrent Apply calls of plans made from the same content serialize
// through the lock: exactly one writes, the others see the change.
func TestConcurrentApply(t *testing.T) {
	c, env, ed := mustClient(t, "claude-code"), testEnv(t), testEditor(t)
	path := writeConfig(t, c, env, []byte("{\n  \"mcpServers\": {}\n}\n"))
	const n = 8
	plans := make([]*Plan, n)
	for i := range plans {
		p, err := ed.Plan(c, env, Connect{URL: testURL, Token: strings.Repeat("t", i+1)})
		if err != nil {
			t.Fatal(err)
		}
		plans[i] = p
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range plans {
		wg.Go(func() { errs[i] = ed.Apply(plans[i]) })
	}
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil:
			if winner >= 0 {
				t.Errorf("plans %d and %d both applied", winner, i)
			}
			winner = i
		case !errors.Is(err, ErrChanged):
			t.Errorf("plan %d: %v", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no plan applied")
	}
	if got, _ := os.ReadFile(path); string(got) != string(plans[winner].New) {
		t.Errorf("file is not the winner's content")
	}
	if bs, _ := ed.Backups(c.ID); len(bs) != 1 {
		t.Errorf("%d backups, want 1", len(bs))
	}
}

func TestReplace(t *testing.T) {
	c, env, ed := mustClient(t, "claude-desktop"), testEnv(t), testEditor(t)
	original, _ := os.ReadFile("testdata/claude-desktop/realistic/original")
	writeConfig(t, c, env, original)
	entries, err := Read(c, env)
	if err != nil {
		t.Fatal(err)
	}
	imports, _ := EntriesToImport(c, entries, testURL, noEnv)
	var names []string
	for _, ie := range imports {
		names = append(names, ie.Name)
	}
	if d := cmp.Diff([]string{"filesystem", "github", "memory"}, names); d != "" {
		t.Fatalf("imports (-want +got):\n%s", d)
	}
	p := apply(t, ed, c, env, Replace{Remove: names, Connect: Connect{URL: testURL, Token: testToken, BinaryPath: testBinary}})
	want := "{\r\n  \"mcpServers\": {\r\n    \"switchboard\": {\r\n      \"command\": \"/opt/switchboard/bin/switchboard\",\r\n" +
		"      \"args\": [\"connect\"],\r\n      \"env\": {\r\n        \"SWITCHBOARD_TOKEN\": \"sbt_0123456789abcdef\"\r\n      }\r\n" +
		"    }\r\n  },\r\n  \"globalShortcut\": \"Ctrl+Space\",\r\n  \"preferences\": {\r\n    \"menuBarEnabled\": false\r\n  }\r\n}\r\n"
	if d := cmp.Diff(want, string(p.New)); d != "" {
		t.Errorf("after replace (-want +got):\n%s", d)
	}
	if strings.Contains(p.Diff, testToken) {
		t.Errorf("the diff shows the token:\n%s", p.Diff)
	}
}

func TestEntriesToImport(t *testing.T) {
	entries := []Entry{
		{Name: "switchboard", Command: testBinary, Args: []string{"connect"}},
		{Name: "gw", URL: testURL + "/x"},
		{Name: "remote", URL: "https://example.com/mcp"},
		{Name: "old-bridge", Command: `C:\Program Files\Switchboard\switchboard.exe`, Args: []string{"connect"}},
		{Name: "gh", Command: "docker", Args: []string{"run"}, Cwd: "/src", Env: map[string]string{
			"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp", "LOG_LEVEL": "info", "OPENAI_API_KEY": "sk", "DB_PASSWORD": "pw", "KEYBOARD": "us"}},
	}
	want := []ImportEntry{
		{Name: "remote", URL: "https://example.com/mcp", Transport: TransportAuto},
		{Name: "gh", Command: "docker", Args: []string{"run"}, Cwd: "/src", Env: []EnvVar{
			{"DB_PASSWORD", "pw", true}, {"GITHUB_PERSONAL_ACCESS_TOKEN", "ghp", true}, {"KEYBOARD", "us", false},
			{"LOG_LEVEL", "info", false}, {"OPENAI_API_KEY", "sk", true}}}}
	got, skipped := EntriesToImport(mustClient(t, "cursor"), entries, testURL, noEnv)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	own := "it is Switchboard's own entry"
	if d := cmp.Diff([]SkippedEntry{{Name: "switchboard", Reason: own}, {Name: "gw", Reason: own}, {Name: "old-bridge", Reason: own}}, skipped); d != "" {
		t.Errorf("skipped (-want +got):\n%s", d)
	}
}

func TestDetect(t *testing.T) {
	env, ed := testEnv(t), testEditor(t)
	cursor := mustClient(t, "cursor")
	writeConfig(t, cursor, env, []byte(`{"mcpServers": {"gw": {"url": "`+testURL+`"}, "a": {"command": "x"}}}`))
	zed := mustClient(t, "zed")
	zpath, _ := zed.Path(env)
	os.MkdirAll(filepath.Dir(zpath), 0o700) // installed, no settings yet
	codex := mustClient(t, "codex")
	writeConfig(t, codex, env, []byte("[mcp_servers.a]\ncommand = \"x\"\n"))
	cont := mustClient(t, "continue")
	writeConfig(t, cont, env, []byte("mcpServers: [\n"))

	if err := os.MkdirAll(filepath.Join(env.Home, ".kiro"), 0o700); err != nil { // Kiro ran, no settings/ yet
		t.Fatal(err)
	}

	got := map[string]Status{}
	for _, st := range ed.Detect(env) {
		got[st.Client.ID] = st
	}
	if len(got) != len(Table) {
		t.Errorf("%d statuses, want %d", len(got), len(Table))
	}
	if st := got["cursor"]; !st.Installed || !st.Exists || !st.Connected || len(st.Entries) != 2 || st.Err != nil {
		t.Errorf("cursor: %+v", st)
	}
	if st := got["zed"]; !st.Installed || st.Exists || st.Connected || st.Err != nil {
		t.Errorf("zed: %+v", st)
	}
	if st := got["codex"]; !st.Exists || st.Connected || len(st.Entries) != 1 || st.Entries[0].Command != "x" {
		t.Errorf("codex: %+v", st)
	}
	if st := got["continue"]; st.Err == nil {
		t.Errorf("continue: broken file, no error: %+v", st)
	}
	if st := got["kiro"]; !st.Installed || st.Exists || st.Err != nil {
		t.Errorf("kiro: %+v", st)
	}
	if st := got["windsurf"]; st.Installed || st.Exists {
		t.Errorf("windsurf: %+v", st)
	}
	if st := got["vscode-workspace"]; st.Err != nil {
		t.Errorf("vscode-workspace: %v", st.Err)
	}
}

// Layouts Switchboard does not edit are refused, not mangled.
func TestUnsupportedLayouts(t *testing.T) {
	tests := []struct{ id, data string }{
		{"codex", "[mcp_servers]\nswitchboard = { url = \"http://x\" }\n"},
		{"codex", "mcp_servers.switchboard.url = \"http://x\"\n"},
		{"codex", "model = \"o3\"\nmcp_servers = { foo = { command = \"npx\" } }\n"},
		{"codex", "[mcp_servers.switchboard]\nurl = \"http://x\"\n[other]\n[mcp_servers.switchboard.http_headers]\nA = \"b\"\n"},
		{"continue", "mcpServers: [{name: switchboard, url: \"http://x\"}]\n"},
		{"continue", "- a\n"},
		{"cursor", "[]\n"},
	}
	for _, tt := range tests {
		c, env, ed := mustClient(t, tt.id), testEnv(t), testEditor(t)
		writeConfig(t, c, env, []byte(tt.data))
		if _, err := ed.Plan(c, env, Connect{URL: testURL}); err == nil {
			t.Errorf("%s %q: no error", tt.id, tt.data)
		} else if _, ok := errors.AsType[*ParseError](err); !ok {
			t.Errorf("%s %q: %v is not a *ParseError", tt.id, tt.data, err)
		}
	}
}

// A Codex file whose mcp_servers is one inline table cannot take a
// [mcp_servers.switchboard] table: the refusal names the user's line, not
// a line of Switchboard's edited copy.
func TestCodexInlineServers(t *testing.T) {
	c, env, ed := mustClient(t, "codex"), testEnv(t), testEditor(t)
	data := "model = \"o3\"\nmcp_servers = { foo = { command = \"npx\" } }\n"
	path := writeConfig(t, c, env, []byte(data))
	_, err := ed.Plan(c, env, Connect{URL: testURL})
	pe, ok := errors.AsType[*ParseError](err)
	if !ok || pe.Line != 2 || pe.Column != 1 || !strings.Contains(err.Error(), "inline table") {
		t.Errorf("Plan: %v, want %s:2:1: ... inline table", err, path)
	}
	if p, err := ed.Plan(c, env, Disconnect{}); err != nil || p.Changed() {
		t.Errorf("disconnect of a file without Switchboard's entry: %v", err)
	}
}

func TestConnectValidation(t *testing.T) {
	env, ed := testEnv(t), testEditor(t)
	for _, tt := range []struct {
		id string
		cn Connect
	}{
		{"claude-desktop", Connect{URL: testURL}},
		{"claude-desktop", Connect{BinaryPath: "switchboard"}},
		{"cursor", Connect{BinaryPath: testBinary}},
		{"cursor", Connect{URL: testURL, PerServer: []string{"a/b"}}},
	} {
		if _, err := ed.Plan(mustClient(t, tt.id), env, tt.cn); err == nil {
			t.Errorf("%s %+v: no error", tt.id, tt.cn)
		}
	}
}

func TestDiff(t *testing.T) {
	old := "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n"
	new := "a\nb\nc\nd\ne\nF\ng\nh\ni\nj\nk"
	want := `--- a/f.json
+++ b/f.json
@@ -3,8 +3,9 @@
 c
 d
 e
-f
+F
 g
 h
 i
 j
+k
\ No newline at end of file
`
	if d := cmp.Diff(want, Diff("f.json", []byte(old), []byte(new))); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if got := Diff("f", nil, []byte("x\n")); got != "--- /dev/null\n+++ b/f\n@@ -0,0 +1,1 @@\n+x\n" {
		t.Errorf("new file: %q", got)
	}
	if Diff("f", []byte("x"), []byte("x")) != "" {
		t.Error("equal: not empty")
	}
	// A client's real file is named as it is, not as "b//home/…".
	abs := filepath.Join(t.TempDir(), ".cursor", "mcp.json")
	if got, want := Diff(abs, []byte("x\n"), []byte("y\n")), "--- "+abs+"\n+++ "+abs+"\n@@ -1,1 +1,1 @@\n-x\n+y\n"; got != want {
		t.Errorf("absolute path: %q, want %q", got, want)
	}
	if got := Diff(abs, nil, []byte("x\n")); !strings.HasPrefix(got, "--- /dev/null\n+++ "+abs+"\n") {
		t.Errorf("new file at an absolute path: %q", got)
	}
}

// TestToolNameBudget: Claude Code's entry "switchboard" makes its model's
// names mcp__switchboard__<name>, so its budget leaves room for those 18
// characters, and its entry switchboard-<server> for the server's name
// too; Codex qualifies names with its entry's name and __, Gemini CLI cuts
// at 63; a client whose naming is not known, or a token of no client,
// gets the full 64.
func TestToolNameBudget(t *testing.T) {
	const server = "everything-long-server-name"
	tests := []struct {
		id, server string
		want       int
	}{
		{"claude-code", "", 64 - len("mcp__switchboard__")},
		{"claude-code", server, 64 - len("mcp__switchboard-"+server+"__")},
		{"codex", "", 64 - len("switchboard__")},
		{"codex", server, 64 - len("switchboard-"+server+"__")},
		{"opencode", "", 64 - len("switchboard_")},
		{"opencode", server, 64 - len("switchboard-"+server+"_")},
		{"qoder-cli", "", 64 - len("mcp__switchboard__")}, // 46
		{"qoder-cli", server, 64 - len("mcp__switchboard-"+server+"__")},
		{"kimi-code", "", 64 - len("mcp__switchboard__")},
		{"droid", "", 64 - len("switchboard___")}, // 50
		{"droid", server, 64 - len("switchboard-"+server+"___")},
		{"goose", "", 64 - len("switchboard__")},
		{"vibe", "", 64 - len("switchboard_")},
		{"vibe", server, 64 - len("switchboard-"+server+"_")},
		{"gemini-cli", "", 63},
		{"gemini-cli", server, 63},
		{"cursor", "", 64},
		{"cursor", server, 64},
		{"claude-desktop", "", 64},
		{"cli", "", 64},
		{"", server, 64},
	}
	for _, tt := range tests {
		if got := ToolNameBudget(tt.id, tt.server); got != tt.want {
			t.Errorf("ToolNameBudget(%q, %q) = %d, want %d", tt.id, tt.server, got, tt.want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { ToolNameBudget("claude-code", server) }); n != 0 {
		t.Errorf("ToolNameBudget allocates %.0f objects; the gateway asks on every request", n)
	}
	for _, c := range Table {
		if c.ToolNames != (ToolNaming{}) && c.ToolNames.Source == "" {
			t.Errorf("%s: a tool naming rule without its source", c.ID)
		}
	}
}
