package remoteauth_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// conformanceDir is the pinned @modelcontextprotocol/conformance (0.1.13),
// installed with the gateway's other node test packages.
var conformanceDir = filepath.Join("..", "gateway", "testdata", "node", "node_modules", "@modelcontextprotocol", "conformance")

// The auth scenarios outside the suite's "auth" set that a client of the
// 2025-11-25 spec still passes (the 2025-03-26 fallbacks). The
// client-credentials scenarios are not run: they need a client-credentials
// grant, which a user's sign-in is not.
var backcompatScenarios = []string{"auth/2025-03-26-oauth-metadata-backcompat", "auth/2025-03-26-oauth-endpoint-fallback"}

// TestConformanceAuthScenarios runs the official conformance suite's client
// authorization scenarios against this package: the suite starts each
// scenario's MCP server and authorization server and runs this test binary
// as the client (conformanceClientMain), which signs in through a
// remoteauth.SignIn and calls the scenario's tool with the go-sdk's
// streamable client. Every scenario is reported; the ones in
// testdata/conformance-baseline.yml are expected to fail (the reason is
// there), any other failure fails the test.
func TestConformanceAuthScenarios(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("SWITCHBOARD_REQUIRE_ALL") == "1" {
			t.Fatal("node not found and SWITCHBOARD_REQUIRE_ALL=1: the conformance suite needs Node.js 20 or later")
		}
		t.Skip("node not found: the conformance suite needs Node.js 20 or later")
	}
	entry, err := filepath.Abs(filepath.Join(conformanceDir, "dist", "index.js"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(entry); err != nil {
		t.Fatalf("the conformance suite is not installed (run the gateway's node tests once, or npm ci in app/gateway/testdata/node): %v", err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	baseline, err := filepath.Abs(filepath.Join("testdata", "conformance-baseline.yml"))
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	run := func(args ...string) string {
		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, node, append([]string{entry, "client", "--command", self, "-o", out,
			"--expected-failures", baseline}, args...)...)
		cmd.Env = append(os.Environ(), clientEnv+"=1", "NO_COLOR=1")
		cmd.WaitDelay = 10 * time.Second
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("conformance %s: %v (a failure not in the baseline)\n%s", strings.Join(args, " "), err, tail(string(b), 6000))
		}
		return string(b)
	}
	run("--suite", "auth")
	for _, s := range backcompatScenarios {
		run("--scenario", s)
	}

	results := readConformanceResults(t, out)
	expected := []string{"auth/metadata-var2", "auth/metadata-var3"}
	var passed int
	for _, r := range results {
		t.Logf("%-45s %2d passed %d failed %d warnings", r.scenario, r.passed, r.failed, r.warnings)
		switch {
		case r.failed == 0 && r.warnings == 0:
			passed++
		case !slices.Contains(expected, r.scenario):
			t.Errorf("%s failed: %s", r.scenario, strings.Join(r.failures, "; "))
		}
	}
	t.Logf("%d of %d scenarios passed; expected failures (the suite's bug, see the baseline): %v", passed, len(results), expected)
	if len(results) < 17 {
		t.Fatalf("got results of %d scenarios, want the suite's 15 auth scenarios and 2 back-compat ones", len(results))
	}
}

type conformanceResult struct {
	scenario                 string
	passed, failed, warnings int
	failures                 []string
}

// readConformanceResults reads each scenario's checks.json that the suite
// wrote under dir (dir/auth/<scenario>-<time>/checks.json).
func readConformanceResults(t *testing.T, dir string) []conformanceResult {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "auth", "*", "checks.json"))
	if err != nil {
		t.Fatal(err)
	}
	var out []conformanceResult
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var checks []struct {
			ID, Status, Description, ErrorMessage string
		}
		if err := json.Unmarshal(b, &checks); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		name := filepath.Base(filepath.Dir(f))
		if i := strings.Index(name, "-20"); i > 0 { // the suite appends the start time
			name = name[:i]
		}
		r := conformanceResult{scenario: "auth/" + name}
		for _, c := range checks {
			switch c.Status {
			case "SUCCESS":
				r.passed++
			case "FAILURE":
				r.failed++
				r.failures = append(r.failures, c.ID+": "+c.Description+" "+c.ErrorMessage)
			case "WARNING":
				r.warnings++
			}
		}
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b conformanceResult) int { return strings.Compare(a.scenario, b.scenario) })
	return out
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}
