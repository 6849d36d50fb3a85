// Package client is the Go client of the daemon's local API: what the CLI,
// the tray and the window use to talk to the daemon. It speaks the types of
// app/api/wire only, so that importing it links neither the server nor the
// daemon's internals (the supervisor, the history, the catalog's installer,
// the clients' config editor).
package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/switchboardhq/switchboard/app/api/wire"
)

// A Client calls the daemon's API. Its methods mirror the routes one to one
// and are safe for concurrent use. The zero value is not usable: set BaseURL
// and Token.
type Client struct {
	// BaseURL is the daemon's address, e.g. "http://127.0.0.1:7391".
	BaseURL string
	// Token is the bearer secret sent with every request.
	Token string
	// HTTP is the client used; nil means http.DefaultClient. Requests are
	// bounded by their context only: starting a server may take minutes and
	// FollowLogs does not end by itself, so do not set a Timeout here.
	HTTP *http.Client
}

// An APIError is an answer of the API with status 400 or above. Its Error is
// the API's message, written for a user to read.
type APIError struct {
	Status  int
	Message string
}

func (e *APIError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("HTTP %d %s", e.Status, http.StatusText(e.Status))
	}
	return e.Message
}

// Status returns the daemon's status.
func (c *Client) Status(ctx context.Context) (wire.Status, error) {
	return call[wire.Status](ctx, c, http.MethodGet, "/api/v1/status", nil)
}

// Servers returns every configured server, sorted by name.
func (c *Client) Servers(ctx context.Context) ([]wire.ServerView, error) {
	return call[[]wire.ServerView](ctx, c, http.MethodGet, "/api/v1/servers", nil)
}

// Server returns one server; an unknown name is an *APIError with status 404.
func (c *Client) Server(ctx context.Context, name string) (wire.ServerView, error) {
	return call[wire.ServerView](ctx, c, http.MethodGet, serverPath(name, ""), nil)
}

// AddServer adds a server to config.json. An existing name is an *APIError
// with status 409; an invalid server, 400 with the field named.
func (c *Client) AddServer(ctx context.Context, name string, s wire.ServerConfig) (wire.ServerView, error) {
	return call[wire.ServerView](ctx, c, http.MethodPost, "/api/v1/servers", wire.AddServerRequest{Name: name, Server: s})
}

// AddRemote adds a remote server to config.json, its secret headers to
// the secret store. An existing name is an *APIError with status 409; an
// invalid entry, 400 with the field named.
func (c *Client) AddRemote(ctx context.Context, req wire.AddRemoteRequest) (wire.ServerView, error) {
	return call[wire.ServerView](ctx, c, http.MethodPost, "/api/v1/remotes", req)
}

// UpdateServer replaces a server's entry in config.json.
func (c *Client) UpdateServer(ctx context.Context, name string, s wire.ServerConfig) (wire.ServerView, error) {
	return call[wire.ServerView](ctx, c, http.MethodPut, serverPath(name, ""), s)
}

// RemoveServer removes a server from config.json, stopping its processes.
func (c *Client) RemoveServer(ctx context.Context, name string) error {
	return c.do(ctx, http.MethodDelete, serverPath(name, ""), nil, nil)
}

// Start starts a server and returns it once a process is ready.
func (c *Client) Start(ctx context.Context, name string) (wire.ServerView, error) {
	return c.action(ctx, name, "start")
}

// Stop stops a server and returns it once its processes have exited.
func (c *Client) Stop(ctx context.Context, name string) (wire.ServerView, error) {
	return c.action(ctx, name, "stop")
}

// Restart restarts a server and returns it once a new process is ready.
func (c *Client) Restart(ctx context.Context, name string) (wire.ServerView, error) {
	return c.action(ctx, name, "restart")
}

// Quit asks the daemon to stop every server and exit; it returns once the
// daemon said it is quitting, not once it exited.
func (c *Client) Quit(ctx context.Context) (wire.Quit, error) {
	return call[wire.Quit](ctx, c, http.MethodPost, "/api/v1/quit", nil)
}

func (c *Client) action(ctx context.Context, name, verb string) (wire.ServerView, error) {
	return call[wire.ServerView](ctx, c, http.MethodPost, serverPath(name, "/"+verb), nil)
}

