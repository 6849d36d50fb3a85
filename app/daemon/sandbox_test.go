package daemon

import (
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/switchboardhq/switchboard/app/config"
	"github.com/switchboardhq/switchboard/supervisor"
)

func TestConfinementPolicies(t *testing.T) {
	userHome := t.TempDir()
	t.Setenv("HOME", userHome)
	t.Setenv("USERPROFILE", userHome) // os.UserHomeDir on Windows
	home := filepath.Join(userHome, ".switchboard")
	granted := filepath.Join(userHome, "projects")
	if err := os.MkdirAll(granted, 0o700); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(userHome, "tools", "index.js")
	if err := os.MkdirAll(filepath.Dir(script), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(script, []byte("//"), 0o600); err != nil {
		t.Fatal(err)
	}
	tokens := filepath.Join(home, "tokens.json")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tokens, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	installed := func(entry string) *config.Install { return &config.Install{Entry: entry, Version: "1"} }
	yes := true
	cfg := &config.Config{Servers: map[string]config.Server{
		"filesystem": {Command: "node", Args: []string{script, granted, tokens}, Install: installed("io.github.modelcontextprotocol/server-filesystem")},
		"fetch":      {Command: "uvx", Install: installed("io.github.modelcontextprotocol/server-fetch")},
		"registry":   {Command: "npx", Install: installed("io.example/unknown")},
		"byhand":     {Command: "my-server"},
		"opted":      {Command: "my-server", Sandbox: &config.Sandbox{Read: []string{"/opt/models"}, Network: &yes}},
		"off":        {Command: "node", Install: installed("io.github.modelcontextprotocol/server-memory"), Sandbox: &config.Sandbox{Off: true}},
	}}
	sb := newSandboxer(home, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 7391}, slog.New(slog.DiscardHandler))
	specs := map[string]supervisor.Spec{}
	for _, sp := range sb.withConfinement(slog.New(slog.DiscardHandler), Specs(cfg), cfg) {
		specs[sp.Name] = sp
	}
	for _, name := range []string{"byhand", "off"} {
		if specs[name].Confine != nil {
			t.Errorf("%s is confined; want it not", name)
		}
	}
	fs := specs["filesystem"]
	if fs.Confine == nil {
		t.Fatal("filesystem is not confined")
	}
	tmp := filepath.Join(home, SandboxDir, "filesystem", "tmp")
	if fs.Env["TMPDIR"] != tmp {
		t.Errorf("TMPDIR = %q, want %q", fs.Env["TMPDIR"], tmp)
	}
	if _, err := os.Stat(tmp); err != nil {
		t.Errorf("temp dir: %v", err)
	}
	for _, w := range []string{granted, tmp, filepath.Join(home, "servers", "filesystem", "data")} {
		if !slices.Contains(fs.Confine.Write, w) {
			t.Errorf("filesystem writes %v, want %s in it", fs.Confine.Write, w)
		}
	}
	for _, list := range [][]string{fs.Confine.Read, fs.Confine.Write} {
		for _, p := range list {
			if p == tokens || p == home || p == userHome {
				t.Errorf("filesystem policy grants %s", p)
			}
		}
	}
	if !slices.Contains(fs.Confine.Read, script) || slices.Contains(fs.Confine.Write, script) {
		t.Errorf("filesystem policy %+v; want its script %s read-only", fs.Confine, script)
	}
	if fs.Confine.Network {
		t.Error("filesystem has network")
	}
	for name, want := range map[string]bool{"fetch": true, "registry": true, "opted": true} {
		if sp := specs[name]; sp.Confine == nil || sp.Confine.Network != want || !slices.Equal(sp.Confine.DenyPorts, []uint16{7391}) {
			t.Errorf("%s policy = %+v, want confined with network %v and the daemon's port 7391 denied", name, sp.Confine, want)
		}
	}
	if !slices.Contains(specs["opted"].Confine.Read, "/opt/models") {
		t.Errorf("opted reads %v, want /opt/models", specs["opted"].Confine.Read)
	}
	if !slices.Contains(specs["registry"].Confine.Write, filepath.Join(userHome, ".npm")) {
		t.Errorf("an npx server writes %v, want ~/.npm", specs["registry"].Confine.Write)
	}

	cfg.SandboxDefault = config.SandboxConfined
	for _, sp := range sb.withConfinement(slog.New(slog.DiscardHandler), Specs(cfg), cfg) {
		if sp.Name == "byhand" && (sp.Confine == nil || sp.Confine.Network) {
			t.Errorf("with sandboxDefault confined, byhand policy = %+v; want confined without network", sp.Confine)
		}
	}
}
