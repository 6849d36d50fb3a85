package e2e

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/app/daemon"
	"github.com/switchboardhq/switchboard/app/internal/testutil"
	"github.com/switchboardhq/switchboard/app/tokens"
	"github.com/switchboardhq/switchboard/supervisor/testmcp"
)

// TestToolNamesPerClientToken: through the daemon, a session opened with
// the token made for Claude Code lists names that Claude Code's
// mcp__switchboard__ prefix keeps within 64 characters, while the CLI's
// token and Cursor's list the full names (a server with a 27-character
// name and server-everything's long tool names); and on the server's own
// endpoint, /mcp/<server>, names within what Claude Code's prefix for its
// entry there, mcp__switchboard-<server>__, leaves, while Cursor gets the
// server's own names.
func TestToolNamesPerClientToken(t *testing.T) {
	const server = "everything-long-server-name"
	long := []string{"trigger-long-running-operation", "get-resource-reference", "trigger-elicitation-request"}
	home := filepath.Join(t.TempDir(), "home")
	env := map[string]string{}
	for _, kv := range testmcp.Env(testmcp.Options{Name: server, ExtraTools: long}) {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	servers := map[string]any{server: map[string]any{"command": os.Args[0], "env": env, "pool": map[string]any{"min": 1}}}
	data, _ := json.MarshalIndent(map[string]any{"version": 1, "listen": "127.0.0.1:0", "servers": servers}, "", "  ")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "config.json"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, home)
	d.waitRunning(t, server)
	store, err := tokens.Open(filepath.Join(home, daemon.TokensFile))
	if err != nil {
		t.Fatal(err)
	}
	names := map[string][]string{}
	for _, client := range []string{"claude-code", "cursor", "cli"} {
		secret := d.client.Token
		if client != "cli" {
			tok, err := store.EnsureClient(client)
			if err != nil {
				t.Fatal(err)
			}
			secret = tok.Secret
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: client, Version: "1"}, nil).Connect(t.Context(),
			&mcp.StreamableClientTransport{Endpoint: d.info.Address + "/mcp", HTTPClient: &http.Client{Transport: bearerTransport(secret)}}, nil)
		if err != nil {
			t.Fatalf("connecting as %s: %v", client, err)
		}
		t.Cleanup(func() { cs.Close() })
		testutil.Eventually(t, 30*time.Second, client+" lists the server's tools", func() bool {
			names[client] = testutil.ToolNames(t, cs)
			return len(names[client]) > len(long) && slices.Contains(names[client], server+"__echo")
		})
	}
	over := func(list []string, prefix string) (n int) {
		for _, name := range list {
			if len(prefix+name) > 64 {
				n++
			}
		}
		return n
	}
	if n := over(names["claude-code"], "mcp__switchboard__"); n != 0 {
		t.Errorf("%d of Claude Code's %d names would be over 64 characters as Claude Code sends them: %v", n, len(names["claude-code"]), names["claude-code"])
	}
	for _, client := range []string{"cursor", "cli"} {
		for _, n := range long {
			if !slices.Contains(names[client], server+"__"+n) {
				t.Errorf("%s does not get the full name %s__%s: %v", client, server, n, names[client])
			}
		}
	}
	t.Logf("%d tools; with Claude Code's prefix, %d of the full names would be over 64, 0 of Claude Code's",
		len(names["cli"]), over(names["cli"], "mcp__switchboard__"))

	own := map[string][]string{}
	for _, client := range []string{"claude-code", "cursor"} {
		tok, err := store.EnsureClient(client)
		if err != nil {
			t.Fatal(err)
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: client, Version: "1"}, nil).Connect(t.Context(),
			&mcp.StreamableClientTransport{Endpoint: d.info.Address + "/mcp/" + server,
				HTTPClient: &http.Client{Transport: bearerTransport(tok.Secret)}}, nil)
		if err != nil {
			t.Fatalf("connecting as %s to /mcp/%s: %v", client, server, err)
		}
		t.Cleanup(func() { cs.Close() })
		testutil.Eventually(t, 30*time.Second, client+" lists the server's own tools", func() bool {
			own[client] = testutil.ToolNames(t, cs)
			return len(own[client]) > len(long) && slices.Contains(own[client], "echo")
		})
	}
	prefix := "mcp__switchboard-" + server + "__"
	if n := over(own["claude-code"], prefix); n != 0 {
		t.Errorf("%d of Claude Code's %d names on /mcp/%s would be over 64 characters as Claude Code sends them: %v",
			n, len(own["claude-code"]), server, own["claude-code"])
	}
	for _, n := range long {
		if !slices.Contains(own["cursor"], n) {
			t.Errorf("cursor does not get the server's own name %s on /mcp/%s: %v", n, server, own["cursor"])
		}
	}
	t.Logf("on /mcp/%s, %d of the server's own names would be over 64 with %s, 0 of Claude Code's",
		server, over(own["cursor"], prefix), prefix)
}
