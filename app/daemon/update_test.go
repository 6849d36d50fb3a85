package daemon

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app/api"
	"github.com/switchboardhq/switchboard/app/api/client"
	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/config"
	"github.com/switchboardhq/switchboard/app/events"
	"github.com/switchboardhq/switchboard/app/gateway"
	"github.com/switchboardhq/switchboard/app/history"
	"github.com/switchboardhq/switchboard/app/internal/testutil"
	"github.com/switchboardhq/switchboard/app/tokens"
	"github.com/switchboardhq/switchboard/supervisor"
	"github.com/switchboardhq/switchboard/supervisor/testmcp"
)

// TestUpdateNotAppliedIsAnError: a config change through the API that the
// supervisor does not take (here: it is shutting down) answers an error
// status with the reason, never 200, and config.json is put back to the
// config in force instead of claiming the change.
func TestUpdateNotAppliedIsAnError(t *testing.T) {
	home := t.TempDir()
	log := testutil.Logger(t)
	ctx := t.Context()
	store, err := config.NewStore(filepath.Join(home, ConfigFile), log)
	if err != nil {
		t.Fatal(err)
	}
	sup, err := supervisor.New(ctx, supervisor.Options{StateDir: home, Env: os.Environ(), Logger: log,
		StopGrace: 500 * time.Millisecond, SampleInterval: -1, HealthInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	closeSup := func() {
		closeCtx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := sup.Close(closeCtx); err != nil {
			t.Errorf("closing the supervisor: %v", err)
		}
	}
	t.Cleanup(closeSup) // a second Close returns at once
	hist, err := history.Open(ctx, filepath.Join(home, HistoryFile), history.Options{Logger: log, RetentionInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hist.Close(context.Background()) })
	bus := events.New(0)
	t.Cleanup(bus.Close)
	gw := gateway.New(gateway.Options{Backends: gateway.FromSupervisor(sup), Logger: log, Version: "test"})
	t.Cleanup(gw.Close)
	d := &daemon{log: log, store: store, sup: sup, gw: gw, bus: bus, hist: hist}
	if err := d.apply(ctx); err != nil {
		t.Fatal(err)
	}
	toks, err := tokens.Open(filepath.Join(home, TokensFile))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := toks.Ensure("cli")
	if err != nil {
		t.Fatal(err)
	}
	a, err := api.New(api.Options{Supervisor: sup, Config: d, Tokens: toks, Home: home, Version: "test", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	srv := httptest.NewServer(a)
	t.Cleanup(srv.Close)
	c := &client.Client{BaseURL: srv.URL, Token: tok.Secret, HTTP: srv.Client()}

	// A test MCP server, started only when called (min 0): nothing runs.
	server := wire.ServerConfig{Command: os.Args[0], Env: map[string]string{"GORACE": "atexit_sleep_ms=0"}}
	for _, kv := range testmcp.Env(testmcp.Options{}) {
		k, v, _ := strings.Cut(kv, "=")
		server.Env[k] = v
	}
	if _, err := c.AddServer(ctx, "applied", server); err != nil {
		t.Fatal(err)
	}
	if _, err := sup.Pool("applied"); err != nil {
		t.Fatalf("the added server is not in force: %v", err)
	}
	before, err := os.ReadFile(store.Path())
	if err != nil {
		t.Fatal(err)
	}

	closeSup() // the daemon is shutting down
	for _, tc := range []struct {
		name string
		do   func() error
	}{
		{"add a server", func() error { _, err := c.AddServer(ctx, "late", server); return err }},
		{"remove a server", func() error { return c.RemoveServer(ctx, "applied") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.do()
			apiErr, ok := errors.AsType[*client.APIError](err)
			if !ok || apiErr.Status != http.StatusServiceUnavailable ||
				!strings.Contains(apiErr.Message, "not applied") || !strings.Contains(apiErr.Message, "shut down") {
				t.Fatalf("a change not applied answered %v, want 503 saying it was not applied and why", err)
			}
			after, err := os.ReadFile(store.Path())
			if err != nil {
				t.Fatal(err)
			}
			if string(after) != string(before) {
				t.Errorf("config.json claims the change not applied:\n%s\nwant it as it was:\n%s", after, before)
			}
			if cur := d.Current(); len(cur.Servers) != 1 || cur.Servers["applied"].Command == "" {
				t.Errorf("the config in force is %v, want only %q", cur.Servers, "applied")
			}
		})
	}
}
