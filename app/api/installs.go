package api

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/catalog"
	"github.com/switchboardhq/switchboard/app/catalog/install"
	"github.com/switchboardhq/switchboard/app/config"
	"github.com/switchboardhq/switchboard/app/events"
)

// Catalog is what the API needs of the server catalog (*catalog.Catalog).
type Catalog interface {
	Search(ctx context.Context, query string, limit int) (catalog.Result, error)
	Lookup(ctx context.Context, name string) (catalog.Result, error)
	CheckUpdate(ctx context.Context, name, installed string) (catalog.Update, error)
}

// Installer is what the API needs of the installer (*install.Installer).
type Installer interface {
	Install(ctx context.Context, req install.Request, progress func(install.Progress)) (install.Result, error)
	Uninstall(ctx context.Context, server string, purge bool) (install.Uninstalled, error)
	Remove(server, version string) error
}

const (
	installOutputLines = 200
	// finishedInstallsKept bounds the finished installs GET /installs lists.
	finishedInstallsKept = 20
	// DefaultInstallTimeout bounds one install (a slow npm registry, a big
	// docker image).
	DefaultInstallTimeout = 15 * time.Minute
)

// wireTools are the tools of a verified install as the API shows them.
func wireTools(tools []install.Tool) []wire.Tool {
	var out []wire.Tool
	for _, t := range tools {
		out = append(out, wire.Tool(t))
	}
	return out
}

// installs tracks the installs this daemon runs. Each runs on its own
// goroutine with the daemon's lifetime, not the request's: the client that
// asked may go away, and the install goes on (or is cancelled with
// POST /installs/{id}/cancel).
type installs struct {
	mu     sync.Mutex
	next   int
	jobs   map[string]*installJob
	order  []string // ids, oldest first
	wg     sync.WaitGroup
	ctx    context.Context // ends when the API closes
	cancel context.CancelFunc
}

type installJob struct {
	view   wire.InstallView
	cancel context.CancelFunc
}

func newInstalls() *installs {
	ctx, cancel := context.WithCancel(context.Background())
	return &installs{jobs: map[string]*installJob{}, ctx: ctx, cancel: cancel}
}

// close cancels every running install and waits for their rollbacks.
func (in *installs) close() {
	in.cancel()
	in.wg.Wait()
}

func (s *Server) installRoutes() {
	s.mux.Handle("GET /api/v1/catalog", handle(s.searchCatalog, http.StatusOK))
	s.mux.Handle("GET /api/v1/catalog/{name...}", handle(s.getCatalogEntry, http.StatusOK))
	s.mux.Handle("GET /api/v1/installs", handle(s.listInstalls, http.StatusOK))
	s.mux.Handle("POST /api/v1/installs", handle(s.startInstall, http.StatusAccepted))
	s.mux.Handle("GET /api/v1/installs/{id}", handle(s.getInstall, http.StatusOK))
	s.mux.Handle("POST /api/v1/installs/{id}/cancel", handle(s.cancelInstall, http.StatusOK))
	s.mux.Handle("POST /api/v1/paths/check", handle(s.checkPath, http.StatusOK))
	s.mux.Handle("POST /api/v1/servers/{name}/update", handle(s.updateInstalled, http.StatusAccepted))
	s.mux.Handle("GET /api/v1/servers/{name}/update", handle(s.checkUpdate, http.StatusOK))
	s.mux.Handle("POST /api/v1/servers/{name}/uninstall", handle(s.uninstall, http.StatusOK))
}

func (s *Server) catalogOrErr() (Catalog, error) {
	return available(s.catalog, "the catalog is")
}

func (s *Server) installerOrErr() (Installer, error) {
	return available(s.installer, "installing servers is")
}

// searchCatalog serves GET /api/v1/catalog?q=&limit=.
func (s *Server) searchCatalog(r *http.Request) (wire.CatalogResult, error) {
	c, err := s.catalogOrErr()
	if err != nil {
		return wire.CatalogResult{}, err
	}
	limit := 50
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 500 {
			return wire.CatalogResult{}, errorf(http.StatusBadRequest, "invalid limit %q: a number from 1 to 500", v)
		}
		limit = n
	}
	res, err := c.Search(r.Context(), r.URL.Query().Get("q"), limit)
	if err != nil {
		return wire.CatalogResult{}, fmt.Errorf("searching the catalog: %w", err)
	}
	return catalogResult(res), nil
}

