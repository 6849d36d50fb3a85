package daemon

import (
	"log/slog"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app/tiers"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/switchboardhq/switchboard/app/config"
	"github.com/switchboardhq/switchboard/app/gateway"
	"github.com/switchboardhq/switchboard/app/secrets"
	"github.com/switchboardhq/switchboard/supervisor"
)

func TestSpecsAndGatewayConfigs(t *testing.T) {
	off := false
	cfg := config.Default()
	cfg.Servers = map[string]config.Server{
		"fs": {Command: "npx", Args: []string{"-y", "fs"}, Env: map[string]string{"A": "1"}, Cwd: "/tmp",
			Pool:    config.Pool{Mode: "session", Min: 1, Max: 3, IdleTimeout: config.Duration{Duration: time.Minute}},
			Timeout: config.Duration{Duration: 30 * time.Second}, DisabledTools: []string{"rm"}, Alias: "f", Roots: []string{"/srv"},
			Tiers: map[string]tiers.Tier{"ls": tiers.Read}},
		"off":  {Command: "x", Enabled: &off},
		"lazy": {Command: "y"},
	}
	wantSpecs := []supervisor.Spec{{Name: "fs", Command: "npx", Args: []string{"-y", "fs"}, Env: map[string]string{"A": "1"},
		Dir: "/tmp", Pool: supervisor.PoolSpec{Mode: supervisor.ModeSession, Min: 1, Max: 3, IdleTimeout: time.Minute}},
		{Name: "lazy", Command: "y", Pool: supervisor.PoolSpec{IdleTimeout: DefaultPoolIdleTimeout}}}
	byName := func(a, b supervisor.Spec) bool { return a.Name < b.Name }
	if diff := cmp.Diff(wantSpecs, Specs(cfg), cmpopts.SortSlices(byName)); diff != "" {
		t.Errorf("Specs (-want +got):\n%s", diff)
	}
	wantGW := []gateway.ServerConfig{{Name: "fs", Alias: "f", Mode: supervisor.ModeSession, Timeout: 30 * time.Second, DisabledTools: []string{"rm"},
		IdleTimeout: time.Minute, Roots: []string{"/srv"}, Tiers: map[string]tiers.Tier{"ls": tiers.Read}}, {Name: "lazy"}}
	if diff := cmp.Diff(wantGW, GatewayConfigs(cfg), cmpopts.EquateEmpty(),
		cmpopts.SortSlices(func(a, b gateway.ServerConfig) bool { return a.Name < b.Name })); diff != "" {
		t.Errorf("GatewayConfigs (-want +got):\n%s", diff)
	}
	cfg.Profiles = map[string]config.Profile{"small": {Servers: []string{"fs"}, Tools: map[string][]string{"fs": {"read"}}, ToolSearch: true, MaxTier: tiers.Write}}
	wantProfiles := []gateway.ProfileConfig{{Name: "small", Servers: []string{"fs"}, Tools: map[string][]string{"fs": {"read"}}, ToolSearch: true, MaxTier: tiers.Write}}
	if diff := cmp.Diff(wantProfiles, ProfileConfigs(cfg)); diff != "" {
		t.Errorf("ProfileConfigs (-want +got):\n%s", diff)
	}
}

func TestResolveHome(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv(HomeEnv, "")
	flagDir, envDir := filepath.Join(home, "flag"), filepath.Join(home, "env")

	if got, _ := ResolveHome(flagDir); got != flagDir {
		t.Errorf("--home: %s", got)
	}
	t.Setenv(HomeEnv, envDir)
	if got, _ := ResolveHome(""); got != envDir {
		t.Errorf("$%s: %s", HomeEnv, got)
	}
	if got, _ := ResolveHome(flagDir); got != flagDir {
		t.Errorf("--home must win over $%s: %s", HomeEnv, got)
	}
	t.Setenv(HomeEnv, "")
	if runtime.GOOS == "linux" {
		if got, _ := ResolveHome(""); got != filepath.Join(home, ".local", "share", "switchboard") {
			t.Errorf("default: %s", got)
		}
		t.Setenv("XDG_DATA_HOME", filepath.Join(home, "xdg"))
		if got, _ := ResolveHome(""); got != filepath.Join(home, "xdg", "switchboard") {
			t.Errorf("XDG default: %s", got)
		}
	}
}

