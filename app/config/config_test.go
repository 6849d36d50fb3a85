package config

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/switchboardhq/switchboard/app/tiers"

	"github.com/google/go-cmp/cmp"
)

// cmpOpts compares Configs including their unknown keys.
var cmpOpts = cmp.AllowUnexported(Config{}, Server{}, Pool{}, Profile{})

func ptr[T any](v T) *T { return &v }

// asError returns err as an *Error or fails the test.
func asError(t *testing.T, err error) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not an *Error", err, err)
	}
	return e
}

func TestDefault(t *testing.T) {
	c := Default()
	want := &Config{Version: CurrentVersion, Listen: DefaultListen, Servers: map[string]Server{}}
	if diff := cmp.Diff(want, c, cmpOpts); diff != "" {
		t.Errorf("Default() mismatch (-want +got):\n%s", diff)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("Default().Validate() = %v", err)
	}
}

func TestIsEnabled(t *testing.T) {
	for _, tt := range []struct {
		enabled *bool
		want    bool
	}{
		{nil, true},
		{ptr(true), true},
		{ptr(false), false},
	} {
		if got := (Server{Enabled: tt.enabled}).IsEnabled(); got != tt.want {
			t.Errorf("IsEnabled with Enabled=%v = %v, want %v", tt.enabled, got, tt.want)
		}
	}
}

func TestHoldChangedTools(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want bool
	}{
		{`{"command": "x"}`, true},
		{`{"command": "x", "holdChangedTools": null}`, true},
		{`{"command": "x", "holdChangedTools": true}`, true},
		{`{"command": "x", "holdChangedTools": false}`, false},
	} {
		cfg, err := Parse("config.json", []byte(`{"version": 1, "servers": {"fs": `+tt.in+`}}`))
		if err != nil {
			t.Fatalf("Parse(%s): %v", tt.in, err)
		}
		s := cfg.Servers["fs"]
		if got := s.IsHoldingChangedTools(); got != tt.want {
			t.Errorf("IsHoldingChangedTools of %s = %v, want %v", tt.in, got, tt.want)
		}
		// Written back as it was set.
		data, err := json.Marshal(cfg)
		if err != nil {
			t.Fatal(err)
		}
		again, err := Parse("config.json", data)
		if err != nil {
			t.Fatalf("Parse(%s): %v", data, err)
		}
		if got := again.Servers["fs"]; !cmp.Equal(got.HoldChangedTools, s.HoldChangedTools) {
			t.Errorf("holdChangedTools after a round trip = %v, want %v", got.HoldChangedTools, s.HoldChangedTools)
		}
		// A clone does not share the pointer.
		if c := cfg.Clone(); s.HoldChangedTools != nil && c.Servers["fs"].HoldChangedTools == s.HoldChangedTools {
			t.Error("Clone shares HoldChangedTools")
		}
	}
}

const unknownFieldsIn = `{
  "zeta": {"nested": [1, 2,   {"a": null}]},
  "servers": {
    "fs": {
      "x-note": "kept",
      "pool": {"max": 2, "x-future": {"burst": true}, "mode": "shared"},
      "command": "npx",
      "args": ["a && b", "<tmp>"],
      "aaa": 1
    }
  },
  "listen": "localhost:9000",
  "alpha": "first",
  "version": 1
}`

const unknownFieldsOut = `{
  "version": 1,
  "listen": "localhost:9000",
  "servers": {
    "fs": {
      "command": "npx",
      "args": [
        "a && b",
        "<tmp>"
      ],
      "pool": {
        "mode": "shared",
        "max": 2,
        "x-future": {
          "burst": true
        }
      },
      "aaa": 1,
      "x-note": "kept"
    }
  },
  "alpha": "first",
  "zeta": {
    "nested": [
      1,
      2,
      {
        "a": null
      }
    ]
  }
}
`

// saveAndRead saves cfg to a new file and returns its path and content.
func saveAndRead(t *testing.T, cfg *Config) (path string, data []byte) {
	t.Helper()
	path = filepath.Join(t.TempDir(), FileName)
	if err := cfg.Save(path); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, data
}

func TestRoundTripKeepsUnknownFields(t *testing.T) {
	cfg, err := Parse("config.json", []byte(unknownFieldsIn))
	if err != nil {
		t.Fatal(err)
	}
	path, got := saveAndRead(t, cfg)
	if diff := cmp.Diff(unknownFieldsOut, string(got)); diff != "" {
		t.Errorf("saved file mismatch (-want +got):\n%s", diff)
	}

	again, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(cfg, again, cmpOpts); diff != "" {
		t.Errorf("reloaded config mismatch (-want +got):\n%s", diff)
	}
	if err := again.Save(path); err != nil {
		t.Fatal(err)
	}
	if got2, _ := os.ReadFile(path); string(got2) != string(got) {
		t.Errorf("second save differs:\n%s", got2)
	}
}