// catalogEntry serves GET /api/v1/catalog/{name}: one entry (its Source
// says where it came from).
func (s *Server) getCatalogEntry(r *http.Request) (wire.CatalogEntry, error) {
	c, err := s.catalogOrErr()
	if err != nil {
		return wire.CatalogEntry{}, err
	}
	res, err := s.lookup(r.Context(), c, r.PathValue("name"))
	if err != nil {
		return wire.CatalogEntry{}, err
	}
	return catalogEntry(res.Entries[0]), nil
}

// catalogResult is a search's answer as the API shows it; its entries are
// never null.
func catalogResult(res catalog.Result) wire.CatalogResult {
	out := wire.CatalogResult{Entries: make([]wire.CatalogEntry, 0, len(res.Entries)), Source: res.Source,
		Warning: res.Warning, FetchedAt: res.FetchedAt, More: res.More}
	for _, e := range res.Entries {
		out.Entries = append(out.Entries, catalogEntry(e))
	}
	return out
}

func catalogEntry(e catalog.Entry) wire.CatalogEntry {
	out := wire.CatalogEntry{Name: e.Name, Title: e.Title, Description: e.Description, Version: e.Version,
		WebsiteURL: e.WebsiteURL, ShortName: e.ShortName, Source: e.Source, Status: e.Status, LatestVersion: e.LatestVersion, Network: e.Network,
		Kind: e.Kind(), Remotes: convertAll(e.Remotes, catalogRemote),
		Packages: convertAll(e.Packages, func(p catalog.Package) wire.Package {
			return wire.Package{RegistryType: p.RegistryType, RegistryBaseURL: p.RegistryBaseURL, Identifier: p.Identifier,
				Version: p.Version, FileSHA256: p.FileSHA256, RuntimeHint: p.RuntimeHint, Transport: wire.Transport(p.Transport),
				RuntimeArguments: convertAll(p.RuntimeArguments, catalogArgument),
				PackageArguments: convertAll(p.PackageArguments, catalogArgument),
				EnvironmentVars:  convertAll(p.EnvironmentVars, catalogKeyValue)}
		})}
	if e.Repository != nil {
		repo := wire.Repository(*e.Repository)
		out.Repository = &repo
	}
	return out
}

func catalogKeyValue(kv catalog.KeyValue) wire.KeyValue {
	return wire.KeyValue{Input: wire.Input(kv.Input), Name: kv.Name}
}

func catalogRemote(r catalog.Remote) wire.Remote {
	out := wire.Remote{Type: r.Type, URL: r.URL, Headers: convertAll(r.Headers, catalogKeyValue)}
	for name, in := range r.Variables {
		if out.Variables == nil {
			out.Variables = map[string]wire.Input{}
		}
		out.Variables[name] = wire.Input(in)
	}
	return out
}

func catalogArgument(a catalog.Argument) wire.Argument {
	return wire.Argument{Input: wire.Input(a.Input), Type: a.Type, Name: a.Name, ValueHint: a.ValueHint, IsRepeated: a.IsRepeated}
}

func (s *Server) lookup(ctx context.Context, c Catalog, name string) (catalog.Result, error) {
	res, err := c.Lookup(ctx, name)
	if errors.Is(err, catalog.ErrNotFound) {
		return res, errorf(http.StatusNotFound, "%v", err)
	}
	if err != nil {
		return res, errorf(http.StatusBadGateway, "%v", err)
	}
	return res, nil
}

func (s *Server) listInstalls(*http.Request) ([]wire.InstallView, error) {
	s.installs.mu.Lock()
	defer s.installs.mu.Unlock()
	out := make([]wire.InstallView, 0, len(s.installs.order))
	for _, id := range s.installs.order {
		out = append(out, s.installs.jobs[id].snapshot())
	}
	return out, nil
}

