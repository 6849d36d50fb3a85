package api_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app/api"
	"github.com/switchboardhq/switchboard/app/api/client"
	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/asks"
	"github.com/switchboardhq/switchboard/app/config"
)

// TestAsksAPI: GET /api/v1/asks lists the board's pending asks; POST
// /api/v1/asks/{id} answers one, the decider named by the token (cli,
// tray, else dashboard); an ask no longer pending is 404; a client token
// is refused (admin only); PUT .../ask-before-destructive changes a
// server's and a profile's setting in config.json; the settings' askTimeout
// is checked against its bounds.
func TestAsksAPI(t *testing.T) {
	board := asks.New(asks.Options{})
	e := newEnv(t, func(o *api.Options) { o.Asks = board })
	if _, err := e.cfg.Update(t.Context(), func(c *config.Config) error {
		c.Profiles = map[string]config.Profile{"coding": {Servers: []string{"fs"}}}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	type result struct {
		allowed bool
		by      string
		err     error
	}
	ask := func(tool string) chan result {
		out := make(chan result, 1)
		go func() {
			actx, cancel := context.WithTimeout(ctx, 20*time.Second)
			defer cancel()
			allowed, by, err := board.Ask(actx, asks.Ask{Server: "fs", Tool: tool, Tier: "destructive", Arguments: json.RawMessage(`{"path":"/tmp/x"}`)})
			out <- result{allowed, by, err}
		}()
		return out
	}
	pendingOf := func(tool string) wire.Ask {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			list, err := e.client.Asks(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range list {
				if a.Tool == tool {
					return a
				}
			}
			time.Sleep(5 * time.Millisecond)
		}
		t.Fatalf("no pending ask of %s", tool)
		return wire.Ask{}
	}
	tray, err := e.tokens.Ensure("tray")
	if err != nil {
		t.Fatal(err)
	}
	window, err := e.tokens.Ensure("window")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		tool, token string
		allow       bool
		by          string
	}{
		{"rm", e.token.Secret, true, wire.DecidedByCLI},
		{"drop", tray.Secret, false, wire.DecidedByTray},
		{"wipe", window.Secret, true, wire.DecidedByDashboard},
	} {
		done := ask(tt.tool)
		a := pendingOf(tt.tool)
		if a.Server != "fs" || a.Deadline.IsZero() || string(a.Arguments) != `{"path":"/tmp/x"}` {
			t.Errorf("pending %+v", a)
		}
		c := &client.Client{BaseURL: e.srv.URL, Token: tt.token, HTTP: e.srv.Client()}
		d, err := c.AnswerAsk(ctx, a.ID, tt.allow)
		if err != nil || d.By != tt.by || d.Allowed != tt.allow || d.ID != a.ID {
			t.Errorf("%s: answer %+v %v, want by %s", tt.tool, d, err, tt.by)
		}
		if r := <-done; r.err != nil || r.allowed != tt.allow || r.by != tt.by {
			t.Errorf("%s: the ask ended %+v", tt.tool, r)
		}
		if _, err := c.AnswerAsk(ctx, a.ID, true); !client.IsNotFound(err) || !strings.Contains(err.Error(), "no pending ask") {
			t.Errorf("%s: answering it again: %v, want 404", tt.tool, err)
		}
	}
	// A client token reaches no admin route.
	cursor, err := e.tokens.EnsureClient("cursor")
	if err != nil {
		t.Fatal(err)
	}
	if resp := e.request(t, "GET", "/api/v1/asks", "", map[string]string{"Authorization": "Bearer " + cursor.Secret}); resp.StatusCode != http.StatusForbidden {
		b, _ := io.ReadAll(resp.Body)
		t.Errorf("GET /api/v1/asks with a client token: %d %s", resp.StatusCode, b)
	}
	if resp := e.request(t, "POST", "/api/v1/asks/x", `{"allow":true,"extra":1}`, nil); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a body with an unknown field: %d", resp.StatusCode)
	}

	if _, err := e.client.SetServerAsks(ctx, "fs", true); err != nil {
		t.Fatal(err)
	}
	if _, err := e.client.SetProfileAsks(ctx, "coding", true); err != nil {
		t.Fatal(err)
	}
	cfg := e.cfg.Current()
	if !cfg.Servers["fs"].AskBeforeDestructive || !cfg.Profiles["coding"].AskBeforeDestructive {
		t.Errorf("config after the PUTs: server %v, profile %v", cfg.Servers["fs"].AskBeforeDestructive, cfg.Profiles["coding"].AskBeforeDestructive)
	}
	if v, err := e.client.Server(ctx, "fs"); err != nil || !v.Config.AskBeforeDestructive {
		t.Errorf("the server's view: %+v %v", v.Config, err)
	}
	if _, err := e.client.SetServerAsks(ctx, "nope", true); !client.IsNotFound(err) {
		t.Errorf("an unknown server: %v, want 404", err)
	}
	if _, err := e.client.SetProfileAsks(ctx, "nope", true); !client.IsNotFound(err) {
		t.Errorf("an unknown profile: %v, want 404", err)
	}

	st, err := e.client.Settings(ctx)
	if err != nil || st.AskTimeout == nil || st.AskTimeout.Duration != api.DefaultAskTimeout {
		t.Errorf("default askTimeout: %+v %v", st.AskTimeout, err)
	}
	for _, d := range []time.Duration{500 * time.Millisecond, 2 * time.Hour} {
		if _, err := e.client.UpdateSettings(ctx, wire.Settings{AskTimeout: &wire.Duration{Duration: d}}); err == nil || !strings.Contains(err.Error(), "askTimeout") {
			t.Errorf("askTimeout %v: %v, want it refused naming askTimeout", d, err)
		}
	}
	if st, err := e.client.UpdateSettings(ctx, wire.Settings{AskTimeout: &wire.Duration{Duration: 30 * time.Second}}); err != nil || st.AskTimeout.Duration != 30*time.Second {
		t.Errorf("askTimeout 30s: %+v %v", st.AskTimeout, err)
	}
}
