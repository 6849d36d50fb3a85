package api_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/switchboardhq/switchboard/app/api"
	"github.com/switchboardhq/switchboard/app/api/client"
	"github.com/switchboardhq/switchboard/app/config"
	"github.com/switchboardhq/switchboard/app/internal/testutil"
	"github.com/switchboardhq/switchboard/app/tokens"
	"github.com/switchboardhq/switchboard/supervisor"
	"github.com/switchboardhq/switchboard/supervisor/testmcp"
)

// TestMain re-runs this test binary as the test MCP server when the
// environment asks for it (see realsup_test.go).
func TestMain(m *testing.M) {
	testmcp.RunIfRequested()
	goleak.VerifyTestMain(m)
}

// Both fakes and the real supervisor satisfy the consumer-side interfaces.
var (
	_ api.Supervisor = (*supervisor.Supervisor)(nil)
	_ api.Supervisor = (*fakeSupervisor)(nil)
	_ api.Config     = (*fakeConfig)(nil)
)

// fakeSupervisor keeps a PoolStatus per server and records the actions.
type fakeSupervisor struct {
	mu    sync.Mutex
	pools map[string]supervisor.PoolStatus
	calls []string
	// errs makes an action on a server fail: key "start fs".
	errs map[string]error
	// block makes an action wait for its context: key "start fs".
	block map[string]bool
	subs  map[chan *supervisor.Event]bool
}

func newFakeSupervisor() *fakeSupervisor {
	return &fakeSupervisor{
		pools: map[string]supervisor.PoolStatus{},
		errs:  map[string]error{},
		block: map[string]bool{},
		subs:  map[chan *supervisor.Event]bool{},
	}
}

func unknown(name string) error {
	return fmt.Errorf("server %q: %w", name, supervisor.ErrUnknownServer)
}

func (f *fakeSupervisor) Statuses() []supervisor.PoolStatus {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []supervisor.PoolStatus
	for _, name := range slices.Sorted(maps.Keys(f.pools)) {
		out = append(out, f.pools[name])
	}
	return out
}

func (f *fakeSupervisor) Status(name string) (supervisor.PoolStatus, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ps, ok := f.pools[name]
	if !ok {
		return ps, unknown(name)
	}
	return ps, nil
}

func (f *fakeSupervisor) act(ctx context.Context, verb, name string, state supervisor.State) error {
	key := verb + " " + name
	f.mu.Lock()
	f.calls = append(f.calls, key)
	err, block := f.errs[key], f.block[key]
	ps, ok := f.pools[name]
	f.mu.Unlock()
	if !ok {
		return unknown(name)
	}
	if block {
		<-ctx.Done()
		return fmt.Errorf("server %q: waiting for a ready process: %w", name, context.Cause(ctx))
	}
	if err != nil {
		return err
	}
	ps.State = state
	ps.Processes = nil
	if state == supervisor.StateRunning {
		ps.Processes = []supervisor.ProcessStatus{{PID: 4242, State: "ready", Started: time.Now()}}
	}
	f.mu.Lock()
	f.pools[name] = ps
	f.mu.Unlock()
	return nil
}

func (f *fakeSupervisor) Start(ctx context.Context, name string) error {
	return f.act(ctx, "start", name, supervisor.StateRunning)
}

func (f *fakeSupervisor) Stop(ctx context.Context, name string) error {
	return f.act(ctx, "stop", name, supervisor.StateStopped)
}

func (f *fakeSupervisor) Restart(ctx context.Context, name string) error {
	return f.act(ctx, "restart", name, supervisor.StateRunning)
}

func (f *fakeSupervisor) Subscribe(buffer int) (<-chan *supervisor.Event, func()) {
	ch := make(chan *supervisor.Event, max(buffer, 1))
	f.mu.Lock()
	f.subs[ch] = true
	f.mu.Unlock()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			f.mu.Lock()
			delete(f.subs, ch)
			f.mu.Unlock()
			close(ch)
		})
	}
}

func (f *fakeSupervisor) publish(ev supervisor.Event) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for ch := range f.subs {
		select {
		case ch <- &ev:
		default:
		}
	}
}

// logLine adds a line to a server's ring and publishes it, as a pool does.
func (f *fakeSupervisor) logLine(name, text string) supervisor.LogLine {
	l := supervisor.LogLine{Time: time.Now(), PID: 4242, Stream: "stderr", Text: text}
	f.mu.Lock()
	ps := f.pools[name]
	ps.Logs = append(ps.Logs, l)
	f.pools[name] = ps
	f.mu.Unlock()
	f.publish(supervisor.Event{Time: l.Time, Server: name, Kind: supervisor.EventLog, PID: l.PID, Stream: l.Stream, Message: l.Text})
	return l
}

func (f *fakeSupervisor) subscribers() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.subs)
}

func (f *fakeSupervisor) actions() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

// fakeConfig keeps the config in memory, validates updates like
// config.Store, and applies them to the supervisor through apply.
type fakeConfig struct {
	mu      sync.Mutex
	path    string
	cfg     *config.Config
	problem error
	// updateErr, when set, is what Update returns after fn succeeds.
	updateErr error
	apply     func(*config.Config) error
}