// Logs returns the server's last n log lines, oldest first; n < 0 means the
// API's default (DefaultLogLines).
func (c *Client) Logs(ctx context.Context, name string, n int) ([]wire.LogLine, error) {
	return call[[]wire.LogLine](ctx, c, http.MethodGet, serverPath(name, "/logs")+logQuery(n, false), nil)
}

// FollowLogs calls fn with the server's last n log lines (n < 0: the API's
// default), then with each new line as the server writes it, until ctx ends
// (it then returns ctx's error) or the daemon ends the stream (an error).
// fn runs on the caller's goroutine.
func (c *Client) FollowLogs(ctx context.Context, name string, n int, fn func(wire.LogLine)) error {
	what := fmt.Sprintf("following logs of %q", name)
	return c.follow(ctx, serverPath(name, "/logs")+logQuery(n, true), what, func(ev sseEvent) error {
		var l wire.LogLine
		if err := json.Unmarshal(ev.data, &l); err != nil {
			return fmt.Errorf("%s: bad event: %w", what, err)
		}
		fn(l)
		return nil
	})
}

// Events follows the daemon's event stream: fn gets each event after since
// (0: only new ones) of the given types (none: all), until ctx ends (Events
// then returns ctx's error), fn returns an error, or the daemon closes the
// stream. A reset (events after since were lost) reaches fn as an event of
// type wire.TypeReset with ID 0. Callers that want to follow forever reconnect
// with the last ID they saw.
func (c *Client) Events(ctx context.Context, since uint64, types []string, fn func(wire.Event) error) error {
	q := url.Values{}
	if since > 0 {
		q.Set("since", strconv.FormatUint(since, 10))
	}
	if len(types) > 0 {
		q.Set("types", strings.Join(types, ","))
	}
	path := "/api/v1/events"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	return c.follow(ctx, path, "following events", func(se sseEvent) error {
		ev := wire.Event{Type: se.event, Data: json.RawMessage(slices.Clone(se.data))}
		if se.id != "" {
			id, err := strconv.ParseUint(se.id, 10, 64)
			if err != nil {
				return fmt.Errorf("following events: bad event id %q", se.id)
			}
			ev.ID = id
		}
		return fn(ev)
	})
}

// follow reads the server-sent events at path and calls fn with each, until
// ctx ends (follow then returns ctx's error), fn returns an error, or the
// daemon closes the stream (an error). what names the stream in errors
// ("following events").
func (c *Client) follow(ctx context.Context, path, what string, fn func(sseEvent) error) error {
	resp, err := c.send(ctx, http.MethodGet, path, nil, "text/event-stream")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); ct != "text/event-stream" {
		return fmt.Errorf("%s: the daemon answered %q, not an event stream", what, ct)
	}
	err = readEvents(resp.Body, fn)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		return err
	}
	return fmt.Errorf("%s: the daemon closed the stream", what)
}

// sseEvent is one server-sent event. data is only valid during the
// callback that receives it.
type sseEvent struct {
	id, event string
	data      []byte
}

// readEvents calls fn with each server-sent event read from r
// (https://html.spec.whatwg.org/multipage/server-sent-events.html), until r
// ends.
func readEvents(r io.Reader, fn func(sseEvent) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	var ev sseEvent
	have := false
	for sc.Scan() {
		line := sc.Bytes()
		switch {
		case len(line) == 0: // end of an event
			if have {
				if err := fn(ev); err != nil {
					return err
				}
			}
			ev, have = sseEvent{data: ev.data[:0]}, false
		case line[0] == ':': // comment (keep-alive)
		default:
			field, value, _ := bytes.Cut(line, []byte(":"))
			value = bytes.TrimPrefix(value, []byte(" "))
			switch string(field) {
			case "data":
				if have {
					ev.data = append(ev.data, '\n')
				}
				ev.data, have = append(ev.data, value...), true
			case "id":
				ev.id = string(value)
			case "event":
				ev.event = string(value)
			}
		}
	}
	return sc.Err()
}

func logQuery(n int, follow bool) string {
	q := url.Values{}
	if n >= 0 {
		q.Set("n", strconv.Itoa(n))
	}
	if follow {
		q.Set("follow", "1")
	}
	if len(q) == 0 {
		return ""
	}
	return "?" + q.Encode()
}

