package clients

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSanitizeName(t *testing.T) {
	for in, want := range map[string]string{
		"github":                  "github",
		"My Server":               "My-Server",
		"@scope/pkg":              "scope-pkg",
		"a__b___c":                "a_b_c",
		"_hidden":                 "hidden",
		"données":                 "donn--es",
		"":                        "server",
		"///":                     "server",
		strings.Repeat("x", 60):   strings.Repeat("x", MaxServerNameLen),
		"server.v2-beta_1":        "server.v2-beta_1",
		"-leading-dash-and.dots.": "leading-dash-and.dots.",
	} {
		if got := SanitizeName(in); got != want {
			t.Errorf("SanitizeName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMergeImports(t *testing.T) {
	gh := ImportEntry{Name: "github", Command: "npx", Args: []string{"-y", "gh"},
		Env: []EnvVar{{"GITHUB_TOKEN", "ghp_1", true}}}
	fs := ImportEntry{Name: "filesystem", Command: "npx", Args: []string{"-y", "fs", "/home"}}
	mem := ImportEntry{Name: "memory", Command: "npx", Args: []string{"-y", "memory"}}
	existing := []Existing{
		// The same as gh, with its secret read from the store.
		{Name: "gh", Command: "npx", Args: []string{"-y", "gh"}, Env: map[string]string{"GITHUB_TOKEN": "ghp_1"}},
		// The same name as fs, another server.
		{Name: "filesystem", Command: "npx", Args: []string{"-y", "fs", "/tmp"}},
		{Name: "filesystem-2", Command: "uvx", Args: []string{"other"}},
	}
	otherToken := gh
	otherToken.Name, otherToken.Env = "github", []EnvVar{{"GITHUB_TOKEN", "ghp_2", true}}
	inOtherDir := mem
	inOtherDir.Name, inOtherDir.Cwd = "memory", "/elsewhere"
	spaced := ImportEntry{Name: "My Tool", Command: "tool"}

	got := MergeImports([]ImportEntry{gh, fs, mem, mem, otherToken, inOtherDir, spaced}, existing)
	want := []Merged{
		{Entry: gh, Name: "gh", Same: "gh"},
		{Entry: fs, Name: "filesystem-3"},
		{Entry: mem, Name: "memory"},
		{Entry: mem, Name: "memory", Same: "memory"}, // twice in one import: added once
		{Entry: otherToken, Name: "github"},          // another secret value is another server
		{Entry: inOtherDir, Name: "memory-2"},
		{Entry: spaced, Name: "My-Tool"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("MergeImports (-want +got):\n%s", d)
	}
	renamed := map[string]bool{}
	for _, m := range got {
		if m.Renamed() {
			renamed[m.Name] = true
		}
	}
	if d := cmp.Diff(map[string]bool{"filesystem-3": true, "memory-2": true, "My-Tool": true}, renamed); d != "" {
		t.Errorf("Renamed (-want +got):\n%s", d)
	}
	// Deterministic: the same inputs give the same names.
	if again := MergeImports([]ImportEntry{gh, fs, mem, mem, otherToken, inOtherDir, spaced}, existing); !cmp.Equal(got, again) {
		t.Error("a second merge of the same input differs")
	}
	// An empty env and an absent one are the same.
	if m := MergeImports([]ImportEntry{{Name: "x", Command: "c"}}, []Existing{{Name: "y", Command: "c", Env: map[string]string{}}}); m[0].Same != "y" {
		t.Errorf("empty env vs none: %+v", m)
	}
	// A long name with a suffix stays within the limit.
	long := strings.Repeat("n", 60)
	m := MergeImports([]ImportEntry{{Name: long, Command: "a"}}, []Existing{{Name: SanitizeName(long), Command: "b"}})
	if len(m[0].Name) != MaxServerNameLen || !strings.HasSuffix(m[0].Name, "-2") {
		t.Errorf("long name: %q", m[0].Name)
	}
}

// Claude Code's file lives in the home folder, which always exists: it is
// installed only when the file, ~/.claude/ or `claude` on PATH says so.
func TestClaudeCodeDetection(t *testing.T) {
	status := func(env Env) Status {
		for _, st := range testEditor(t).Detect(env) {
			if st.Client.ID == "claude-code" {
				return st
			}
		}
		t.Fatal("claude-code not detected at all")
		return Status{}
	}
	bin := t.TempDir()
	tests := []struct {
		name    string
		setup   func(env *Env)
		want    bool
		windows bool
	}{
		{"nothing", func(*Env) {}, false, false},
		{"file", func(env *Env) {
			os.WriteFile(filepath.Join(env.Home, ".claude.json"), []byte("{}"), 0o600)
		}, true, false},
		{"settings folder", func(env *Env) { os.Mkdir(filepath.Join(env.Home, ".claude"), 0o700) }, true, false},
		{"CLAUDE_CONFIG_DIR", func(env *Env) { env.ClaudeConfig = t.TempDir() }, true, false},
		{"CLAUDE_CONFIG_DIR missing", func(env *Env) { env.ClaudeConfig = filepath.Join(t.TempDir(), "none") }, false, false},
		{"binary on PATH", func(env *Env) {
			os.WriteFile(filepath.Join(bin, "claude"), []byte("#!/bin/sh\n"), 0o755)
			env.PathList = "/nonexistent" + string(os.PathListSeparator) + bin
		}, true, true},
		{"not executable", func(env *Env) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "claude"), []byte("text"), 0o644)
			env.PathList = dir
		}, false, true},
		{"a folder called claude", func(env *Env) {
			dir := t.TempDir()
			os.Mkdir(filepath.Join(dir, "claude"), 0o700)
			env.PathList = dir
		}, false, false},
		{"windows claude.cmd", func(env *Env) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "claude.cmd"), []byte("@echo off"), 0o644)
			env.GOOS, env.PathList = "windows", `C:\nowhere;`+dir
		}, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.windows && runtime.GOOS == "windows" {
				t.Skip("no executable bit on Windows")
			}
			env := Env{GOOS: runtime.GOOS, Home: t.TempDir()}
			tt.setup(&env)
			if st := status(env); st.Installed != tt.want {
				t.Errorf("Installed = %v, want %v (%+v)", st.Installed, tt.want, st)
			}
		})
	}
}

