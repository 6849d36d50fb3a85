package daemon

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/app/config"
)

func TestConfigChanges(t *testing.T) {
	off := false
	base := map[string]config.Server{
		"fs":   {Command: "node", Args: []string{"fs.js"}},
		"git":  {Command: "uvx", Args: []string{"mcp-server-git"}},
		"time": {Command: "uvx", Args: []string{"mcp-server-time"}},
	}
	edit := func(f func(m map[string]config.Server)) map[string]config.Server {
		m := map[string]config.Server{}
		for k, v := range base {
			v.Args = append([]string(nil), v.Args...)
			m[k] = v
		}
		f(m)
		return m
	}
	for _, tc := range []struct {
		name string
		next map[string]config.Server
		want []configChange
	}{
		{"same", edit(func(map[string]config.Server) {}), nil},
		{"added and removed", edit(func(m map[string]config.Server) {
			delete(m, "git")
			m["memory"] = config.Server{Command: "node"}
		}), []configChange{{"git", "removed from the config"}, {"memory", "added to the config"}}},
		{"disabled", edit(func(m map[string]config.Server) {
			s := m["fs"]
			s.Enabled = &off
			m["fs"] = s
		}), []configChange{{"fs", "disabled in the config"}}},
		{"changed", edit(func(m map[string]config.Server) {
			s := m["time"]
			s.Args[0] = "mcp-server-time==2026.8.18"
			m["time"] = s
		}), []configChange{{"time", "changed in the config"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := configChanges(base, tc.next)
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(configChange{})); diff != "" {
				t.Errorf("configChanges (-want +got):\n%s", diff)
			}
		})
	}
	if got := configChanges(map[string]config.Server{"fs": {Command: "node", Enabled: &off}}, base)[0]; got.message != "enabled in the config" {
		t.Errorf("enabling fs: %q", got.message)
	}
}

func TestRelaunchedServers(t *testing.T) {
	off := false
	prev := map[string]config.Server{
		"fs":   {Command: "node", Args: []string{"fs.js"}, Install: &config.Install{Entry: "fs", Version: "1.0.0"}},
		"git":  {Command: "uvx", Args: []string{"mcp-server-git"}},
		"time": {Command: "uvx", Args: []string{"mcp-server-time"}},
		"off":  {Command: "x", Enabled: &off},
		"r":    {URL: "https://r.example/mcp", OAuth: &config.OAuth{ClientID: "a"}},
		"s":    {URL: "https://s.example/mcp", OAuth: &config.OAuth{ClientID: "a"}},
	}
	next := map[string]config.Server{
		"r":    {URL: "https://r.example/mcp", OAuth: &config.OAuth{ClientID: "b"}},                                 // another OAuth client
		"s":    {URL: "https://s.example/mcp", OAuth: &config.OAuth{ClientID: "a"}},                                 // the same
		"fs":   {Command: "node", Args: []string{"fs.js"}, Install: &config.Install{Entry: "fs", Version: "1.1.0"}}, // updated
		"git":  {Command: "uvx", Args: []string{"mcp-server-git"}, DisabledTools: []string{"git_push"}},             // same program
		"time": {Command: "uvx", Args: []string{"mcp-server-time"}, Env: map[string]string{"TZ": "UTC"}},            // new environment
		"off":  {Command: "y", Enabled: &off},                                                                       // not running
		"new":  {Command: "z"},                                                                                      // listed as new anyway
	}
	if got, want := relaunchedServers(prev, next), []string{"fs", "r", "time"}; !slices.Equal(got, want) {
		t.Errorf("relaunchedServers = %v, want %v", got, want)
	}
}
