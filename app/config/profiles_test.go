package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// profileFile is a config.json with the given "profiles" value and two
// servers, fs and git.
func profileFile(profiles string) string {
	return `{
  "version": 1,
  "servers": {"fs": {"command": "fs-server"}, "git": {"command": "git-server"}},
  "profiles": ` + profiles + `
}`
}

func TestParseProfiles(t *testing.T) {
	for _, tt := range []struct {
		name     string
		profiles string
		want     map[string]Profile
	}{
		{"servers only", `{"coding": {"servers": ["fs", "git"]}}`,
			map[string]Profile{"coding": {Servers: []string{"fs", "git"}}}},
		{"tools of one server", `{"coding": {"servers": ["fs", "git"], "tools": {"fs": ["read_file", "list_directory"]}}}`,
			map[string]Profile{"coding": {Servers: []string{"fs", "git"}, Tools: map[string][]string{"fs": {"read_file", "list_directory"}}}}},
		{"tool search", `{"small": {"servers": ["fs"], "toolSearch": true}}`,
			map[string]Profile{"small": {Servers: []string{"fs"}, ToolSearch: true}}},
		{"ask before destructive", `{"careful": {"servers": ["fs"], "askBeforeDestructive": true}}`,
			map[string]Profile{"careful": {Servers: []string{"fs"}, AskBeforeDestructive: true}}},
		{"server not configured is allowed", `{"later": {"servers": ["fs", "not-installed"]}}`,
			map[string]Profile{"later": {Servers: []string{"fs", "not-installed"}}}},
		{"several profiles", `{"a": {"servers": ["fs"]}, "b.2": {"servers": ["git"]}}`,
			map[string]Profile{"a": {Servers: []string{"fs"}}, "b.2": {Servers: []string{"git"}}}},
		{"empty object", `{}`, nil},
		{"null", `null`, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Parse("config.json", []byte(profileFile(tt.profiles)))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, cfg.Profiles, cmpOpts); diff != "" {
				t.Errorf("profiles (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseProfilesBad(t *testing.T) {
	for _, tt := range []struct {
		name     string
		profiles string
		field    string // the *Error's Field
		msg      string // in the message
		line     int    // where the error points
	}{
		{"not an object", `["coding"]`, "profiles", "expected an object mapping profile names", 4},
		{"profile not an object", `{"coding": ["fs"]}`, "profiles.coding", "expected a profile object", 4},
		{"profile null", `{"coding": null}`, "profiles.coding", "expected a profile object", 4},
		{"invalid name", `{"my profile": {"servers": ["fs"]}}`, "profiles.my profile", `invalid profile name "my profile"`, 4},
		{"name with slash", `{"a/b": {"servers": ["fs"]}}`, "profiles.a/b", "invalid profile name", 4},
		{"name with double underscore", `{"a__b": {"servers": ["fs"]}}`, "profiles.a__b", "invalid profile name", 4},
		{"no servers key", `{"coding": {"tools": {}}}`, "profiles.coding.servers", "needs at least one server", 4},
		{"empty servers", `{"coding": {"servers": []}}`, "profiles.coding.servers", "needs at least one server", 4},
		{"servers not a list", `{"coding": {"servers": "fs"}}`, "profiles.coding.servers", "expected an array of strings", 4},
		{"server not a string", `{"coding": {"servers": ["fs", 3]}}`, "profiles.coding.servers[1]", "expected a string", 4},
		{"invalid server name", `{"coding": {"servers": ["f s"]}}`, "profiles.coding.servers[0]", `invalid server name "f s"`, 4},
		{"server twice", `{"coding": {"servers": ["fs", "fs"]}}`, "profiles.coding.servers[1]", `server "fs" is listed twice`, 4},
		{"tools not an object", `{"coding": {"servers": ["fs"], "tools": ["read_file"]}}`, "profiles.coding.tools", "expected an object mapping server names", 4},
		{"tools of a server outside the profile", `{"coding": {"servers": ["fs"], "tools": {"git": ["log"]}}}`, "profiles.coding.tools.git", `server "git" is not one of the profile's servers`, 4},
		{"tool list not a list", `{"coding": {"servers": ["fs"], "tools": {"fs": "read_file"}}}`, "profiles.coding.tools.fs", "expected an array of tool names", 4},
		{"empty tool list", `{"coding": {"servers": ["fs"], "tools": {"fs": []}}}`, "profiles.coding.tools.fs", "empty tool list", 4},
		{"empty tool name", `{"coding": {"servers": ["fs"], "tools": {"fs": ["read_file", ""]}}}`, "profiles.coding.tools.fs[1]", "a tool name cannot be empty", 4},
		{"tool twice", `{"coding": {"servers": ["fs"], "tools": {"fs": ["a", "a"]}}}`, "profiles.coding.tools.fs[1]", `tool "a" is listed twice`, 4},
		{"toolSearch not a boolean", `{"coding": {"servers": ["fs"], "toolSearch": "yes"}}`, "profiles.coding.toolSearch", "expected true or false", 4},
		{"askBeforeDestructive not a boolean", `{"coding": {"servers": ["fs"], "askBeforeDestructive": 1}}`, "profiles.coding.askBeforeDestructive", "expected true or false", 4},
		{"maxTier not a string", `{"coding": {"servers": ["fs"], "maxTier": 1}}`, "profiles.coding.maxTier", "expected a tier", 4},
		{"maxTier unknown", `{"coding": {"servers": ["fs"], "maxTier": "admin"}}`, "profiles.coding.maxTier", `unknown tier "admin"`, 4},
		{"duplicate profile", `{"coding": {"servers": ["fs"]}, "coding": {"servers": ["git"]}}`, "profiles.coding", `duplicate key "coding"`, 4},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("config.json", []byte(profileFile(tt.profiles)))
			if err == nil {
				t.Fatal("Parse accepted it")
			}
			e := asError(t, err)
			if e.Field != tt.field || !strings.Contains(e.Error(), tt.msg) || e.Line != tt.line {
				t.Errorf("error %q (field %q, line %d); want field %q, line %d, containing %q", err, e.Field, e.Line, tt.field, tt.line, tt.msg)
			}
		})
	}
}

func TestProfilesRoundTrip(t *testing.T) {
	in := profileFile(`{
    "coding": {"note": {"by": "me"}, "tools": {"git": ["log"], "fs": ["read_file"]}, "servers": ["git", "fs"], "toolSearch": false},
    "all": {"servers": ["fs"], "maxTier": "read", "toolSearch": true}
  }`)
	cfg, err := Parse("config.json", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	path, got := saveAndRead(t, cfg)
	// Profiles sorted by name; known keys first in a fixed order, the
	// servers in the user's order, unknown keys kept.
	want := `  "profiles": {
    "all": {
      "servers": [
        "fs"
      ],
      "toolSearch": true,
      "maxTier": "read"
    },
    "coding": {
      "servers": [
        "git",
        "fs"
      ],
      "tools": {
        "fs": [
          "read_file"
        ],
        "git": [
          "log"
        ]
      },
      "note": {
        "by": "me"
      }
    }
  }
}
`
	if !strings.HasSuffix(string(got), want) {
		t.Errorf("saved file:\n%s\nwant it to end with:\n%s", got, want)
	}
	again, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(cfg, again, cmpOpts); diff != "" {
		t.Errorf("reloaded (-want +got):\n%s", diff)
	}

	// A deep copy: changing the clone leaves the original as it was.
	c := cfg.Clone()
	c.Profiles["coding"].Tools["fs"][0] = "changed"
	c.Profiles["all"] = Profile{Servers: []string{"git"}}
	if diff := cmp.Diff(again, cfg, cmpOpts); diff != "" {
		t.Errorf("changing a clone changed the original (-want +got):\n%s", diff)
	}
}

func TestProfileServers(t *testing.T) {
	cfg, err := Parse("config.json", []byte(profileFile(`{"coding": {"servers": ["git", "gone", "fs"], "tools": {"fs": ["read_file"]}}}`)))
	if err != nil {
		t.Fatal(err)
	}
	servers, missing, ok := cfg.ProfileServers("coding")
	if !ok || !slicesEqual(servers, []string{"git", "fs"}) || !slicesEqual(missing, []string{"gone"}) {
		t.Errorf("ProfileServers = %v, %v, %v; want [git fs], [gone], true", servers, missing, ok)
	}
	off := false
	cfg.Servers["git"] = Server{Command: "git-server", Enabled: &off}
	if servers, missing, _ := cfg.ProfileServers("coding"); !slicesEqual(servers, []string{"fs"}) || !slicesEqual(missing, []string{"git", "gone"}) {
		t.Errorf("with git disabled: %v, %v; want [fs], [git gone]", servers, missing)
	}
	if _, _, ok := cfg.ProfileServers("nope"); ok {
		t.Error("ProfileServers found an unknown profile")
	}
}

func slicesEqual(a, b []string) bool {
	return strings.Join(a, "\x00") == strings.Join(b, "\x00") && len(a) == len(b)
}

// TestMissingTools: the tools a profile names that a listed server does
// not offer, server by server; a server not listed yet is not judged.
func TestMissingTools(t *testing.T) {
	cfg, err := Parse("config.json", []byte(profileFile(`{"coding": {"servers": ["git", "fs"], "tools": {"fs": ["read_file", "typo_tool", "gone"], "git": ["git_log"]}}, "all": {"servers": ["fs"]}}`)))
	if err != nil {
		t.Fatal(err)
	}
	lists := map[string][]string{"fs": {"read_file", "write_file"}, "git": {"git_log"}}
	offered := func(server string) ([]string, bool) {
		tools, ok := lists[server]
		return tools, ok
	}
	if got, want := cfg.MissingTools("coding", offered), map[string][]string{"fs": {"typo_tool", "gone"}}; !cmp.Equal(got, want) {
		t.Errorf("MissingTools(coding) = %v, want %v", got, want)
	}
	delete(lists, "fs") // not listed yet
	if got := cfg.MissingTools("coding", offered); got != nil {
		t.Errorf("with fs not listed: %v, want nil", got)
	}
	lists["git"] = []string{}
	if got, want := cfg.MissingTools("coding", offered), map[string][]string{"git": {"git_log"}}; !cmp.Equal(got, want) {
		t.Errorf("with git listing no tools: %v, want %v", got, want)
	}
	if got := cfg.MissingTools("all", offered); got != nil {
		t.Errorf("a profile without tool lists: %v", got)
	}
	if got := cfg.MissingTools("nope", offered); got != nil {
		t.Errorf("an unknown profile: %v", got)
	}
}
