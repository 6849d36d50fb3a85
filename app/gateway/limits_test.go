package gateway_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/app/gateway"
	"github.com/switchboardhq/switchboard/app/internal/testutil"
)

// TestRequestBodyLimit: on both paths, a tools/call body of
// gateway.MaxRequestBody bytes is served, and one a byte longer or of
// 50 MiB, sent with a Content-Length or chunked, is answered 413 with a
// JSON-RPC error before it is read (most of a 50 MiB body is never sent),
// and the server behind keeps its process and answers the next call. A
// legacy SSE POST has the same limit.
func TestRequestBodyLimit(t *testing.T) {
	for _, mode := range []struct {
		name string
		mode gateway.FastPathMode
	}{{"fast path", gateway.FastPathOn}, {"go-sdk path", gateway.FastPathOff}} {
		t.Run(mode.name, func(t *testing.T) {
			f := newModeFixture(t, mode.mode)
			session := f.open(t, "tok", "/mcp")
			pid := f.serverPID(t, session)
			header := http.Header{"X-Token": {"tok"}, "Mcp-Session-Id": {session}, "Mcp-Protocol-Version": {"2025-11-25"}}
			for _, tt := range []struct {
				name    string
				size    int64
				chunked bool
				status  int
			}{
				{"at the limit", gateway.MaxRequestBody, false, http.StatusOK},
				{"a byte over", gateway.MaxRequestBody + 1, false, http.StatusRequestEntityTooLarge},
				{"a byte over, chunked", gateway.MaxRequestBody + 1, true, http.StatusRequestEntityTooLarge},
				{"50 MiB", 50 << 20, false, http.StatusRequestEntityTooLarge},
				{"50 MiB, chunked", 50 << 20, true, http.StatusRequestEntityTooLarge},
			} {
				a, err := testutil.PostOversizedCall(t.Context(), f.url+"/mcp", "alpha__echo", tt.size, tt.chunked, header)
				if err != nil {
					t.Fatalf("%s: %v", tt.name, err)
				}
				t.Logf("%s: %d after %d bytes sent", tt.name, a.Status, a.Sent)
				if a.Status != tt.status {
					t.Errorf("%s: status %d, want %d (body %.200s)", tt.name, a.Status, tt.status, a.Body)
					continue
				}
				if tt.status == http.StatusOK {
					continue
				}
				checkRefusal(t, tt.name, a.Header, a.Body, -32000)
				if tt.size > 4*gateway.MaxRequestBody && a.Sent > tt.size/2 {
					t.Errorf("%s: the gateway took %d bytes of a %d-byte body it refused: it read past its limit", tt.name, a.Sent, tt.size)
				}
			}
			// A legacy SSE POST has the same limit, before its session is looked up.
			a, err := testutil.PostOversizedCall(t.Context(), f.url+"/sse?sessionid=any", "alpha__echo", 50<<20, true, header)
			if err != nil {
				t.Fatal(err)
			}
			if a.Status != http.StatusRequestEntityTooLarge {
				t.Errorf("50 MiB on /sse: status %d, want 413 (body %.200s)", a.Status, a.Body)
			} else {
				checkRefusal(t, "50 MiB on /sse", a.Header, a.Body, -32000)
			}
			if got := f.serverPID(t, session); got != pid {
				t.Errorf("the server's process is %s after the refused calls, %s before", got, pid)
			}
		})
	}
}

// checkRefusal checks that a refusal is a JSON-RPC error with code, as
// application/json.
func checkRefusal(t *testing.T, what string, header http.Header, body []byte, code int) {
	t.Helper()
	if ct := header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s: Content-Type %q, want application/json (body %.200s)", what, ct, body)
	}
	var msg struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *rawError       `json:"error"`
	}
	if err := json.Unmarshal(body, &msg); err != nil || msg.JSONRPC != "2.0" || msg.ID == nil || msg.Error == nil {
		t.Errorf("%s: body %.200s is not a JSON-RPC error (%v)", what, body, err)
		return
	}
	if msg.Error.Code != code || msg.Error.Message == "" {
		t.Errorf("%s: error %+v, want code %d with a message", what, *msg.Error, code)
	}
}

// serverPID is the process id of alpha's process that serves session,
// from the test server's pid tool.
func (f *modeFixture) serverPID(t *testing.T, session string) string {
	t.Helper()
	ex := f.call(t, "tok", "/mcp", session, `{"jsonrpc":"2.0","id":50,"method":"tools/call","params":{"name":"alpha__pid"}}`, nil)
	for _, ev := range ex.Events {
		_, data, _ := strings.Cut(ev, "data: ")
		var msg struct {
			Result struct {
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"result"`
		}
		if json.Unmarshal([]byte(data), &msg) == nil && len(msg.Result.Content) == 1 {
			return msg.Result.Content[0].Text
		}
	}
	t.Fatalf("alpha__pid: %+v", ex)
	return ""
}