func TestSyntaxErrorPosition(t *testing.T) {
	for _, tt := range []struct {
		name      string
		in        string
		line, col int
		msg       string
	}{
		{"missing comma", "{\n  \"version\": 1\n  \"listen\": \"x\"\n}", 3, 3, "after object key:value pair"},
		{"trailing comma", "{\n  \"version\": 1,\n}", 3, 1, "looking for beginning of object key"},
		{"unexpected end", "{\n  \"version\": 1,\n", 3, 1, "unexpected end"},
		{"empty file", "", 1, 1, "unexpected end"},
		{"curly quotes", "{\n  \"servers\": {\"a\": {\"command\": “npx”}}}", 2, 32, "curly quotes"},
		{"garbage after value", "{}\n{}", 2, 1, "after top-level value"},
		{"after multibyte text", "{\"listen\": \"ünïcödé\" x}", 1, 22, "invalid character 'x'"},
		{"with byte order mark", "\xef\xbb\xbf{\n,}", 2, 1, "looking for beginning of object key"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("config.json", []byte(tt.in))
			e := asError(t, err)
			if e.Line != tt.line || e.Column != tt.col || e.Field != "" || e.File != "config.json" {
				t.Errorf("got %s:%d:%d field %q, want config.json:%d:%d, no field; error: %v",
					e.File, e.Line, e.Column, e.Field, tt.line, tt.col, err)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q does not contain %q", err, tt.msg)
			}
			var se *json.SyntaxError
			if tt.in != "" && !errors.As(err, &se) {
				t.Errorf("error does not wrap a *json.SyntaxError")
			}
		})
	}
}

// server wraps a server entry in a version 1 file, on line 4.
func server(entry string) string {
	return "{\n  \"version\": 1,\n  \"servers\": {\n    \"fs\": " + entry + "\n  }\n}"
}

// position returns the 1-based line and column (in characters) of the
// first occurrence of marker in s.
func position(t *testing.T, s, marker string) (line, col int) {
	t.Helper()
	i := strings.Index(s, marker)
	if i < 0 {
		t.Fatalf("marker %q not in %q", marker, s)
	}
	before := s[:i]
	line = strings.Count(before, "\n") + 1
	col = utf8.RuneCountInString(before[strings.LastIndex(before, "\n")+1:]) + 1
	return line, col
}

