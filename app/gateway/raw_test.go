package gateway_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/app/gateway"
)

// TestToolResultsPassThroughAndAreRecorded drives plain, large and error
// results through the gateway in the session era (where plain results are
// passed on as the server's bytes) and the stateless era (where they are
// decoded), and checks what the client gets and what the recorder gets.
func TestToolResultsPassThroughAndAreRecorded(t *testing.T) {
	f := newFixture(t, gateway.ServerConfig{Name: "alpha"})
	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(era, func(t *testing.T) {
			cs := f.connect(t, "/mcp/alpha", era, nil)
			f.waitTools(t, cs, "echo")
			before := len(f.rec.all())

			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "raw \"quoted\" \u00e9"}})
			if err != nil {
				t.Fatal(err)
			}
			if got := text(res); got != "raw \"quoted\" \u00e9" || res.IsError {
				t.Errorf("echo = %q (isError %v)", got, res.IsError)
			}
			if diff := cmp.Diff(map[string]any{"text": "raw \"quoted\" \u00e9"}, res.StructuredContent); diff != "" {
				t.Errorf("echo structuredContent (-want +got):\n%s", diff)
			}
			echoRes := res

			res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "big", Arguments: map[string]any{"kb": 300}})
			if err != nil {
				t.Fatal(err)
			}
			if got := len(text(res)); got != 300*1024 || res.IsError {
				t.Errorf("big: %d bytes of text (isError %v), want %d", got, res.IsError, 300*1024)
			}

			res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "big", Arguments: map[string]any{"kb": -1}})
			if err != nil {
				t.Fatal(err)
			}
			if !res.IsError || !strings.Contains(text(res), "kb must be between") {
				t.Errorf("big -1 = %q (isError %v), want the server's tool error", text(res), res.IsError)
			}

			var calls []string
			for _, c := range f.rec.all()[before:] {
				if c.Method != "tools/call" {
					continue
				}
				calls = append(calls, c.Name+":"+c.Outcome)
				if c.ResponseSize != len(c.Response) || !json.Valid(c.Response) {
					t.Errorf("%s: recorded response of %d bytes, size %d, valid JSON %v", c.Name, len(c.Response), c.ResponseSize, json.Valid(c.Response))
				}
				switch {
				case c.Name == "echo":
					var got mcp.CallToolResult
					if err := json.Unmarshal(c.Response, &got); err != nil {
						t.Fatal(err)
					}
					if diff := cmp.Diff(echoRes.StructuredContent, got.StructuredContent); diff != "" || text(&got) != text(echoRes) {
						t.Errorf("recorded echo response %s differs from the client's result", c.Response)
					}
				case c.Outcome == "tool_error":
					if !strings.Contains(c.Error, "kb must be between") {
						t.Errorf("recorded tool error %q, want the server's text", c.Error)
					}
				case c.Name == "big" && c.ResponseSize < 300*1024:
					t.Errorf("recorded big response of %d bytes", c.ResponseSize)
				}
			}
			for _, want := range []string{"echo:ok", "big:ok", "big:tool_error"} {
				if !slices.Contains(calls, want) {
					t.Errorf("recorded calls %v lack %s", calls, want)
				}
			}
		})
	}
}
