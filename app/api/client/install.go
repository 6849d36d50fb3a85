package client

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"

	"github.com/switchboardhq/switchboard/app/api/wire"
)

// SearchCatalog searches the catalog (curated servers and the registry).
func (c *Client) SearchCatalog(ctx context.Context, query string, limit int) (wire.CatalogResult, error) {
	q := url.Values{}
	if query != "" {
		q.Set("q", query)
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	return call[wire.CatalogResult](ctx, c, http.MethodGet, "/api/v1/catalog?"+q.Encode(), nil)
}

// CatalogEntry returns one catalog entry by registry or short name.
func (c *Client) CatalogEntry(ctx context.Context, name string) (wire.CatalogEntry, error) {
	return call[wire.CatalogEntry](ctx, c, http.MethodGet, "/api/v1/catalog/"+url.PathEscape(name), nil)
}

// Install starts installing a catalog entry; follow it with FollowInstall.
func (c *Client) Install(ctx context.Context, req wire.InstallRequest) (wire.InstallView, error) {
	return call[wire.InstallView](ctx, c, http.MethodPost, "/api/v1/installs", req)
}

// InstallStatus returns an install's state.
func (c *Client) InstallStatus(ctx context.Context, id string) (wire.InstallView, error) {
	return call[wire.InstallView](ctx, c, http.MethodGet, "/api/v1/installs/"+url.PathEscape(id), nil)
}

// CancelInstall cancels a running install; it rolls back.
func (c *Client) CancelInstall(ctx context.Context, id string) (wire.InstallView, error) {
	return call[wire.InstallView](ctx, c, http.MethodPost, "/api/v1/installs/"+url.PathEscape(id)+"/cancel", nil)
}

// Update starts updating an installed server to the catalog's newest
// version.
func (c *Client) Update(ctx context.Context, server string) (wire.InstallView, error) {
	return call[wire.InstallView](ctx, c, http.MethodPost, serverPath(server, "/update"), nil)
}

// CheckUpdate tells whether a newer version of an installed server exists.
func (c *Client) CheckUpdate(ctx context.Context, server string) (wire.UpdateCheck, error) {
	return call[wire.UpdateCheck](ctx, c, http.MethodGet, serverPath(server, "/update"), nil)
}

// Uninstall removes an installed server: config, processes, files, secrets.
// Its data folder stays (see UninstallResult.Data).
func (c *Client) Uninstall(ctx context.Context, server string) error {
	_, err := c.UninstallServer(ctx, server, wire.UninstallRequest{})
	return err
}

// UninstallServer is Uninstall with options (Purge deletes the server's
// data too), and says where the kept data is.
func (c *Client) UninstallServer(ctx context.Context, server string, req wire.UninstallRequest) (wire.UninstallResult, error) {
	return call[wire.UninstallResult](ctx, c, http.MethodPost, serverPath(server, "/uninstall"), req)
}

// errInstallDone ends FollowInstall's event stream.
var errInstallDone = errors.New("install done")

// FollowInstall calls fn with each progress report of the install v (as
// Install or Update returned it) until its last, and returns the install's
// final state.
func (c *Client) FollowInstall(ctx context.Context, v wire.InstallView, fn func(wire.InstallEvent)) (wire.InstallView, error) {
	err := c.Events(ctx, v.EventsSince, []string{wire.TypeInstall}, func(ev wire.Event) error {
		if ev.Type == wire.TypeReset {
			// Some reports are gone from the daemon's ring; if the last one
			// is, the install's state says it is over.
			if st, err := c.InstallStatus(ctx, v.ID); err != nil || st.Done {
				return errors.Join(err, errInstallDone)
			}
			return nil
		}
		var ie wire.InstallEvent
		if err := json.Unmarshal(ev.Data, &ie); err != nil {
			return err
		}
		if ie.ID != v.ID {
			return nil
		}
		fn(ie)
		if ie.Done {
			return errInstallDone
		}
		return nil
	})
	if err != nil && !errors.Is(err, errInstallDone) {
		return v, err
	}
	return c.InstallStatus(ctx, v.ID)
}

// LoginCode asks for a one-time sign-in link for the browser dashboard.
func (c *Client) LoginCode(ctx context.Context) (wire.LoginCode, error) {
	return call[wire.LoginCode](ctx, c, http.MethodPost, "/api/v1/login-codes", nil)
}

// KeptLoginCode is LoginCode for a "keep me signed in" session: it lasts
// DashboardKeepMaxAge and survives a restart of the daemon.
func (c *Client) KeptLoginCode(ctx context.Context) (wire.LoginCode, error) {
	return call[wire.LoginCode](ctx, c, http.MethodPost, "/api/v1/login-codes", wire.LoginCodeRequest{Keep: true})
}

// Settings returns the daemon's settings (history retention).
func (c *Client) Settings(ctx context.Context) (wire.Settings, error) {
	return call[wire.Settings](ctx, c, http.MethodGet, "/api/v1/settings", nil)
}

// UpdateSettings writes settings (PUT /api/v1/settings) and returns the
// settings in force after it. A field left out (nil) keeps its value.
func (c *Client) UpdateSettings(ctx context.Context, settings wire.Settings) (wire.Settings, error) {
	return call[wire.Settings](ctx, c, http.MethodPut, "/api/v1/settings", settings)
}
