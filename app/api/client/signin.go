package client

import (
	"context"
	"net/http"

	"github.com/switchboardhq/switchboard/app/api/wire"
)

// Login starts the sign-in (OAuth) of the remote server name in the daemon
// and returns its link once known; a sign-in in progress is replaced. The
// sign-in goes on until the browser comes back or it times out: watch the
// server's Auth.
func (c *Client) Login(ctx context.Context, name string) (wire.LoginResult, error) {
	return call[wire.LoginResult](ctx, c, http.MethodPost, serverPath(name, "/login"), nil)
}

// Logout signs the remote server name out: its tokens are deleted (and
// revoked where the authorization server supports it).
func (c *Client) Logout(ctx context.Context, name string) (wire.LogoutResult, error) {
	return call[wire.LogoutResult](ctx, c, http.MethodPost, serverPath(name, "/logout"), nil)
}
