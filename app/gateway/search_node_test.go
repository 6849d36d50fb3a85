package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app/gateway"
	"github.com/switchboardhq/switchboard/app/toolsearch"
	"github.com/switchboardhq/switchboard/supervisor"
)

// TestTSClientToolSearch drives /mcp in search mode with the official
// TypeScript SDK client, in front of server-everything and the test
// server: it lists the two tools, finds tools with search_tools, and calls
// them with call_tool, progress included; the calls are recorded as the
// tools' own.
func TestTSClientToolSearch(t *testing.T) {
	env := nodeHarness(t)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	ix, err := toolsearch.New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	f := newTunedFixture(t, "", func(_ *supervisor.Options, o *gateway.Options) {
		o.ToolSearch = true
		o.ToolIndex = testIndex{ix}
	}, []supervisor.Spec{everythingSpec(env), alphaSpec()},
		gateway.ServerConfig{Name: "everything", Roots: []string{everythingRoot}}, gateway.ServerConfig{Name: "alpha"})
	cs := f.connect(t, "/mcp", "2025-11-25", nil)
	waitSearch(t, cs, "sum of two numbers", "everything__get-sum")
	waitSearch(t, cs, "echo text back", "alpha__echo")

	r := runTS(t, ctx, env, tsScenario{Transport: "streamable", URL: f.url + "/mcp", Steps: []tsStep{
		{"id": "tools", "op": "listTools"},
		{"id": "search", "op": "callTool", "name": gateway.SearchToolsName, "args": map[string]any{"query": "add two numbers", "limit": 3}},
		{"id": "sum", "op": "callTool", "name": gateway.CallToolName,
			"args": map[string]any{"name": "everything__get-sum", "arguments": map[string]any{"a": 1.5, "b": 2}}},
		{"id": "echo", "op": "callTool", "name": gateway.CallToolName,
			"args": map[string]any{"name": "alpha__echo", "arguments": map[string]any{"text": "found and called"}}},
		{"id": "progress", "op": "callTool", "name": gateway.CallToolName, "progress": true,
			"args": map[string]any{"name": "everything__trigger-long-running-operation", "arguments": map[string]any{"duration": 0.3, "steps": 3}}},
		{"id": "unknown", "op": "callTool", "name": gateway.CallToolName, "args": map[string]any{"name": "everything__nosuch"}},
	}})
	tools := r.names(t, "tools", "tools")
	slices.Sort(tools)
	if !slices.Equal(tools, []string{gateway.CallToolName, gateway.SearchToolsName}) {
		t.Errorf("TS client, %s: lists %v; want exactly call_tool and search_tools", r.label, tools)
	}
	var found searched
	if err := json.Unmarshal([]byte(r.callText(t, "search")), &found); err != nil {
		t.Errorf("TS client, %s: search_tools answered no JSON: %v", r.label, err)
	}
	if names := found.names(); len(names) == 0 || names[0] != "everything__get-sum" || len(names) > 3 {
		t.Errorf("TS client, %s: \"add two numbers\" finds %v; want everything__get-sum first, at most 3", r.label, names)
	} else if props, _ := found.Tools[0].InputSchema["properties"].(map[string]any); props["a"] == nil || props["b"] == nil {
		t.Errorf("TS client, %s: get-sum comes without its input schema: %v", r.label, found.Tools[0].InputSchema)
	}
	r.wantContains(t, "call_tool everything__get-sum", r.callText(t, "sum"), "3.5")
	var echo tsCallResult
	if r.decode(t, "echo", &echo) && (echo.text() != "found and called" || echo.StructuredContent["text"] != "found and called") {
		t.Errorf("TS client, %s: call_tool alpha__echo = %+v; want the tool's text and structured content", r.label, echo)
	}
	r.wantContains(t, "call_tool trigger-long-running-operation", r.callText(t, "progress"), "Long running operation completed")
	n := len(r.notifications("notifications/progress"))
	if n != 3 {
		t.Errorf("TS client, %s: %d progress notifications through call_tool, want 3", r.label, n)
	}
	for _, s := range r.Steps {
		if s.ID == "unknown" && (s.OK || s.Error == nil || s.Error.Code == nil || *s.Error.Code != -32602 ||
			!strings.Contains(s.Error.Message, `unknown tool "everything__nosuch"`)) {
			t.Errorf("TS client, %s: call_tool of an unknown tool: ok %v, error %s; want invalid params, unknown tool", r.label, s.OK, s.Error)
		}
	}

	var recorded []string
	for _, c := range f.rec.all() {
		if c.Method == "tools/call" && c.ClientName == "switchboard-ts-harness" {
			recorded = append(recorded, fmt.Sprintf("%s:%s:%s", c.Name, c.Server, c.Outcome))
		}
	}
	r.wantListed(t, "recorded calls", recorded, "search_tools::ok", "everything__get-sum:everything:ok",
		"alpha__echo:alpha:ok", "everything__trigger-long-running-operation:everything:ok", "everything__nosuch:everything:protocol_error")
}
