package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app/internal/testutil"
)

// TestSilentCallThroughTheDaemon: a call that says nothing for 12 s until
// its answer succeeds through undici (Node's fetch, what the TypeScript SDK
// uses) with a 5 s headers timeout, through `switchboard serve
// --keep-alive 2s`, in both protocol eras: the daemon sends the response's
// headers and keep-alive comments while the tool runs.
func TestSilentCallThroughTheDaemon(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node not found: install Node.js 20 (the CI installs it): %v", err)
	}
	harness, err := filepath.Abs(tsHarness)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(harness, "node_modules", "undici")); err != nil {
		t.Fatalf("undici is not installed in %s: run `make node-deps`", harness)
	}
	const (
		headersTimeout = 5 * time.Second
		silence        = 12 * time.Second
	)
	home := filepath.Join(t.TempDir(), "home")
	writeConfig(t, home, "alpha")
	d := startDaemon(t, home, "--keep-alive", "2s")
	d.waitRunning(t, "alpha")
	session := mcpSessionAs(t, d, "/mcp/alpha", "undici", "2025-11-25")

	call := fmt.Sprintf(`{"name":"sleep","arguments":{"ms":%d}`, silence.Milliseconds())
	for _, era := range []struct {
		name    string
		headers map[string]string
		body    string
	}{
		{"2025-11-25", map[string]string{"MCP-Protocol-Version": "2025-11-25", "Mcp-Session-Id": session.ID()},
			`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":` + call + `}}`},
		{"2026-07-28", map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "sleep"},
			`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":` + call + `,"_meta":{` +
				`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"undici","version":"1"},` +
				`"io.modelcontextprotocol/clientCapabilities":{}}}}`},
	} {
		t.Run(era.name, func(t *testing.T) {
			t.Parallel()
			headers := map[string]string{"Authorization": "Bearer " + d.client.Token,
				"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
			for k, v := range era.headers {
				headers[k] = v
			}
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			r := testutil.UndiciPost(t, ctx, node, harness, d.info.Address+"/mcp/alpha", headers, era.body, headersTimeout)
			if r.Error != nil {
				t.Fatalf("undici gave up: %s (%s; %s)", r.Error.Message, r.Error.Code, r.Error.Cause)
			}
			want := fmt.Sprintf("slept %d ms", silence.Milliseconds())
			if r.Status != 200 || r.ContentType != "text/event-stream" || !strings.Contains(r.Body, want) {
				t.Errorf("undici: %d %s %q, want the sleep's result on an event stream", r.Status, r.ContentType, r.Body)
			}
			if time.Duration(r.HeadersAfterMs)*time.Millisecond >= headersTimeout || time.Duration(r.TotalMs)*time.Millisecond < silence {
				t.Errorf("headers after %d ms, answer after %d ms; want the headers within %s and the answer after %s",
					r.HeadersAfterMs, r.TotalMs, headersTimeout, silence)
			}
			t.Logf("headers after %d ms, answer after %d ms", r.HeadersAfterMs, r.TotalMs)
		})
	}
}
