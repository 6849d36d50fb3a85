package testutil

import (
	"bufio"
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

// ConformanceBackcompatScenarios are the auth scenarios outside the
// conformance suite's "auth" set that a client of the 2025-11-25 spec still
// passes (the 2025-03-26 fallbacks). The client-credentials scenarios are
// not run: they need a client-credentials grant, which a user's sign-in is
// not.
var ConformanceBackcompatScenarios = []string{"auth/2025-03-26-oauth-metadata-backcompat", "auth/2025-03-26-oauth-endpoint-fallback"}

// A ConformanceResult is one scenario's checks, as the suite wrote them.
type ConformanceResult struct {
	Scenario                 string // "auth/basic-cimd"
	Passed, Failed, Warnings int
	Failures                 []string // each failed check: id, description, error
	Checks                   []ConformanceCheck
}

// A ConformanceCheck is one entry of a scenario's checks.json.
type ConformanceCheck struct {
	ID, Status, Description, ErrorMessage string
	Details                               json.RawMessage
}

// RunConformanceAuth runs the official MCP conformance suite (the pinned
// @modelcontextprotocol/conformance in the directory dir) with command as
// the client of its "auth" suite and of the back-compat scenarios, env
// added to command's environment, and returns every scenario's result. It
// logs each one, and fails the test for a failure of a scenario that the
// baseline file (a YAML list under "client:", each with why) does not
// expect, and when fewer than the suite's 17 scenarios reported. It skips
// without Node.js (fails with SWITCHBOARD_REQUIRE_ALL=1).
func RunConformanceAuth(t *testing.T, dir, baseline, command string, env []string, timeout time.Duration) []ConformanceResult {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("SWITCHBOARD_REQUIRE_ALL") == "1" {
			t.Fatal("node not found and SWITCHBOARD_REQUIRE_ALL=1: the conformance suite needs Node.js 20 or later")
		}
		t.Skip("node not found: the conformance suite needs Node.js 20 or later")
	}
	entry, err := filepath.Abs(filepath.Join(dir, "dist", "index.js"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(entry); err != nil {
		t.Fatalf("the conformance suite is not installed (run the gateway's node tests once, or npm ci in app/gateway/testdata/node): %v", err)
	}
	if baseline, err = filepath.Abs(baseline); err != nil {
		t.Fatal(err)
	}
	expected, err := readBaseline(baseline)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	run := func(args ...string) {
		ctx, cancel := context.WithTimeout(t.Context(), timeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, node, append([]string{entry, "client", "--command", command, "-o", out,
			"--expected-failures", baseline}, args...)...)
		cmd.Env = append(append(os.Environ(), env...), "NO_COLOR=1")
		cmd.WaitDelay = 10 * time.Second
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("conformance %s: %v (a failure not in the baseline)\n%s", strings.Join(args, " "), err, lastString(string(b), 6000))
		}
	}
	run("--suite", "auth")
	for _, s := range ConformanceBackcompatScenarios {
		run("--scenario", s)
	}

	results := ReadConformanceResults(t, out)
	var passed int
	for _, r := range results {
		t.Logf("%-45s %2d passed %d failed %d warnings", r.Scenario, r.Passed, r.Failed, r.Warnings)
		switch {
		case r.Failed == 0 && r.Warnings == 0:
			passed++
		case !slices.Contains(expected, r.Scenario):
			t.Errorf("%s failed: %s", r.Scenario, strings.Join(r.Failures, "; "))
		}
	}
	t.Logf("%d of %d scenarios passed; expected failures (see %s): %v", passed, len(results), filepath.Base(baseline), expected)
	if len(results) < 17 {
		t.Fatalf("got results of %d scenarios, want the suite's 15 auth scenarios and 2 back-compat ones", len(results))
	}
	return results
}

// readBaseline returns the scenarios listed in a baseline file: the
// "  - auth/name" lines (comments say why each is there).
func readBaseline(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if name, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "- "); ok {
			out = append(out, strings.TrimSpace(name))
		}
	}
	return out, sc.Err()
}

// ReadConformanceResults reads each scenario's checks.json that the suite
// wrote under dir (dir/auth/<scenario>-<time>/checks.json), sorted by
// scenario.
func ReadConformanceResults(t testing.TB, dir string) []ConformanceResult {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "auth", "*", "checks.json"))
	if err != nil {
		t.Fatal(err)
	}
	var out []ConformanceResult
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var checks []ConformanceCheck
		if err := json.Unmarshal(b, &checks); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		name := filepath.Base(filepath.Dir(f))
		if i := strings.Index(name, "-20"); i > 0 { // the suite appends the start time
			name = name[:i]
		}
		r := ConformanceResult{Scenario: "auth/" + name, Checks: checks}
		for _, c := range checks {
			switch c.Status {
			case "SUCCESS":
				r.Passed++
			case "FAILURE":
				r.Failed++
				r.Failures = append(r.Failures, c.ID+": "+c.Description+" "+c.ErrorMessage)
			case "WARNING":
				r.Warnings++
			}
		}
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b ConformanceResult) int { return strings.Compare(a.Scenario, b.Scenario) })
	return out
}

func lastString(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}
