package gateway

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/app/tiers"
)

// A tool's tier is the config's override when it has one (an invalid one
// is ignored), else its annotations' with the spec's defaults.
func TestToolTier(t *testing.T) {
	yes, no := true, false
	cfg := ServerConfig{Name: "s", Tiers: map[string]tiers.Tier{"forced_read": tiers.Read, "forced_destructive": tiers.Destructive, "bogus": "admin"}}
	for _, tc := range []struct {
		tool *mcp.Tool
		want tiers.Tier
	}{
		{&mcp.Tool{Name: "bare"}, tiers.Destructive},
		{&mcp.Tool{Name: "empty", Annotations: &mcp.ToolAnnotations{}}, tiers.Destructive},
		{&mcp.Tool{Name: "titled", Annotations: &mcp.ToolAnnotations{Title: "T", IdempotentHint: true}}, tiers.Destructive},
		{&mcp.Tool{Name: "ro", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, tiers.Read},
		{&mcp.Tool{Name: "ro_destructive", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: &yes}}, tiers.Read},
		{&mcp.Tool{Name: "writes", Annotations: &mcp.ToolAnnotations{DestructiveHint: &no}}, tiers.Write},
		{&mcp.Tool{Name: "destroys", Annotations: &mcp.ToolAnnotations{DestructiveHint: &yes}}, tiers.Destructive},
		{&mcp.Tool{Name: "forced_read", Annotations: &mcp.ToolAnnotations{DestructiveHint: &yes}}, tiers.Read},
		{&mcp.Tool{Name: "forced_destructive", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, tiers.Destructive},
		{&mcp.Tool{Name: "bogus", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, tiers.Read},
	} {
		if got := toolTier(cfg, tc.tool); got != tc.want {
			t.Errorf("toolTier(%s) = %q, want %q", tc.tool.Name, got, tc.want)
		}
	}
}
