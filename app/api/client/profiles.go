package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/switchboardhq/switchboard/app/api/wire"
)

// Profiles lists the profiles of config.json: their endpoint, servers, tool
// count and the clients bound to them.
func (c *Client) Profiles(ctx context.Context) ([]wire.ProfileView, error) {
	var out []wire.ProfileView
	err := c.do(ctx, http.MethodGet, "/api/v1/profiles", nil, &out)
	return out, err
}

// CreateProfile adds profile req.Name to config.json; the daemon serves it
// on /mcp/p/<name> at once.
func (c *Client) CreateProfile(ctx context.Context, req wire.ProfileRequest) (wire.ProfileView, error) {
	return call[wire.ProfileView](ctx, c, http.MethodPost, "/api/v1/profiles", req)
}

// UpdateProfile replaces profile name in config.json (req.Name, if given,
// must be name); the clients bound to it stay bound.
func (c *Client) UpdateProfile(ctx context.Context, name string, req wire.ProfileRequest) (wire.ProfileView, error) {
	return call[wire.ProfileView](ctx, c, http.MethodPut, profilePath(name), req)
}

// DeleteProfile removes profile name from config.json; the daemon refuses
// while a client's token is bound to it.
func (c *Client) DeleteProfile(ctx context.Context, name string) error {
	return c.do(ctx, http.MethodDelete, profilePath(name), nil, nil)
}

func profilePath(name string) string { return "/api/v1/profiles/" + url.PathEscape(name) }
