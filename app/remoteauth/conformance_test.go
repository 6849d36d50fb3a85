package remoteauth_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app/internal/testutil"
)

// nodeHarness holds the pinned conformance suites, installed with the
// gateway's other node test packages.
var nodeHarness = filepath.Join("..", "gateway", "testdata", "node")

// TestConformanceAuthScenarios runs the official conformance suite's client
// authorization scenarios against this package: the suite starts each
// scenario's MCP server and authorization server and runs this test binary
// as the client (conformanceClientMain), which signs in through a
// remoteauth.SignIn and calls the scenario's tool with the go-sdk's
// streamable client. Every scenario is reported; the ones in
// testdata/conformance-*baseline.yml are expected to fail (the reason is
// there), any other failure fails the test. (app/e2e runs the same
// scenarios against the daemon.)
func TestConformanceAuthScenarios(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, suite := range testutil.ConformanceSuites(t, nodeHarness, "testdata") {
		t.Run(suite.Version, func(t *testing.T) {
			testutil.RunConformanceAuth(t, suite, self, []string{clientEnv + "=1"}, 4*time.Minute)
		})
	}
}