func TestTypeErrors(t *testing.T) {
	for _, tt := range []struct {
		name  string
		in    string
		field string
		at    string // the error points at the first occurrence of this
		msg   string
	}{
		{"pool max string", server(`{"command": "x", "pool": {"max": "two"}}`), "servers.fs.pool.max", `"two"`, `invalid value "two": expected an integer`},
		{"pool min float", server(`{"command": "x", "pool": {"min": 1.5}}`), "servers.fs.pool.min", `1.5`, "invalid value 1.5"},
		{"command number", server(`{"command": 7}`), "servers.fs.command", `7`, "expected a string"},
		{"args not array", server(`{"command": "x", "args": "-y"}`), "servers.fs.args", `"-y"`, "expected an array of strings"},
		{"args element", server(`{"command": "x", "args": ["-y", 1]}`), "servers.fs.args[1]", `1]`, "expected a string"},
		{"env value", server(`{"command": "x", "env": {"A": true}}`), "servers.fs.env.A", `true`, "invalid value (a boolean): expected a string"},
		{"env not object", server(`{"command": "x", "env": "TOKEN=secret"}`), "servers.fs.env", `"TOKEN`, "invalid value (a string): expected an object of strings"},
		{"env null value", server(`{"command": "x", "env": {"A": null}}`), "servers.fs.env.A", `null`, "invalid value (null): expected a string"},
		{"holdChangedTools string", server(`{"command": "x", "holdChangedTools": "no"}`), "servers.fs.holdChangedTools", `"no"`, "expected true or false"},
		{"enabled string", server(`{"command": "x", "enabled": "yes"}`), "servers.fs.enabled", `"yes"`, "expected true or false"},
		{"timeout number", server(`{"command": "x", "timeout": 30}`), "servers.fs.timeout", `30`, "duration"},
		{"timeout bad string", server(`{"command": "x", "timeout": "5 minutes"}`), "servers.fs.timeout", `"5 minutes"`, `invalid value "5 minutes"`},
		{"idleTimeout", server(`{"command": "x", "pool": {"idleTimeout": true}}`), "servers.fs.pool.idleTimeout", `true`, "duration"},
		{"pool not object", server(`{"command": "x", "pool": 2}`), "servers.fs.pool", `2}`, "expected a pool object"},
		{"disabledTools element", server(`{"command": "x", "disabledTools": [{}]}`), "servers.fs.disabledTools[0]", `{}`, "expected a string"},
		{"tiers not object", server(`{"command": "x", "tiers": ["read"]}`), "servers.fs.tiers", `["read"]`, "expected an object mapping tool names to tiers"},
		{"tier not string", server(`{"command": "x", "tiers": {"rm": true}}`), "servers.fs.tiers.rm", `true}`, "expected a tier"},
		{"server not object", server(`"npx"`), "servers.fs", `"npx"`, "expected a server object"},
		{"server null", server(`null`), "servers.fs", `null`, "expected a server object"},
		{"servers array", "{\"version\": 1, \"servers\": []}", "servers", `[]`, "expected an object"},
		{"listen number", "{\"version\": 1,\n\"listen\": 7391}", "listen", `7391`, "expected a string"},
		{"toolSearch string", "{\"version\": 1, \"toolSearch\": \"yes\"}", "toolSearch", `"yes"`, "expected true or false"},
		{"askTimeout number", "{\"version\": 1, \"askTimeout\": 30}", "askTimeout", `30`, "duration"},
		{"askBeforeDestructive string", server(`{"command": "x", "askBeforeDestructive": "yes"}`), "servers.fs.askBeforeDestructive", `"yes"`, "expected true or false"},
		{"version string", "{\"version\": \"1\"}", "version", `"1"`, "expected an integer"},
		{"negative version", "{\"version\": -1}", "version", `-1`, "must not be negative"},
		{"top level array", " [1]", "", `[`, "expected a JSON object"},
		{"duplicate server", server(`{"command": "x"}, "fs": {"command": "y"}`), "servers.fs", `"fs": {"command": "y"`, `duplicate key "fs"`},
		{"after multibyte text", "{\"version\": 1, \"listen\": \"ünï\", \"servers\": {\"é\": {\"command\": 1}}}", "servers.é.command", `1}`, "expected a string"},
		{"in migrated v0 file", "{\"mcpServers\": {\n\"fs\": {\"command\": \"x\", \"args\": [1]}}}", "servers.fs.args[0]", `1]`, "expected a string"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("config.json", []byte(tt.in))
			e := asError(t, err)
			line, col := position(t, tt.in, tt.at)
			if e.Field != tt.field || e.Line != line || e.Column != col {
				t.Errorf("got field %q at %d:%d, want %q at %d:%d; error: %v",
					e.Field, e.Line, e.Column, tt.field, line, col, err)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q does not contain %q", err, tt.msg)
			}
		})
	}
}

// validConfig returns a configuration that passes Validate, using every
// field.
func validConfig() *Config {
	return &Config{
		Version: CurrentVersion,
		Listen:  DefaultListen,
		Servers: map[string]Server{
			"fs": {
				Command:       "npx",
				Args:          []string{"-y", "server"},
				Env:           map[string]string{"DEBUG": "1"},
				Cwd:           "/tmp",
				Enabled:       ptr(true),
				Pool:          Pool{Mode: PoolShared, Min: 1, Max: 2, IdleTimeout: Duration{10 * time.Minute}},
				Timeout:       Duration{2 * time.Minute},
				DisabledTools: []string{"write_file"},
				Roots:         []string{"/home/me/src"},

				AskBeforeDestructive: true,
			},
		},
		SessionTimeout: Duration{45 * time.Minute},
		ToolSearch:     true,
		AskTimeout:     Duration{5 * time.Minute},
	}
}

