package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/switchboardhq/switchboard/app/api/wire"
)

// TryTool returns tool of server as the clients of its endpoint get it.
func (c *Client) TryTool(ctx context.Context, server, tool string) (wire.TryTool, error) {
	return call[wire.TryTool](ctx, c, http.MethodGet, "/api/v1/servers/"+url.PathEscape(server)+"/tools/"+url.PathEscape(tool), nil)
}

// TryCall calls tool of server through the daemon's own gateway, as the
// dashboard's Try does: a recorded call of the client "dashboard".
func (c *Client) TryCall(ctx context.Context, server, tool string, req wire.TryRequest) (wire.TryResult, error) {
	return call[wire.TryResult](ctx, c, http.MethodPost, "/api/v1/servers/"+url.PathEscape(server)+"/tools/"+url.PathEscape(tool)+"/call", req)
}
