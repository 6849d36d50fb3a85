package client

import (
	"context"
	"net/http"

	"github.com/switchboardhq/switchboard/app/api/wire"
)

// Profiles lists the profiles of config.json: their endpoint, servers, tool
// count and the clients bound to them.
func (c *Client) Profiles(ctx context.Context) ([]wire.ProfileView, error) {
	var out []wire.ProfileView
	err := c.do(ctx, http.MethodGet, "/api/v1/profiles", nil, &out)
	return out, err
}
