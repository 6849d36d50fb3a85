package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app/api"
	"github.com/switchboardhq/switchboard/app/api/client"
	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/config"
	"github.com/switchboardhq/switchboard/app/internal/testutil"
	"github.com/switchboardhq/switchboard/app/tokens"
	"github.com/switchboardhq/switchboard/supervisor"
	"github.com/switchboardhq/switchboard/supervisor/testmcp"
)

// testServer is a config entry that runs this test binary as the test MCP
// server.
func testServer(o testmcp.Options) config.Server {
	env := map[string]string{"GORACE": "atexit_sleep_ms=0"} // a -race binary sleeps a second on exit otherwise
	for _, kv := range testmcp.Env(o) {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	return config.Server{Command: os.Args[0], Env: env}
}

// wireServer is sc as a client sends it.
func wireServer(t *testing.T, sc config.Server) wire.ServerConfig {
	t.Helper()
	var out wire.ServerConfig
	data, err := json.Marshal(sc)
	if err == nil {
		err = json.Unmarshal(data, &out)
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// specs is what the daemon's Config.Update applies: the enabled servers.
func specs(cfg *config.Config) []supervisor.Spec {
	var out []supervisor.Spec
	for _, name := range slices.Sorted(maps.Keys(cfg.Servers)) {
		s := cfg.Servers[name]
		if !s.IsEnabled() {
			continue
		}
		out = append(out, supervisor.Spec{
			Name: name, Command: s.Command, Args: s.Args, Env: s.Env, Dir: s.Cwd,
			Pool: supervisor.PoolSpec{Mode: supervisor.Mode(s.Pool.Mode), Min: s.Pool.Min, Max: s.Pool.Max,
				IdleTimeout: s.Pool.IdleTimeout.Duration},
			StartTimeout: 20 * time.Second,
		})
	}
	return out
}

// TestRealSupervisor drives a real supervisor running real test MCP server
// processes through the API and its client.
func TestRealSupervisor(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child processes")
	}
	home := t.TempDir()
	sup, err := supervisor.New(t.Context(), supervisor.Options{
		StateDir:       home,
		Env:            os.Environ(),
		StopGrace:      500 * time.Millisecond,
		BackoffInitial: 20 * time.Millisecond,
		BackoffMax:     100 * time.Millisecond,
		SampleInterval: -1,
		HealthInterval: -1,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := sup.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	cfg := config.Default()
	cfg.Servers["echo"] = testServer(testmcp.Options{})
	off := testServer(testmcp.Options{})
	off.Enabled = boolPtr(false)
	cfg.Servers["off"] = off
	fc := &fakeConfig{path: filepath.Join(home, config.FileName), cfg: cfg,
		apply: func(c *config.Config) error { return sup.Apply(context.Background(), specs(c)) }}
	if err := fc.apply(cfg); err != nil {
		t.Fatal(err)
	}
	store, err := tokens.Open(filepath.Join(home, tokens.FileName))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := store.Ensure("cli")
	if err != nil {
		t.Fatal(err)
	}
	a, err := api.New(api.Options{Supervisor: sup, Config: fc, Tokens: store, Home: home, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a)
	t.Cleanup(srv.Close)
	c := &client.Client{BaseURL: srv.URL, Token: tok.Secret, HTTP: srv.Client()}
	ctx := t.Context()

	v, err := c.Start(ctx, "echo")
	if err != nil {
		t.Fatal(err)
	}
	if v.State != "running" || len(v.Processes) != 1 || v.Processes[0].State != "ready" {
		t.Fatalf("after Start: %+v", v)
	}
	pid := v.Processes[0].PID
	serving := fmt.Sprintf("testmcp: serving pid %d", pid)
	testutil.Eventually(t, 10*time.Second, "the server's first log line", func() bool {
		lines, err := c.Logs(ctx, "echo", 10)
		return err == nil && slices.ContainsFunc(lines, func(l wire.LogLine) bool { return l.Text == serving })
	})

	// Follow, restart, and see the new process's first line.
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	got := make(chan wire.LogLine, 64)
	done := make(chan error, 1)
	go func() { done <- c.FollowLogs(fctx, "echo", 1, func(l wire.LogLine) { got <- l }) }()
	select {
	case <-got: // the recent line: the stream is set up
	case err := <-done:
		t.Fatalf("FollowLogs: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("no recent line")
	}
	v, err = c.Restart(ctx, "echo")
	if err != nil {
		t.Fatal(err)
	}
	var newPID int
	for _, p := range v.Processes {
		if p.State == "ready" {
			newPID = p.PID
		}
	}
	if v.State != "running" || newPID == 0 || newPID == pid {
		t.Fatalf("after Restart: %+v", v)
	}
	want := fmt.Sprintf("testmcp: serving pid %d", newPID)
	deadline := time.After(10 * time.Second)
	for found := false; !found; {
		select {
		case l := <-got:
			found = l.Text == want && l.PID == newPID
		case err := <-done:
			t.Fatalf("FollowLogs ended: %v", err)
		case <-deadline:
			t.Fatalf("the stream did not carry %q", want)
		}
	}
	cancel()
	if err := <-done; err != context.Canceled {
		t.Errorf("FollowLogs = %v", err)
	}

	v, err = c.Stop(ctx, "echo")
	if err != nil || v.State != "stopped" || len(v.Processes) != 0 {
		t.Fatalf("after Stop: %+v, %v", v, err)
	}

	_, err = c.Start(ctx, "off")
	wantAPIError(t, err, 409, `server "off" is disabled in config.json`)

	// A server that fails to start: 502 with the supervisor's reason.
	if _, err := c.AddServer(ctx, "broken", wireServer(t, testServer(testmcp.Options{FailStart: true}))); err != nil {
		t.Fatal(err)
	}
	_, err = c.Start(ctx, "broken")
	wantAPIError(t, err, 502, `server "broken"`)
	if !strings.Contains(err.Error(), "failing to start on purpose") {
		t.Errorf("start error %q does not carry the server's stderr", err)
	}
	if err := c.RemoveServer(ctx, "broken"); err != nil {
		t.Fatal(err)
	}
	if _, err := sup.Status("broken"); err == nil {
		t.Error("the removed server still has a pool")
	}

	st, err := c.Status(ctx)
	if err != nil || st.Servers != 2 || st.Running != 0 {
		t.Fatalf("Status = %+v, %v", st, err)
	}
}
