package gateway

import (
	"slices"

	"github.com/switchboardhq/switchboard/app/tiers"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A ToolInfo describes one tool of a server, for the dashboard and the
// API: what the server lists, and whether the config hides it.
type ToolInfo struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	// Disabled is true for a tool the server's config hides from clients.
	Disabled bool `json:"disabled,omitempty"`
	// Held is true for a tool held from clients until the user approves
	// it: new, or changed since approved (see holds.go).
	Held bool `json:"held,omitempty"`
	// Tier is what the tool may do (read, write or destructive): the
	// config's override, else what its annotations say (tiers.go).
	Tier tiers.Tier `json:"tier"`
}

// Tools returns the tools server listed last, disabled ones included and
// marked, in the server's order; nil when the gateway has not listed the
// server (yet) or does not serve it.
func (g *Gateway) Tools(server string) []ToolInfo {
	g.mu.Lock()
	b, ok := g.backends[server]
	g.mu.Unlock()
	if !ok || !b.listed.Load() {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]ToolInfo, 0, len(b.features.tools))
	for _, t := range b.features.tools {
		out = append(out, ToolInfo{Name: t.Name, Title: toolTitle(t), Description: t.Description,
			Disabled: slices.Contains(b.cfg.DisabledTools, t.Name), Held: b.held[t.Name] != "", Tier: toolTier(b.cfg, t)})
	}
	return out
}

func toolTitle(t *mcp.Tool) string {
	if t.Title != "" {
		return t.Title
	}
	if t.Annotations != nil {
		return t.Annotations.Title
	}
	return ""
}
