// Package install turns a catalog entry into a verified, runnable server:
// it validates the user's inputs, fetches the package into the data
// directory, stores secrets in the secret store, starts the server once to
// see that it answers initialize and tools/list, and returns the
// config.Server to run it with. Any failure or cancellation undoes all of it.
//
// Files live under <home>/servers/<server>/<version>/. An install works in a
// staging directory beside the version directories and renames it into
// place when the files are complete, so a version directory is either
// absent or whole:
//
//	servers/<server>/
//	    .staging-1234/       npm install / unzip in progress
//	    1.2.3/               an installed version (node_modules, or an unpacked bundle)
//	    1.3.0/               an update beside it, until the daemon switches
//	    data/                the server's own data (a memory graph, a database)
//
// The data folder is outside every version folder, so an update or an
// uninstall (without purge) keeps it. Inputs that the catalog marks with a
// dataPath (memory's MEMORY_FILE_PATH, sqlite's --db-path) default to a
// file in it, instead of a place inside the package that would go with it.
//
// How each registry type runs:
//
//	npm     npm install --prefix <dir> <id>@<ver>; started as node <abs bin.js> (no npx)
//	pypi    uvx [runtime args] --from <id>==<ver> <id> [args]
//	oci     docker|podman run -i --rm [runtime args] [-e VAR ...] <image> [args]
//	mcpb    download, check fileSha256, unzip, run per manifest.json
//	command the program as given
package install

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/app/atomicfile"
	"github.com/switchboardhq/switchboard/app/catalog"
	"github.com/switchboardhq/switchboard/app/config"
	"github.com/switchboardhq/switchboard/app/secrets"
)

// A Phase is a named step of an install, in this order.
type Phase string

const (
	PhaseResolve  Phase = "resolve"  // check inputs, find the runtime
	PhaseDownload Phase = "download" // npm install, docker pull, bundle download
	PhaseInstall  Phase = "install"  // put files in place, store secrets
	PhaseVerify   Phase = "verify"   // start the server: initialize + tools/list

	// PhaseConfigure is a remote server's step between resolve and
	// verify (it has no download): its secret headers go to the secret
	// store and its entry to config.json. The API installs remotes.
	PhaseConfigure Phase = "configure"
)

// Progress is one report from a running install. Lines marked Output are
// what the installer (npm, uvx, docker) or the server being verified wrote,
// streamed as they come; the others are Switchboard's own. The last report
// has Done set, and Err when the install failed. Secret values are blanked
// out of every line.
type Progress struct {
	Phase   Phase  `json:"phase"`
	Line    string `json:"line,omitempty"`
	Output  bool   `json:"output,omitempty"`
	Percent int    `json:"percent"`
	Done    bool   `json:"done,omitempty"`
	Err     string `json:"error,omitempty"`
}

// Defaults for Options.
const (
	DefaultVerifyTimeout = 2 * time.Minute
	DefaultMaxDownload   = 256 << 20
)

// A VerifyFunc starts a server as launch says (secrets already filled in)
// and returns its tools, or why it did not answer. output receives the
// server's stderr lines.
type VerifyFunc func(ctx context.Context, server string, launch config.Server, output func(line string)) ([]Tool, error)