func (s *Server) getInstall(r *http.Request) (wire.InstallView, error) {
	s.installs.mu.Lock()
	defer s.installs.mu.Unlock()
	j, ok := s.installs.jobs[r.PathValue("id")]
	if !ok {
		return wire.InstallView{}, errorf(http.StatusNotFound, "no install %q (finished installs are kept for a while only)", r.PathValue("id"))
	}
	return j.snapshot(), nil
}

func (s *Server) cancelInstall(r *http.Request) (wire.InstallView, error) {
	s.installs.mu.Lock()
	j, ok := s.installs.jobs[r.PathValue("id")]
	s.installs.mu.Unlock()
	if !ok {
		return wire.InstallView{}, errorf(http.StatusNotFound, "no install %q", r.PathValue("id"))
	}
	j.cancel()
	return s.getInstall(r)
}

// snapshot copies the view; installs.mu must be held.
func (j *installJob) snapshot() wire.InstallView {
	v := j.view
	v.Output = slices.Clone(v.Output)
	v.Tools = slices.Clone(v.Tools)
	return v
}

// startInstall serves POST /api/v1/installs: it checks the request, then
// installs in the background and answers 202 with the install's view.
// Progress goes to the event stream (type "install") and to
// GET /installs/{id}.
func (s *Server) startInstall(r *http.Request) (wire.InstallView, error) {
	var req wire.InstallRequest
	if err := decodeBody(r, &req); err != nil {
		return wire.InstallView{}, err
	}
	if req.Entry == "" {
		return wire.InstallView{}, errorf(http.StatusBadRequest, `invalid request body: "entry" is missing`)
	}
	c, err := s.catalogOrErr()
	if err != nil {
		return wire.InstallView{}, err
	}
	if _, err := s.installerOrErr(); err != nil {
		return wire.InstallView{}, err
	}
	res, err := s.lookup(r.Context(), c, req.Entry)
	if err != nil {
		return wire.InstallView{}, err
	}
	entry := res.Entries[0]
	name := req.Server
	if name == "" {
		name = entry.ShortName
	}
	if name == "" {
		name = catalog.SuggestShortName(entry.Name)
	}
	check := config.Default()
	check.Servers[name] = config.Server{Command: "x"}
	if err := check.Validate(); err != nil {
		return wire.InstallView{}, errorf(http.StatusBadRequest, "invalid server name: %v", err)
	}
	if _, exists := s.cfg.Current().Servers[name]; exists {
		return wire.InstallView{}, errorf(http.StatusConflict,
			"a server named %q is already configured: choose another name (\"server\"), or update it with POST /api/v1/servers/%s/update", name, name)
	}
	if req.Remote || entry.Kind() == catalog.KindRemote {
		return s.startRemoteInstall(r, entry, name, req.Values)
	}
	return s.runInstall(entry, install.Request{Server: name, Entry: entry, Values: req.Values}, nil)
}

// runInstall picks the package, registers the job and starts it.
// installed is the server's current config for an update, else nil.
func (s *Server) runInstall(entry catalog.Entry, req install.Request, installed *config.Server) (wire.InstallView, error) {
	pkg, err := entry.RunnablePackage()
	if err != nil {
		return wire.InstallView{}, errorf(http.StatusUnprocessableEntity, "%v", err)
	}
	req.Package = pkg
	req.Update = installed != nil
	if installed != nil {
		req.Values = keptPathValues(pkg, installed, req.Values)
	}

	return s.startJob(wire.InstallView{Server: req.Server, Entry: entry.Name, Version: pkg.ExactVersion(), Update: req.Update},
		func(ctx context.Context, j *installJob) { s.install(ctx, j, req, installed) })
}

// startJob registers an install (view gives its server, entry and version)
// and runs it in the background with the daemon's lifetime, bounded by
// DefaultInstallTimeout. A second install of the same server is refused.
func (s *Server) startJob(view wire.InstallView, run func(ctx context.Context, j *installJob)) (wire.InstallView, error) {
	in := s.installs
	in.mu.Lock()
	for _, j := range in.jobs {
		if j.view.Server == view.Server && !j.view.Done {
			in.mu.Unlock()
			return wire.InstallView{}, errorf(http.StatusConflict, "server %q is being installed already (install %s)", view.Server, j.view.ID)
		}
	}
	in.next++
	ctx, cancel := context.WithTimeout(in.ctx, DefaultInstallTimeout)
	view.ID, view.Started, view.Phase, view.Output = strconv.Itoa(in.next), time.Now().UTC(), string(install.PhaseResolve), []string{}
	j := &installJob{cancel: cancel, view: view}
	if s.bus != nil {
		j.view.EventsSince = s.bus.LastID()
	}
	in.jobs[j.view.ID] = j
	in.order = append(in.order, j.view.ID)
	in.forgetOld()
	out := j.snapshot()
	in.mu.Unlock()

	in.wg.Go(func() {
		defer cancel()
		run(ctx, j)
	})
	return out, nil
}