func TestValidate(t *testing.T) {
	for _, tt := range []struct {
		name   string
		modify func(c *Config)
		field  string // "" means valid
	}{
		{"valid", func(c *Config) {}, ""},
		{"no servers", func(c *Config) { c.Servers = nil }, ""},
		{"askTimeout default", func(c *Config) { c.AskTimeout = Duration{} }, ""},
		{"askTimeout shortest", func(c *Config) { c.AskTimeout = Duration{time.Second} }, ""},
		{"askTimeout longest", func(c *Config) { c.AskTimeout = Duration{time.Hour} }, ""},
		{"askTimeout too short", func(c *Config) { c.AskTimeout = Duration{500 * time.Millisecond} }, "askTimeout"},
		{"askTimeout too long", func(c *Config) { c.AskTimeout = Duration{time.Hour + time.Second} }, "askTimeout"},
		{"askTimeout negative", func(c *Config) { c.AskTimeout = Duration{-time.Second} }, "askTimeout"},
		{"version", func(c *Config) { c.Version = 2 }, "version"},
		{"listen empty", func(c *Config) { c.Listen = "" }, "listen"},
		{"listen no port", func(c *Config) { c.Listen = "127.0.0.1" }, "listen"},
		{"listen all interfaces", func(c *Config) { c.Listen = ":7391" }, "listen"},
		{"listen 0.0.0.0", func(c *Config) { c.Listen = "0.0.0.0:7391" }, "listen"},
		{"listen LAN address", func(c *Config) { c.Listen = "192.168.1.2:7391" }, "listen"},
		{"listen named port", func(c *Config) { c.Listen = "127.0.0.1:http" }, "listen"},
		{"listen port too big", func(c *Config) { c.Listen = "127.0.0.1:65536" }, "listen"},
		{"listen ::1", func(c *Config) { c.Listen = "[::1]:7391" }, ""},
		{"listen localhost", func(c *Config) { c.Listen = "localhost:7391" }, ""},
		{"listen any port", func(c *Config) { c.Listen = "127.0.0.1:0" }, ""},
		{"name with space", func(c *Config) { c.Servers["my server"] = Server{Command: "x"} }, "servers.my server"},
		{"name with double underscore", func(c *Config) { c.Servers["a__b"] = Server{Command: "x"} }, "servers.a__b"},
		{"name starting with dash", func(c *Config) { c.Servers["-a"] = Server{Command: "x"} }, "servers.-a"},
		{"name empty", func(c *Config) { c.Servers[""] = Server{Command: "x"} }, "servers."},
		{"name too long", func(c *Config) { c.Servers[strings.Repeat("a", 49)] = Server{Command: "x"} }, "servers." + strings.Repeat("a", 49)},
		{"name longest", func(c *Config) { c.Servers[strings.Repeat("a", 48)] = Server{Command: "x"} }, ""},
		{"name with allowed punctuation", func(c *Config) { c.Servers["A1_b.c-d"] = Server{Command: "x"} }, ""},
		{"name non-ASCII", func(c *Config) { c.Servers["café"] = Server{Command: "x"} }, "servers.café"},
		{"alias", func(c *Config) { c.Servers["a-long-server-name"] = Server{Command: "x", Alias: "ls"} }, ""},
		{"alias invalid", func(c *Config) { c.Servers["b"] = Server{Command: "x", Alias: "l s"} }, "servers.b.alias"},
		{"alias taken by another server's name", func(c *Config) {
			c.Servers["ls"] = Server{Command: "x"}
			c.Servers["zz"] = Server{Command: "x", Alias: "ls"}
		}, "servers.zz.alias"},
		{"command empty", func(c *Config) { c.Servers["b"] = Server{} }, "servers.b.command"},
		{"command blank", func(c *Config) { c.Servers["b"] = Server{Command: "  "} }, "servers.b.command"},
		{"env empty key", func(c *Config) { c.Servers["b"] = Server{Command: "x", Env: map[string]string{"": "1"}} }, "servers.b.env"},
		{"env key with =", func(c *Config) { c.Servers["b"] = Server{Command: "x", Env: map[string]string{"A=B": "1"}} }, "servers.b.env"},
		{"pool mode", func(c *Config) { c.Servers["b"] = Server{Command: "x", Pool: Pool{Mode: "per-call"}} }, "servers.b.pool.mode"},
		{"pool mode session", func(c *Config) { c.Servers["b"] = Server{Command: "x", Pool: Pool{Mode: PoolSession}} }, ""},
		{"pool min negative", func(c *Config) { c.Servers["b"] = Server{Command: "x", Pool: Pool{Min: -1}} }, "servers.b.pool.min"},
		{"pool max negative", func(c *Config) { c.Servers["b"] = Server{Command: "x", Pool: Pool{Max: -1}} }, "servers.b.pool.max"},
		{"pool min above max", func(c *Config) { c.Servers["b"] = Server{Command: "x", Pool: Pool{Min: 3, Max: 2}} }, "servers.b.pool.max"},
		{"pool min with default max", func(c *Config) { c.Servers["b"] = Server{Command: "x", Pool: Pool{Min: 3}} }, ""},
		{"pool max 64", func(c *Config) { c.Servers["b"] = Server{Command: "x", Pool: Pool{Max: 64}} }, ""},
		{"pool max 65", func(c *Config) { c.Servers["b"] = Server{Command: "x", Pool: Pool{Max: 65}} }, "servers.b.pool.max"},
		{"pool min 65", func(c *Config) { c.Servers["b"] = Server{Command: "x", Pool: Pool{Min: 65}} }, "servers.b.pool.min"},
		{"idle timeout negative", func(c *Config) {
			c.Servers["b"] = Server{Command: "x", Pool: Pool{IdleTimeout: Duration{-time.Second}}}
		}, "servers.b.pool.idleTimeout"},
		{"timeout negative", func(c *Config) { c.Servers["b"] = Server{Command: "x", Timeout: Duration{-time.Second}} }, "servers.b.timeout"},
		{"tier override", func(c *Config) {
			c.Servers["b"] = Server{Command: "x", Tiers: map[string]tiers.Tier{"ls": tiers.Read, "rm": tiers.Destructive, "put": tiers.Write}}
		}, ""},
		{"tier override unknown", func(c *Config) { c.Servers["b"] = Server{Command: "x", Tiers: map[string]tiers.Tier{"ls": "safe"}} }, "servers.b.tiers.ls"},
		{"tier override empty tool", func(c *Config) { c.Servers["b"] = Server{Command: "x", Tiers: map[string]tiers.Tier{"": tiers.Read}} }, "servers.b.tiers."},
		{"disabled tool empty", func(c *Config) { c.Servers["b"] = Server{Command: "x", DisabledTools: []string{"a", ""}} }, "servers.b.disabledTools[1]"},
		{"secret env", func(c *Config) { c.Servers["b"] = Server{Command: "x", SecretEnv: []string{"API_KEY"}} }, ""},
		{"secret env also in env", func(c *Config) {
			c.Servers["b"] = Server{Command: "x", Env: map[string]string{"API_KEY": "x"}, SecretEnv: []string{"API_KEY"}}
		}, "servers.b.secretEnv[0]"},
		{"secret env name with =", func(c *Config) { c.Servers["b"] = Server{Command: "x", SecretEnv: []string{"A=B"}} }, "servers.b.secretEnv[0]"},
		{"install record", func(c *Config) {
			c.Servers["b"] = Server{Command: "x", Install: &Install{Entry: "io.github.x/y", Version: "1.0.0", Type: "npm"}}
		}, ""},
		{"install record without version", func(c *Config) {
			c.Servers["b"] = Server{Command: "x", Install: &Install{Entry: "io.github.x/y"}}
		}, "servers.b.install"},
		{"roots", func(c *Config) {
			c.Servers["b"] = Server{Command: "x", Roots: []string{"/home/me/src", "file:///tmp/x"}}
		}, ""},
		{"root relative", func(c *Config) { c.Servers["b"] = Server{Command: "x", Roots: []string{"/a", "src"}} }, "servers.b.roots[1]"},
		{"root empty", func(c *Config) { c.Servers["b"] = Server{Command: "x", Roots: []string{""}} }, "servers.b.roots[0]"},
		{"root http URI", func(c *Config) { c.Servers["b"] = Server{Command: "x", Roots: []string{"http://x/y"}} }, "servers.b.roots[0]"},
		{"root file URI without path", func(c *Config) { c.Servers["b"] = Server{Command: "x", Roots: []string{"file://"}} }, "servers.b.roots[0]"},
		{"session timeout", func(c *Config) { c.SessionTimeout = Duration{5 * time.Minute} }, ""},
		{"session timeout too short", func(c *Config) { c.SessionTimeout = Duration{time.Second} }, "sessionTimeout"},
		{"session timeout negative", func(c *Config) { c.SessionTimeout = Duration{-time.Minute} }, "sessionTimeout"},
		{"first problem in name order", func(c *Config) {
			c.Servers["z"] = Server{}
			c.Servers["a"] = Server{Pool: Pool{Max: -1}}
		}, "servers.a.command"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := validConfig()
			tt.modify(c)
			err := c.Validate()
			if tt.field == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate() = nil, want an error for %s", tt.field)
			}
			e := asError(t, err)
			if e.Field != tt.field {
				t.Errorf("Validate() field = %q, want %q (error: %v)", e.Field, tt.field, err)
			}
			if e.File != "" || e.Line != 0 {
				t.Errorf("Validate() error has a position: %v", err)
			}
		})
	}
}