func (c *fakeConfig) Current() *config.Config {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cfg.Clone()
}

func (c *fakeConfig) Problem() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.problem
}

func (c *fakeConfig) Path() string { return c.path }

func (c *fakeConfig) Update(ctx context.Context, fn func(*config.Config) error) (*config.Config, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	next := c.cfg.Clone()
	if err := fn(next); err != nil {
		return nil, fmt.Errorf("updating config: %w", err) // the daemon may wrap
	}
	if c.updateErr != nil {
		return nil, c.updateErr
	}
	if err := next.Validate(); err != nil {
		return nil, err
	}
	if c.apply != nil {
		if err := c.apply(next); err != nil {
			return nil, err
		}
	}
	c.cfg = next
	return next.Clone(), nil
}

// applyToFake gives every enabled server of cfg a pool in f, and removes
// the others, like the daemon's Apply.
func applyToFake(f *fakeSupervisor) func(*config.Config) error {
	return func(cfg *config.Config) error {
		f.mu.Lock()
		defer f.mu.Unlock()
		for name, sc := range cfg.Servers {
			if _, ok := f.pools[name]; !ok && sc.IsEnabled() {
				f.pools[name] = supervisor.PoolStatus{Name: name, Mode: supervisor.ModeShared, Max: 1, State: supervisor.StateStopped}
			}
		}
		for name := range f.pools {
			if sc, ok := cfg.Servers[name]; !ok || !sc.IsEnabled() {
				delete(f.pools, name)
			}
		}
		return nil
	}
}

func boolPtr(b bool) *bool { return &b }

// postWithToken posts body (JSON) to path on srv with secret as the bearer
// token and returns the answer's status and body.
func postWithToken(t *testing.T, srv *httptest.Server, path, secret, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+secret)
	req.Header.Set("Content-Type", "application/json")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// testEnv is an API server on a real loopback listener with fakes behind it.
type testEnv struct {
	srv    *httptest.Server
	api    *api.Server
	client *client.Client
	sup    *fakeSupervisor
	cfg    *fakeConfig
	tokens *tokens.Store
	token  tokens.Token // the "cli" token, with its secret
	logs   *testutil.SyncBuffer
}

// newEnv starts an API with servers "fs" (enabled, running with two log
// lines) and "off" (disabled). edit may change the options.
func newEnv(t *testing.T, edit ...func(*api.Options)) *testEnv {
	t.Helper()
	home := t.TempDir()
	store, err := tokens.Open(filepath.Join(home, tokens.FileName))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := store.Ensure("cli")
	if err != nil {
		t.Fatal(err)
	}
	sup := newFakeSupervisor()
	cfg := config.Default()
	cfg.Servers["fs"] = config.Server{Command: "npx", Args: []string{"-y", "server-filesystem", "/tmp"}}
	cfg.Servers["off"] = config.Server{Command: "uvx", Args: []string{"mcp-server-time"}, Enabled: boolPtr(false)}
	fc := &fakeConfig{path: filepath.Join(home, config.FileName), cfg: cfg, apply: applyToFake(sup)}
	if err := fc.apply(cfg); err != nil {
		t.Fatal(err)
	}
	sup.pools["fs"] = supervisor.PoolStatus{Name: "fs", Mode: supervisor.ModeShared, Max: 1, State: supervisor.StateRunning,
		Processes: []supervisor.ProcessStatus{{PID: 4242, State: "ready"}}, Restarts: 1, LastError: "crashed once",
		Usage: &supervisor.Usage{CPUPercent: 1.5, RSSBytes: 1 << 20, Processes: 2}}
	sup.logLine("fs", "first line")
	sup.logLine("fs", "second line")

	logs := &testutil.SyncBuffer{}
	opts := api.Options{
		Supervisor: sup,
		Config:     fc,
		Tokens:     store,
		Logger:     slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Version:    "1.2.3-test",
		Home:       home,
		Started:    time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
	}
	for _, e := range edit {
		e(&opts)
	}
	a, err := api.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a)
	t.Cleanup(srv.Close)
	return &testEnv{
		srv:    srv,
		api:    a,
		client: &client.Client{BaseURL: srv.URL, Token: tok.Secret, HTTP: srv.Client()},
		sup:    sup,
		cfg:    fc,
		tokens: store,
		token:  tok,
		logs:   logs,
	}
}

// request sends a raw request with the cli token, unless header sets
// Authorization ("" removes it). A body is sent as application/json
// unless header sets Content-Type.
func (e *testEnv) request(t *testing.T, method, path, body string, header map[string]string) *http.Response {
	t.Helper()
	var rd *bytes.Reader
	if body != "" {
		rd = bytes.NewReader([]byte(body))
	}
	var req *http.Request
	var err error
	if rd != nil {
		req, err = http.NewRequestWithContext(t.Context(), method, e.srv.URL+path, rd)
	} else {
		req, err = http.NewRequestWithContext(t.Context(), method, e.srv.URL+path, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+e.token.Secret)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		switch {
		case k == "Host":
			req.Host = v
		case v == "":
			req.Header.Del(k)
		default:
			req.Header.Set(k, v)
		}
	}
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}