// keptPathValues adds to values, for an update, the paths the server runs
// with now (its data file, its database) where the update does not set
// them: an update keeps pointing at the user's data instead of going back
// to the default.
func keptPathValues(pkg catalog.Package, installed *config.Server, values map[string]string) map[string]string {
	out := maps.Clone(values)
	if out == nil {
		out = map[string]string{}
	}
	for _, kv := range pkg.EnvironmentVars {
		if kv.Value != "" || kv.IsSecret || (kv.Format != "filepath" && kv.Format != "directory") {
			continue
		}
		if _, given := out[kv.Name]; given {
			continue
		}
		if v, ok := installed.Env[kv.Name]; ok && v != "" {
			out[kv.Name] = v
		}
	}
	return out
}

// forgetOld drops the oldest finished installs beyond finishedInstallsKept;
// in.mu must be held.
func (in *installs) forgetOld() {
	finished := 0
	for _, id := range in.order {
		if in.jobs[id].view.Done {
			finished++
		}
	}
	for i := 0; i < len(in.order) && finished > finishedInstallsKept; {
		id := in.order[i]
		if in.jobs[id].view.Done {
			delete(in.jobs, id)
			in.order = slices.Delete(in.order, i, i+1)
			finished--
			continue
		}
		i++
	}
}

// install runs one install to its end: on success the server goes into
// config.json (and starts); an update replaces the old config and removes
// the old version's files.
func (s *Server) install(ctx context.Context, j *installJob, req install.Request, installed *config.Server) {
	// The last phase reported: a failure is marked on the phase it
	// happened in (the error's own, when the installer names it).
	last := install.PhaseResolve
	report := func(p install.Progress, tools []install.Tool) {
		if p.Phase != "" {
			last = p.Phase
		}
		s.report(j, p, tools, "")
	}
	// The installer's own last report (Done) comes before the config is
	// written; the job is done when the server is in config.json.
	res, err := s.installer.Install(ctx, req, func(p install.Progress) {
		p.Done = false
		report(p, nil)
	})
	if err == nil {
		err = s.adopt(ctx, req, res, installed)
		if err != nil {
			// Not in config.json: undo the files and secrets too.
			if uerr := s.undoInstall(req, res, installed); uerr != nil {
				s.log.Warn("rolling back an install", "server", req.Server, "err", uerr)
			}
		}
	}
	what := "install"
	if installed != nil {
		what = "update"
	}
	final := install.Progress{Phase: install.PhaseVerify, Percent: 100, Done: true}
	if err != nil {
		final.Phase = last
		if ie, ok := errors.AsType[*install.Error](err); ok && ie.Phase != "" {
			final.Phase = ie.Phase
		}
		final.Err = err.Error()
		final.Line = what + " failed: " + err.Error()
		s.log.Warn(what+" failed", "server", req.Server, "entry", req.Entry.Name, "err", err)
		s.journal(req.Server, JournalInstall, fmt.Sprintf("%s of %s failed: %v", what, req.Entry.Name, err))
		report(final, nil)
		return
	}
	final.Line = fmt.Sprintf("installed %s %s: %d tools", req.Server, res.Version, len(res.Tools))
	s.log.Info("installed a server", "server", req.Server, "entry", req.Entry.Name, "version", res.Version, "tools", len(res.Tools))
	done := fmt.Sprintf("installed %s %s (%d tools)", req.Entry.Name, res.Version, len(res.Tools))
	if installed != nil && installed.Install != nil {
		done = fmt.Sprintf("updated %s from %s to %s (%d tools)", req.Entry.Name, installed.Install.Version, res.Version, len(res.Tools))
	}
	s.journal(req.Server, JournalInstall, done)
	report(final, res.Tools)
}

