package config

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestMigrationTableIsOrdered(t *testing.T) {
	table := migrationTable()
	if len(table) != CurrentVersion {
		t.Fatalf("%d migrations for CurrentVersion %d, want one per version", len(table), CurrentVersion)
	}
	for i, m := range table {
		if m.from != i || m.apply == nil {
			t.Errorf("migration %d has from %d (apply set: %v), want from %d", i, m.from, m.apply != nil, i)
		}
	}
}

// testdataWant is what loading testdata/v<N>.json must give, for each N.
func testdataWant() map[int]*Config {
	claude, _ := Parse("", []byte(`{"version": 1, "globalShortcut": "Alt+Space"}`))
	claude.Servers = map[string]Server{
		"filesystem": {
			Command: "npx",
			Args:    []string{"-y", "@modelcontextprotocol/server-filesystem", "/Users/alice/Desktop", "/Users/alice/Downloads"},
		},
		"github": {
			Command: "docker",
			Args:    []string{"run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"},
			Env:     map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": "<YOUR_TOKEN>"},
		},
	}
	return map[int]*Config{
		0: claude,
		1: {
			Version: 1,
			Listen:  DefaultListen,
			Servers: map[string]Server{
				"fs": {
					Command:       "npx",
					Args:          []string{"-y", "@modelcontextprotocol/server-filesystem", "/tmp"},
					Env:           map[string]string{"DEBUG": "1"},
					Cwd:           "/tmp",
					Enabled:       ptr(true),
					Pool:          Pool{Mode: PoolShared, Max: 2, IdleTimeout: Duration{10 * time.Minute}},
					Timeout:       Duration{2 * time.Minute},
					DisabledTools: []string{"write_file"},
				},
				"memory": {
					Command: "npx",
					Args:    []string{"-y", "@modelcontextprotocol/server-memory"},
					Enabled: ptr(false),
					Pool:    Pool{Mode: PoolSession, Max: 4},
				},
			},
		},
	}
}

// TestLoadTestdata loads every testdata/v<N>.json the way the daemon does
// and checks the result, the archive, and that the saved file loads again
// unchanged at CurrentVersion. Every version up to CurrentVersion must have
// a file.
func TestLoadTestdata(t *testing.T) {
	files, err := filepath.Glob("testdata/v*.json")
	if err != nil {
		t.Fatal(err)
	}
	want := testdataWant()
	seen := map[int]bool{}
	for _, file := range files {
		m := regexp.MustCompile(`^v(\d+)\.json$`).FindStringSubmatch(filepath.Base(file))
		if m == nil {
			t.Errorf("unexpected file %s", file)
			continue
		}
		version, _ := strconv.Atoi(m[1])
		seen[version] = true
		t.Run(filepath.Base(file), func(t *testing.T) {
			orig, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if w, ok := want[version]; !ok {
				t.Fatalf("no expected result for version %d in testdataWant", version)
			} else if cfg, err := Parse(file, orig); err != nil {
				t.Fatalf("Parse: %v", err)
			} else if diff := cmp.Diff(w, cfg, cmpOpts); diff != "" {
				t.Errorf("Parse mismatch (-want +got):\n%s", diff)
			}

			path := filepath.Join(t.TempDir(), FileName)
			if err := os.WriteFile(path, orig, 0o600); err != nil {
				t.Fatal(err)
			}
			cfg, err := Load(path)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if diff := cmp.Diff(want[version], cfg, cmpOpts); diff != "" {
				t.Errorf("Load mismatch (-want +got):\n%s", diff)
			}
			archive, err := os.ReadFile(path + ".v" + m[1])
			if version < CurrentVersion {
				if err != nil {
					t.Fatalf("no archive: %v", err)
				}
				if !bytes.Equal(archive, orig) {
					t.Errorf("archive is not byte-identical to the original:\n%s", archive)
				}
			} else if err == nil {
				t.Errorf("archive written for a current file")
			}

			saved, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var top map[string]json.RawMessage
			if err := json.Unmarshal(saved, &top); err != nil {
				t.Fatal(err)
			}
			if string(top["version"]) != strconv.Itoa(CurrentVersion) {
				t.Errorf("saved file has version %s, want %d", top["version"], CurrentVersion)
			}
			again, from, err := parse(path, saved)
			if err != nil {
				t.Fatalf("reloading the migrated file: %v", err)
			}
			if from != CurrentVersion {
				t.Errorf("migrated file loads as version %d, want %d", from, CurrentVersion)
			}
			if diff := cmp.Diff(cfg, again, cmpOpts); diff != "" {
				t.Errorf("reloaded migrated file mismatch (-want +got):\n%s", diff)
			}
		})
	}
	for v := 0; v <= CurrentVersion; v++ {
		if !seen[v] {
			t.Errorf("testdata/v%d.json is missing", v)
		}
	}
}

