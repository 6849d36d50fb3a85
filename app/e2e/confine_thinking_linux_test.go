package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/app/internal/testutil"
)

// TestConfinedSequentialThinking installs the catalog's sequential-thinking
// server from npm, as a user would, and checks that it runs under the
// policy the daemon derives for a catalog install (Landlock, no network:
// the catalog says it needs none) and thinks as it does unconfined: two
// thoughts, the second answered with the history of both.
func TestConfinedSequentialThinking(t *testing.T) {
	home, d := npmDaemon(t)
	start := time.Now()
	code, out, errOut := cli(t, home, "install", "sequential-thinking")
	if code != exitOK || !strings.Contains(out, "sequential-thinking is installed and running") {
		t.Fatalf("install sequential-thinking: %d\n%s\n%s", code, out, errOut)
	}
	t.Logf("npm install and start of server-sequential-thinking: %v", time.Since(start).Round(time.Millisecond))

	v, err := d.client.Server(t.Context(), "sequential-thinking")
	if err != nil {
		t.Fatal(err)
	}
	if sb := v.Sandbox; !sb.Confined || !sb.Enforced || !strings.HasPrefix(sb.Mechanism, "landlock ABI ") || sb.Network {
		t.Fatalf("sandbox view = %+v; want the derived policy in force: landlock, no network", sb)
	}

	cs := mcpSession(t, d, "/mcp/sequential-thinking")
	testutil.Eventually(t, 60*time.Second, "the confined server's tool", func() bool {
		res, err := cs.ListTools(t.Context(), nil)
		return err == nil && len(res.Tools) == 1 && res.Tools[0].Name == "sequentialthinking"
	})
	for i, want := range []string{`"thoughtHistoryLength": 1`, `"thoughtHistoryLength": 2`} {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "sequentialthinking", Arguments: map[string]any{
			"thought": "step " + string(rune('1'+i)), "nextThoughtNeeded": i == 0, "thoughtNumber": i + 1, "totalThoughts": 2}})
		if err != nil || res.IsError {
			t.Fatalf("thought %d: %v %+v", i+1, err, res)
		}
		if got := testutil.Text(res); !strings.Contains(got, want) {
			t.Errorf("thought %d answered %s, want %s", i+1, got, want)
		}
	}
}