// Restoring goes through a plan: the diff back to the backup, then Apply
// with the same checks as any change.
func TestPlanRestore(t *testing.T) {
	c, env, ed := mustClient(t, "claude-desktop"), testEnv(t), testEditor(t)
	original, err := os.ReadFile("testdata/claude-desktop/realistic/original")
	if err != nil {
		t.Fatal(err)
	}
	path := writeConfig(t, c, env, original)
	apply(t, ed, c, env, Replace{Remove: []string{"github"}, Connect: Connect{Token: testToken, BinaryPath: testBinary}})
	bs, err := ed.Backups(c.ID)
	if err != nil || len(bs) != 1 {
		t.Fatalf("backups %+v, %v", bs, err)
	}
	b, err := ed.FindBackup(c.ID, bs[0].Name())
	if err != nil || b != bs[0] {
		t.Fatalf("FindBackup(%q) = %+v, %v", bs[0].Name(), b, err)
	}
	if _, err := ed.FindBackup(c.ID, "nope"); err == nil || !strings.Contains(err.Error(), bs[0].Name()) {
		t.Errorf("FindBackup of an unknown name: %v (want the known names listed)", err)
	}
	p, err := ed.PlanRestore(c, env, b)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Changed() || !strings.Contains(p.Diff, `+    "github": {`) || !strings.Contains(p.Diff, `-    "switchboard": {`) {
		t.Errorf("restore diff:\n%s", p.Diff)
	}
	for _, secret := range []string{"ghp_exampleexampleexample", testToken} {
		if strings.Contains(p.Diff, secret) {
			t.Errorf("the restore diff shows %q:\n%s", secret, p.Diff)
		}
	}
	if !strings.Contains(p.Diff, `"GITHUB_PERSONAL_ACCESS_TOKEN": "`+Masked+`"`) {
		t.Errorf("the secret is not masked in place:\n%s", p.Diff)
	}
	// Changed between plan and apply: refused.
	cur, _ := os.ReadFile(path)
	os.WriteFile(path, append(cur, ' '), 0o600)
	if err := ed.Apply(p); !errors.Is(err, ErrChanged) {
		t.Fatalf("Apply after a change = %v, want ErrChanged", err)
	}
	p, _ = ed.PlanRestore(c, env, b)
	if err := ed.Apply(p); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != string(original) {
		t.Errorf("restored:\n%s", got)
	}
	if p, _ := ed.PlanRestore(c, env, b); p.Changed() || p.Diff != "" {
		t.Errorf("restoring twice changes something:\n%s", p.Diff)
	}

	// The backup of an absent file plans the file's removal.
	c2 := mustClient(t, "cursor")
	path2, _ := c2.Path(env)
	apply(t, ed, c2, env, Connect{URL: testURL, Token: testToken})
	bs, _ = ed.Backups(c2.ID)
	if len(bs) != 1 || !bs[0].Absent || !strings.Contains(bs[0].Name(), "-absent-mcp.json") {
		t.Fatalf("backups %+v", bs)
	}
	p, err = ed.PlanRestore(c2, env, bs[0])
	if err != nil || !p.Remove || !p.Changed() || !strings.Contains(p.Diff, "+++ /dev/null") || strings.Contains(p.Diff, testToken) {
		t.Fatalf("plan %+v, %v", p, err)
	}
	if err := ed.Apply(p); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path2); !os.IsNotExist(err) {
		t.Errorf("the file is still there: %v", err)
	}
	if p, _ := ed.PlanRestore(c2, env, bs[0]); p.Changed() {
		t.Error("removing an absent file again is a change")
	}
	// Another client's backup is refused.
	if _, err := ed.PlanRestore(c, env, bs[0]); err == nil {
		t.Error("a backup of cursor's file planned into Claude Desktop's")
	}
}

// Diffs never show the values of secret-looking variables or headers,
// whether the entry is removed, added or only context.
func TestDiffMasksSecrets(t *testing.T) {
	c, env, ed := mustClient(t, "cursor"), testEnv(t), testEditor(t)
	writeConfig(t, c, env, []byte(`{
  "mcpServers": {
    "gh": {"command": "gh-mcp", "env": {"GH_TOKEN": "ghp_quote\"d", "LEVEL": "debug"}},
    "api": {"url": "https://x.example/mcp", "headers": {"Authorization": "Bearer abc"}},
    "short": {"command": "s", "env": {"AUTH_ON": "yes", "MODE": "yes"}}
  }
}
`))
	p, err := ed.Plan(c, env, Replace{Remove: []string{"gh", "short"}, Connect: Connect{URL: testURL, Token: testToken}})
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{`ghp_quote\"d`, "Bearer abc", `"AUTH_ON": "yes"`, testToken} {
		if strings.Contains(p.Diff, secret) {
			t.Errorf("diff shows %q:\n%s", secret, p.Diff)
		}
	}
	// A short value is masked only beside its name.
	if !strings.Contains(p.Diff, `"MODE": "yes"`) || !strings.Contains(p.Diff, `"LEVEL": "debug"`) {
		t.Errorf("diff masks more than secrets:\n%s", p.Diff)
	}
	if !strings.Contains(string(p.New), "Bearer "+testToken) {
		t.Error("the written bytes are masked too")
	}
}
