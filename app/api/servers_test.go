package api_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app/api"
	"github.com/switchboardhq/switchboard/app/api/client"
	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/config"
	"github.com/switchboardhq/switchboard/supervisor"
)

// wantAPIError checks that err is an *client.APIError with the status and a
// message containing want.
func wantAPIError(t *testing.T, err error, status int, want string) {
	t.Helper()
	ae, ok := errors.AsType[*client.APIError](err)
	if !ok {
		t.Fatalf("error = %v (%T), want an *client.APIError %d", err, err, status)
	}
	if ae.Status != status || !strings.Contains(ae.Message, want) || ae.Error() != ae.Message {
		t.Fatalf("APIError = %d %q, want %d containing %q", ae.Status, ae.Message, status, want)
	}
}

func TestStatus(t *testing.T) {
	e := newEnv(t)
	e.cfg.problem = &config.Error{File: e.cfg.path, Line: 3, Column: 17, Field: "servers.fs.pool.max", Err: errors.New("invalid value 100: must be at most 64")}
	st, err := e.client.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := wire.Status{
		Version:       "1.2.3-test",
		PID:           os.Getpid(),
		Home:          filepathDir(e.cfg.path),
		ConfigFile:    e.cfg.path,
		ConfigProblem: e.cfg.path + ":3:17: servers.fs.pool.max: invalid value 100: must be at most 64",
		Listen:        e.srv.Listener.Addr().String(),
		Started:       time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Servers:       2,
		Running:       1,
	}
	if st != want {
		t.Fatalf("Status =\n%+v\nwant\n%+v", st, want)
	}
	if _, _, err := net.SplitHostPort(st.Listen); err != nil {
		t.Errorf("Listen %q is not host:port", st.Listen)
	}
}

