package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/switchboardhq/switchboard/app/api/wire"
)

// Asks returns the calls waiting for the user's yes, oldest first.
func (c *Client) Asks(ctx context.Context) ([]wire.Ask, error) {
	var out []wire.Ask
	err := c.do(ctx, http.MethodGet, "/api/v1/asks", nil, &out)
	return out, err
}

// AnswerAsk allows or denies the pending ask id. An ask that is not
// pending (answered, timed out, unknown) is an *APIError with status 404.
func (c *Client) AnswerAsk(ctx context.Context, id string, allow bool) (wire.AskDecision, error) {
	var out wire.AskDecision
	err := c.do(ctx, http.MethodPost, "/api/v1/asks/"+url.PathEscape(id), wire.AskAnswer{Allow: allow}, &out)
	return out, err
}

// SetServerAsks turns asking before the server's destructive calls on or
// off.
func (c *Client) SetServerAsks(ctx context.Context, server string, on bool) (wire.AskSetting, error) {
	var out wire.AskSetting
	err := c.do(ctx, http.MethodPut, serverPath(server, "/ask-before-destructive"), wire.AskSetting{Enabled: on}, &out)
	return out, err
}

// SetProfileAsks turns asking before destructive calls through the
// profile's endpoint on or off.
func (c *Client) SetProfileAsks(ctx context.Context, profile string, on bool) (wire.AskSetting, error) {
	var out wire.AskSetting
	err := c.do(ctx, http.MethodPut, "/api/v1/profiles/"+url.PathEscape(profile)+"/ask-before-destructive", wire.AskSetting{Enabled: on}, &out)
	return out, err
}
