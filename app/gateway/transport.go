package gateway

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// WrapTransport wraps a backend process's transport
// (supervisor.Options.WrapTransport) so that each progress notification is
// counted for its call as it is read: the read loop reads a server's
// messages in order, so by the time a call's response is read, every
// progress notification sent before it has been counted (see drain).
func (g *Gateway) WrapTransport(_ string, t mcp.Transport) mcp.Transport {
	return countingTransport{Transport: t, g: g}
}

type countingTransport struct {
	mcp.Transport
	g *Gateway
}

func (t countingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return countingConn{Connection: c, g: t.g}, nil
}

type countingConn struct {
	mcp.Connection
	g *Gateway
}

func (c countingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "notifications/progress" {
		var p struct {
			Token any `json:"progressToken"`
		}
		if json.Unmarshal(req.Params, &p) == nil {
			if token, ok := p.Token.(string); ok {
				if v, ok := c.g.progress.Load(token); ok {
					v.(*progressRoute).seen.Add(1)
				}
			}
		}
	}
	return msg, err
}