func serverPath(name, suffix string) string {
	return "/api/v1/servers/" + url.PathEscape(name) + suffix
}

// call sends a request with in (if not nil) as its JSON body and returns
// the JSON answer as a T.
func call[T any](ctx context.Context, c *Client, method, path string, in any) (T, error) {
	var out T
	err := c.do(ctx, method, path, in, &out)
	return out, err
}

// do sends a request with in (if not nil) as its JSON body and decodes the
// JSON answer into out (if not nil).
func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	resp, err := c.send(ctx, method, path, in, "application/json")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil || resp.StatusCode == http.StatusNoContent {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // let the connection be reused
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("%s %s: reading the answer: %w", method, path, err)
	}
	return nil
}

// send sends a request and returns the response if its status is below
// 400, or else an *APIError.
func (c *Client) send(ctx context.Context, method, path string, in any, accept string) (*http.Response, error) {
	var body io.Reader
	if in != nil {
		data, err := json.Marshal(in)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", method, path, err)
		}
		body = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(c.BaseURL, "/")+path, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", accept)
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode >= 400 {
		defer resp.Body.Close()
		return nil, readAPIError(resp)
	}
	return resp, nil
}

func readAPIError(resp *http.Response) error {
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	e := &APIError{Status: resp.StatusCode}
	var er wire.ErrorResponse
	if err := json.Unmarshal(data, &er); err == nil && er.Error != "" {
		e.Message = er.Error
	} else if text := strings.TrimSpace(string(data)); text != "" {
		e.Message = fmt.Sprintf("HTTP %d: %s", resp.StatusCode, text)
	}
	return e
}

// IsNotFound reports whether err is an *APIError with status 404.
func IsNotFound(err error) bool {
	e, ok := errors.AsType[*APIError](err)
	return ok && e.Status == http.StatusNotFound
}

// History returns a page of recorded calls matching q (see
// GET /api/v1/history for the parameters).
func (c *Client) History(ctx context.Context, q url.Values) (wire.CallPage, error) {
	return call[wire.CallPage](ctx, c, http.MethodGet, "/api/v1/history?"+q.Encode(), nil)
}

// Lifecycle returns the recorded lifecycle events; q takes server, since
// and limit, as GET /api/v1/lifecycle does.
func (c *Client) Lifecycle(ctx context.Context, q url.Values) ([]wire.LifecycleEvent, error) {
	return call[[]wire.LifecycleEvent](ctx, c, http.MethodGet, "/api/v1/lifecycle?"+q.Encode(), nil)
}

// Call returns one recorded call with its arguments and response preview.
func (c *Client) Call(ctx context.Context, id int64) (wire.Call, error) {
	return call[wire.Call](ctx, c, http.MethodGet, "/api/v1/history/"+strconv.FormatInt(id, 10), nil)
}

// Stats returns call counts, error rates and latencies per server (by
// "server") or per tool (by "tool") since the given time ("" = a day).
func (c *Client) Stats(ctx context.Context, since, by string) ([]wire.Stat, error) {
	q := url.Values{}
	if since != "" {
		q.Set("since", since)
	}
	if by != "" {
		q.Set("by", by)
	}
	return call[[]wire.Stat](ctx, c, http.MethodGet, "/api/v1/stats?"+q.Encode(), nil)
}

// Clients lists the MCP clients found on this machine.
func (c *Client) Clients(ctx context.Context) ([]wire.ClientView, error) {
	return call[[]wire.ClientView](ctx, c, http.MethodGet, "/api/v1/clients", nil)
}

// PlanClient shows what a change to a client's config would write.
func (c *Client) PlanClient(ctx context.Context, id string, change wire.ClientChange) (wire.ClientPlan, error) {
	return call[wire.ClientPlan](ctx, c, http.MethodPost, "/api/v1/clients/"+url.PathEscape(id)+"/plan", change)
}

// ApplyClient makes the change of a plan (change.Hash is the plan's Hash).
func (c *Client) ApplyClient(ctx context.Context, id string, change wire.ClientChange) (wire.ClientApplied, error) {
	return call[wire.ClientApplied](ctx, c, http.MethodPost, "/api/v1/clients/"+url.PathEscape(id)+"/apply", change)
}

