package daemon

import (
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/switchboardhq/switchboard/app/config"
	"github.com/switchboardhq/switchboard/app/gateway"
	"github.com/switchboardhq/switchboard/app/internal/testutil"
)

// TestProfileWarningsLoggedWhenNew: what a profile names that its endpoint
// leaves out (a tool its server does not offer, a server not installed or
// not enabled) is logged when the finding is new — first seen, or changed
// by a profile edit, a relist or a server installed or removed — and not
// again for a config applied that changes none of it (the same config, a
// setting toggled: every settings change applies the config). A finding
// fixed and then back is logged again.
func TestProfileWarningsLoggedWhenNew(t *testing.T) {
	logs := &testutil.SyncBuffer{}
	var mu sync.Mutex
	lists := map[string][]gateway.ToolInfo{}
	setList := func(server string, tools ...string) {
		mu.Lock()
		defer mu.Unlock()
		lists[server] = nil
		for _, name := range tools {
			lists[server] = append(lists[server], gateway.ToolInfo{Name: name})
		}
	}
	p := &profileWarnings{log: slog.New(slog.NewTextHandler(logs, nil)), tools: func(server string) []gateway.ToolInfo {
		mu.Lock()
		defer mu.Unlock()
		return lists[server]
	}}
	cfg := config.Default()
	cfg.Servers["fs"] = config.Server{Command: "fs-server"}
	cfg.Servers["git"] = config.Server{Command: "git-server"}
	cfg.Profiles = map[string]config.Profile{"coding": {Servers: []string{"fs", "git", "web"},
		Tools: map[string][]string{"fs": {"read_file", "typo_tool"}, "git": {"git_log"}}}}

	const (
		toolWarning   = "a profile names tools its server does not offer"
		serverWarning = "a profile names servers that are not installed or not enabled"
	)
	// expect checks the lines logged since the last call: the tools and
	// servers warnings counted, and each of want in them.
	seen := 0
	expect := func(step string, tools, servers int, want ...string) {
		t.Helper()
		all := logs.String()
		fresh := all[seen:]
		seen = len(all)
		if n, m := strings.Count(fresh, toolWarning), strings.Count(fresh, serverWarning); n != tools || m != servers {
			t.Errorf("%s: %d tools and %d servers warnings, want %d and %d:\n%s", step, n, m, tools, servers, fresh)
		}
		for _, w := range want {
			if !strings.Contains(fresh, w) {
				t.Errorf("%s: no %q in:\n%s", step, w, fresh)
			}
		}
	}
	apply := func(edit func(c *config.Config)) {
		next := cfg.Clone()
		edit(next)
		cfg = next
		p.applied(cfg)
	}
	same := func(*config.Config) {}

	p.applied(cfg) // nothing listed yet
	expect("the first config, nothing listed", 0, 1, "profile=coding servers=[web]")

	setList("fs", "read_file", "write_file")
	setList("git", "git_log")
	p.listed("fs")
	p.listed("fs") // a relist finding the same
	p.listed("git")
	expect("fs and git listed, fs twice", 1, 0, "profile=coding server=fs tools=[typo_tool]")

	apply(same)
	apply(same)
	expect("the same config applied twice", 0, 0)
	apply(func(c *config.Config) { c.ToolSearch = !c.ToolSearch; c.History.KeepSecretValues = true })
	expect("a settings-only change", 0, 0)
	apply(func(c *config.Config) { c.Servers["extra"] = config.Server{Command: "extra-server"} })
	expect("a server the profile does not name installed", 0, 0)

	// A profile edit that changes the finding is one new line; one that
	// leaves it as it was (a valid tool added, the order changed) none.
	apply(func(c *config.Config) {
		c.Profiles["coding"] = config.Profile{Servers: c.Profiles["coding"].Servers,
			Tools: map[string][]string{"fs": {"read_file", "typo_tool", "other_typo"}, "git": {"git_log"}}}
	})
	expect("a profile edit adding a typo", 1, 0, "server=fs tools=\"[typo_tool other_typo]\"")
	apply(func(c *config.Config) {
		c.Profiles["coding"] = config.Profile{Servers: []string{"web", "git", "fs"},
			Tools: map[string][]string{"fs": {"other_typo", "write_file", "typo_tool", "read_file"}, "git": {"git_log"}}}
	})
	expect("a profile edit keeping the findings", 0, 0)

	// A relist that changes the finding is one new line; fixed and then
	// back, it is logged again.
	setList("git", "git_status")
	p.listed("git")
	expect("git dropped git_log", 1, 0, "server=git tools=[git_log]")
	p.listed("git")
	apply(same)
	expect("git relisted the same", 0, 0)
	setList("git", "git_log", "git_status")
	p.listed("git")
	expect("git offers git_log again", 0, 0)
	setList("git", "git_status")
	p.listed("git")
	expect("git dropped git_log again", 1, 0, "server=git tools=[git_log]")

	// The missing servers alike: installed, the finding is gone; removed
	// again, it is back.
	apply(func(c *config.Config) { c.Servers["web"] = config.Server{Command: "web-server"} })
	expect("web installed", 0, 0)
	apply(func(c *config.Config) { delete(c.Servers, "web") })
	expect("web removed again", 0, 1, "servers=[web]")
	// A server disabled is a missing server, its tools no longer judged;
	// enabled again, its tools are judged afresh.
	off := false
	apply(func(c *config.Config) { s := c.Servers["fs"]; s.Enabled = &off; c.Servers["fs"] = s })
	expect("fs disabled", 0, 1, "servers=\"[web fs]\"")
	apply(func(c *config.Config) { s := c.Servers["fs"]; s.Enabled = nil; c.Servers["fs"] = s })
	expect("fs enabled again", 1, 1, "servers=[web]", "server=fs tools=\"[other_typo typo_tool]\"")
	apply(same)
	expect("the same config again", 0, 0)

	// A profile removed and made again is new.
	apply(func(c *config.Config) { c.Profiles = nil })
	expect("the profile removed", 0, 0)
	apply(func(c *config.Config) {
		c.Profiles = map[string]config.Profile{"coding": {Servers: []string{"git", "web"}, Tools: map[string][]string{"git": {"git_log"}}}}
	})
	expect("the profile made again", 1, 1, "servers=[web]", "server=git tools=[git_log]")
}
