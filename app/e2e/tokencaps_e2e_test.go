package e2e

import (
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/app/daemon"
	"github.com/switchboardhq/switchboard/app/internal/testutil"
	"github.com/switchboardhq/switchboard/app/tokens"
)

// TestTokenCapSurvivesRevokeEndToEnd: `switchboard tokens` shows a client
// token's MAX TIER; after `tokens revoke cursor`, the client's view keeps
// its cap, and a token issued to cursor again (here by another process,
// as a reconnect does) has it: its session lists the read tools only.
func TestTokenCapSurvivesRevokeEndToEnd(t *testing.T) {
	isolateClientEnv(t)
	home := filepath.Join(t.TempDir(), "home")
	writeConfig(t, home, "alpha")
	setServerKey(t, home, "alpha", "tiers", map[string]string{"echo": "read"})
	d := startDaemon(t, home)
	d.waitRunning(t, "alpha")

	cursorFile := filepath.Join(d.userHome, ".cursor", "mcp.json")
	if err := os.MkdirAll(filepath.Dir(cursorFile), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cursorFile, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := cli(t, home, "clients", "connect", "cursor", "--max-tier", "read"); code != exitOK {
		t.Fatalf("clients connect cursor --max-tier read: %d\n%s%s", code, out, errOut)
	}
	code, out, errOut := cli(t, home, "tokens")
	if code != exitOK || !strings.Contains(out, "MAX TIER") {
		t.Fatalf("tokens: %d\n%s%s", code, out, errOut)
	}
	var cursorRow string
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "cursor ") {
			cursorRow = line
		}
	}
	if fields := strings.Fields(cursorRow); len(fields) < 4 || fields[3] != "read" {
		t.Errorf("tokens' row of cursor %q: want MAX TIER read\n%s", cursorRow, out)
	}
	if code, out, errOut := cli(t, home, "tokens", "revoke", "cursor"); code != exitOK {
		t.Fatalf("tokens revoke cursor: %d %s%s", code, out, errOut)
	}
	if v := clientView(t, d, "cursor"); v.MaxTier != "read" {
		t.Errorf("cursor's view after the revoke: maxTier %q, want the remembered read", v.MaxTier)
	}

	store, err := tokens.Open(filepath.Join(home, daemon.TokensFile))
	if err != nil {
		t.Fatal(err)
	}
	again, err := store.EnsureClient("cursor")
	if err != nil {
		t.Fatal(err)
	}
	if again.MaxTier != "read" {
		t.Errorf("the token issued to cursor again has cap %q, want read", again.MaxTier)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "cursor-vscode", Version: "1"}, nil).Connect(t.Context(),
		&mcp.StreamableClientTransport{Endpoint: d.info.Address + "/mcp", HTTPClient: &http.Client{Transport: bearerTransport(again.Secret)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if names := testutil.ToolNames(t, cs); !slices.Equal(names, []string{"alpha__echo"}) {
		t.Errorf("the reissued token lists %v, want only the read alpha__echo", names)
	}
}
