package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app/api"
	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/catalog"
	"github.com/switchboardhq/switchboard/app/events"
	"github.com/switchboardhq/switchboard/app/gateway"
	"github.com/switchboardhq/switchboard/app/internal/testutil"
)

// serveFixtures is a loopback registry that answers the latest version of
// each server.json in the catalog's testdata it is given.
func serveFixtures(t *testing.T, files ...string) *httptest.Server {
	t.Helper()
	docs := map[string]json.RawMessage{}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join("..", "catalog", "testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		var head struct{ Name string }
		if err := json.Unmarshal(data, &head); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		docs[head.Name] = data
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rest, ok := strings.CutPrefix(r.URL.EscapedPath(), "/v0.1/servers/")
		name, ok2 := strings.CutSuffix(rest, "/versions/latest")
		name, _ = url.PathUnescape(name)
		doc, found := docs[name]
		if !ok || !ok2 || !found {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"server": doc,
			"_meta": map[string]any{"io.modelcontextprotocol.registry/official": map[string]any{"status": "active", "isLatest": true}}})
	}))
	t.Cleanup(srv.Close)
	return srv
}

// newRemoteInstallEnv is an API with a secret store and a catalog whose
// registry is the fixtures' loopback one.
func newRemoteInstallEnv(t *testing.T) (*clientsEnv, *fakeInstaller) {
	t.Helper()
	reg := serveFixtures(t, "remote-only.server.json", "remote-and-package.server.json")
	cat, err := catalog.New(catalog.Options{RegistryURL: reg.URL, CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	inst := newFakeInstaller()
	e := newClientsEnvWith(t, func(o *api.Options) {
		o.Events, o.Catalog, o.Installer, o.Tools = events.New(0), cat, inst, listedTools{"tickets": {{Name: "create_ticket"}, {Name: "search"}}, "weather": {}}
	})
	return e, inst
}

// A remote-only entry installs as a remote server: URL variables filled,
// the transport from the remote's type, plain headers in config.json,
// secret ones in the store and named in secretHeaders; phases resolve,
// configure, verify (the first connect), no download.
func TestInstallRemoteOnlyEntry(t *testing.T) {
	e, inst := newRemoteInstallEnv(t)
	en, err := e.client.CatalogEntry(t.Context(), "com.example/tickets")
	if err != nil {
		t.Fatal(err)
	}
	if en.Kind != catalog.KindRemote || len(en.Remotes) != 2 || len(en.Remotes[0].Headers) != 3 || !en.Remotes[0].Variables["workspace"].IsRequired {
		t.Fatalf("catalog entry: %+v", en)
	}
	const secret = "Bearer tk_live_9f8e7d6c5b4a3210"
	ie := &installEnv{testEnv: e.testEnv}
	final, evs := ie.run(t, wire.InstallRequest{Entry: "com.example/tickets", Server: "tickets",
		Values: map[string]string{"workspace": "acme", "Authorization": secret}})
	if final.Error != "" || !final.Done || !final.Remote || final.Notice != "" || len(final.Tools) != 2 || final.Tools[0].Name != "create_ticket" {
		t.Fatalf("install: %+v", final)
	}
	var phases []string
	for _, ev := range evs {
		if len(phases) == 0 || phases[len(phases)-1] != ev.Phase {
			phases = append(phases, ev.Phase)
		}
	}
	if got := strings.Join(phases, ","); got != "resolve,configure,verify" {
		t.Errorf("phases = %s, want resolve,configure,verify", got)
	}
	sc := e.cfg.Current().Servers["tickets"]
	if sc.URL != "https://acme.tickets.example.com/mcp" || sc.Transport != "streamable-http" || sc.Headers["X-Region"] != "eu" ||
		len(sc.Headers) != 1 || sc.SecretHeaders["Authorization"] != "Authorization" || sc.Install == nil ||
		sc.Install.Entry != "com.example/tickets" || sc.Install.Version != "2.1.0" || sc.Install.Type != api.InstallTypeRemote {
		t.Errorf("config entry: %+v (install %+v)", sc, sc.Install)
	}
	if got, err := e.secrets.Get("tickets", "Authorization"); err != nil || got != secret {
		t.Errorf("secret store: %q, %v", got, err)
	}
	cfgFile, _ := json.Marshal(e.cfg.Current())
	views, _ := json.Marshal(final)
	evData, _ := json.Marshal(evs)
	for what, data := range map[string][]byte{"config": cfgFile, "install view": views, "events": evData} {
		if strings.Contains(string(data), "tk_live") {
			t.Errorf("the secret header is in the %s:\n%s", what, data)
		}
	}
	if len(inst.installed) != 0 {
		t.Errorf("the package installer ran for a remote: %v", inst.installed)
	}
	if acts := e.sup.actions(); !strings.Contains(strings.Join(acts, ";"), "start tickets") {
		t.Errorf("the first connect was not asked for: %v", acts)
	}
}

// An entry with a package and a remote installs its package unless the
// remote is asked for; asked for, its remote is configured.
func TestInstallRemoteOfEntryWithBoth(t *testing.T) {
	e, inst := newRemoteInstallEnv(t)
	en, err := e.client.CatalogEntry(t.Context(), "com.example/weather")
	if err != nil || en.Kind != catalog.KindBoth {
		t.Fatalf("entry: %+v %v", en, err)
	}
	ie := &installEnv{testEnv: e.testEnv}
	final, _ := ie.run(t, wire.InstallRequest{Entry: "com.example/weather", Server: "weather-local", Values: map[string]string{"WEATHER_KEY": "k"}})
	if final.Error != "" || final.Remote || len(inst.installed["weather-local"]) != 1 {
		t.Errorf("default install of an entry with both: %+v, installer %v", final, inst.installed)
	}
	final, _ = ie.run(t, wire.InstallRequest{Entry: "com.example/weather", Server: "weather", Remote: true,
		Values: map[string]string{"X-Api-Key": "wk_abcdef123456"}})
	if final.Error != "" || !final.Remote {
		t.Fatalf("remote install: %+v", final)
	}
	sc := e.cfg.Current().Servers["weather"]
	if sc.URL != "https://weather.example.com/sse" || sc.Transport != "sse" || sc.SecretHeaders["X-Api-Key"] != "X-Api-Key" || sc.Command != "" {
		t.Errorf("config entry: %+v", sc)
	}
}

// A remote that answers 401 at the first connect is installed all the
// same, with a notice that it needs a sign-in; one that is down is
// installed with a notice that it did not connect yet.
func TestInstallRemoteNeedsSignIn(t *testing.T) {
	e, _ := newRemoteInstallEnv(t)
	e.sup.mu.Lock()
	e.sup.errs["start tickets"] = errors.New(`server "tickets": connecting to https://acme.tickets.example.com/mcp: HTTP 401 Unauthorized`)
	e.sup.errs["start weather"] = errors.New(`server "weather": connection refused`)
	e.sup.mu.Unlock()
	ie := &installEnv{testEnv: e.testEnv}
	final, _ := ie.run(t, wire.InstallRequest{Entry: "com.example/tickets", Server: "tickets",
		Values: map[string]string{"workspace": "acme", "Authorization": "Bearer x"}})
	if final.Error != "" || !strings.Contains(final.Notice, "needs a sign-in") || !strings.Contains(final.Notice, "switchboard auth login tickets") {
		t.Errorf("install of a remote that wants a sign-in: %+v", final)
	}
	if _, ok := e.cfg.Current().Servers["tickets"]; !ok {
		t.Error("a 401 at the first connect took the server out of config.json")
	}
	final, _ = ie.run(t, wire.InstallRequest{Entry: "com.example/weather", Server: "weather", Remote: true,
		Values: map[string]string{"X-Api-Key": "k"}})
	if final.Error != "" || !strings.Contains(final.Notice, "did not connect yet (server \"weather\": connection refused)") {
		t.Errorf("install of a remote that is down: %+v", final)
	}
}

// Bad inputs are refused before anything is written, naming the input;
// asking for the remote of an entry without one says so.
func TestInstallRemoteBadInputs(t *testing.T) {
	e, _ := newRemoteInstallEnv(t)
	tests := []struct {
		name string
		req  wire.InstallRequest
		want string
	}{
		{"missing variable", wire.InstallRequest{Entry: "com.example/tickets", Values: map[string]string{"Authorization": "x"}},
			"input workspace: required, but no value was given"},
		{"missing secret header", wire.InstallRequest{Entry: "com.example/tickets", Values: map[string]string{"workspace": "acme"}},
			"input Authorization: required, but no value was given"},
		{"unknown input", wire.InstallRequest{Entry: "com.example/tickets", Values: map[string]string{"workspace": "acme", "Authorization": "x", "TOKEN": "y"}},
			"input TOKEN is not one this remote takes"},
		{"bad URL from a variable", wire.InstallRequest{Entry: "com.example/tickets", Values: map[string]string{"workspace": "a b", "Authorization": "x"}},
			"invalid server"},
		{"no remote", wire.InstallRequest{Entry: "everything", Remote: true}, "it lists no remotes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.client.Install(t.Context(), tt.req)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
	if _, ok := e.cfg.Current().Servers["tickets"]; ok {
		t.Error("a refused install wrote the server")
	}
	if keys, _ := e.secrets.Keys("tickets"); len(keys) != 0 {
		t.Errorf("a refused install stored secrets: %v", keys)
	}
}

// Cancelling a remote's install while it connects takes the entry and its
// secret headers out again; an installed remote has no update.
func TestInstallRemoteCancelAndUpdate(t *testing.T) {
	e, _ := newRemoteInstallEnv(t)
	e.sup.mu.Lock()
	e.sup.block["start tickets"] = true
	e.sup.mu.Unlock()
	v, err := e.client.Install(t.Context(), wire.InstallRequest{Entry: "com.example/tickets", Server: "tickets",
		Values: map[string]string{"workspace": "acme", "Authorization": "Bearer c4ncel"}})
	if err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, "the install connecting", func() bool {
		return strings.Contains(strings.Join(e.sup.actions(), ";"), "start tickets")
	})
	if _, ok := e.cfg.Current().Servers["tickets"]; !ok {
		t.Fatal("the server is not configured while it connects")
	}
	if _, err := e.client.CancelInstall(t.Context(), v.ID); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	final, err := e.client.FollowInstall(ctx, v, func(wire.InstallEvent) {})
	if err != nil || !strings.Contains(final.Error, "install was stopped") {
		t.Fatalf("cancelled install: %+v %v", final, err)
	}
	if _, ok := e.cfg.Current().Servers["tickets"]; ok {
		t.Error("a cancelled install left the server in config.json")
	}
	if keys, _ := e.secrets.Keys("tickets"); len(keys) != 0 {
		t.Errorf("a cancelled install left secrets: %v", keys)
	}

	e.sup.mu.Lock()
	delete(e.sup.block, "start tickets")
	e.sup.mu.Unlock()
	ie := &installEnv{testEnv: e.testEnv}
	if final, _ := ie.run(t, wire.InstallRequest{Entry: "com.example/tickets", Server: "tickets",
		Values: map[string]string{"workspace": "acme", "Authorization": "Bearer x"}}); final.Error != "" {
		t.Fatalf("install: %+v", final)
	}
	if _, err := e.client.Update(t.Context(), "tickets"); err == nil || !strings.Contains(err.Error(), "is a remote server: there is nothing here to update") {
		t.Errorf("update of a remote: %v", err)
	}
}

// listedTools is a tool source that has listed the tools of some servers
// (and not of the others: nil).
type listedTools map[string][]gateway.ToolInfo

func (l listedTools) Tools(server string) []gateway.ToolInfo { return l[server] }
