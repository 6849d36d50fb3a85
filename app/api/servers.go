package api

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"

	"github.com/switchboardhq/switchboard/app/config"
	"github.com/switchboardhq/switchboard/app/gateway"
	"github.com/switchboardhq/switchboard/app/redact"
	"github.com/switchboardhq/switchboard/supervisor"
)

func (s *Server) status(r *http.Request) (Status, error) {
	cfg := s.cfg.Current()
	st := Status{
		Version:    s.version,
		PID:        os.Getpid(),
		Home:       s.home,
		ConfigFile: s.cfg.Path(),
		Started:    s.started,
		Servers:    len(cfg.Servers),
		Listen:     cfg.Listen,
	}
	if addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		st.Listen = addr.String() // the real port, also when config.json says port 0
	}
	if err := s.cfg.Problem(); err != nil {
		st.ConfigProblem = err.Error()
	}
	statuses := s.statusMap()
	for name, sc := range cfg.Servers {
		if ps, ok := statuses[name]; ok && sc.IsEnabled() && ps.State == supervisor.StateRunning {
			st.Running++
		}
	}
	return st, nil
}

func (s *Server) statusMap() map[string]supervisor.PoolStatus {
	all := s.sup.Statuses()
	m := make(map[string]supervisor.PoolStatus, len(all))
	for _, ps := range all {
		m[ps.Name] = ps
	}
	return m
}

func (s *Server) listServers(r *http.Request) ([]ServerView, error) {
	cfg := s.cfg.Current()
	statuses := s.statusMap()
	out := make([]ServerView, 0, len(cfg.Servers))
	for _, name := range slices.Sorted(maps.Keys(cfg.Servers)) {
		ps, known := statuses[name]
		out = append(out, s.withTools(redactView(newView(name, cfg.Servers[name], ps, known), cfg)))
	}
	return out, nil
}

// withTools adds the tools the gateway last listed for the server.
func (s *Server) withTools(v ServerView) ServerView {
	if s.tools != nil {
		v.Tools = s.tools.Tools(v.Name)
	}
	if v.Tools == nil {
		v.Tools = []gateway.ToolInfo{}
	}
	return v
}

func (s *Server) getServer(r *http.Request) (ServerView, error) {
	name := r.PathValue("name")
	sc, ok := s.cfg.Current().Servers[name]
	if !ok {
		return ServerView{}, unknownServer(name)
	}
	return s.view(name, sc), nil
}

// view describes a server of the config as the supervisor sees it now.
func (s *Server) view(name string, sc config.Server) ServerView {
	ps, err := s.sup.Status(name)
	return s.withTools(redactView(newView(name, sc, ps, err == nil), s.cfg.Current()))
}

// redactView replaces credentials in what the server wrote (its recent
// lines, its last error) unless the user turned value redaction off.
func redactView(v ServerView, cfg *config.Config) ServerView {
	redactValues := !cfg.History.KeepSecretValues
	v.RecentLogs = redactLines(v.RecentLogs, redactValues)
	if redactValues {
		v.LastError = redact.Values(v.LastError)
	}
	return v
}

func newView(name string, sc config.Server, ps supervisor.PoolStatus, known bool) ServerView {
	v := ServerView{
		Name:       name,
		Config:     sc,
		Enabled:    sc.IsEnabled(),
		State:      string(supervisor.StateStopped),
		Mode:       sc.Pool.Mode,
		Processes:  []supervisor.ProcessStatus{},
		RecentLogs: []supervisor.LogLine{},
	}
	if v.Mode == "" {
		v.Mode = config.PoolShared
	}
	if known {
		if ps.State != "" {
			v.State = string(ps.State)
		}
		if ps.Mode != "" {
			v.Mode = string(ps.Mode)
		}
		if ps.Processes != nil {
			v.Processes = ps.Processes
		}
		v.Restarts = ps.Restarts
		v.LastError = ps.LastError
		v.NonProtocolLines = ps.NonProtocolLines
		v.Usage = ps.Usage
		v.RecentLogs = append(v.RecentLogs, ps.Logs[max(0, len(ps.Logs)-RecentLogLines):]...)
	}
	if !v.Enabled {
		v.State = StateDisabled
	}
	return v
}

// checkUnknown refuses a server entry from a request whose keys unknown to
// config exceed its limits: 413 for their size, 400 for their nesting.
// field prefixes the key in the message ("server." in a POST body).
func checkUnknown(field string, sc config.Server) error {
	err := sc.CheckUnknown()
	if err == nil {
		return nil
	}
	if ce, ok := errors.AsType[*config.Error](err); ok {
		ce.Field = field + ce.Field
	}
	if errors.Is(err, config.ErrUnknownTooLarge) {
		return errorf(http.StatusRequestEntityTooLarge, "invalid server: %v", err)
	}
	return errorf(http.StatusBadRequest, "invalid server: %v", err)
}

func unknownServer(name string) *httpError {
	return errorf(http.StatusNotFound, "unknown server %q: it is not in config.json", name)
}

