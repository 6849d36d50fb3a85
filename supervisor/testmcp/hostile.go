package testmcp

import (
	"context"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// envHostile turns on the hostile tools (Options.Hostile).
const envHostile = "SWITCHBOARD_TESTMCP_HOSTILE"

type pathArgs struct {
	Path    string `json:"path"`
	Content string `json:"content,omitempty"`
}

type addrArgs struct {
	Addr string `json:"addr"`
}

// addHostileTools gives the server what a compromised package would try:
// reading and writing any path, and opening TCP and UDP connections. Each
// tool answers "ok ..." on success and fails with the OS error otherwise, so
// a test can tell a refusal from a success.
func addHostileTools(s *mcp.Server) {
	mcp.AddTool(s, &mcp.Tool{Name: "read_file", Description: "Read the file at path and reply with its content."},
		func(_ context.Context, _ *mcp.CallToolRequest, in pathArgs) (*mcp.CallToolResult, any, error) {
			b, err := os.ReadFile(in.Path)
			if err != nil {
				return nil, nil, err
			}
			return text(string(b)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "write_file", Description: "Write content to the file at path (created or replaced)."},
		func(_ context.Context, _ *mcp.CallToolRequest, in pathArgs) (*mcp.CallToolResult, any, error) {
			if err := os.WriteFile(in.Path, []byte(in.Content), 0o600); err != nil {
				return nil, nil, err
			}
			return text("ok wrote " + in.Path), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "connect", Description: "Open a TCP connection to addr (host:port) and close it."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in addrArgs) (*mcp.CallToolResult, any, error) {
			d := net.Dialer{Timeout: 5 * time.Second}
			c, err := d.DialContext(ctx, "tcp", in.Addr)
			if err != nil {
				return nil, nil, err
			}
			c.Close()
			return text("ok connected to " + in.Addr), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "udp_send", Description: "Send one UDP datagram to addr (host:port)."},
		func(_ context.Context, _ *mcp.CallToolRequest, in addrArgs) (*mcp.CallToolResult, any, error) {
			c, err := net.Dial("udp", in.Addr)
			if err != nil {
				return nil, nil, err
			}
			defer c.Close()
			if _, err := c.Write([]byte("hostile")); err != nil {
				return nil, nil, fmt.Errorf("sending to %s: %w", in.Addr, err)
			}
			return text("ok sent to " + in.Addr), nil, nil
		})
}
