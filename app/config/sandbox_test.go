package config

import (
	"encoding/json"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestSandboxRoundTrip(t *testing.T) {
	// Absolute on this OS (C:\opt\models on Windows), as JSON strings.
	abs := func(p string) string {
		if runtime.GOOS == "windows" {
			p = `C:` + filepath.FromSlash(p)
		}
		q, _ := json.Marshal(p)
		return string(q)
	}
	for _, tc := range []struct {
		name, sandbox string
		confined      bool
	}{
		{"off", `false`, false},
		{"on", `true`, true},
		{"extra paths", `{"read":[` + abs("/opt/models") + `],"write":[` + abs("/srv/out") + `],"network":true}`, true},
		{"network only", `{"network":false}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := `{"version":1,"sandboxDefault":"off","servers":{"s":{"command":"x","sandbox":` + tc.sandbox + `}}}`
			cfg, err := Parse("config.json", []byte(in))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if got := cfg.Servers["s"].IsConfined(cfg.SandboxDefault); got != tc.confined {
				t.Errorf("IsConfined = %v, want %v", got, tc.confined)
			}
			out, err := json.Marshal(cfg.Clone())
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(out), `"sandbox":`+tc.sandbox) || !strings.Contains(string(out), `"sandboxDefault":"off"`) {
				t.Errorf("encoded %s, want sandbox %s kept", out, tc.sandbox)
			}
		})
	}
}

func TestSandboxDefaults(t *testing.T) {
	hand := Server{Command: "x"}
	installed := Server{Command: "x", Install: &Install{Entry: "e", Version: "1"}}
	for _, tc := range []struct {
		name string
		s    Server
		def  string
		want bool
	}{
		{"by hand, no default", hand, "", false},
		{"by hand, default confined", hand, SandboxConfined, true},
		{"catalog install", installed, SandboxOff, true},
		{"catalog install turned off", Server{Command: "x", Install: installed.Install, Sandbox: &Sandbox{Off: true}}, "", false},
	} {
		if got := tc.s.IsConfined(tc.def); got != tc.want {
			t.Errorf("%s: IsConfined = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestSandboxInvalid(t *testing.T) {
	for _, tc := range []struct{ in, field string }{
		{`{"version":1,"servers":{"s":{"command":"x","sandbox":{"read":["rel/path"]}}}}`, "servers.s.sandbox.read[0]"},
		{`{"version":1,"servers":{"s":{"command":"x","sandbox":{"exec":[]}}}}`, "servers.s.sandbox.exec"},
		{`{"version":1,"servers":{"s":{"command":"x","sandbox":"yes"}}}`, "servers.s.sandbox"},
		{`{"version":1,"sandboxDefault":"maybe","servers":{}}`, "sandboxDefault"},
	} {
		_, err := Parse("config.json", []byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("Parse(%s) = %v, want an error naming %s", tc.in, err, tc.field)
		}
	}
}