func TestLoadMigratesV0WithArchive(t *testing.T) {
	orig, err := os.ReadFile("testdata/v0.json")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	if err := os.WriteFile(path, orig, 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err != nil {
		t.Fatal(err)
	}

	archive := path + ".v0"
	got, err := os.ReadFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, orig) {
		t.Errorf("archive differs from the original")
	}
	if runtimeHasUnixModes() {
		for _, p := range []string{path, archive} {
			if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o640 {
				t.Errorf("%s: mode %v, %v; want 0640 like the original", p, fi.Mode().Perm(), err)
			}
		}
	}

	migrated, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(migrated, []byte("mcpServers")) || !bytes.Contains(migrated, []byte(`"servers"`)) {
		t.Errorf("migrated file still uses mcpServers:\n%s", migrated)
	}
	// Loading again neither migrates nor writes.
	if err := os.Remove(archive); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(path); !bytes.Equal(again, migrated) {
		t.Errorf("second Load rewrote the file")
	}
	if _, err := os.Stat(archive); err == nil {
		t.Errorf("second Load wrote an archive")
	}
}

func TestMigrateV0(t *testing.T) {
	for _, tt := range []struct {
		name    string
		in      string
		servers []string
		err     string
	}{
		{"mcpServers renamed", `{"mcpServers": {"a": {"command": "x"}}}`, []string{"a"}, ""},
		{"no servers at all", `{"preferences": {"x": 1}}`, nil, ""},
		{"servers without version", `{"servers": {"b": {"command": "x"}}}`, []string{"b"}, ""},
		{"both keys", `{"mcpServers": {"a": {"command": "x"}}, "servers": {}}`, nil, `mcpServers: migrating from version 0 to 1: both "mcpServers" and "servers" are present`},
		// A pasted remote entry is a remote server; its "type" is kept as an unknown key (auto finds the transport).
		{"remote server from Claude", `{"mcpServers": {"r": {"type": "http", "url": "https://x"}}}`, []string{"r"}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Parse("config.json", []byte(tt.in))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Parse() error = %v, want one containing %q", err, tt.err)
				}
				asError(t, err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for name := range cfg.Servers {
				names = append(names, name)
			}
			if diff := cmp.Diff(tt.servers, names); diff != "" {
				t.Errorf("servers (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoadMissingFile(t *testing.T) {
	dir := t.TempDir()
	cfg, err := Load(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Default(), cfg, cmpOpts); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("Load of a missing file wrote %d files", len(entries))
	}
}

func TestLoadBadFileIsLeftAlone(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	const in = `{"mcpServers": {"a": {"command": ""}}}`
	if err := os.WriteFile(path, []byte(in), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err == nil {
		t.Fatal("Load() succeeded, want an error")
	} else if e := asError(t, err); e.File != path || e.Field != "servers.a.command" {
		t.Errorf("error = %v, want one for %s field servers.a.command", err, path)
	}
	if got, _ := os.ReadFile(path); string(got) != in {
		t.Errorf("bad file was modified")
	}
	if _, err := os.Stat(path + ".v0"); err == nil {
		t.Errorf("archive written for a file that failed to load")
	}
}
