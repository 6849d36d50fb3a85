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
	// AskBeforeDestructive makes a call of a destructive tool through its
	// endpoint wait for the user's yes.
	AskBeforeDestructive bool `json:"askBeforeDestructive,omitempty"`
	// MissingTools are, by server, the tools Tools names that the server
	// does not offer (a typo, a tool it dropped): its endpoint leaves them
	// out. Only servers whose tools are known (listed) are judged.
	MissingTools map[string][]string `json:"missingTools,omitempty"`
	// ToolCount is how many tools its endpoint lists now (absent when the
	// daemon cannot tell): in search mode, its two (search_tools and
	// call_tool).
	ToolCount *int `json:"toolCount,omitempty"`
	// ReachableTools is how many tools a client reaches through it: those
	// it lists, or in search mode those its two find and call (absent when
	// the daemon cannot tell).
	ReachableTools *int `json:"reachableTools,omitempty"`
	// Clients are the labels of the tokens bound to it.
	Clients []string `json:"clients,omitempty"`
}

// ProfileRequest creates a profile (POST /api/v1/profiles, Name required)
// or replaces one (PUT /api/v1/profiles/{name}; Name, if given, must be
// the path's: a profile is not renamed). Its fields are a profile's in
// config.json; unknown fields are refused.
type ProfileRequest struct {
	Name string `json:"name,omitempty"`
	// Servers are the servers it serves, by name: at least one, each
	// configured (a server already in the profile may stay when it is
	// not, as config.json allows).
	Servers []string `json:"servers"`
	// Tools limits a server's tools to the ones listed; each key is one of
	// Servers, each list non-empty.
	Tools      map[string][]string `json:"tools,omitempty"`
	ToolSearch bool                `json:"toolSearch,omitempty"`
	// MaxTier caps the tiers of its tools: "read", "write" or
	// "destructive"; "" caps nothing.
	MaxTier string `json:"maxTier,omitempty"`
}
