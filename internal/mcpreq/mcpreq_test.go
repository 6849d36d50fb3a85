package mcpreq

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A request without params ({"method":"notifications/initialized"}, as
// the TypeScript SDK, and so Claude Desktop, sends it; or a tools/list
// without params) has typed-nil params: reading its clientInfo must not
// panic (it crashed the bridge at the client's first notification), and
// Params says it has none.
func TestClientInfoWithoutParams(t *testing.T) {
	for _, req := range []mcp.Request{
		&mcp.ServerRequest[*mcp.InitializedParams]{},
		&mcp.ServerRequest[*mcp.ListToolsParams]{},
		&mcp.ServerRequest[*mcp.CallToolParamsRaw]{},
	} {
		if name, version := ClientInfo(req); name != "" || version != "" {
			t.Errorf("ClientInfo(%T without params) = %q %q", req, name, version)
		}
		if p := Params(req); p != nil {
			t.Errorf("Params(%T without params) = %#v, want nil", req, p)
		}
	}
	req := &mcp.ServerRequest[*mcp.CallToolParamsRaw]{Params: &mcp.CallToolParamsRaw{
		Meta: mcp.Meta{mcp.MetaKeyClientInfo: map[string]any{"name": "claude-ai", "version": "0.9"}}}}
	if name, version := ClientInfo(req); name != "claude-ai" || version != "0.9" {
		t.Errorf("ClientInfo from _meta = %q %q", name, version)
	}
}
