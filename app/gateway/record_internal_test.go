package gateway

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A request without params ({"method":"notifications/initialized"}, as
// the TypeScript SDK, and so Claude Desktop, sends it; or a tools/list
// without params) has typed-nil params: reading its clientInfo must not
// panic (it crashed the bridge at the client's first notification).
func TestClientInfoWithoutParams(t *testing.T) {
	for _, req := range []mcp.Request{
		&mcp.ServerRequest[*mcp.InitializedParams]{},
		&mcp.ServerRequest[*mcp.ListToolsParams]{},
		&mcp.ServerRequest[*mcp.CallToolParamsRaw]{},
	} {
		if name, version := clientInfo(req); name != "" || version != "" {
			t.Errorf("clientInfo(%T without params) = %q %q", req, name, version)
		}
	}
	req := &mcp.ServerRequest[*mcp.CallToolParamsRaw]{Params: &mcp.CallToolParamsRaw{
		Meta: mcp.Meta{mcp.MetaKeyClientInfo: map[string]any{"name": "claude-ai", "version": "0.9"}}}}
	if name, version := clientInfo(req); name != "claude-ai" || version != "0.9" {
		t.Errorf("clientInfo from _meta = %q %q", name, version)
	}
}
