//go:build linux

package e2e

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/switchboardhq/switchboard/app/internal/testutil"
)

// TestOversizedCallRefused: through the daemon (on the default path, the
// fast path), a 50 MiB tools/call, with a Content-Length or chunked, gets
// 413 with a JSON-RPC error; the daemon reads at most the 4 MiB limit of
// it (its peak RSS grows by far less than the body) and the server keeps
// its process, which answers the next call.
func TestOversizedCallRefused(t *testing.T) {
	const size = 50 << 20
	home := filepath.Join(t.TempDir(), "home")
	writeConfig(t, home, "alpha")
	d := startDaemon(t, home)
	d.waitRunning(t, "alpha")
	cs := mcpSession(t, d, "/mcp")
	serverPID := func() string {
		t.Helper()
		pid, err := testutil.CallText(t.Context(), cs, "alpha__pid", nil)
		if err != nil {
			t.Fatalf("alpha__pid: %v", err)
		}
		return pid
	}
	before := serverPID()
	header := http.Header{"Authorization": {"Bearer " + d.client.Token}, "Mcp-Session-Id": {cs.ID()},
		"Mcp-Protocol-Version": {cs.InitializeResult().ProtocolVersion}}
	_, hwmBefore := procMemory(t, d.cmd.Process.Pid)
	for _, chunked := range []bool{false, true} {
		a, err := testutil.PostOversizedCall(t.Context(), d.info.Address+"/mcp", "alpha__echo", size, chunked, header)
		if err != nil {
			t.Fatal(err)
		}
		var msg struct {
			JSONRPC string `json:"jsonrpc"`
			Error   struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if a.Status != http.StatusRequestEntityTooLarge || a.Header.Get("Content-Type") != "application/json" ||
			json.Unmarshal(a.Body, &msg) != nil || msg.JSONRPC != "2.0" || msg.Error.Code != -32000 || msg.Error.Message == "" {
			t.Errorf("a %d-byte call (chunked %v): %d %q %.300s, want 413 with a JSON-RPC error",
				size, chunked, a.Status, a.Header.Get("Content-Type"), a.Body)
		}
		t.Logf("chunked %v: %d, %.1f MiB of %d MiB sent: %s", chunked, a.Status, float64(a.Sent)/mib, size/mib, msg.Error.Message)
		if a.Sent > size/2 {
			t.Errorf("chunked %v: the daemon took %d of %d bytes before refusing them", chunked, a.Sent, size)
		}
	}
	_, hwmAfter := procMemory(t, d.cmd.Process.Pid)
	t.Logf("daemon peak RSS %.1f MiB before the calls, %.1f MiB after", float64(hwmBefore)/mib, float64(hwmAfter)/mib)
	if growth := hwmAfter - hwmBefore; growth > 24*mib {
		t.Errorf("the daemon's peak RSS grew by %.1f MiB refusing two %d MiB calls: it held the bodies", float64(growth)/mib, size/mib)
	}
	if after := serverPID(); after != before {
		t.Errorf("the server's process is %s after the refused calls, %s before", after, before)
	}
}