// Options configure New.
type Options struct {
	// Home is the data directory; servers go to Home/servers. Required.
	Home string
	// Secrets stores secret inputs. Required.
	Secrets *secrets.Store
	// Logger gets one INFO line per install, uninstall and removal, and
	// WARN for rollback problems. Nil discards.
	Logger *slog.Logger

	// PATH is searched for the runtimes below and given to the programs
	// the installer runs (npm's own shebang needs node). Empty means the
	// daemon's PATH; a desktop daemon passes its login shell's.
	PATH string
	// Paths of the runtimes; empty ones are looked up in PATH by New.
	// One that is not found makes installs that need it fail with a
	// message saying what to install.
	NPM, Node, UVX, Docker, Podman, Python string

	// IgnoreScripts passes --ignore-scripts to npm. It is off by default:
	// the package's own code runs a moment later at verify with the same
	// rights, so skipping its install scripts buys little safety, while it
	// breaks servers whose dependencies build or fetch native parts in a
	// script (better-sqlite3, sharp, puppeteer's browser).
	IgnoreScripts bool

	// Verify replaces the built-in check (tests, or a daemon that verifies
	// through its supervisor).
	Verify VerifyFunc
	// VerifyTimeout bounds the verify phase (uvx and docker fetch the
	// package at first start). Zero means DefaultVerifyTimeout.
	VerifyTimeout time.Duration
	// HTTPClient downloads .mcpb bundles; nil means a plain client.
	HTTPClient *http.Client
	// MaxDownload bounds a bundle's size, and eight times it the unpacked
	// size. Zero means DefaultMaxDownload.
	MaxDownload int64
}

// An Installer installs, updates and removes servers under Home/servers.
// It is safe for concurrent use; two installs of the same server at once
// are refused.
type Installer struct {
	opts   Options
	logger *slog.Logger
	env    []string // environment for the programs it runs

	mu   sync.Mutex
	busy map[string]bool
}

// New returns an Installer. Runtimes not given are looked up in PATH now.
func New(opts Options) (*Installer, error) {
	if opts.Home == "" {
		return nil, errors.New("installer: no data directory given")
	}
	if opts.Secrets == nil {
		return nil, errors.New("installer: no secret store given")
	}
	home, err := filepath.Abs(opts.Home)
	if err != nil {
		return nil, fmt.Errorf("installer: %w", err)
	}
	opts.Home = home
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if opts.PATH == "" {
		opts.PATH = os.Getenv("PATH")
	}
	find := func(p *string, names ...string) {
		if *p != "" {
			return
		}
		for _, n := range names {
			if found := lookPath(n, opts.PATH); found != "" {
				*p = found
				return
			}
		}
	}
	find(&opts.NPM, "npm")
	find(&opts.Node, "node")
	find(&opts.UVX, "uvx")
	find(&opts.Docker, "docker")
	find(&opts.Podman, "podman")
	find(&opts.Python, "python3", "python")
	if opts.VerifyTimeout <= 0 {
		opts.VerifyTimeout = DefaultVerifyTimeout
	}
	if opts.MaxDownload <= 0 {
		opts.MaxDownload = DefaultMaxDownload
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{}
	}
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(strings.ToUpper(kv), "PATH=") })
	env = append(env, "PATH="+opts.PATH)
	in := &Installer{opts: opts, logger: logger, env: env, busy: map[string]bool{}}
	if in.opts.Verify == nil {
		in.opts.Verify = in.verify
	}
	return in, nil
}

// lookPath finds an executable name in the directories of path.
func lookPath(name, path string) string {
	for _, dir := range filepath.SplitList(path) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		if p, err := execLookPath(filepath.Join(dir, name)); err == nil {
			return p
		}
	}
	return ""
}

// A Request asks for one install.
type Request struct {
	// Server is the name in config.json (and the tool prefix).
	Server string
	// Entry is the catalog entry; Package is the chosen one of its packages.
	Entry   catalog.Entry
	Package catalog.Package
	// Values are the user's inputs, keyed by environment variable name,
	// argument valueHint or name (with or without its dashes), or .mcpb
	// user_config key. A repeated argument takes one value per line.
	Values map[string]string
	// Update installs beside an existing installation of Server instead of
	// refusing: the old versions' files are left alone and listed in
	// Result.Previous, for Remove once the daemon has switched.
	Update bool
}

// A Tool is one tool the verified server listed.
type Tool struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
}