// report records one progress report of job j in its view and publishes it
// on the event stream; a Done report also sets the tools and the notice.
func (s *Server) report(j *installJob, p install.Progress, installed []install.Tool, notice string) {
	tools := wireTools(installed)
	s.installs.mu.Lock()
	v := &j.view
	v.Phase = string(p.Phase)
	if p.Line != "" {
		v.Output = append(v.Output, p.Line)
		if n := len(v.Output); n > installOutputLines {
			v.Output = slices.Delete(v.Output, 0, n-installOutputLines)
		}
	}
	if p.Done {
		v.Done, v.Error, v.Tools, v.Notice = true, p.Err, tools, notice
	}
	id, server := v.ID, v.Server
	s.installs.mu.Unlock()
	if s.bus != nil {
		if _, err := s.bus.Publish(events.TypeInstall, wire.InstallEvent{ID: id, Server: server, Phase: string(p.Phase),
			Line: p.Line, Output: p.Output, Percent: p.Percent, Done: p.Done, Error: p.Err, Tools: tools, Notice: notice}); err != nil {
			s.log.Error("publishing install progress", "err", err)
		}
	}
}

// adopt writes the installed server into config.json, which starts it.
func (s *Server) adopt(ctx context.Context, req install.Request, res install.Result, installed *config.Server) error {
	sc := res.Config
	sc.SecretEnv = res.SecretEnv
	sc.Install = &config.Install{Entry: req.Entry.Name, Version: res.Version, Type: req.Package.RegistryType}
	if sc.Install.Version == "" {
		sc.Install.Version = req.Package.ExactVersion()
	}
	if installed != nil {
		// Keep what the user set on the server; take the new launch line.
		keep := *installed
		keep.Command, keep.Args, keep.Env, keep.Cwd = sc.Command, sc.Args, sc.Env, sc.Cwd
		keep.SecretEnv, keep.Install = sc.SecretEnv, sc.Install
		sc = keep
	}
	_, err := s.update(ctx, "", func(c *config.Config) error {
		cur, exists := c.Servers[req.Server]
		switch {
		case installed == nil && exists:
			return errorf(http.StatusConflict, "a server named %q was added while it was being installed", req.Server)
		case installed != nil && !exists:
			return errorf(http.StatusConflict, "server %q was removed while it was being updated", req.Server)
		case installed != nil && cur.Install != nil && installed.Install != nil && cur.Install.Version != installed.Install.Version:
			return errorf(http.StatusConflict, "server %q was changed while it was being updated", req.Server)
		}
		c.Servers[req.Server] = sc
		return nil
	})
	if err != nil {
		return fmt.Errorf("adding %s to the config: %w", req.Server, err)
	}
	for _, v := range res.Previous {
		if err := s.installer.Remove(req.Server, v); err != nil {
			s.log.Warn("removing an old version", "server", req.Server, "version", v, "err", err)
		}
	}
	return nil
}

// undoInstall removes what a verified install made when its config could
// not be written: a fresh install entirely, an update only its new version.
func (s *Server) undoInstall(req install.Request, res install.Result, installed *config.Server) error {
	if installed == nil {
		_, err := s.installer.Uninstall(context.Background(), req.Server, false)
		return err
	}
	if res.Version != "" && (installed.Install == nil || installed.Install.Version != res.Version) {
		return s.installer.Remove(req.Server, res.Version)
	}
	return nil
}

// installedServer returns the config of an installed server, or an error
// for a server that is not in config.json or was not installed from the
// catalog.
func (s *Server) installedServer(name string) (config.Server, error) {
	sc, ok := s.cfg.Current().Servers[name]
	if !ok {
		return sc, unknownServer(name)
	}
	if sc.Install == nil {
		return sc, errorf(http.StatusConflict, "server %q was not installed from the catalog: it has no install record in config.json", name)
	}
	return sc, nil
}

