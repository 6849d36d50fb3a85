package install

import (
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/switchboardhq/switchboard/app/catalog"
	"github.com/switchboardhq/switchboard/app/config"
)

// firstCall starts launch and returns the time from start to the first
// tools/call answer (echo), the moment a client can use the server.
func firstCall(b *testing.B, in *Installer, launch config.Server) time.Duration {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	s, err := in.startSession(ctx, "everything", launch, func(string) {})
	if err != nil {
		b.Fatal(err)
	}
	defer s.close()
	if _, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hi"}}); err != nil {
		b.Fatal(err)
	}
	return time.Since(start)
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkColdStart compares, in one run, the time to the first tools/call
// answer of server-everything started as Switchboard installs it (node on
// the absolute bin) with the same server started as clients usually do
// (npx -y pkg@version): with npm's cache warm (npx still asks the registry
// and unpacks into its cache) and with an empty cache (a first use). Each
// iteration starts each variant once, interleaved; medians and the ratios
// are reported. Run with: go test -run '^$' -bench ColdStart -benchtime 7x
func BenchmarkColdStart(b *testing.B) {
	needNPM(b)
	npx, err := exec.LookPath("npx")
	if err != nil {
		b.Skip("npx is not installed")
	}
	in := newInstaller(b, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	res, err := in.Install(ctx, Request{Server: "everything", Package: catalog.Package{
		RegistryType: catalog.RegistryNPM, Identifier: "@modelcontextprotocol/server-everything",
		Version: everythingVersion, Transport: catalog.Transport{Type: "stdio"}}}, nil)
	if err != nil {
		b.Fatal(err)
	}
	spec := "@modelcontextprotocol/server-everything@" + everythingVersion
	npxLaunch := config.Server{Command: npx, Args: []string{"-y", spec}}
	// Warm npx's cache once, as a client that has run it before has.
	firstCall(b, in, npxLaunch)

	var sb, warm, cold []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sb = append(sb, firstCall(b, in, res.Config))
		warm = append(warm, firstCall(b, in, npxLaunch))
		if i < 3 { // an empty cache downloads everything: a few runs suffice
			c := npxLaunch
			c.Env = map[string]string{"npm_config_cache": filepath.Join(b.TempDir(), "npm-cache")}
			cold = append(cold, firstCall(b, in, c))
		}
	}
	b.StopTimer()
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(median(sb)), "switchboard-ms")
	b.ReportMetric(ms(median(warm)), "npx-warm-ms")
	b.ReportMetric(ms(median(cold)), "npx-cold-ms")
	b.ReportMetric(float64(median(warm))/float64(median(sb)), "warm-ratio")
	b.ReportMetric(float64(median(cold))/float64(median(sb)), "cold-ratio")
	b.Logf("first tools/call answer, medians: switchboard %v (n=%d %v), npx warm %v (n=%d %v), npx cold %v (n=%d %v)",
		median(sb), len(sb), sb, median(warm), len(warm), warm, median(cold), len(cold), cold)
}