// clientPath is the path of a client's route, with ?workspace= when
// workspace (VS Code's workspace folder, absolute) is not empty.
func clientPath(id, suffix, workspace string) string {
	p := "/api/v1/clients"
	if id != "" {
		p += "/" + url.PathEscape(id)
	}
	p += suffix
	if workspace != "" {
		p += "?" + url.Values{"workspace": {workspace}}.Encode()
	}
	return p
}

// ClientsIn lists the MCP clients, with VS Code's workspace file of the
// folder workspace (absolute; "" is the same as Clients).
func (c *Client) ClientsIn(ctx context.Context, workspace string) ([]wire.ClientView, error) {
	return call[[]wire.ClientView](ctx, c, http.MethodGet, clientPath("", "", workspace), nil)
}

// PlanClientIn is PlanClient for the clients of a workspace folder.
func (c *Client) PlanClientIn(ctx context.Context, id, workspace string, change wire.ClientChange) (wire.ClientPlan, error) {
	return call[wire.ClientPlan](ctx, c, http.MethodPost, clientPath(id, "/plan", workspace), change)
}

// ApplyClientIn is ApplyClient for the clients of a workspace folder.
func (c *Client) ApplyClientIn(ctx context.Context, id, workspace string, change wire.ClientChange) (wire.ClientApplied, error) {
	return call[wire.ClientApplied](ctx, c, http.MethodPost, clientPath(id, "/apply", workspace), change)
}

// OfferClient asks for the install link of a client that keeps no file
// Switchboard may edit (Cherry Studio), for the caller to open; the
// client's token is issued and bound to req.Profile.
func (c *Client) OfferClient(ctx context.Context, id string, req wire.ClientOfferRequest) (wire.ClientOffer, error) {
	return call[wire.ClientOffer](ctx, c, http.MethodPost, clientPath(id, "/offer", ""), req)
}

// PlanImport shows what importing a client's servers would do: the
// servers added to Switchboard (secret values only named) and, with
// req.Replace, the diff of the client's file. workspace may be "".
func (c *Client) PlanImport(ctx context.Context, id, workspace string, req wire.ImportRequest) (wire.ImportPlan, error) {
	return call[wire.ImportPlan](ctx, c, http.MethodPost, clientPath(id, "/import/plan", workspace), req)
}

// ApplyImport does the import of a plan (req.Hash is the plan's Hash).
func (c *Client) ApplyImport(ctx context.Context, id, workspace string, req wire.ImportRequest) (wire.ImportResult, error) {
	return call[wire.ImportResult](ctx, c, http.MethodPost, clientPath(id, "/import/apply", workspace), req)
}

// Backups lists the backups of a client's file, oldest first.
func (c *Client) Backups(ctx context.Context, id, workspace string) ([]wire.BackupView, error) {
	return call[[]wire.BackupView](ctx, c, http.MethodGet, clientPath(id, "/backups", workspace), nil)
}

// PlanRestore shows the diff that restoring a backup would make.
func (c *Client) PlanRestore(ctx context.Context, id, workspace string, req wire.RestoreRequest) (wire.ClientPlan, error) {
	return call[wire.ClientPlan](ctx, c, http.MethodPost, clientPath(id, "/restore/plan", workspace), req)
}

// ApplyRestore restores a backup as planned (req.Hash is the plan's Hash).
func (c *Client) ApplyRestore(ctx context.Context, id, workspace string, req wire.RestoreRequest) (wire.ClientView, error) {
	return call[wire.ClientView](ctx, c, http.MethodPost, clientPath(id, "/restore/apply", workspace), req)
}

// Tokens lists the tokens that may call the daemon, without secrets.
func (c *Client) Tokens(ctx context.Context) ([]wire.TokenView, error) {
	return call[[]wire.TokenView](ctx, c, http.MethodGet, "/api/v1/tokens", nil)
}

// RevokeTokens revokes every token with the label and returns them. An
// unknown label is an *APIError with status 404; "cli", 403.
func (c *Client) RevokeTokens(ctx context.Context, label string) ([]wire.TokenView, error) {
	return call[[]wire.TokenView](ctx, c, http.MethodDelete, "/api/v1/tokens/"+url.PathEscape(label), nil)
}
