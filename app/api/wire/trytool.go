package wire

import (
	"encoding/json"
	"time"
)

// TryTool is one tool of a server as an MCP client is given it on the
// server's endpoint (GET /api/v1/servers/{name}/tools/{tool}): what the
// dashboard's Try form is generated from.
type TryTool struct {
	Server       string          `json:"server"`
	Name         string          `json:"name"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Annotations  json.RawMessage `json:"annotations,omitempty"`
}

// TryRequest calls a tool from the dashboard
// (POST /api/v1/servers/{name}/tools/{tool}/call).
type TryRequest struct {
	// Arguments are the tool's arguments, a JSON object; absent: none.
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// TryClientName is the client name (and token label) a tool tried from
// the dashboard is called and recorded under.
const TryClientName = "dashboard"

// TryResult is what the call answered, as the client (the daemon, on its
// own MCP endpoint) got it.
type TryResult struct {
	Server string `json:"server"`
	Tool   string `json:"tool"`
	// Result is the tools/call result as the client received it (content,
	// structuredContent, isError, _meta); absent when Error is set.
	Result json.RawMessage `json:"result,omitempty"`
	// Error is the JSON-RPC error the endpoint answered instead of a
	// result (an unknown tool, invalid arguments, a held tool).
	Error string `json:"error,omitempty"`
	// Duration is how long the call took, as the client measured it.
	Duration time.Duration `json:"duration"`
	// Session is the MCP session the call was made in: its history row
	// carries it.
	Session string `json:"session,omitempty"`
}
