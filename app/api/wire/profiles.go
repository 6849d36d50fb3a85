package wire

// ProfileView is one profile of config.json (GET /api/v1/profiles): a
// named set of servers, and optionally of tools within them, served on
// /mcp/p/<name>.
type ProfileView struct {
	Name string `json:"name"`
	// Endpoint is the profile's MCP endpoint path, /mcp/p/<name>.
	Endpoint string `json:"endpoint"`
	// Servers are the servers it names that run; Missing those it names
	// that are not configured or not enabled (left out of its endpoint).
	Servers []string `json:"servers"`
	Missing []string `json:"missing,omitempty"`
	// Tools limits servers' tools, as in config.json.
	Tools      map[string][]string `json:"tools,omitempty"`
	ToolSearch bool                `json:"toolSearch,omitempty"`
	// MaxTier caps the tiers of the tools its endpoint offers ("read" or
	// "write"; absent: no cap).
	MaxTier string `json:"maxTier,omitempty"`
	// MissingTools are, by server, the tools Tools names that the server
	// does not offer (a typo, a tool it dropped): its endpoint leaves them
	// out. Only servers whose tools are known (listed) are judged.
	MissingTools map[string][]string `json:"missingTools,omitempty"`
	// ToolCount is how many tools its endpoint lists now (absent when the
	// daemon cannot tell).
	ToolCount *int `json:"toolCount,omitempty"`
	// Clients are the labels of the tokens bound to it.
	Clients []string `json:"clients,omitempty"`
}