func TestValidationErrorPositionInFile(t *testing.T) {
	for _, tt := range []struct {
		name  string
		in    string
		field string
		at    string // the error points at the first occurrence of this
	}{
		{"pool max points at its key", server(`{"command": "x", "pool": {"max": 100}}`), "servers.fs.pool.max", `"max"`},
		{"missing command points at the server", server(`{"args": []}`), "servers.fs.command", `"fs"`},
		{"bad name", "{\"version\": 1, \"servers\": {\n  \"a b\": {\"command\": \"x\"}}}", "servers.a b", `"a b"`},
		{"listen", "{\"version\": 1,\n \"listen\": \"0.0.0.0:1\"}", "listen", `"listen"`},
		{"disabled tool", server(`{"command": "x", "disabledTools": ["a", ""]}`), "servers.fs.disabledTools[1]", `""]`},
		{"tier override", server(`{"command": "x", "tiers": {"rm": "gone"}}`), "servers.fs.tiers.rm", `"rm"`},
		{"env key", server(`{"command": "x", "env": {"A=B": ""}}`), "servers.fs.env", `"env"`},
		{"migrated v0", "{\"mcpServers\": {\n  \"fs\": {\"command\": \"\"}}}", "servers.fs.command", `"command"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("config.json", []byte(tt.in))
			e := asError(t, err)
			line, col := position(t, tt.in, tt.at)
			if e.File != "config.json" || e.Field != tt.field || e.Line != line || e.Column != col {
				t.Errorf("got %s field %q at %d:%d, want config.json field %q at %d:%d; error: %v",
					e.File, e.Field, e.Line, e.Column, tt.field, line, col, err)
			}
		})
	}
}

func TestParseNormalizes(t *testing.T) {
	in := `{"version": 1, "listen": "", "servers": {"a": {"command": "x", "args": [], "env": {}, "enabled": null, "pool": null, "disabledTools": null}}}`
	cfg, err := Parse("config.json", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := &Config{Version: 1, Listen: DefaultListen, Servers: map[string]Server{"a": {Command: "x"}}}
	if diff := cmp.Diff(want, cfg, cmpOpts); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
	cfg, err = Parse("config.json", []byte(`{"version": 1}`))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Default(), cfg, cmpOpts); diff != "" {
		t.Errorf("minimal file mismatch (-want +got):\n%s", diff)
	}
}

func TestNewerVersionRefused(t *testing.T) {
	const in = "{\n  \"version\": 7,\n  \"servers\": {\"a\": {\"command\": \"x\", \"new\": true}}\n}\n"
	path := filepath.Join(t.TempDir(), FileName)
	if err := os.WriteFile(path, []byte(in), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(path)
	if err == nil {
		t.Fatalf("Load() = %+v, want an error", cfg)
	}
	if !errors.Is(err, ErrNewerVersion) {
		t.Errorf("error %v does not match ErrNewerVersion", err)
	}
	const msg = "config.json is version 7, newer than this Switchboard (version 1); upgrade Switchboard"
	if !strings.Contains(err.Error(), msg) {
		t.Errorf("error %q does not contain %q", err, msg)
	}
	if e := asError(t, err); e.Line != 2 || e.Column != 14 || e.Field != "version" || e.File != path {
		t.Errorf("error position %s:%d:%d field %q, want %s:2:14 field version", e.File, e.Line, e.Column, e.Field, path)
	}
	if got, _ := os.ReadFile(path); string(got) != in {
		t.Errorf("newer file was modified:\n%s", got)
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Errorf("directory has %d entries, want only the config file", len(entries))
	}
}

func TestDuration(t *testing.T) {
	for _, tt := range []struct {
		d    time.Duration
		want string
	}{
		{0, `"0s"`},
		{500 * time.Millisecond, `"500ms"`},
		{90 * time.Second, `"1m30s"`},
		{10 * time.Minute, `"10m"`},
		{time.Hour, `"1h"`},
		{90 * time.Minute, `"1h30m"`},
		{time.Hour + 30*time.Second, `"1h0m30s"`},
		{1500 * time.Millisecond, `"1.5s"`},
	} {
		got, err := json.Marshal(Duration{tt.d})
		if err != nil || string(got) != tt.want {
			t.Errorf("Marshal(%v) = %s, %v; want %s", tt.d, got, err, tt.want)
			continue
		}
		var back Duration
		if err := json.Unmarshal(got, &back); err != nil || back.Duration != tt.d {
			t.Errorf("Unmarshal(%s) = %v, %v; want %v", got, back.Duration, err, tt.d)
		}
	}
	for _, in := range []string{`90`, `"90"`, `"ten minutes"`, `true`, `{}`} {
		var d Duration
		if err := json.Unmarshal([]byte(in), &d); err == nil {
			t.Errorf("Unmarshal(%s) = %v, want an error", in, d.Duration)
		}
	}
	d := Duration{time.Second}
	if err := json.Unmarshal([]byte(`null`), &d); err != nil || d.Duration != time.Second {
		t.Errorf("Unmarshal(null) = %v, %v; want unchanged 1s", d.Duration, err)
	}
}

func TestErrorString(t *testing.T) {
	inner := errors.New("boom")
	for _, tt := range []struct {
		e    Error
		want string
	}{
		{Error{File: "config.json", Line: 3, Column: 17, Field: "servers.fs.pool.max", Err: inner}, "config.json:3:17: servers.fs.pool.max: boom"},
		{Error{File: "config.json", Field: "listen", Err: inner}, "config.json: listen: boom"},
		{Error{File: "config.json", Line: 3, Err: inner}, "config.json:3: boom"},
		{Error{Line: 3, Column: 1, Err: inner}, "3:1: boom"},
		{Error{Field: "listen", Err: inner}, "listen: boom"},
		{Error{Err: inner}, "boom"},
		{Error{Field: "listen"}, "listen: invalid"},
	} {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
		if tt.e.Err != nil && !errors.Is(&tt.e, inner) {
			t.Errorf("%q does not unwrap to its Err", tt.e.Error())
		}
	}
}

func TestClone(t *testing.T) {
	orig, err := Parse("config.json", []byte(unknownFieldsIn))
	if err != nil {
		t.Fatal(err)
	}
	s := orig.Servers["fs"]
	s.Enabled = ptr(true)
	s.Env = map[string]string{"A": "1"}
	s.DisabledTools = []string{"t"}
	s.Tiers = map[string]tiers.Tier{"t": tiers.Read}
	orig.Servers["fs"] = s
	snapshot, _ := orig.encode()

	c := orig.Clone()
	if diff := cmp.Diff(orig, c, cmpOpts); diff != "" {
		t.Fatalf("clone differs (-orig +clone):\n%s", diff)
	}
	cs := c.Servers["fs"]
	cs.Args[0] = "changed"
	cs.Env["A"] = "changed"
	*cs.Enabled = false
	cs.DisabledTools[0] = "changed"
	cs.Tiers["t"] = tiers.Destructive
	cs.extra["x-note"][1] = 'X'
	cs.Pool.extra["x-future"][1] = 'X'
	c.extra["alpha"][1] = 'X'
	c.Servers["new"] = Server{Command: "y"}
	c.Listen = "changed"

	if after, _ := orig.encode(); string(after) != string(snapshot) {
		t.Errorf("changing the clone changed the original:\n%s", after)
	}
	if (*Config)(nil).Clone() != nil {
		t.Errorf("nil.Clone() != nil")
	}
}

func TestDiffServers(t *testing.T) {
	old := &Config{Servers: map[string]Server{
		"same":    {Command: "a", Args: []string{}},
		"changed": {Command: "a"},
		"extra":   {Command: "a"},
		"gone":    {Command: "a"},
		"gone2":   {Command: "a"},
	}}
	extra, err := Parse("x", []byte(`{"version":1,"servers":{"extra":{"command":"a","x":1}}}`))
	if err != nil {
		t.Fatal(err)
	}
	new := &Config{Servers: map[string]Server{
		"same":    {Command: "a"},
		"changed": {Command: "a", Enabled: ptr(false)},
		"extra":   extra.Servers["extra"],
		"new":     {Command: "b"},
		"another": {Command: "b"},
	}}
	added, changed, removed := DiffServers(old, new)
	if diff := cmp.Diff([]string{"another", "new"}, added); diff != "" {
		t.Errorf("added (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"changed", "extra"}, changed); diff != "" {
		t.Errorf("changed (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"gone", "gone2"}, removed); diff != "" {
		t.Errorf("removed (-want +got):\n%s", diff)
	}
	added, changed, removed = DiffServers(nil, old)
	if len(added) != 5 || changed != nil || removed != nil {
		t.Errorf("DiffServers(nil, old) = %v, %v, %v", added, changed, removed)
	}
}

func TestJSONMarshalUnmarshal(t *testing.T) {
	cfg, err := Parse("config.json", []byte(unknownFieldsIn))
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var back Config
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(cfg, &back, cmpOpts); diff != "" {
		t.Errorf("JSON round trip mismatch (-want +got):\n%s", diff)
	}

	// A Server on its own, as a GUI would send it.
	var s Server
	if err := json.Unmarshal([]byte(`{"command": "npx", "timeout": "90s", "custom": [1]}`), &s); err != nil {
		t.Fatal(err)
	}
	if s.Command != "npx" || s.Timeout.Duration != 90*time.Second || string(s.extra["custom"]) != "[1]" {
		t.Errorf("Unmarshal Server = %+v", s)
	}
	err = json.Unmarshal([]byte(`{"command": "npx", "pool": {"max": "two"}}`), &s)
	if e := asError(t, err); e.Field != "pool.max" {
		t.Errorf("Unmarshal Server error field = %q, want pool.max", e.Field)
	}
}

// An installed server keeps its secret names and install record through a
// save and a load; the secrets themselves are never in the file.
func TestInstalledServerRoundTrip(t *testing.T) {
	cfg := Default()
	cfg.Servers["github"] = Server{Command: "/usr/bin/node", Args: []string{"/data/servers/github/1.2.0/index.js"},
		SecretEnv: []string{"GITHUB_TOKEN"},
		Install:   &Install{Entry: "io.github.github/github-mcp-server", Version: "1.2.0", Type: "npm"}}
	path, data := saveAndRead(t, cfg)
	for _, want := range []string{`"secretEnv": [`, `"GITHUB_TOKEN"`, `"install": {`, `"entry": "io.github.github/github-mcp-server"`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("saved file lacks %s:\n%s", want, data)
		}
	}
	again, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(cfg, again, cmpOpts); diff != "" {
		t.Errorf("reloaded config mismatch (-want +got):\n%s", diff)
	}
	for _, bad := range []string{`{"version":1,"servers":{"a":{"command":"x","install":"npm"}}}`,
		`{"version":1,"servers":{"a":{"command":"x","secretEnv":"KEY"}}}`} {
		if _, err := Parse("config.json", []byte(bad)); err == nil {
			t.Errorf("Parse(%s): no error", bad)
		}
	}
}

func TestHistorySettings(t *testing.T) {
	cfg := Default()
	cfg.History = History{MaxAge: Duration{7 * 24 * time.Hour}, MaxBytes: 256 << 20}
	path, data := saveAndRead(t, cfg)
	if !strings.Contains(string(data), `"maxAge": "168h"`) || !strings.Contains(string(data), `"maxBytes": 268435456`) {
		t.Errorf("saved:\n%s", data)
	}
	again, err := Load(path)
	if err != nil || again.History != cfg.History {
		t.Fatalf("reloaded: %+v %v", again.History, err)
	}
	for _, tt := range []struct{ json, field string }{
		{`{"version":1,"history":{"maxAge":"-1h"}}`, "history.maxAge"},
		{`{"version":1,"history":{"maxBytes":10}}`, "history.maxBytes"},
		{`{"version":1,"history":"30d"}`, "history"},
	} {
		if _, err := Parse("config.json", []byte(tt.json)); err == nil || !strings.Contains(err.Error(), tt.field) {
			t.Errorf("Parse(%s) = %v, want an error naming %s", tt.json, err, tt.field)
		}
	}
}

func TestToolSearchSetting(t *testing.T) {
	cfg := Default()
	if cfg.ToolSearch {
		t.Fatal("search mode is on by default")
	}
	cfg.ToolSearch = true
	path, data := saveAndRead(t, cfg)
	if !strings.Contains(string(data), `"toolSearch": true`) {
		t.Errorf("saved:\n%s", data)
	}
	again, err := Load(path)
	if err != nil || !again.ToolSearch || !again.Clone().ToolSearch {
		t.Fatalf("reloaded: %v %v", again, err)
	}
	again.ToolSearch = false
	if err := again.Save(path); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(path); strings.Contains(string(data), "toolSearch") {
		t.Errorf("off is written (it is the default):\n%s", data)
	}
}

func TestTierOverridesRoundTrip(t *testing.T) {
	in := server(`{"command": "x", "tiers": {"write_file": "write", "list": "read", "drop": "destructive"}}`)
	cfg, err := Parse("config.json", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]tiers.Tier{"write_file": tiers.Write, "list": tiers.Read, "drop": tiers.Destructive}
	if diff := cmp.Diff(want, cfg.Servers["fs"].Tiers); diff != "" {
		t.Fatalf("parsed tiers (-want +got):\n%s", diff)
	}
	path, got := saveAndRead(t, cfg)
	if !strings.Contains(string(got), `"tiers": {
        "drop": "destructive",
        "list": "read",
        "write_file": "write"
      }`) {
		t.Errorf("saved file has no sorted tiers object:\n%s", got)
	}
	again, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(cfg, again, cmpOpts); diff != "" {
		t.Errorf("reloaded (-want +got):\n%s", diff)
	}
}
