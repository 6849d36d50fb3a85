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

	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/config"
	"github.com/switchboardhq/switchboard/app/redact"
	"github.com/switchboardhq/switchboard/supervisor"
)

// quitDaemon asks the daemon to stop every server and exit, as the tray's
// Quit does. The answer still goes out: the daemon's HTTP shutdown waits
// for the requests that carry one.
func (s *Server) quitDaemon(r *http.Request) (wire.Quit, error) {
	if s.quit == nil {
		return wire.Quit{}, errorf(http.StatusServiceUnavailable, "quitting is not available in this daemon")
	}
	s.log.Info("quitting, as asked through the API", "token", TokenLabel(r.Context()))
	s.quit()
	return wire.Quit{PID: os.Getpid()}, nil
}

func (s *Server) status(r *http.Request) (wire.Status, error) {
	cfg := s.cfg.Current()
	st := wire.Status{
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

func (s *Server) listServers(r *http.Request) ([]wire.ServerView, error) {
	cfg := s.cfg.Current()
	statuses := s.statusMap()
	out := make([]wire.ServerView, 0, len(cfg.Servers))
	for _, name := range slices.Sorted(maps.Keys(cfg.Servers)) {
		ps, known := statuses[name]
		v := newView(name, cfg.Servers[name], ps, known)
		v.Sandbox = sandboxView(cfg.Servers[name], cfg.SandboxDefault, ps)
		out = append(out, s.withAuth(s.withTools(redactView(v, cfg))))
	}
	return out, nil
}

// withTools adds the tools the gateway last listed for the server.
func (s *Server) withTools(v wire.ServerView) wire.ServerView {
	v.Tools = []wire.ToolInfo{}
	if s.tools != nil {
		tools := s.tools.Tools(v.Name)
		for _, t := range tools {
			v.Tools = append(v.Tools, wire.ToolInfo{Name: t.Name, Title: t.Title, Description: t.Description,
				Disabled: t.Disabled, Held: t.Held, Tier: string(t.Tier)})
		}
		v.Listed = tools != nil // nil before the first listing
	}
	return v
}

func (s *Server) getServer(r *http.Request) (wire.ServerView, error) {
	name := r.PathValue("name")
	sc, ok := s.cfg.Current().Servers[name]
	if !ok {
		return wire.ServerView{}, unknownServer(name)
	}
	return s.view(name, sc), nil
}

// view describes a server of the config as the supervisor sees it now.
func (s *Server) view(name string, sc config.Server) wire.ServerView {
	ps, err := s.sup.Status(name)
	cfg := s.cfg.Current()
	v := newView(name, sc, ps, err == nil)
	v.Sandbox = sandboxView(sc, cfg.SandboxDefault, ps)
	return s.withAuth(s.withTools(redactView(v, cfg)))
}

// sandboxView says what a server may touch and whether that is in force,
// or why it is not confined.
func sandboxView(sc config.Server, sandboxDefault string, ps supervisor.PoolStatus) wire.Sandbox {
	if sc.IsRemote() {
		return wire.Sandbox{Reason: "a remote server: it runs on its own host, nothing runs here to confine"}
	}
	if !sc.IsConfined(sandboxDefault) {
		reason := `added by hand, and the config's "sandboxDefault" is not "confined"`
		if sc.Sandbox != nil {
			reason = `"sandbox": false in config.json`
		}
		return wire.Sandbox{Reason: "not confined: " + reason}
	}
	v := wire.Sandbox{Confined: true, Reason: "not started yet"}
	if p := ps.Confine; p != nil {
		v.Read, v.Write, v.Network, v.DenyPorts = p.Read, p.Write, p.Network, p.DenyPorts
	}
	if st := ps.Confinement; st != nil {
		v.Enforced, v.Mechanism, v.Reason, v.Missing = st.Enforced, st.Mechanism, st.Reason, st.Missing
		if !st.Enforced {
			v.Reason = "not confined: " + st.Reason
		}
	}
	return v
}

// redactView replaces credentials in what the server wrote (its recent
// lines, its last error) unless the user turned value redaction off.
func redactView(v wire.ServerView, cfg *config.Config) wire.ServerView {
	redactValues := !cfg.History.KeepSecretValues
	v.RecentLogs = redactLines(v.RecentLogs, redactValues)
	if redactValues {
		v.LastError = redact.Values(v.LastError)
	}
	return v
}

func newView(name string, sc config.Server, ps supervisor.PoolStatus, known bool) wire.ServerView {
	v := wire.ServerView{
		Name:       name,
		Config:     serverConfig(sc),
		Enabled:    sc.IsEnabled(),
		State:      string(supervisor.StateStopped),
		Mode:       sc.Pool.Mode,
		Processes:  []wire.ProcessStatus{},
		RecentLogs: []wire.LogLine{},
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
		for _, p := range ps.Processes {
			v.Processes = append(v.Processes, wire.ProcessStatus{PID: p.PID, State: p.State, Started: p.Started,
				InFlight: p.InFlight, Leased: p.Leased, Server: p.Server, Protocol: p.Protocol, Transport: p.Transport, Usage: usage(p.Usage),
				Confinement: (*wire.Confinement)(p.Confinement)})
		}
		v.Restarts = ps.Restarts
		v.LastError = ps.LastError
		v.NonProtocolLines = ps.NonProtocolLines
		v.Usage = usage(ps.Usage)
		v.RecentLogs = logLines(ps.Logs[max(0, len(ps.Logs)-RecentLogLines):])
	}
	if !v.Enabled {
		v.State = wire.StateDisabled
	}
	return v
}

// serverConfig is a config entry as the API shows it.
func serverConfig(sc config.Server) wire.ServerConfig {
	w := wire.ServerConfig{Command: sc.Command, URL: sc.URL, Headers: sc.Headers, SecretHeaders: sc.SecretHeaders, Transport: sc.Transport,
		Args: sc.Args, Env: sc.Env, Cwd: sc.Cwd, Enabled: sc.Enabled,
		Pool: wire.Pool{Mode: sc.Pool.Mode, Min: sc.Pool.Min, Max: sc.Pool.Max,
			IdleTimeout: wire.Duration{Duration: sc.Pool.IdleTimeout.Duration}, Unknown: sc.Pool.UnknownKeys()},
		Timeout:       wire.Duration{Duration: sc.Timeout.Duration},
		DisabledTools: sc.DisabledTools, HoldChangedTools: sc.HoldChangedTools, AskBeforeDestructive: sc.AskBeforeDestructive, Alias: sc.Alias, SecretEnv: sc.SecretEnv, Roots: sc.Roots,
		Unknown: sc.UnknownKeys()}
	for tool, tier := range sc.Tiers {
		if w.Tiers == nil {
			w.Tiers = make(map[string]string, len(sc.Tiers))
		}
		w.Tiers[tool] = string(tier)
	}
	if sc.Install != nil {
		in := wire.Install(*sc.Install)
		w.Install = &in
	}
	if sc.Sandbox != nil {
		w.Sandbox, _ = sc.Sandbox.MarshalJSON() // cannot fail
	}
	if sc.OAuth != nil {
		o := wire.OAuth(*sc.OAuth)
		w.OAuth = &o
	}
	return w
}

func usage(u *supervisor.Usage) *wire.Usage {
	if u == nil {
		return nil
	}
	w := wire.Usage(*u)
	return &w
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

func (s *Server) addServer(r *http.Request) (wire.ServerView, error) {
	// The server is decoded on its own, so that its errors can name the
	// field as it is in the request ("server.pool.max").
	var raw struct {
		Name   string          `json:"name"`
		Server json.RawMessage `json:"server"`
	}
	if err := decodeBody(r, &raw); err != nil {
		return wire.ServerView{}, err
	}
	name := raw.Name
	var sc config.Server
	if len(raw.Server) > 0 {
		if err := json.Unmarshal(raw.Server, &sc); err != nil {
			if ce, ok := errors.AsType[*config.Error](err); ok {
				ce.Field = strings.TrimSuffix("server."+ce.Field, ".")
			}
			return wire.ServerView{}, errorf(http.StatusBadRequest, "invalid request body: %s", jsonProblem(err))
		}
	}
	if name == "" {
		return wire.ServerView{}, errorf(http.StatusBadRequest, `invalid request body: "name" is missing`)
	}
	if err := checkUnknown("server.", sc); err != nil {
		return wire.ServerView{}, err
	}
	return s.update(r.Context(), name, func(c *config.Config) error {
		if _, ok := c.Servers[name]; ok {
			return errorf(http.StatusConflict, "server %q already exists; change it with PUT /api/v1/servers/%s", name, name)
		}
		if c.Servers == nil {
			c.Servers = map[string]config.Server{}
		}
		c.Servers[name] = sc
		return nil
	})
}

func (s *Server) updateServer(r *http.Request) (wire.ServerView, error) {
	name := r.PathValue("name")
	var sc config.Server
	if err := decodeBody(r, &sc); err != nil {
		return wire.ServerView{}, err
	}
	if err := checkUnknown("", sc); err != nil {
		return wire.ServerView{}, err
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
func (s *Server) update(ctx context.Context, name string, fn func(*config.Config) error) (wire.ServerView, error) {
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
		return wire.ServerView{}, updateError(err)
	}
	if name == "" {
		return wire.ServerView{}, nil
	}
	sc, ok := cfg.Servers[name]
	if !ok {
		return wire.ServerView{}, unknownServer(name)
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
	if errors.Is(err, supervisor.ErrClosed) {
		// The daemon is shutting down: the change was not applied (and
		// the daemon put config.json back).
		return errorf(http.StatusServiceUnavailable, "%v", err)
	}
	return errorf(http.StatusInternalServerError, "updating config: %v", err)
}

func (s *Server) startServer(r *http.Request) (wire.ServerView, error) {
	return s.act(r, "start", s.sup.Start)
}

func (s *Server) stopServer(r *http.Request) (wire.ServerView, error) {
	return s.act(r, "stop", s.sup.Stop)
}

func (s *Server) restartServer(r *http.Request) (wire.ServerView, error) {
	return s.act(r, "restart", s.sup.Restart)
}

// act runs a supervisor action on a configured server, within the action
// timeout, and returns the server's view afterwards.
func (s *Server) act(r *http.Request, verb string, fn func(context.Context, string) error) (wire.ServerView, error) {
	name := r.PathValue("name")
	sc, ok := s.cfg.Current().Servers[name]
	if !ok {
		return wire.ServerView{}, unknownServer(name)
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.actionTimeout)
	defer cancel()
	if !sc.IsEnabled() {
		if verb != "stop" {
			return wire.ServerView{}, errorf(http.StatusConflict, `server %q is disabled in config.json; set "enabled": true to use it`, name)
		}
		// Stopping a disabled server is a no-op unless the supervisor
		// still runs it.
		if err := fn(ctx, name); err != nil && !errors.Is(err, supervisor.ErrUnknownServer) {
			return wire.ServerView{}, actionError(verb, err)
		}
		return s.view(name, sc), nil
	}
	if err := fn(ctx, name); err != nil {
		return wire.ServerView{}, actionError(verb, err)
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

// RecentLogLines is how many log lines a ServerView carries.
const RecentLogLines = 20
