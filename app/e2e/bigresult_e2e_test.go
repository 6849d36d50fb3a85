//go:build linux

package e2e

import (
	"crypto/sha256"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestBigResultHeldOnce passes a 20 MiB tools/call result through
// /mcp/<server> of a real daemon, to a client of the session era and to one
// of the stateless era: the text arrives intact (by hash) and the daemon's
// RSS grows by at most 2.5 times the result's size (and 50 MB).
func TestBigResultHeldOnce(t *testing.T) {
	const kb = 20 << 10
	const line = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.\n" // testmcp's big text
	want := sha256.Sum256([]byte(strings.Repeat(line, kb*1024/len(line))))

	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		// A daemon of its own for each era: memory the first call freed
		// would otherwise hide the second's.
		home := t.TempDir() + "/home"
		writeConfig(t, home, "alpha")
		d := startDaemon(t, home)
		d.waitRunning(t, "alpha")
		transport := &mcp.StreamableClientTransport{Endpoint: d.info.Address + "/mcp/alpha",
			HTTPClient: &http.Client{Transport: bearerTransport(d.client.Token)}}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "big-test", Version: "1"}, nil).Connect(t.Context(), transport,
			&mcp.ClientSessionOptions{ProtocolVersion: era})
		if err != nil {
			t.Fatal(err)
		}
		// Warm the path (and the server's own buffers) with a smaller big result.
		if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "big", Arguments: map[string]any{"kb": 64}}); err != nil {
			t.Fatal(err)
		}
		pid := d.cmd.Process.Pid
		baseline, _ := procMemory(t, pid)
		peak := rssPeak(t, pid)
		start := time.Now()
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "big", Arguments: map[string]any{"kb": kb}})
		took := time.Since(start)
		growth := peak() - baseline
		if err != nil || res.IsError || len(res.Content) != 1 {
			t.Fatalf("%s: big %d: %v %+v", era, kb, err, res)
		}
		text, ok := res.Content[0].(*mcp.TextContent)
		if !ok {
			t.Fatalf("%s: content %T", era, res.Content[0])
		}
		if sha256.Sum256([]byte(text.Text)) != want {
			t.Errorf("%s: the %d-byte result arrived changed (%d bytes)", era, kb<<10, len(text.Text))
		}
		size := int64(len(text.Text))
		t.Logf("%s: %.1f MiB result in %s; daemon RSS baseline %.1f MiB, growth %.1f MiB (%.2f× the result)",
			era, float64(size)/mib, took.Round(time.Millisecond), float64(baseline)/mib, float64(growth)/mib,
			float64(growth)/float64(size))
		if growth > 50e6 || float64(growth) > 2.5*float64(size) {
			t.Errorf("%s: daemon RSS grew by %.1f MB for a %.1f MB result; bound 50 MB and 2.5×", era, float64(growth)/1e6, float64(size)/1e6)
		}
		cs.Close()
		d.cmd.Process.Kill()
		<-d.done
	}
}
