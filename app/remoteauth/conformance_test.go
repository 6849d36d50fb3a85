package remoteauth_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app/internal/testutil"
)

// conformanceDir is the pinned @modelcontextprotocol/conformance (0.1.13),
// installed with the gateway's other node test packages.
var conformanceDir = filepath.Join("..", "gateway", "testdata", "node", "node_modules", "@modelcontextprotocol", "conformance")

// TestConformanceAuthScenarios runs the official conformance suite's client
// authorization scenarios against this package: the suite starts each
// scenario's MCP server and authorization server and runs this test binary
// as the client (conformanceClientMain), which signs in through a
// remoteauth.SignIn and calls the scenario's tool with the go-sdk's
// streamable client. Every scenario is reported; the ones in
// testdata/conformance-baseline.yml are expected to fail (the reason is
// there), any other failure fails the test. (app/e2e runs the same
// scenarios against the daemon.)
func TestConformanceAuthScenarios(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	testutil.RunConformanceAuth(t, conformanceDir, filepath.Join("testdata", "conformance-baseline.yml"), self,
		[]string{clientEnv + "=1"}, 4*time.Minute)
}