func filepathDir(p string) string { return p[:strings.LastIndexAny(p, `/\`)] }

func TestListAndGet(t *testing.T) {
	e := newEnv(t)
	views, err := e.client.Servers(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(views) != 2 || views[0].Name != "fs" || views[1].Name != "off" {
		t.Fatalf("Servers = %+v", views)
	}
	fs, off := views[0], views[1]
	if fs.State != "running" || !fs.Enabled || fs.Mode != "shared" || len(fs.Processes) != 1 || fs.Processes[0].PID != 4242 ||
		fs.Restarts != 1 || fs.LastError != "crashed once" || fs.Usage == nil || fs.Usage.Processes != 2 ||
		len(fs.RecentLogs) != 2 || fs.RecentLogs[1].Text != "second line" || fs.Config.Command != "npx" {
		t.Errorf("fs = %+v", fs)
	}
	if off.State != wire.StateDisabled || off.Enabled || off.Config.Command != "uvx" || off.Mode != "shared" {
		t.Errorf("off = %+v", off)
	}
	got, err := e.client.Server(t.Context(), "fs")
	if err != nil || got.Name != "fs" || got.State != "running" {
		t.Fatalf("Server(fs) = %+v, %v", got, err)
	}
	_, err = e.client.Server(t.Context(), "nope")
	wantAPIError(t, err, 404, `unknown server "nope"`)
	if !client.IsNotFound(err) {
		t.Error("IsNotFound = false")
	}

	// Empty lists are [] on the wire, not null.
	resp := e.request(t, "GET", "/api/v1/servers/off", "", nil)
	body, _ := io.ReadAll(resp.Body)
	for _, want := range []string{`"processes":[]`, `"recentLogs":[]`, `"state":"disabled"`, `"config":{"command":"uvx"`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("body lacks %s: %s", want, body)
		}
	}
}

func TestRecentLogsCapped(t *testing.T) {
	e := newEnv(t)
	for i := range 30 {
		e.sup.logLine("fs", fmt.Sprintf("line %d", i))
	}
	v, err := e.client.Server(t.Context(), "fs")
	if err != nil {
		t.Fatal(err)
	}
	if len(v.RecentLogs) != api.RecentLogLines || v.RecentLogs[api.RecentLogLines-1].Text != "line 29" {
		t.Fatalf("RecentLogs = %d lines, last %+v", len(v.RecentLogs), v.RecentLogs[len(v.RecentLogs)-1])
	}
}

func TestCRUD(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()

	// Add, with a key config does not know: it is kept.
	var sc wire.ServerConfig
	if err := json.Unmarshal([]byte(`{"command": "node", "args": ["server.js"], "env": {"DEBUG": "1"}, "note": "mine"}`), &sc); err != nil {
		t.Fatal(err)
	}
	v, err := e.client.AddServer(ctx, "new", sc)
	if err != nil {
		t.Fatal(err)
	}
	if v.Name != "new" || v.Config.Command != "node" || v.State != "stopped" || !v.Enabled {
		t.Fatalf("AddServer = %+v", v)
	}
	if raw, _ := json.Marshal(e.cfg.Current().Servers["new"]); !strings.Contains(string(raw), `"note":"mine"`) {
		t.Errorf("unknown key lost: %s", raw)
	}
	if _, err := e.sup.Status("new"); err != nil {
		t.Errorf("the new server was not applied to the supervisor: %v", err)
	}

	_, err = e.client.AddServer(ctx, "new", wire.ServerConfig{Command: "x"})
	wantAPIError(t, err, 409, `server "new" already exists`)

	_, err = e.client.AddServer(ctx, "bad", wire.ServerConfig{})
	wantAPIError(t, err, 400, "servers.bad.command: missing")

	_, err = e.client.AddServer(ctx, "bad name", wire.ServerConfig{Command: "x"})
	wantAPIError(t, err, 400, `invalid server name "bad name"`)

	_, err = e.client.AddServer(ctx, "", wire.ServerConfig{Command: "x"})
	wantAPIError(t, err, 400, `"name" is missing`)

	_, err = e.client.AddServer(ctx, "bad", wire.ServerConfig{Command: "x", Pool: wire.Pool{Max: 100}})
	wantAPIError(t, err, 400, "servers.bad.pool.max")

	// Update.
	sc.Args = []string{"other.js"}
	v, err = e.client.UpdateServer(ctx, "new", sc)
	if err != nil || len(v.Config.Args) != 1 || v.Config.Args[0] != "other.js" {
		t.Fatalf("UpdateServer = %+v, %v", v, err)
	}
	_, err = e.client.UpdateServer(ctx, "ghost", sc)
	wantAPIError(t, err, 404, `unknown server "ghost"`)
	_, err = e.client.UpdateServer(ctx, "new", wire.ServerConfig{Command: " "})
	wantAPIError(t, err, 400, "servers.new.command")
	if got := e.cfg.Current().Servers["new"].Args[0]; got != "other.js" {
		t.Errorf("a refused update changed the config: args %q", got)
	}

	// Disable through an update: the view says so.
	sc.Enabled = boolPtr(false)
	v, err = e.client.UpdateServer(ctx, "new", sc)
	if err != nil || v.State != wire.StateDisabled || v.Enabled {
		t.Fatalf("disabling: %+v, %v", v, err)
	}

	// Remove.
	if err := e.client.RemoveServer(ctx, "new"); err != nil {
		t.Fatal(err)
	}
	_, err = e.client.Server(ctx, "new")
	wantAPIError(t, err, 404, `unknown server "new"`)
	wantAPIError(t, e.client.RemoveServer(ctx, "new"), 404, `unknown server "new"`)

	views, err := e.client.Servers(ctx)
	if err != nil || len(views) != 2 {
		t.Fatalf("Servers after the round trip = %+v, %v", views, err)
	}
}

// TestUpdateRefusedByDaemon: the daemon refuses to overwrite a broken
// config.json (a *config.Error wrapped in its message): 409.
func TestUpdateRefusedByDaemon(t *testing.T) {
	e := newEnv(t)
	e.cfg.updateErr = fmt.Errorf("%s was changed on disk and cannot be used, so it was left as it is; fix it first: %w",
		e.cfg.path, &config.Error{File: e.cfg.path, Line: 2, Column: 5, Err: errors.New("invalid character")})
	_, err := e.client.AddServer(t.Context(), "new", wire.ServerConfig{Command: "x"})
	wantAPIError(t, err, 409, "fix it first")

	e.cfg.updateErr = errors.New("disk full")
	_, err = e.client.AddServer(t.Context(), "new", wire.ServerConfig{Command: "x"})
	wantAPIError(t, err, 500, "disk full")
}

func TestBadBodies(t *testing.T) {
	e := newEnv(t)
	big := `{"name": "big", "server": {"command": "x", "args": ["` + strings.Repeat("a", api.MaxBodyBytes) + `"]}}`
	deep := strings.Repeat("[", 4999) + "[]" + strings.Repeat("]", 4999) // about 10 KB
	tests := []struct {
		name, method, path, body string
		wantStatus               int
		wantError                string
	}{
		{"malformed", "POST", "/api/v1/servers", `{"name": "x",`, 400, "invalid request body"},
		{"not an object", "POST", "/api/v1/servers", `[1]`, 400, "invalid request body"},
		{"empty", "POST", "/api/v1/servers", ``, 400, "request body is empty"},
		{"trailing data", "POST", "/api/v1/servers", `{"name": "x", "server": {"command": "x"}} {}`, 400, "unexpected data after"},
		{"wrong type in server", "POST", "/api/v1/servers", `{"name": "x", "server": {"command": 3}}`, 400, "server.command: invalid value 3"},
		{"wrong type in PUT", "PUT", "/api/v1/servers/fs", `{"command": "x", "args": "not a list"}`, 400, "args"},
		{"too large", "POST", "/api/v1/servers", big, 413, "larger than"},
		{"too large PUT", "PUT", "/api/v1/servers/fs", big, 413, "larger than"},
		// Unknown keys are kept in config.json, within limits.
		{"unknown keys too deep", "POST", "/api/v1/servers", `{"name": "x", "server": {"command": "x", "note": ` + deep + `}}`, 400,
			fmt.Sprintf("server.note: an unknown key's value is nested too deeply: 5001 levels, more than the limit of %d", config.MaxUnknownDepth)},
		{"unknown keys too deep PUT", "PUT", "/api/v1/servers/fs", `{"command": "x", "pool": {"x": ` + deep + `}}`, 400, "pool.x: an unknown key's value is nested too deeply"},
		{"unknown keys too large", "PUT", "/api/v1/servers/fs", `{"command": "x", "note": "` + strings.Repeat("n", config.MaxUnknownBytes) + `"}`, 413,
			fmt.Sprintf("note: unknown keys are too large: more than %d bytes", config.MaxUnknownBytes)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := e.request(t, tt.method, tt.path, tt.body, map[string]string{"Content-Type": "application/json"})
			var er wire.ErrorResponse
			if err := json.NewDecoder(resp.Body).Decode(&er); err != nil {
				t.Fatalf("status %d, body not JSON: %v", resp.StatusCode, err)
			}
			if resp.StatusCode != tt.wantStatus || !strings.Contains(er.Error, tt.wantError) {
				t.Fatalf("got %d %q, want %d containing %q", resp.StatusCode, er.Error, tt.wantStatus, tt.wantError)
			}
		})
	}
	if got := e.cfg.Current(); len(got.Servers) != 2 || got.Servers["fs"].Command != "npx" {
		t.Errorf("a bad request changed the config: %+v", got.Servers)
	}
}

func TestActions(t *testing.T) {
	e := newEnv(t, func(o *api.Options) { o.ActionTimeout = 100 * time.Millisecond })
	startErr := &supervisor.StartError{Server: "broken", Err: errors.New("exec: \"nope\": executable file not found in $PATH")}
	tests := []struct {
		name       string
		setup      func()
		do         func() (wire.ServerView, error)
		wantState  string
		wantCall   string // "" = the supervisor is not called
		wantStatus int
		wantError  string
	}{
		{name: "stop", do: func() (wire.ServerView, error) { return e.client.Stop(t.Context(), "fs") },
			wantState: "stopped", wantCall: "stop fs"},
		{name: "start", do: func() (wire.ServerView, error) { return e.client.Start(t.Context(), "fs") },
			wantState: "running", wantCall: "start fs"},
		{name: "restart", do: func() (wire.ServerView, error) { return e.client.Restart(t.Context(), "fs") },
			wantState: "running", wantCall: "restart fs"},
		{name: "start disabled", do: func() (wire.ServerView, error) { return e.client.Start(t.Context(), "off") },
			wantStatus: 409, wantError: `server "off" is disabled in config.json; set "enabled": true to use it`},
		{name: "restart disabled", do: func() (wire.ServerView, error) { return e.client.Restart(t.Context(), "off") },
			wantStatus: 409, wantError: `server "off" is disabled in config.json`},
		{name: "stop disabled", do: func() (wire.ServerView, error) { return e.client.Stop(t.Context(), "off") },
			wantState: wire.StateDisabled, wantCall: "stop off"},
		{name: "start unknown", do: func() (wire.ServerView, error) { return e.client.Start(t.Context(), "nope") },
			wantStatus: 404, wantError: `unknown server "nope"`},
		{name: "start failure",
			setup: func() {
				e.cfg.cfg.Servers["broken"] = config.Server{Command: "nope"}
				e.sup.pools["broken"] = supervisor.PoolStatus{Name: "broken", State: supervisor.StateBackoff}
				e.sup.errs["start broken"] = startErr
			},
			do:         func() (wire.ServerView, error) { return e.client.Start(t.Context(), "broken") },
			wantCall:   "start broken",
			wantStatus: 502, wantError: startErr.Error()},
		{name: "failing",
			setup: func() {
				e.sup.errs["restart broken"] = fmt.Errorf("server %q is %w after 5 crashes", "broken", supervisor.ErrFailing)
			},
			do:         func() (wire.ServerView, error) { return e.client.Restart(t.Context(), "broken") },
			wantCall:   "restart broken",
			wantStatus: 502, wantError: "is failing after 5 crashes"},
		{name: "in config, not in supervisor",
			setup:      func() { e.cfg.cfg.Servers["new"] = config.Server{Command: "x"} },
			do:         func() (wire.ServerView, error) { return e.client.Start(t.Context(), "new") },
			wantCall:   "start new",
			wantStatus: 404, wantError: "unknown server"},
		{name: "start times out",
			setup:      func() { e.sup.block["start fs"] = true },
			do:         func() (wire.ServerView, error) { return e.client.Start(t.Context(), "fs") },
			wantCall:   "start fs",
			wantStatus: 504, wantError: "deadline exceeded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.setup != nil {
				e.cfg.mu.Lock()
				e.sup.mu.Lock()
				tt.setup()
				e.sup.mu.Unlock()
				e.cfg.mu.Unlock()
			}
			before := len(e.sup.actions())
			v, err := tt.do()
			calls := e.sup.actions()[before:]
			switch {
			case tt.wantCall == "" && len(calls) > 0:
				t.Errorf("supervisor called: %v", calls)
			case tt.wantCall != "" && (len(calls) != 1 || calls[0] != tt.wantCall):
				t.Errorf("supervisor calls = %v, want [%s]", calls, tt.wantCall)
			}
			if tt.wantStatus != 0 {
				wantAPIError(t, err, tt.wantStatus, tt.wantError)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if v.State != tt.wantState {
				t.Errorf("State = %q, want %q", v.State, tt.wantState)
			}
		})
	}
}

// TestAPIErrorFromNonJSON: an answer that is not an ErrorResponse (a proxy,
// another program on the port) still becomes an *APIError.
func TestAPIErrorFromNonJSON(t *testing.T) {
	tests := []struct {
		body, want string
	}{
		{"upstream is down\n", "HTTP 502: upstream is down"},
		{"", "HTTP 502 Bad Gateway"},
	}
	for _, tt := range tests {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, tt.body, http.StatusBadGateway)
		}))
		c := &client.Client{BaseURL: srv.URL + "/", HTTP: srv.Client()}
		_, err := c.Status(t.Context())
		srv.Close()
		if ae, ok := errors.AsType[*client.APIError](err); !ok || ae.Status != 502 || err.Error() != tt.want {
			t.Errorf("error = %v, want an *client.APIError 502 %q", err, tt.want)
		}
	}
}
