package e2e

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/app/config"
)

// TestRemoteServersIn gets remote servers into a real daemon through the
// CLI: imported from Claude Code (a streamable-HTTP entry whose token
// comes from a variable of the daemon's environment, an SSE entry, and an
// entry whose variable is not set, left alone with why), and one added by
// hand with `install --url`. Their entries are in config.json with the
// secret headers named; the values are in the secret store and nowhere
// in config.json or the CLI's output.
func TestRemoteServersIn(t *testing.T) {
	isolateClientEnv(t)
	const imported, byHand = "lin_api_e2eImp0rted0123456789", "sk-e2eByH4nd0123456789abcdef"
	t.Setenv("SB_E2E_LINEAR_KEY", imported) // the daemon's environment
	home := filepath.Join(t.TempDir(), "home")
	writeConfig(t, home)
	d := startDaemon(t, home)
	// The daemon connects to the servers it is given: they are on this
	// machine, at a port nothing listens on (tests reach only loopback).
	remote := "http://" + closedLoopbackPort(t)

	claudeCode := filepath.Join(d.userHome, ".claude.json")
	if err := os.WriteFile(claudeCode, []byte(strings.ReplaceAll(`{
  "numStartups": 12,
  "mcpServers": {
    "linear": {"type": "http", "url": "REMOTE/mcp",
      "headers": {"Authorization": "Bearer ${SB_E2E_LINEAR_KEY}", "X-Team": "platform"}},
    "sentry": {"type": "sse", "url": "REMOTE/sse"},
    "vault": {"type": "http", "url": "REMOTE/vault", "headers": {"Authorization": "Bearer ${SB_E2E_UNSET}"}}
  }
}
`, "REMOTE", remote)), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := cli(t, home, "clients", "import", "claude-code")
	for _, want := range []string{
		`+ linear: added as "linear" (remote, streamable-http, ` + remote + `/mcp); secret headers to the secret store: Authorization`,
		`+ sentry: added as "sentry" (remote, sse, ` + remote + `/sse)`,
		"vault: left alone (header Authorization refers to $SB_E2E_UNSET, which is not set in Switchboard's environment",
		"claude-code: 2 server(s) added to Switchboard",
	} {
		if code != exitOK || !strings.Contains(out, want) {
			t.Fatalf("clients import: %d, output lacks %q\n%s%s", code, want, out, errOut)
		}
	}

	code, out, errOut = cli(t, home, "install", "--url", remote+"/example", "--name", "example",
		"--header", "X-Region=eu", "--secret-header", "X-Api-Key="+byHand, "--transport", "sse")
	if code != exitOK || !strings.Contains(out, "example: added remote server "+remote+"/example (sse); secret headers in the secret store: X-Api-Key") {
		t.Fatalf("install --url: %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = cli(t, home, "install", "--url", "http://api.example.com/mcp", "--name", "plain")
	if code != exitError || !strings.Contains(errOut, `servers.plain.url: invalid URL "http://api.example.com/mcp": http:// is only for this machine`) {
		t.Errorf("install --url over http to another machine: %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = cli(t, home, "install", "--url", d.info.Address+"/mcp", "--name", "itself")
	if code != exitError || !strings.Contains(errOut, "points at Switchboard's own listener") {
		t.Errorf("install --url of Switchboard itself: %d\n%s%s", code, out, errOut)
	}

	raw, err := os.ReadFile(filepath.Join(home, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{imported, byHand} {
		if strings.Contains(string(raw), secret) {
			t.Errorf("config.json holds a secret header:\n%s", raw)
		}
	}
	var cfg config.Config
	if err := json.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	if s := cfg.Servers["linear"]; s.URL != remote+"/mcp" || s.Transport != "streamable-http" ||
		s.Headers["X-Team"] != "platform" || s.SecretHeaders["Authorization"] != "Authorization" || s.Command != "" {
		t.Errorf("linear in config.json: %+v", s)
	}
	if s := cfg.Servers["example"]; s.URL != remote+"/example" || s.Transport != "sse" ||
		s.Headers["X-Region"] != "eu" || s.SecretHeaders["X-Api-Key"] != "X-Api-Key" {
		t.Errorf("example in config.json: %+v", s)
	}
	for _, name := range []string{"vault", "plain", "itself"} {
		if _, ok := cfg.Servers[name]; ok {
			t.Errorf("%s is in config.json", name)
		}
	}
	store, err := os.ReadFile(filepath.Join(home, "secrets.json"))
	if err != nil || !strings.Contains(string(store), imported) || !strings.Contains(string(store), byHand) {
		t.Errorf("the file secret store lacks the headers' values: %v", err)
	}
	code, out, _ = cli(t, home, "servers", "--json")
	if code != exitOK || !strings.Contains(out, `"url": "`+remote+`/mcp"`) || strings.Contains(out, imported) || strings.Contains(out, byHand) {
		t.Errorf("servers --json: %d\n%s", code, out)
	}
}

// closedLoopbackPort is a 127.0.0.1 address nothing listens on (a port
// the system just gave and took back).
func closedLoopbackPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}
