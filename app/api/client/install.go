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
	var res wire.CatalogResult
	err := c.do(ctx, http.MethodGet, "/api/v1/catalog?"+q.Encode(), nil, &res)
	return res, err
}

// CatalogEntry returns one catalog entry by registry or short name.
func (c *Client) CatalogEntry(ctx context.Context, name string) (wire.CatalogEntry, error) {
	var e wire.CatalogEntry
	err := c.do(ctx, http.MethodGet, "/api/v1/catalog/"+url.PathEscape(name), nil, &e)
	return e, err
}

// Install starts installing a catalog entry; follow it with FollowInstall.
func (c *Client) Install(ctx context.Context, req wire.InstallRequest) (wire.InstallView, error) {
	var v wire.InstallView
	err := c.do(ctx, http.MethodPost, "/api/v1/installs", req, &v)
	return v, err
}

// InstallStatus returns an install's state.
func (c *Client) InstallStatus(ctx context.Context, id string) (wire.InstallView, error) {
	var v wire.InstallView
	err := c.do(ctx, http.MethodGet, "/api/v1/installs/"+url.PathEscape(id), nil, &v)
	return v, err
}

// CancelInstall cancels a running install; it rolls back.
func (c *Client) CancelInstall(ctx context.Context, id string) (wire.InstallView, error) {
	var v wire.InstallView
	err := c.do(ctx, http.MethodPost, "/api/v1/installs/"+url.PathEscape(id)+"/cancel", nil, &v)
	return v, err
}

// Update starts updating an installed server to the catalog's newest
// version.
func (c *Client) Update(ctx context.Context, server string) (wire.InstallView, error) {
	var v wire.InstallView
	err := c.do(ctx, http.MethodPost, serverPath(server, "/update"), nil, &v)
	return v, err
}

// CheckUpdate tells whether a newer version of an installed server exists.
func (c *Client) CheckUpdate(ctx context.Context, server string) (wire.UpdateCheck, error) {
	var u wire.UpdateCheck
	err := c.do(ctx, http.MethodGet, serverPath(server, "/update"), nil, &u)
	return u, err
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
	var out wire.UninstallResult
	err := c.do(ctx, http.MethodPost, serverPath(server, "/uninstall"), req, &out)
	return out, err
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
	var lc wire.LoginCode
	err := c.do(ctx, http.MethodPost, "/api/v1/login-codes", nil, &lc)
	return lc, err
}

// KeptLoginCode is LoginCode for a "keep me signed in" session: it lasts
// DashboardKeepMaxAge and survives a restart of the daemon.
func (c *Client) KeptLoginCode(ctx context.Context) (wire.LoginCode, error) {
	var lc wire.LoginCode
	err := c.do(ctx, http.MethodPost, "/api/v1/login-codes", wire.LoginCodeRequest{Keep: true}, &lc)
	return lc, err
}

// Settings returns the daemon's settings (history retention).
func (c *Client) Settings(ctx context.Context) (wire.Settings, error) {
	var s wire.Settings
	err := c.do(ctx, http.MethodGet, "/api/v1/settings", nil, &s)
	return s, err
}
