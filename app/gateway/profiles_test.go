package gateway_test

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/app/gateway"
	"github.com/switchboardhq/switchboard/app/internal/testutil"
	"github.com/switchboardhq/switchboard/app/record"
)

// A profile's endpoint serves its servers (and tools) aggregated under the
// names of /mcp, in every protocol era; calls reach the right server and
// are recorded with the profile's endpoint; tools outside it are refused.
// Changing the profiles applies to open sessions, and an unknown profile
// is a 404 naming it.
func TestProfileEndpoint(t *testing.T) {
	f := newFixture(t, gateway.ServerConfig{Name: "alpha"}, gateway.ServerConfig{Name: "beta", DisabledTools: []string{"crash"}},
		gateway.ServerConfig{Name: "gamma", Alias: "g"})
	f.gw.SetProfiles([]gateway.ProfileConfig{
		{Name: "coding", Servers: []string{"alpha", "gamma", "not-installed"}, Tools: map[string][]string{"alpha": {"echo", "sleep"}}},
		{Name: "beta-only", Servers: []string{"beta"}},
	})
	all := f.connect(t, "/mcp", "2025-11-25", nil)
	allTools := f.waitTools(t, all, "alpha__echo", "beta__echo", "g__echo")

	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			cs := f.connect(t, "/mcp/p/coding", era, nil)
			var want []string
			for _, tool := range allTools {
				if tool.Name == "alpha__echo" || tool.Name == "alpha__sleep" || strings.HasPrefix(tool.Name, "g__") {
					want = append(want, tool.Name)
				}
			}
			slices.Sort(want)
			// Tools are registered one by one: poll for the whole list.
			testutil.Eventually(t, 10*time.Second, "exactly the profile's tools", func() bool {
				return slices.Equal(testutil.ToolNames(t, cs), want)
			})
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "g__env", Arguments: map[string]any{"name": "SWITCHBOARD_TESTMCP_NAME"}})
			if err != nil || text(res) != "gamma" {
				t.Errorf("g__env on the profile reached %q (%v), want gamma", text(res), err)
			}
			for _, name := range []string{"alpha__crash", "beta__echo"} {
				if res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name}); err == nil && !res.IsError {
					t.Errorf("%s, outside the profile, was called: %s", name, text(res))
				}
			}
		})
	}
	// The legacy HTTP+SSE transport serves the profile too.
	sse, err := mcp.NewClient(&mcp.Implementation{Name: "old-client", Version: "1"}, nil).
		Connect(t.Context(), &mcp.SSEClientTransport{Endpoint: f.url + "/sse/p/coding"}, nil)
	if err != nil {
		t.Fatalf("SSE connect /sse/p/coding: %v", err)
	}
	f.waitTools(t, sse, "alpha__echo")
	if res, err := sse.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": "old school"}}); err != nil || text(res) != "old school" {
		t.Errorf("/sse/p/coding: call: %q %v", text(res), err)
	}
	if res, err := sse.CallTool(t.Context(), &mcp.CallToolParams{Name: "beta__echo"}); err == nil && !res.IsError {
		t.Error("/sse/p/coding called a tool outside the profile")
	}
	sse.Close()

	if n, ok := f.gw.ToolCount("coding"); !ok || n != len(testutil.ToolNames(t, f.connect(t, "/mcp/p/coding", "2025-11-25", nil))) {
		t.Errorf("ToolCount(coding) = %d, %v", n, ok)
	}
	if n, ok := f.gw.ToolCount(""); !ok || n != len(allTools) {
		t.Errorf("ToolCount(\"\") = %d, %v; /mcp lists %d", n, ok, len(allTools))
	}
	if _, ok := f.gw.ToolCount("nope"); ok {
		t.Error("ToolCount of an unknown profile")
	}
	if n, ok := f.gw.ReachableToolCount("coding"); !ok || n != len(testutil.ToolNames(t, f.connect(t, "/mcp/p/coding", "2025-11-25", nil))) {
		t.Errorf("ReachableToolCount(coding) = %d, %v; out of search mode, the tools it lists", n, ok)
	}
	testutil.Eventually(t, 10*time.Second, "the profile's call in the record", func() bool {
		return slices.ContainsFunc(f.rec.all(), func(c record.Call) bool {
			return c.Endpoint == "p/coding" && c.Server == "gamma" && c.Name == "g__env"
		})
	})

	beta := f.connect(t, "/mcp/p/beta-only", "2025-11-25", nil)
	var betaWant []string
	for _, tool := range allTools {
		if strings.HasPrefix(tool.Name, "beta__") {
			betaWant = append(betaWant, tool.Name)
		}
	}
	slices.Sort(betaWant)
	testutil.Eventually(t, 10*time.Second, "beta's tools, and only them, on /mcp/p/beta-only", func() bool {
		return slices.Equal(testutil.ToolNames(t, beta), betaWant)
	})
	if slices.Contains(betaWant, "beta__crash") {
		t.Error("beta's disabled tool is listed on /mcp")
	}

	// Live: coding gains every tool of alpha; beta-only goes, its session
	// is closed and its endpoint is a 404.
	coding := f.connect(t, "/mcp/p/coding", "2025-11-25", nil)
	f.gw.SetProfiles([]gateway.ProfileConfig{{Name: "coding", Servers: []string{"alpha", "gamma"}}})
	testutil.Eventually(t, 10*time.Second, "alpha__crash on the changed profile", func() bool {
		return slices.Contains(testutil.ToolNames(t, coding), "alpha__crash")
	})
	testutil.Eventually(t, 10*time.Second, "the removed profile's session closed", func() bool {
		_, err := beta.ListTools(t.Context(), nil)
		return err != nil
	})
	for path, want := range map[string]string{"/mcp/p/beta-only": `unknown profile "beta-only"`, "/mcp/p/nope": `unknown profile "nope"`} {
		resp, err := http.Post(f.url+path, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var refusal struct {
			Error struct{ Message string } `json:"error"`
		}
		if resp.StatusCode != http.StatusNotFound || json.Unmarshal(body, &refusal) != nil || !strings.HasPrefix(refusal.Error.Message, want) {
			t.Errorf("%s: %d %s", path, resp.StatusCode, body)
		}
	}

	// A server leaving the gateway leaves the profile too.
	f.gw.Sync([]gateway.ServerConfig{{Name: "alpha"}, {Name: "beta", DisabledTools: []string{"crash"}}})
	testutil.Eventually(t, 10*time.Second, "gamma gone from the profile", func() bool {
		return !slices.ContainsFunc(testutil.ToolNames(t, coding), func(n string) bool { return strings.HasPrefix(n, "g__") })
	})
}

// A profile's tool list naming a tool the server's config disables (or one
// the server does not list) does not bring it back: disabledTools wins,
// on the list, the count and a call.
func TestProfileToolsKeepDisabledToolsHidden(t *testing.T) {
	f := newFixture(t, gateway.ServerConfig{Name: "beta", DisabledTools: []string{"crash"}})
	f.gw.SetProfiles([]gateway.ProfileConfig{
		{Name: "p", Servers: []string{"beta"}, Tools: map[string][]string{"beta": {"echo", "crash", "no_such_tool"}}},
	})
	f.waitTools(t, f.connect(t, "/mcp", "2025-11-25", nil), "beta__echo")
	cs := f.connect(t, "/mcp/p/p", "2025-11-25", nil)
	testutil.Eventually(t, 10*time.Second, "only beta__echo on the profile", func() bool {
		return slices.Equal(testutil.ToolNames(t, cs), []string{"beta__echo"})
	})
	if n, ok := f.gw.ToolCount("p"); !ok || n != 1 {
		t.Errorf("ToolCount(p) = %d, %v; want 1", n, ok)
	}
	if res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "beta__crash"}); err == nil && !res.IsError {
		t.Errorf("beta__crash, disabled, was called on the profile: %s", text(res))
	}
}
