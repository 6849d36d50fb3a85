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

// TestProfileToolsWarnsOncePerConfig: a profile's tool that its server
// does not offer is logged once the server is listed, once for the config
// in force, and again after the config changes.
func TestProfileToolsWarnsOncePerConfig(t *testing.T) {
	logs := &testutil.SyncBuffer{}
	var mu sync.Mutex
	lists := map[string][]gateway.ToolInfo{}
	p := &profileTools{log: slog.New(slog.NewTextHandler(logs, nil)), tools: func(server string) []gateway.ToolInfo {
		mu.Lock()
		defer mu.Unlock()
		return lists[server]
	}}
	cfg := config.Default()
	cfg.Servers["fs"] = config.Server{Command: "fs-server"}
	cfg.Servers["git"] = config.Server{Command: "git-server"}
	cfg.Profiles = map[string]config.Profile{"coding": {Servers: []string{"fs", "git"},
		Tools: map[string][]string{"fs": {"read_file", "typo_tool"}, "git": {"git_log"}}}}
	warnings := func() int { return strings.Count(logs.String(), "a profile names tools its server does not offer") }

	p.applied(cfg) // nothing listed yet
	if n := warnings(); n != 0 {
		t.Fatalf("%d warnings before any server is listed:\n%s", n, logs)
	}
	mu.Lock()
	lists["fs"] = []gateway.ToolInfo{{Name: "read_file"}, {Name: "write_file"}}
	lists["git"] = []gateway.ToolInfo{{Name: "git_log"}}
	mu.Unlock()
	p.listed("fs")
	p.listed("fs") // a relist: not again
	p.listed("git")
	if n := warnings(); n != 1 || !strings.Contains(logs.String(), "profile=coding server=fs tools=[typo_tool]") {
		t.Fatalf("after fs was listed (twice): %d warnings, want 1 naming typo_tool:\n%s", n, logs)
	}
	// Another config: the finding is logged again, at once (fs is listed).
	p.applied(cfg.Clone())
	if n := warnings(); n != 2 {
		t.Errorf("after a config change: %d warnings, want 2:\n%s", n, logs)
	}
	// A relist that changes what is missing is a new finding.
	mu.Lock()
	lists["git"] = []gateway.ToolInfo{{Name: "git_status"}}
	mu.Unlock()
	p.listed("git")
	if n := warnings(); n != 3 || !strings.Contains(logs.String(), "server=git tools=[git_log]") {
		t.Errorf("after git dropped git_log: %d warnings, want 3:\n%s", n, logs)
	}
}