func (s *Server) addServer(r *http.Request) (ServerView, error) {
	// The server is decoded on its own, so that its errors can name the
	// field as it is in the request ("server.pool.max").
	var raw struct {
		Name   string          `json:"name"`
		Server json.RawMessage `json:"server"`
	}
	if err := decodeBody(r, &raw); err != nil {
		return ServerView{}, err
	}
	req := AddServerRequest{Name: raw.Name}
	if len(raw.Server) > 0 {
		if err := json.Unmarshal(raw.Server, &req.Server); err != nil {
			if ce, ok := errors.AsType[*config.Error](err); ok {
				ce.Field = strings.TrimSuffix("server."+ce.Field, ".")
			}
			return ServerView{}, errorf(http.StatusBadRequest, "invalid request body: %s", jsonProblem(err))
		}
	}
	if req.Name == "" {
		return ServerView{}, errorf(http.StatusBadRequest, `invalid request body: "name" is missing`)
	}
	if err := checkUnknown("server.", req.Server); err != nil {
		return ServerView{}, err
	}
	return s.update(r.Context(), req.Name, func(c *config.Config) error {
		if _, ok := c.Servers[req.Name]; ok {
			return errorf(http.StatusConflict, "server %q already exists; change it with PUT /api/v1/servers/%s", req.Name, req.Name)
		}
		if c.Servers == nil {
			c.Servers = map[string]config.Server{}
		}
		c.Servers[req.Name] = req.Server
		return nil
	})
}

func (s *Server) updateServer(r *http.Request) (ServerView, error) {
	name := r.PathValue("name")
	var sc config.Server
	if err := decodeBody(r, &sc); err != nil {
		return ServerView{}, err
	}
	if err := checkUnknown("", sc); err != nil {
		return ServerView{}, err
	}
	return s.update(r.Context(), name, func(c *config.Config) error {
		if _, ok := c.Servers[name]; !ok {
			return unknownServer(name)
		}
		c.Servers[name] = sc
		return nil
	})
}

func (s *Server) removeServer(r *http.Request) (struct{}, error) {
	name := r.PathValue("name")
	_, err := s.update(r.Context(), "", func(c *config.Config) error {
		if _, ok := c.Servers[name]; !ok {
			return unknownServer(name)
		}
		delete(c.Servers, name)
		return nil
	})
	return struct{}{}, err
}

// update changes the config with fn, validated, and returns the view of the
// named server afterwards (none when name is "").
func (s *Server) update(ctx context.Context, name string, fn func(*config.Config) error) (ServerView, error) {
	cfg, err := s.cfg.Update(ctx, func(c *config.Config) error {
		if err := fn(c); err != nil {
			return err
		}
		// Validate here, so that a rule broken by the request is a 400
		// however the daemon's Update reports errors.
		if err := c.Validate(); err != nil {
			return errorf(http.StatusBadRequest, "invalid server: %v", err)
		}
		return nil
	})
	if err != nil {
		return ServerView{}, updateError(err)
	}
	if name == "" {
		return ServerView{}, nil
	}
	sc, ok := cfg.Servers[name]
	if !ok {
		return ServerView{}, unknownServer(name)
	}
	return s.view(name, sc), nil
}

// updateError picks the status for an error of Config.Update.
func updateError(err error) error {
	if he, ok := errors.AsType[*httpError](err); ok {
		return he
	}
	if _, ok := err.(*config.Error); ok {
		return errorf(http.StatusBadRequest, "invalid server: %v", err)
	}
	if _, ok := errors.AsType[*config.Error](err); ok {
		// config.json was edited by hand and is broken (or too new):
		// the daemon refuses to overwrite it.
		return errorf(http.StatusConflict, "%v", err)
	}
	return errorf(http.StatusInternalServerError, "updating config: %v", err)
}

func (s *Server) startServer(r *http.Request) (ServerView, error) {
	return s.act(r, "start", s.sup.Start)
}

func (s *Server) stopServer(r *http.Request) (ServerView, error) {
	return s.act(r, "stop", s.sup.Stop)
}

func (s *Server) restartServer(r *http.Request) (ServerView, error) {
	return s.act(r, "restart", s.sup.Restart)
}

// act runs a supervisor action on a configured server, within the action
// timeout, and returns the server's view afterwards.
func (s *Server) act(r *http.Request, verb string, fn func(context.Context, string) error) (ServerView, error) {
	name := r.PathValue("name")
	sc, ok := s.cfg.Current().Servers[name]
	if !ok {
		return ServerView{}, unknownServer(name)
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.actionTimeout)
	defer cancel()
	if !sc.IsEnabled() {
		if verb != "stop" {
			return ServerView{}, errorf(http.StatusConflict, `server %q is disabled in config.json; set "enabled": true to use it`, name)
		}
		// Stopping a disabled server is a no-op unless the supervisor
		// still runs it.
		if err := fn(ctx, name); err != nil && !errors.Is(err, supervisor.ErrUnknownServer) {
			return ServerView{}, actionError(verb, err)
		}
		return s.view(name, sc), nil
	}
	if err := fn(ctx, name); err != nil {
		return ServerView{}, actionError(verb, err)
	}
	return s.view(name, sc), nil
}

// actionError picks the status for a failed start, stop or restart. The
// message is the supervisor's, which names the server and the cause.
func actionError(verb string, err error) *httpError {
	switch {
	case errors.Is(err, supervisor.ErrUnknownServer):
		return errorf(http.StatusNotFound, "%v", err)
	case errors.Is(err, supervisor.ErrClosed):
		return errorf(http.StatusServiceUnavailable, "%v", err)
	case errors.Is(err, context.DeadlineExceeded):
		return errorf(http.StatusGatewayTimeout, "%s: %v", verb, err)
	default:
		// *supervisor.StartError, *supervisor.ExitError, ErrFailing, ...
		return errorf(http.StatusBadGateway, "%v", err)
	}
}
