package e2e

import (
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/app/internal/testutil"
)

// TestToolSearchThroughTheDaemon: with "toolSearch": true in config.json,
// /mcp lists search_tools and call_tool only; a search finds the server's
// tool, call_tool calls it, and the history has both, the call under the
// real server and tool; turning the setting off in the file gives new
// sessions every tool again.
func TestToolSearchThroughTheDaemon(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	writeConfig(t, home, "alpha")
	setConfigKey(t, home, "toolSearch", true)
	d := startDaemon(t, home)
	d.waitRunning(t, "alpha")

	connect := func() *mcp.ClientSession { return mcpSessionAs(t, d, "/mcp", "cursor", "") }

	cs := connect()
	if names := testutil.ToolNames(t, cs); !slices.Equal(names, []string{"call_tool", "search_tools"}) {
		t.Fatalf("/mcp with toolSearch on lists %v; want call_tool and search_tools", names)
	}
	var found string
	testutil.Eventually(t, 30*time.Second, "search_tools to find alpha__echo", func() bool {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "search_tools", Arguments: map[string]any{"query": "echo text back"}})
		if err != nil || res.IsError {
			t.Fatalf("search_tools: %v %+v", err, res)
		}
		found = testutil.Text(res)
		return strings.Contains(found, `"name":"alpha__echo"`)
	})
	// Search mode changes the tool list only: the prompts and resources
	// are there.
	prompt, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "alpha__greet", Arguments: map[string]string{"name": "Ada"}})
	if err != nil || len(prompt.Messages) == 0 {
		t.Errorf("prompts/get alpha__greet in search mode: %v %+v", err, prompt)
	}
	read, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "test://static/hello"})
	if err != nil || len(read.Contents) == 0 || !strings.HasPrefix(read.Contents[0].Text, "hello from") {
		t.Errorf("resources/read test://static/hello in search mode: %v %+v", err, read)
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "call_tool",
		Arguments: map[string]any{"name": "alpha__echo", "arguments": map[string]any{"text": "via search"}}})
	if err != nil || res.IsError || testutil.Text(res) != "via search" {
		t.Fatalf("call_tool alpha__echo: %v %+v", err, res)
	}

	testutil.Eventually(t, 10*time.Second, "the call and the search in the history", func() bool {
		calls, err := d.client.History(t.Context(), url.Values{"server": {"alpha"}, "tool": {"alpha__echo"}})
		searches, err2 := d.client.History(t.Context(), url.Values{"tool": {"search_tools"}})
		return err == nil && err2 == nil && len(calls.Calls) == 1 && len(searches.Calls) > 0
	})
	page, _ := d.client.History(t.Context(), url.Values{"server": {"alpha"}, "tool": {"alpha__echo"}})
	c := page.Calls[0]
	if c.ClientName != "cursor" || c.Outcome != "ok" || c.Method != "tools/call" || c.Duration <= 0 || c.PID == 0 {
		t.Errorf("recorded call_tool: %+v", c)
	}
	full, err := d.client.Call(t.Context(), c.ID)
	if err != nil || !strings.Contains(string(full.Arguments), `"text":"via search"`) {
		t.Errorf("recorded call_tool %+v (%v): want the tool's own arguments", full, err)
	}

	setConfigKey(t, home, "toolSearch", false)
	testutil.EventuallyEvery(t, 20*time.Second, 100*time.Millisecond, "a new session to list every tool", func() bool {
		return slices.Contains(testutil.ToolNames(t, connect()), "alpha__echo")
	})
}
