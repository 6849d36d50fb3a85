package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/switchboardhq/switchboard/app/api/wire"
)

// HeldTools returns the tools held from clients until approved, of every
// server, or of server when it is not "".
func (c *Client) HeldTools(ctx context.Context, server string) ([]wire.HeldTool, error) {
	path := "/api/v1/held-tools"
	if server != "" {
		path += "?" + url.Values{"server": {server}}.Encode()
	}
	var out []wire.HeldTool
	err := c.do(ctx, http.MethodGet, path, nil, &out)
	return out, err
}

// ApproveTools approves server's held tool req.Tool, or all of them. A
// tool that is not held (or a server with none) is an *APIError with
// status 404; one that changed again since req.Fingerprint, 409.
func (c *Client) ApproveTools(ctx context.Context, server string, req wire.ApproveRequest) (wire.ApproveResult, error) {
	var out wire.ApproveResult
	err := c.do(ctx, http.MethodPost, serverPath(server, "/approve"), req, &out)
	return out, err
}
