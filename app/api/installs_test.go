package api_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app/api"
	"github.com/switchboardhq/switchboard/app/api/client"
	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/catalog"
	"github.com/switchboardhq/switchboard/app/catalog/install"
	"github.com/switchboardhq/switchboard/app/config"
	"github.com/switchboardhq/switchboard/app/events"
	"github.com/switchboardhq/switchboard/app/internal/testutil"
)

// fakeInstaller reports the four phases and succeeds, fails, or waits for
// cancellation, as the request's values say ("mode": "fail" | "hang").
type fakeInstaller struct {
	mu          sync.Mutex
	installed   map[string][]string // server → versions with files
	uninstalled []string
	removed     []string
}

func newFakeInstaller() *fakeInstaller { return &fakeInstaller{installed: map[string][]string{}} }

func (f *fakeInstaller) Install(ctx context.Context, req install.Request, progress func(install.Progress)) (install.Result, error) {
	version := req.Package.ExactVersion()
	for i, ph := range []install.Phase{install.PhaseResolve, install.PhaseDownload, install.PhaseInstall, install.PhaseVerify} {
		progress(install.Progress{Phase: ph, Percent: i * 25, Line: "working on " + string(ph), Output: true})
		switch {
		case req.Values["mode"] == "fail" && ph == install.PhaseDownload:
			progress(install.Progress{Phase: ph, Line: "npm error 404 Not Found", Output: true})
			return install.Result{}, &install.Error{Server: req.Server, Phase: ph, Err: errors.New("npm install failed"),
				Output: []string{"npm error 404 Not Found"}}
		case req.Values["mode"] == "hang" && ph == install.PhaseDownload:
			<-ctx.Done()
			return install.Result{}, &install.Error{Server: req.Server, Phase: ph, Err: ctx.Err()}
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	prev := slices.Clone(f.installed[req.Server])
	f.installed[req.Server] = append(f.installed[req.Server], version)
	return install.Result{Server: req.Server, Version: version,
		Config:    config.Server{Command: "/usr/bin/node", Args: []string{"/data/servers/" + req.Server + "/" + version + "/index.js"}},
		SecretEnv: []string{"API_KEY"}, Tools: []install.Tool{{Name: "echo"}, {Name: "add"}}, Previous: prev}, nil
}

func (f *fakeInstaller) Uninstall(ctx context.Context, server string, purge bool) (install.Uninstalled, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.uninstalled = append(f.uninstalled, server)
	delete(f.installed, server)
	return install.Uninstalled{}, nil
}

func (f *fakeInstaller) Remove(server, version string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.removed = append(f.removed, server+"@"+version)
	return nil
}

type installEnv struct {
	*testEnv
	bus       *events.Bus
	installer *fakeInstaller
}

func newInstallEnv(t *testing.T) *installEnv {
	cat, err := catalog.New(catalog.Options{Offline: true, CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ie := &installEnv{bus: events.New(0), installer: newFakeInstaller()}
	ie.testEnv = newEnv(t, func(o *api.Options) {
		o.Events, o.Catalog, o.Installer = ie.bus, cat, ie.installer
	})
	t.Cleanup(ie.api.Close)
	return ie
}

// run installs and follows the install to its end.
func (ie *installEnv) run(t *testing.T, req wire.InstallRequest) (wire.InstallView, []wire.InstallEvent) {
	t.Helper()
	v, err := ie.client.Install(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	var evs []wire.InstallEvent
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	final, err := ie.client.FollowInstall(ctx, v, func(e wire.InstallEvent) { evs = append(evs, e) })
	if err != nil {
		t.Fatal(err)
	}
	return final, evs
}

func TestCatalogSearchAndEntry(t *testing.T) {
	ie := newInstallEnv(t)
	res, err := ie.client.SearchCatalog(t.Context(), "filesystem", 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Entries) == 0 || res.Entries[0].ShortName != "filesystem" || res.Source != catalog.SourceEmbedded {
		t.Fatalf("search: %+v", res)
	}
	one, err := ie.client.CatalogEntry(t.Context(), res.Entries[0].Name) // a registry name, with its slash
	if err != nil || one.Name != res.Entries[0].Name {
		t.Fatalf("entry %s: %v %+v", res.Entries[0].Name, err, one)
	}
	if _, err := ie.client.CatalogEntry(t.Context(), "nothing-here"); !client.IsNotFound(err) {
		t.Errorf("unknown entry: %v, want 404", err)
	}
	if _, err := ie.client.SearchCatalog(t.Context(), "x", 9999); err == nil || !strings.Contains(err.Error(), "invalid limit") {
		t.Errorf("bad limit: %v", err)
	}
}

// An install reports its phases on the event stream and ends with the
// server in config.json: its launch line, its secrets by name, where it came
// from. Updating installs the newer version and removes the old one's files;
// uninstalling removes everything.
func TestInstallUpdateUninstall(t *testing.T) {
	ie := newInstallEnv(t)
	final, evs := ie.run(t, wire.InstallRequest{Entry: "everything"})
	if final.Error != "" || !final.Done || final.Server != "everything" || len(final.Tools) != 2 {
		t.Fatalf("install: %+v", final)
	}
	var phases []string
	for _, e := range evs {
		if len(phases) == 0 || phases[len(phases)-1] != e.Phase {
			phases = append(phases, e.Phase)
		}
	}
	if strings.Join(phases, ",") != "resolve,download,install,verify" || !evs[len(evs)-1].Done || len(evs[len(evs)-1].Tools) != 2 {
		t.Errorf("install events: phases %v, last %+v", phases, evs[len(evs)-1])
	}
	sc, ok := ie.cfg.Current().Servers["everything"]
	if !ok || sc.Command != "/usr/bin/node" || !slices.Equal(sc.SecretEnv, []string{"API_KEY"}) || sc.Install == nil ||
		sc.Install.Type != "npm" || sc.Install.Version == "" || !strings.HasSuffix(sc.Install.Entry, "/server-everything") {
		t.Fatalf("config after install: %+v (install %+v)", sc, sc.Install)
	}

	// Installing it again under the same name is refused at once.
	if _, err := ie.client.Install(t.Context(), wire.InstallRequest{Entry: "everything"}); err == nil || !strings.Contains(err.Error(), "already configured") {
		t.Errorf("second install: %v", err)
	}

	// The installed version is the catalog's newest: nothing to update.
	if u, err := ie.client.CheckUpdate(t.Context(), "everything"); err != nil || u.Available {
		t.Errorf("check update: %+v %v", u, err)
	}
	if _, err := ie.client.Update(t.Context(), "everything"); err == nil || !strings.Contains(err.Error(), "up to date") {
		t.Errorf("update when up to date: %v", err)
	}
	// An older version installed: the update installs the catalog's and
	// removes the old files once the config points at the new one.
	old := sc.Install.Version
	if _, err := ie.cfg.Update(t.Context(), func(c *config.Config) error {
		s := c.Servers["everything"]
		s.Install.Version, s.DisabledTools = "2020.1.1", []string{"add"}
		c.Servers["everything"] = s
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	ie.installer.installed["everything"] = []string{"2020.1.1"}
	v, err := ie.client.Update(t.Context(), "everything")
	if err != nil {
		t.Fatal(err)
	}
	final, err = ie.client.FollowInstall(t.Context(), v, func(wire.InstallEvent) {})
	if err != nil || final.Error != "" || !final.Update {
		t.Fatalf("update: %+v %v", final, err)
	}
	sc = ie.cfg.Current().Servers["everything"]
	if sc.Install.Version != old || !slices.Equal(sc.DisabledTools, []string{"add"}) {
		t.Errorf("after update: version %s (want %s), disabled tools %v (kept?)", sc.Install.Version, old, sc.DisabledTools)
	}
	if !slices.Equal(ie.installer.removed, []string{"everything@2020.1.1"}) {
		t.Errorf("removed after update: %v", ie.installer.removed)
	}

	if err := ie.client.Uninstall(t.Context(), "everything"); err != nil {
		t.Fatal(err)
	}
	if _, ok := ie.cfg.Current().Servers["everything"]; ok || !slices.Equal(ie.installer.uninstalled, []string{"everything"}) {
		t.Errorf("after uninstall: config has it %v, uninstalled %v", ok, ie.installer.uninstalled)
	}
	if err := ie.client.Uninstall(t.Context(), "everything"); !client.IsNotFound(err) {
		t.Errorf("uninstall twice: %v", err)
	}
}

// A failed install leaves the config alone and says why, with the
// installer's last output; a cancelled one too.
func TestInstallFailureAndCancel(t *testing.T) {
	ie := newInstallEnv(t)
	final, evs := ie.run(t, wire.InstallRequest{Entry: "memory", Server: "mem", Values: map[string]string{"mode": "fail"}})
	// The failure is marked on the phase it happened in, not on verify
	// (the dashboard's chips follow the last event's phase).
	if final.Phase != "download" || len(evs) == 0 || !evs[len(evs)-1].Done || evs[len(evs)-1].Phase != "download" {
		t.Errorf("failed install's phase: view %q, last event %+v; want download", final.Phase, evs[len(evs)-1])
	}
	if !final.Done || !strings.Contains(final.Error, "npm install failed") || !strings.Contains(final.Error, "404") ||
		!slices.Contains(final.Output, "npm error 404 Not Found") {
		t.Errorf("failed install: %+v", final)
	}
	if _, ok := ie.cfg.Current().Servers["mem"]; ok {
		t.Error("a failed install is in the config")
	}

	v, err := ie.client.Install(t.Context(), wire.InstallRequest{Entry: "memory", Server: "mem", Values: map[string]string{"mode": "hang"}})
	if err != nil {
		t.Fatal(err)
	}
	// A second install of the same server while one runs is refused.
	if _, err := ie.client.Install(t.Context(), wire.InstallRequest{Entry: "memory", Server: "mem"}); err == nil ||
		!strings.Contains(err.Error(), "being installed") {
		t.Errorf("concurrent install: %v", err)
	}
	testutil.Eventually(t, 5*time.Second, "the install downloading", func() bool {
		st, err := ie.client.InstallStatus(t.Context(), v.ID)
		return err == nil && st.Phase == string(install.PhaseDownload)
	})
	if _, err := ie.client.CancelInstall(t.Context(), v.ID); err != nil {
		t.Fatal(err)
	}
	final, err = ie.client.FollowInstall(t.Context(), v, func(wire.InstallEvent) {})
	if err != nil || !final.Done || !strings.Contains(final.Error, "context canceled") {
		t.Errorf("cancelled install: %+v %v", final, err)
	}
	if _, ok := ie.cfg.Current().Servers["mem"]; ok {
		t.Error("a cancelled install is in the config")
	}

	for _, tt := range []struct {
		req  wire.InstallRequest
		want string
	}{
		{wire.InstallRequest{}, `"entry" is missing`},
		{wire.InstallRequest{Entry: "nothing-here"}, "not in the built-in catalog"},
		{wire.InstallRequest{Entry: "memory", Server: "bad name"}, "invalid server name"},
	} {
		_, err := ie.client.Install(t.Context(), tt.req)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("install %+v: %v, want %q", tt.req, err, tt.want)
		}
	}
}
