package api_test

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/app/api"
	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/clients"
)

func clientOf(t *testing.T, list []wire.ClientView, id string) wire.ClientView {
	t.Helper()
	for _, v := range list {
		if v.ID == id {
			return v
		}
	}
	t.Fatalf("no client %s in %d", id, len(list))
	return wire.ClientView{}
}

// TestOfferCherryStudio: Cherry Studio keeps no file; its plan says so
// and writes nothing, the offer gives its install link with the client's
// own token, and from then on it is offered, never connected.
func TestOfferCherryStudio(t *testing.T) {
	e := newClientsEnv(t)
	ctx := t.Context()
	c, _ := clients.Lookup("cherry-studio")
	dir, _ := c.Path(clients.Env{GOOS: runtime.GOOS, Home: e.home})
	if err := os.MkdirAll(filepath.Join(dir, "IndexedDB"), 0o700); err != nil {
		t.Fatal(err)
	}
	list, err := e.client.ClientsIn(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if v := clientOf(t, list, "cherry-studio"); !v.Offer || !v.Installed || v.Connected || v.Offered || v.Error != "" {
		t.Fatalf("before the offer: %+v", v)
	}
	plan, err := e.client.PlanClientIn(ctx, "cherry-studio", "", wire.ClientChange{Action: "connect"})
	if err != nil {
		t.Fatal(err)
	}
	if !plan.Offer || plan.Changed || plan.Diff != "" || len(plan.Notes) == 0 || !strings.Contains(plan.Notes[0], "install link") {
		t.Errorf("plan: %+v", plan)
	}
	if _, err := e.client.ApplyClientIn(ctx, "cherry-studio", "", wire.ClientChange{Action: "connect", Hash: "x"}); statusOf(err) != http.StatusUnprocessableEntity {
		t.Errorf("apply: %v, want 422", err)
	}
	if _, err := e.client.PlanClientIn(ctx, "cherry-studio", "", wire.ClientChange{Action: "disconnect"}); statusOf(err) != http.StatusUnprocessableEntity ||
		!strings.Contains(err.Error(), "tokens revoke cherry-studio") {
		t.Errorf("disconnect: %v", err)
	}

	o, err := e.client.OfferClient(ctx, "cherry-studio", wire.ClientOfferRequest{})
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(o.Link)
	if err != nil || u.Scheme != "cherrystudio" {
		t.Fatalf("link %q: %v", o.Link, err)
	}
	payload, err := base64.StdEncoding.DecodeString(u.Query().Get("servers"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, _ := strings.Cut(string(payload), `"Authorization":"Bearer `)
	secret, _, _ := strings.Cut(after, `"`)
	if tok, ok := e.tokens.Known(secret); !ok || tok.Label != "cherry-studio" || !strings.Contains(string(payload), `"baseUrl":"`+testGateway+`"`) {
		t.Errorf("payload %s: token %q known %v (%+v)", payload, secret, ok, tok)
	}
	if strings.Contains(o.Entry, secret) || !strings.Contains(o.Note, "offered, confirm in Cherry Studio") {
		t.Errorf("entry %s, note %q", o.Entry, o.Note)
	}
	list, err = e.client.ClientsIn(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if v := clientOf(t, list, "cherry-studio"); !v.Offered || v.Connected {
		t.Errorf("after the offer: %+v", v)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the offer wrote into Cherry Studio's folder: %v", entries)
	}
	if o.Opened || o.OpenError != "" {
		t.Errorf("opened without being asked: %+v", o)
	}
	if _, err := e.client.OfferClient(ctx, "cursor", wire.ClientOfferRequest{}); statusOf(err) != http.StatusBadRequest {
		t.Errorf("offer for cursor: %v, want 400", err)
	}
	if _, err := e.client.OfferClient(ctx, "cherry-studio", wire.ClientOfferRequest{Profile: "nope"}); statusOf(err) != http.StatusUnprocessableEntity {
		t.Errorf("offer with an unknown profile: %v, want 422", err)
	}
}

// TestGeminiCaveat: Gemini CLI's plan and view say that it lists
// Switchboard as "Disabled" in folders it does not trust; another
// client's do not.
func TestGeminiCaveat(t *testing.T) {
	e := newClientsEnv(t)
	ctx := t.Context()
	for _, id := range []string{"gemini-cli", "cursor"} {
		plan, err := e.client.PlanClientIn(ctx, id, "", wire.ClientChange{Action: "connect"})
		if err != nil {
			t.Fatal(err)
		}
		applied, err := e.client.ApplyClientIn(ctx, id, "", wire.ClientChange{Action: "connect", Hash: plan.Hash})
		if err != nil {
			t.Fatal(err)
		}
		list, err := e.client.ClientsIn(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		v := clientOf(t, list, id)
		if id == "cursor" {
			if plan.Caveat != "" || applied.Caveat != "" || v.Caveat != "" {
				t.Errorf("cursor has a caveat: %q %q %q", plan.Caveat, applied.Caveat, v.Caveat)
			}
			continue
		}
		for what, got := range map[string]string{"plan": plan.Caveat, "applied": applied.Caveat, "view": v.Caveat} {
			if !strings.Contains(got, `"Disabled"`) || !strings.Contains(got, "trust") {
				t.Errorf("gemini-cli's %s caveat: %q", what, got)
			}
		}
		if !v.Connected {
			t.Errorf("gemini-cli: %+v", v)
		}
	}
}

// TestImportDisabled: a server the client's file turns off is imported
// turned off.
func TestImportDisabled(t *testing.T) {
	e := newClientsEnv(t)
	ctx := t.Context()
	e.write(t, "droid", `{"mcpServers": {
  "fetch": {"type": "stdio", "command": "uvx", "args": ["mcp-server-fetch"], "disabled": true},
  "git": {"type": "stdio", "command": "uvx", "args": ["mcp-server-git"]}
}}
`)
	plan, err := e.client.PlanImport(ctx, "droid", "", wire.ImportRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Servers) != 2 {
		t.Fatalf("servers: %+v", plan.Servers)
	}
	for _, s := range plan.Servers {
		off := s.Server.Enabled != nil && !*s.Server.Enabled
		if off != (s.Entry == "fetch") {
			t.Errorf("%s: enabled %v", s.Entry, s.Server.Enabled)
		}
	}
	if _, err := e.client.ApplyImport(ctx, "droid", "", wire.ImportRequest{Hash: plan.Hash}); err != nil {
		t.Fatal(err)
	}
	cfg := e.cfg.Current()
	if cfg.Servers["fetch"].IsEnabled() || !cfg.Servers["git"].IsEnabled() {
		t.Errorf("config: fetch enabled %v, git enabled %v", cfg.Servers["fetch"].IsEnabled(), cfg.Servers["git"].IsEnabled())
	}
}

// TestOfferOpened: asked to, the daemon hands the link to its opener,
// and says when it could not.
func TestOfferOpened(t *testing.T) {
	var opened []string
	fail := false
	e := newClientsEnvWith(t, func(o *api.Options) {
		o.Clients.OpenApp = func(_ context.Context, link, scheme string) error {
			if fail {
				return errors.New("no display")
			}
			opened = append(opened, scheme+" "+link)
			return nil
		}
	})
	o, err := e.client.OfferClient(t.Context(), "cherry-studio", wire.ClientOfferRequest{Open: true})
	if err != nil {
		t.Fatal(err)
	}
	if !o.Opened || o.OpenError != "" || len(opened) != 1 || opened[0] != "cherrystudio "+o.Link {
		t.Errorf("offer %+v, opened %q", o, opened)
	}
	fail = true
	if o, err := e.client.OfferClient(t.Context(), "cherry-studio", wire.ClientOfferRequest{Open: true}); err != nil || o.Opened || o.OpenError != "no display" {
		t.Errorf("a failed open: %+v, %v", o, err)
	}
}