// A server's secrets reach its environment and its arguments at start, and
// only there: the config keeps their names.
func TestSpecsWithSecrets(t *testing.T) {
	store, err := secrets.Open(t.Context(), secrets.Options{Dir: t.TempDir(), NoKeychain: true})
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"GITHUB_TOKEN": "ghp_123", "DB_PASSWORD": "hunter2"} {
		if err := store.Set("gh", k, v); err != nil {
			t.Fatal(err)
		}
	}
	cfg := config.Default()
	cfg.Servers = map[string]config.Server{
		"gh": {Command: "node", Args: []string{"server.js", "--password=" + secrets.Placeholder("DB_PASSWORD")},
			Env: map[string]string{"A": "1"}, SecretEnv: []string{"GITHUB_TOKEN"}},
		"missing": {Command: "node", SecretEnv: []string{"NOPE"}},
		"plain":   {Command: "node"},
	}
	specs := map[string]supervisor.Spec{}
	for _, sp := range withSecrets(slog.New(slog.DiscardHandler), Specs(cfg), cfg, store) {
		specs[sp.Name] = sp
	}
	if diff := cmp.Diff(map[string]string{"A": "1", "GITHUB_TOKEN": "ghp_123"}, specs["gh"].Env); diff != "" {
		t.Errorf("gh env (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"server.js", "--password=hunter2"}, specs["gh"].Args); diff != "" {
		t.Errorf("gh args (-want +got):\n%s", diff)
	}
	if _, ok := specs["missing"].Env["NOPE"]; ok || specs["plain"].Env != nil {
		t.Errorf("missing: %v, plain: %v", specs["missing"].Env, specs["plain"].Env)
	}
	if cfg.Servers["gh"].Env["GITHUB_TOKEN"] != "" {
		t.Error("the config was changed")
	}
}

// A remote server becomes a remote spec; its secret headers are read from
// the secret store at start, and only there.
func TestRemoteSpecsWithSecretHeaders(t *testing.T) {
	store, err := secrets.Open(t.Context(), secrets.Options{Dir: t.TempDir(), NoKeychain: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Set("lin", "lin-token", "Bearer lin_123"); err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.Servers = map[string]config.Server{
		"lin": {URL: "https://mcp.linear.app/mcp", Transport: config.TransportStreamableHTTP, Headers: map[string]string{"X-Team": "a"},
			SecretHeaders: map[string]string{"Authorization": "lin-token", "X-Missing": "nope"}, DisabledTools: []string{"x"}},
	}
	specs := withSecrets(slog.New(slog.DiscardHandler), Specs(cfg), cfg, store)
	want := []supervisor.Spec{{Name: "lin", Pool: supervisor.PoolSpec{IdleTimeout: DefaultPoolIdleTimeout},
		Remote: &supervisor.RemoteSpec{URL: "https://mcp.linear.app/mcp", Transport: supervisor.RemoteStreamableHTTP,
			Headers: map[string]string{"X-Team": "a", "Authorization": "Bearer lin_123"}}}}
	if diff := cmp.Diff(want, specs); diff != "" {
		t.Errorf("remote specs (-want +got):\n%s", diff)
	}
	if _, ok := cfg.Servers["lin"].Headers["Authorization"]; ok {
		t.Error("the config was changed")
	}
	if gw := GatewayConfigs(cfg); len(gw) != 1 || gw[0].Name != "lin" || len(gw[0].DisabledTools) != 1 {
		t.Errorf("GatewayConfigs = %+v, want the remote server with its settings", gw)
	}
	if err := specs[0].Validate(); err != nil {
		t.Errorf("the remote spec does not validate: %v", err)
	}
}