func (s *Server) checkUpdate(r *http.Request) (wire.UpdateCheck, error) {
	c, err := s.catalogOrErr()
	if err != nil {
		return wire.UpdateCheck{}, err
	}
	sc, err := s.installedServer(r.PathValue("name"))
	if err != nil {
		return wire.UpdateCheck{}, err
	}
	u, err := c.CheckUpdate(r.Context(), sc.Install.Entry, sc.Install.Version)
	if err != nil {
		return wire.UpdateCheck{}, errorf(http.StatusBadGateway, "%v", err)
	}
	return wire.UpdateCheck{Server: r.PathValue("name"), Entry: sc.Install.Entry, Installed: u.Installed, Latest: u.Latest,
		Available: u.Available, Warning: u.Warning}, nil
}

// updateInstalled serves POST /api/v1/servers/{name}/update: the newer
// version is installed beside the old one and verified; only then does the
// config switch to it, so a failed update leaves the old version running.
// The body may carry new input values ({"values": {...}}).
func (s *Server) updateInstalled(r *http.Request) (wire.InstallView, error) {
	name := r.PathValue("name")
	var body struct {
		Values map[string]string `json:"values,omitempty"`
	}
	if r.ContentLength != 0 {
		if err := decodeBody(r, &body); err != nil {
			return wire.InstallView{}, err
		}
	}
	c, err := s.catalogOrErr()
	if err != nil {
		return wire.InstallView{}, err
	}
	if _, err := s.installerOrErr(); err != nil {
		return wire.InstallView{}, err
	}
	sc, err := s.installedServer(name)
	if err != nil {
		return wire.InstallView{}, err
	}
	if sc.IsRemote() {
		return wire.InstallView{}, errorf(http.StatusConflict, "server %q is a remote server: there is nothing here to update (its host runs its newest version)", name)
	}
	u, err := c.CheckUpdate(r.Context(), sc.Install.Entry, sc.Install.Version)
	if err != nil {
		return wire.InstallView{}, errorf(http.StatusBadGateway, "%v", err)
	}
	if !u.Available || u.Entry == nil {
		return wire.InstallView{}, errorf(http.StatusConflict, "server %q is up to date (%s %s)", name, sc.Install.Entry, sc.Install.Version)
	}
	return s.runInstall(*u.Entry, install.Request{Server: name, Entry: *u.Entry, Values: body.Values}, &sc)
}

// uninstall serves POST /api/v1/servers/{name}/uninstall: the server
// leaves config.json (its processes stop), then its files and secrets go.
// Its data folder stays unless the body asks to purge it.
func (s *Server) uninstall(r *http.Request) (wire.UninstallResult, error) {
	name := r.PathValue("name")
	out := wire.UninstallResult{Server: name}
	var req wire.UninstallRequest
	if r.ContentLength != 0 {
		if err := decodeBody(r, &req); err != nil {
			return out, err
		}
	}
	inst, err := s.installerOrErr()
	if err != nil {
		return out, err
	}
	if _, ok := s.cfg.Current().Servers[name]; !ok {
		return out, unknownServer(name)
	}
	s.installs.mu.Lock()
	for _, j := range s.installs.jobs {
		if j.view.Server == name && !j.view.Done {
			s.installs.mu.Unlock()
			return out, errorf(http.StatusConflict, "server %q is being installed or updated (install %s): cancel that first", name, j.view.ID)
		}
	}
	s.installs.mu.Unlock()
	if _, err := s.update(r.Context(), "", func(c *config.Config) error {
		if _, ok := c.Servers[name]; !ok {
			return unknownServer(name)
		}
		delete(c.Servers, name)
		return nil
	}); err != nil {
		return out, err
	}
	u, err := inst.Uninstall(r.Context(), name, req.Purge)
	out.Data, out.Purged = u.Data, u.Purged
	if err != nil {
		s.journal(name, JournalInstall, fmt.Sprintf("uninstalled, but not all its files were removed: %v", err))
		return out, fmt.Errorf("server %q is out of the config, but its files were not all removed: %w", name, err)
	}
	switch {
	case u.Data != "":
		s.journal(name, JournalInstall, "uninstalled; its data stays in "+u.Data)
	case u.Purged:
		s.journal(name, JournalInstall, "uninstalled, its data deleted (purge)")
	default:
		s.journal(name, JournalInstall, "uninstalled")
	}
	return out, nil
}