// Result is a verified install.
type Result struct {
	Server string `json:"server"`
	// Version is the installed version ("" when unknown, e.g. a command).
	Version string `json:"version,omitempty"`
	// Dir is the version directory, "" for packages with no files of their
	// own (pypi, oci, command).
	Dir string `json:"dir,omitempty"`
	// Config is what config.json should hold for the server. It contains
	// no secret value: secret environment variables are listed in
	// SecretEnv, and secret arguments appear as secrets.Placeholder.
	Config config.Server `json:"config"`
	// SecretEnv names the environment variables whose values are in the
	// secret store under (Server, name): the daemon adds
	// Store.Resolve(Server, SecretEnv) to the environment at start, and
	// runs Config.Args through Store.Expand.
	SecretEnv []string `json:"secretEnv,omitempty"`
	// Tools are what the server listed at verify.
	Tools []Tool `json:"tools"`
	// Previous lists versions of Server that were installed before this
	// update; remove each with Remove after switching config.json.
	Previous []string `json:"previous,omitempty"`
}

// An Error is a failed install. Everything the install created has been
// removed by the time it is returned. Output holds the installer's last
// lines (npm's error, the server's stderr).
type Error struct {
	Server string
	Phase  Phase
	Err    error
	Output []string
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("installing %s failed during %s: %v", e.Server, e.Phase, e.Err)
	if len(e.Output) > 0 {
		msg += "\nlast output:\n  " + strings.Join(e.Output, "\n  ")
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// ErrAlreadyInstalled is returned (wrapped) by Install without Update for a
// server that has files already.
var ErrAlreadyInstalled = errors.New("already installed")

// ServersDir is where installed servers live.
func (in *Installer) ServersDir() string { return filepath.Join(in.opts.Home, "servers") }

func (in *Installer) serverDir(server string) string { return filepath.Join(in.ServersDir(), server) }

// checkServerName applies config.json's rules for a server name, which also
// keeps it a single path element.
func checkServerName(server string) error {
	c := config.Default()
	c.Servers[server] = config.Server{Command: "x"}
	if err := c.Validate(); err != nil {
		return fmt.Errorf("invalid server name %q: %w", server, err)
	}
	return nil
}

var versionRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+-]{0,127}$`)

// DataFolder is the name of a server's data folder in its server folder.
const DataFolder = "data"

// DataDir is where server keeps its data: outside its version folders, so
// that updates and uninstalls (without purge) keep it.
func (in *Installer) DataDir(server string) string {
	return filepath.Join(in.serverDir(server), DataFolder)
}

func checkVersion(v string) error {
	if !versionRE.MatchString(v) || strings.Contains(v, "..") || v == DataFolder {
		return fmt.Errorf("invalid version %q", v)
	}
	return nil
}

// job is one install in progress: what it made, to undo on failure.
type job struct {
	in    *Installer
	req   Request
	rep   *reporter
	undo  []func() error
	plan  *plan
	sdir  string // server directory
	stage string // staging directory, once made
}

func (j *job) onRollback(f func() error) { j.undo = append(j.undo, f) }

func (j *job) rollback() {
	for i := len(j.undo) - 1; i >= 0; i-- {
		if err := j.undo[i](); err != nil {
			j.in.logger.Warn("install rollback step failed", "server", j.req.Server, "err", err)
		}
	}
}

// Install installs req and verifies it. progress, when not nil, receives
// every report (from the calling goroutine and others, one at a time).
// On failure or when ctx ends, everything the install made is removed and
// the returned error is an *Error (an *InputError inside it for bad inputs).
func (in *Installer) Install(ctx context.Context, req Request, progress func(Progress)) (res Result, err error) {
	rep := &reporter{fn: progress, phase: PhaseResolve}
	j := &job{in: in, req: req, rep: rep, sdir: in.serverDir(req.Server)}
	start := time.Now()
	defer func() {
		if err != nil {
			j.rollback()
			err = &Error{Server: req.Server, Phase: rep.currentPhase(), Err: err, Output: rep.lastOutput()}
			in.logger.Info("install failed", "server", req.Server, "package", req.Package.Identifier, "err", err)
		} else {
			in.logger.Info("installed", "server", req.Server, "package", req.Package.Identifier,
				"version", res.Version, "tools", len(res.Tools), "took", time.Since(start).Round(time.Millisecond))
		}
		rep.finish(err)
	}()

	rep.begin(PhaseResolve, fmt.Sprintf("resolving %s %s %s", req.Package.RegistryType, req.Package.Identifier, req.Package.Version))
	if err := checkServerName(req.Server); err != nil {
		return Result{}, err
	}
	if t := req.Package.Transport.Type; t != "" && t != "stdio" {
		return Result{}, fmt.Errorf("transport %q is not supported: Switchboard runs stdio servers", t)
	}
	if !in.claim(req.Server) {
		return Result{}, fmt.Errorf("an install of server %q is already running", req.Server)
	}
	defer in.release(req.Server)

	if usesDataDir(req.Package) {
		if err := j.makeDataDir(); err != nil {
			return Result{}, err
		}
	}
	p, err := buildPlan(req.Package, req.Values, in.DataDir(req.Server))
	if err != nil {
		return Result{}, err
	}
	j.plan = p
	if req.Package.RegistryType != catalog.RegistryMCPB {
		// A bundle's manifest adds inputs; they are checked once it is read.
		if err := p.checkUnused(req.Values, inputNames(req.Package)); err != nil {
			return Result{}, err
		}
	}
	for _, v := range p.SecretEnv {
		rep.addSecret(v)
	}
	for _, v := range p.SecretArgs {
		rep.addSecret(v)
	}
	if err := j.checkExisting(); err != nil {
		return Result{}, err
	}

	var inst installed
	switch req.Package.RegistryType {
	case catalog.RegistryNPM:
		inst, err = j.npm(ctx)
	case catalog.RegistryPyPI:
		inst, err = j.pypi(ctx)
	case catalog.RegistryOCI:
		inst, err = j.oci(ctx)
	case catalog.RegistryMCPB:
		inst, err = j.mcpb(ctx)
	case catalog.RegistryCommand:
		inst, err = j.command(ctx)
	case "":
		err = errors.New("the package has no registryType")
	default:
		err = fmt.Errorf("packages of type %q cannot be installed by Switchboard (it runs npm, pypi, oci, mcpb and local commands)", req.Package.RegistryType)
	}
	if err != nil {
		return Result{}, err
	}
	if err := ctx.Err(); err != nil {
		return Result{}, fmt.Errorf("install was stopped: %w", err)
	}

	if req.Update {
		if err := j.carryData(inst.dir); err != nil {
			return Result{}, err
		}
	}
	rep.begin(PhaseInstall, "storing secrets")
	if err := j.storeSecrets(); err != nil {
		return Result{}, err
	}

	rep.begin(PhaseVerify, fmt.Sprintf("starting %s to check that it answers initialize and tools/list", req.Server))
	launch := inst.cfg
	launch.Args, err = in.opts.Secrets.Expand(req.Server, inst.cfg.Args)
	if err != nil {
		return Result{}, err
	}
	launch.Env = maps.Clone(inst.cfg.Env)
	if launch.Env == nil {
		launch.Env = map[string]string{}
	}
	secretEnv := slices.Sorted(maps.Keys(p.SecretEnv))
	vals, err := in.opts.Secrets.Resolve(req.Server, secretEnv)
	if err != nil {
		return Result{}, err
	}
	maps.Copy(launch.Env, vals)
	vctx, cancel := context.WithTimeout(ctx, in.opts.VerifyTimeout)
	defer cancel()
	tools, err := in.opts.Verify(vctx, req.Server, launch, rep.output)
	if err != nil {
		if ctx.Err() != nil {
			return Result{}, fmt.Errorf("install was stopped: %w", ctx.Err())
		}
		return Result{}, fmt.Errorf("the server did not start and answer: %w", err)
	}
	rep.status(fmt.Sprintf("verified: %d tools", len(tools)))
	if err := ctx.Err(); err != nil {
		return Result{}, fmt.Errorf("install was stopped: %w", err)
	}

	res = Result{
		Server:    req.Server,
		Version:   inst.version,
		Dir:       inst.dir,
		Config:    inst.cfg,
		SecretEnv: secretEnv,
		Tools:     tools,
	}
	if req.Update {
		res.Previous = slices.DeleteFunc(in.versions(req.Server), func(v string) bool { return v == inst.version })
	}
	return res, nil
}

// installed is what a registry type's install produced.
type installed struct {
	version string
	dir     string // final version directory, or ""
	cfg     config.Server
}

func (in *Installer) claim(server string) bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.busy[server] {
		return false
	}
	in.busy[server] = true
	return true
}

func (in *Installer) release(server string) {
	in.mu.Lock()
	defer in.mu.Unlock()
	delete(in.busy, server)
}

// checkExisting refuses a fresh install over an existing one, and clears
// staging directories a crashed install left behind.
func (j *job) checkExisting() error {
	entries, err := os.ReadDir(j.sdir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading %s: %w", j.sdir, err)
	}
	var found []string
	for _, e := range entries {
		if e.Name() == DataFolder {
			continue // kept from an earlier install: this one uses it again
		}
		if strings.HasPrefix(e.Name(), ".staging-") {
			_ = os.RemoveAll(filepath.Join(j.sdir, e.Name()))
			continue
		}
		found = append(found, e.Name())
	}
	if len(found) > 0 && !j.req.Update {
		return fmt.Errorf("server %q is %w (%s holds %s): uninstall it first, or update it", j.req.Server, ErrAlreadyInstalled, j.sdir, strings.Join(found, ", "))
	}
	return nil
}

// makeDataDir creates the server's data folder (0700: it is the user's
// data) when it does not exist; a failed install removes it again if it
// created it and left it empty.
func (j *job) makeDataDir() error {
	dir := j.in.DataDir(j.req.Server)
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	_, serr := os.Stat(j.sdir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating the data folder %s: %w", dir, err)
	}
	sdir := j.sdir
	j.onRollback(func() error {
		if err := os.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil // not empty: the server wrote data; keep it
		}
		if serr != nil {
			_ = os.Remove(sdir) // the server folder, when this install made it and it is empty
		}
		return nil
	})
	return nil
}

// carryData moves data an earlier version kept inside its own folder
// (memory's graph, when installs did not point it at the data folder) to
// the data folder the update points the server at: an update removes the
// old version's folder, and the data must not go with it. A data file
// already in the data folder wins; nothing is done then. The newest file
// of that name in an old version's folder is copied; the old folder stays
// as it is until the daemon removes it after switching.
func (j *job) carryData(newDir string) error {
	for _, target := range j.plan.dataFiles {
		if _, err := os.Lstat(target); err == nil {
			continue
		}
		name := filepath.Base(target)
		found := j.in.newestInVersions(j.req.Server, name, newDir)
		if found == "" {
			continue
		}
		data, err := os.ReadFile(found)
		if err != nil {
			return fmt.Errorf("reading the data %s kept in %s: %w", name, found, err)
		}
		if err := atomicfile.Write(target, data, 0o600); err != nil {
			return fmt.Errorf("moving the data %s to the data folder: %w", found, err)
		}
		j.onRollback(func() error { return os.Remove(target) })
		j.rep.status(fmt.Sprintf("moved the data the old version kept in %s to %s", found, target))
	}
	return nil
}

// newestInVersions finds the newest regular file called name inside the
// version folders of server (skipping the folder skip), or "".
func (in *Installer) newestInVersions(server, name, skip string) string {
	var found string
	var newest time.Time
	for _, v := range in.versions(server) {
		dir := filepath.Join(in.serverDir(server), v)
		if dir == skip {
			continue
		}
		_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || d.Name() != name || !d.Type().IsRegular() {
				return nil
			}
			if fi, err := d.Info(); err == nil && fi.ModTime().After(newest) {
				found, newest = p, fi.ModTime()
			}
			return nil
		})
	}
	return found
}

// keepOldData moves into server's data folder the data files a version
// installed before data folders kept beside its code (memory's graph when
// MEMORY_FILE_PATH was unset), so that removing the version folders does
// not delete them. Their names are those the curated catalog declares as
// data files. A file already in the data folder wins.
func (in *Installer) keepOldData(server string) error {
	entries, err := catalog.Embedded()
	if err != nil {
		return err
	}
	var names []string
	for _, e := range entries {
		for _, pkg := range e.Packages {
			for _, a := range slices.Concat(pkg.RuntimeArguments, pkg.PackageArguments) {
				names = append(names, a.DataPath)
			}
			for _, kv := range pkg.EnvironmentVars {
				names = append(names, kv.DataPath)
			}
		}
	}
	slices.Sort(names)
	data := in.DataDir(server)
	for _, name := range slices.Compact(names) {
		if name == "" {
			continue
		}
		target := filepath.Join(data, name)
		if _, err := os.Lstat(target); err == nil {
			continue
		}
		found := in.newestInVersions(server, name, "")
		if found == "" {
			continue
		}
		b, err := os.ReadFile(found)
		if err != nil {
			return fmt.Errorf("reading the data %s kept in %s: %w", name, found, err)
		}
		if err := os.MkdirAll(data, 0o700); err != nil {
			return fmt.Errorf("keeping the data %s: %w", found, err)
		}
		if err := atomicfile.Write(target, b, 0o600); err != nil {
			return fmt.Errorf("keeping the data %s: %w", found, err)
		}
		in.logger.Info("kept the data an old install held in its own folder", "server", server, "from", found, "to", target)
	}
	return nil
}

// makeStage creates the server directory (removed again on failure when
// this install created it) and a staging directory inside it.
func (j *job) makeStage() (string, error) {
	if _, err := os.Stat(j.sdir); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(j.sdir, 0o755); err != nil {
			return "", fmt.Errorf("creating %s: %w", j.sdir, err)
		}
		sdir := j.sdir
		j.onRollback(func() error { return os.RemoveAll(sdir) })
	}
	stage, err := os.MkdirTemp(j.sdir, ".staging-")
	if err != nil {
		return "", fmt.Errorf("creating a staging directory: %w", err)
	}
	j.stage = stage
	j.onRollback(func() error { return os.RemoveAll(stage) })
	return stage, nil
}

// promote renames the staging directory to its version directory.
func (j *job) promote(version string) (string, error) {
	if err := checkVersion(version); err != nil {
		return "", err
	}
	final := filepath.Join(j.sdir, version)
	if _, err := os.Lstat(final); err == nil {
		return "", fmt.Errorf("version %s of server %q is already installed in %s", version, j.req.Server, final)
	}
	if err := os.Rename(j.stage, final); err != nil {
		return "", fmt.Errorf("moving the install into place: %w", err)
	}
	j.onRollback(func() error { return os.RemoveAll(final) })
	j.stage = ""
	return final, nil
}

// storeSecrets puts the secret inputs in the store. Rollback restores what
// was there before (an update replaces values) or deletes them.
func (j *job) storeSecrets() error {
	store, server := j.in.opts.Secrets, j.req.Server
	all := maps.Clone(j.plan.SecretEnv)
	maps.Copy(all, j.plan.SecretArgs)
	for _, k := range slices.Sorted(maps.Keys(all)) {
		old, gerr := store.Get(server, k)
		if gerr != nil && !errors.Is(gerr, secrets.ErrNotFound) {
			return gerr
		}
		if err := store.Set(server, k, all[k]); err != nil {
			return err
		}
		j.onRollback(func() error {
			if gerr == nil {
				return store.Set(server, k, old)
			}
			return store.Delete(server, k)
		})
	}
	return nil
}

// Uninstalled says what Uninstall did with a server's data folder.
type Uninstalled struct {
	// Data is the data folder Uninstall kept ("" when there was none, it
	// was empty, or it was purged).
	Data string `json:"data,omitempty"`
	// Purged: the data folder was deleted (purge).
	Purged bool `json:"purged,omitempty"`
}

// Uninstall removes server's files (every version) and its secrets. The
// server's data folder stays, unless purge is set or it is empty: a user's
// knowledge graph or database is not deleted as a side effect. The daemon
// removes it from config.json and stops it first. Uninstalling a server
// with nothing installed is not an error.
func (in *Installer) Uninstall(ctx context.Context, server string, purge bool) (Uninstalled, error) {
	var out Uninstalled
	if err := checkServerName(server); err != nil {
		return out, err
	}
	if err := ctx.Err(); err != nil {
		return out, err
	}
	if !in.claim(server) {
		return out, fmt.Errorf("uninstalling %q: an install of it is running", server)
	}
	defer in.release(server)
	var errs []error
	sdir, data := in.serverDir(server), in.DataDir(server)
	if !purge {
		// Before the version folders go: an old install's data is in them.
		if err := in.keepOldData(server); err != nil {
			return out, fmt.Errorf("uninstalling %q: its data could not be kept, so nothing was removed: %w", server, err)
		}
	}
	entries, err := os.ReadDir(sdir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		errs = append(errs, fmt.Errorf("reading the files of %q: %w", server, err))
	}
	for _, e := range entries {
		if e.Name() == DataFolder && !purge {
			continue
		}
		if err := os.RemoveAll(filepath.Join(sdir, e.Name())); err != nil {
			errs = append(errs, fmt.Errorf("removing the files of %q: %w", server, err))
		}
		if e.Name() == DataFolder {
			out.Purged = true
		}
	}
	if !purge {
		if err := os.Remove(data); err == nil || errors.Is(err, fs.ErrNotExist) {
			// Empty, or none: nothing to keep.
		} else if _, serr := os.Stat(data); serr == nil {
			out.Data = data
		}
	}
	if out.Data == "" {
		if err := os.Remove(sdir); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("removing the folder of %q: %w", server, err))
		}
	}
	if err := in.opts.Secrets.DeleteAll(server); err != nil {
		errs = append(errs, fmt.Errorf("removing the secrets of %q: %w", server, err))
	}
	in.logger.Info("uninstalled", "server", server, "kept", out.Data, "purged", out.Purged)
	return out, errors.Join(errs...)
}

// Remove deletes one installed version of server: the old version after an
// update has been switched to.
func (in *Installer) Remove(server, version string) error {
	if err := checkServerName(server); err != nil {
		return err
	}
	if err := checkVersion(version); err != nil {
		return err
	}
	if !in.claim(server) {
		return fmt.Errorf("removing version %s of %q: an install of it is running", version, server)
	}
	defer in.release(server)
	if err := os.RemoveAll(filepath.Join(in.serverDir(server), version)); err != nil {
		return fmt.Errorf("removing version %s of %q: %w", version, server, err)
	}
	in.logger.Info("removed old version", "server", server, "version", version)
	return nil
}

// Versions lists the installed versions of server, sorted.
func (in *Installer) Versions(server string) ([]string, error) {
	if err := checkServerName(server); err != nil {
		return nil, err
	}
	return in.versions(server), nil
}

func (in *Installer) versions(server string) []string {
	entries, _ := os.ReadDir(in.serverDir(server))
	var out []string
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") && e.Name() != DataFolder {
			out = append(out, e.Name())
		}
	}
	return out
}
