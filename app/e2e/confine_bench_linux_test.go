package e2e

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/internal/testutil"
	"github.com/switchboardhq/switchboard/supervisor/testmcp"
)

// BenchmarkServeConfinedEcho measures what confinement costs a call, as
// users run it: the same raw HTTP client calls the test server's echo
// through a real daemon's /mcp/open (unconfined) and /mcp/confined (the
// same server under Landlock and the socket filter), at concurrency 1,
// one sub-benchmark after the other on one daemon.
//
//	go test -run '^$' -bench BenchmarkServeConfinedEcho -benchtime 3000x ./app/e2e/
func BenchmarkServeConfinedEcho(b *testing.B) {
	env := map[string]string{}
	for _, kv := range testmcp.Env(testmcp.Options{}) {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	server := func(sandbox any) map[string]any {
		return map[string]any{"command": os.Args[0], "env": env, "pool": map[string]any{"min": 1}, "sandbox": sandbox}
	}
	home := filepath.Join(b.TempDir(), "home")
	cfg, _ := json.Marshal(map[string]any{"version": 1, "listen": "127.0.0.1:0",
		"servers": map[string]any{"open": server(false), "confined": server(true)}})
	if err := os.MkdirAll(home, 0o700); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "config.json"), cfg, 0o600); err != nil {
		b.Fatal(err)
	}
	d := startDaemon(b, home, "--log-level", "info")
	// The sandbox view tells what the launcher reported, once each
	// server's process has started.
	var views []wire.ServerView
	testutil.Eventually(b, 30*time.Second, "both servers running", func() bool {
		var err error
		views, err = d.client.Servers(b.Context())
		return err == nil && len(views) == 2 && views[0].State == wire.StateRunning && views[1].State == wire.StateRunning
	})
	for _, v := range views {
		if want := v.Name == "confined"; v.Sandbox.Enforced != want {
			b.Fatalf("%s: sandbox %+v, want enforced %v", v.Name, v.Sandbox, want)
		}
	}
	p50 := map[string]time.Duration{}
	for _, name := range []string{"open", "confined"} {
		b.Run(name, func(b *testing.B) {
			p50[name] = benchEcho(b, &rawMCP{http: &http.Client{Transport: &http.Transport{}}, url: d.info.Address + "/mcp/" + name, token: d.client.Token})
		})
	}
	quitIfProfiling(b, d)
	if open, confined := p50["open"], p50["confined"]; open > 0 && confined > 0 {
		b.Logf("p50 unconfined %s, confined %s: %+.1f%%", open, confined, 100*(float64(confined)/float64(open)-1))
	}
}
