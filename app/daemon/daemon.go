// Package daemon runs Switchboard's daemon: it composes the config store, the
// supervisor and the local API, owns the data directory's lock and
// daemon.json, and applies config changes to the supervisor.
package daemon

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/gofrs/flock"

	"github.com/switchboardhq/switchboard/app/api"
	"github.com/switchboardhq/switchboard/app/approvals"
	"github.com/switchboardhq/switchboard/app/autostart"
	"github.com/switchboardhq/switchboard/app/catalog"
	"github.com/switchboardhq/switchboard/app/catalog/install"
	"github.com/switchboardhq/switchboard/app/clients"
	"github.com/switchboardhq/switchboard/app/config"
	"github.com/switchboardhq/switchboard/app/events"
	"github.com/switchboardhq/switchboard/app/gateway"
	"github.com/switchboardhq/switchboard/app/history"
	"github.com/switchboardhq/switchboard/app/internal/browser"
	"github.com/switchboardhq/switchboard/app/record"
	"github.com/switchboardhq/switchboard/app/remoteauth"
	"github.com/switchboardhq/switchboard/app/secrets"
	"github.com/switchboardhq/switchboard/app/tokens"
	"github.com/switchboardhq/switchboard/app/toolsearch"
	"github.com/switchboardhq/switchboard/supervisor"
)

// Options configure Run.
type Options struct {
	Home    string // data directory, absolute (see ResolveHome)
	Listen  string // overrides the config's listen address when not empty
	Version string
	Logger  *slog.Logger
	// Reaper is the command line of the supervisor's watchdog: this program,
	// which must call supervisor.RunReaperIfRequested first thing.
	Reaper []string
	// Binary is the absolute path of this program, written into the
	// config of clients that launch the stdio bridge.
	Binary string
	// Ready is called once the daemon serves, with what daemon.json says.
	Ready func(Info)
	// Dashboard is the browser dashboard's build (rooted at index.html),
	// served at /; nil serves a note that this binary has none.
	Dashboard fs.FS
	// AutostartCommand is what starts Switchboard at login when the user
	// turns that on (the tray program, or this one with serve); nil leaves
	// the setting out of the API.
	AutostartCommand []string
	// HTTP bounds the connections to the daemon; the zero value means the
	// defaults (see HTTPLimits).
	HTTP HTTPLimits
	// KeepAlive is how long a call may stay silent before the gateway
	// sends its response's headers and keep-alive comments (see
	// gateway.Options.KeepAlive); 0 means DefaultKeepAlive.
	KeepAlive time.Duration
	// RegistryURL points the catalog at another MCP registry than the
	// official one; empty means the value of RegistryEnv, if any.
	RegistryURL string
	// RuntimeStats serves the daemon's allocation counters at
	// RuntimeStatsPath (see RuntimeStatsEnv).
	RuntimeStats bool
}

// DefaultKeepAlive is how long a call may stay silent before the gateway
// writes on its response, unless Options.KeepAlive says otherwise.
const DefaultKeepAlive = gateway.DefaultKeepAlive

// RegistryEnv names the environment variable that points the catalog at
// another MCP registry than the official one (a company's subregistry, or a
// test's fake).
const RegistryEnv = "SWITCHBOARD_REGISTRY_URL"

// tightenHome takes the group and other bits off the data directory when
// it is open to others (made by an older version, or by hand): it holds
// tokens, secrets and the call history. The owner's bits stay as they are:
// a home the user made read-only (0555) becomes 0500, not 0700, which
// would give write permission back. Windows has no such mode bits; its
// ACLs are left alone.
func tightenHome(home string, log *slog.Logger) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	info, err := os.Stat(home)
	if err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	was := info.Mode().Perm()
	if was&0o077 == 0 {
		return nil
	}
	now := was &^ 0o077
	if err := os.Chmod(home, now); err != nil {
		return fmt.Errorf("making the data directory %s private: %w", home, err)
	}
	log.Warn(fmt.Sprintf("the data directory was open to other users; it is now private (%#o)", now),
		"dir", home, "was", fmt.Sprintf("%#o", was))
	return nil
}

// ErrAlreadyRunning is wrapped by Run's error when another daemon holds the
// data directory.
var ErrAlreadyRunning = errors.New("switchboard is already running")

// ShutdownTimeout bounds stopping every server when the daemon exits.
const ShutdownTimeout = 20 * time.Second

// Run starts the daemon and serves until ctx ends, then stops every server
// and returns.
func Run(ctx context.Context, opts Options) error {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	home := opts.Home
	if err := os.MkdirAll(home, 0o700); err != nil {
		return fmt.Errorf("creating data directory: %w", err)
	}
	if err := tightenHome(home, log); err != nil {
		return err
	}

	lock := flock.New(filepath.Join(home, lockFile))
	locked, err := lock.TryLock()
	if err != nil {
		return fmt.Errorf("locking %s: %w", lock.Path(), err)
	}
	if !locked {
		if info, err := ReadInfo(home); err == nil {
			return fmt.Errorf("%w for %s (pid %d, %s)", ErrAlreadyRunning, home, info.PID, info.Address)
		}
		return fmt.Errorf("%w for %s (another process holds %s)", ErrAlreadyRunning, home, lock.Path())
	}
	defer lock.Unlock()
	// POST /api/v1/quit ends the daemon as ending ctx does.
	ctx, quit := context.WithCancel(ctx)
	defer quit()

	store, err := config.NewStore(filepath.Join(home, ConfigFile), log)
	if err != nil {
		return err
	}
	if p := store.Problem(); p != nil {
		log.Error("config file has an error; fix it and it is picked up at once", "err", p)
	}
	toks, err := tokens.Open(filepath.Join(home, TokensFile))
	if err != nil {
		return err
	}
	if _, err := toks.Ensure("cli"); err != nil {
		return err
	}

	// The live feed: calls once stored, and what the supervisor reports.
	bus := events.New(0)
	defer bus.Close()
	secretStore, err := secrets.Open(ctx, secrets.Options{Dir: home, Logger: log})
	if err != nil {
		return err
	}
	if why := secretStore.FallbackReason(); why != "" {
		log.Info("server secrets are kept in a 0600 file: no OS keychain answered", "why", why)
	}

	// Calls are noted in the journal when they start: those an earlier
	// daemon left in flight when it died are recorded as interrupted.
	callJournal, interrupted, err := history.OpenJournal(filepath.Join(home, JournalFile), log)
	if err != nil {
		return err
	}
	defer callJournal.Close() // after the history: its writer ends calls

	retention := store.Current().History
	dropped := &droppedFeed{log: log, bus: bus}
	hist, err := history.Open(ctx, filepath.Join(home, HistoryFile), history.Options{Logger: log,
		MaxAge: retention.MaxAge.Duration, MaxBytes: retention.MaxBytes, KeepSecretValues: retention.KeepSecretValues,
		Journal: callJournal,
		OnCommit: func(calls []history.Call, droppedSoFar uint64) {
			for _, c := range calls {
				publish(log, bus, events.TypeCall, c)
			}
			dropped.check(droppedSoFar)
		}})
	if err != nil {
		return err
	}
	if r := hist.Recovered(); r != nil {
		log.Error("the history database was damaged; it was moved aside and a new one started", "detail", r.String())
	}
	if len(interrupted) > 0 {
		log.Warn("calls were in flight when the last daemon stopped; recorded as interrupted", "calls", len(interrupted))
	}
	for _, c := range interrupted {
		hist.RecordCall(c)
	}
	defer func() {
		closeCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := hist.Close(closeCtx); err != nil {
			log.Error("closing the history database", "err", err)
		}
	}()

	// Tool approval: new and changed tools are held from clients until the
	// user approves them. A damaged file stops the start: holding nothing
	// would defeat it.
	approvalStore, err := approvals.Open(filepath.Join(home, approvals.FileName))
	if err != nil {
		return err
	}
	approved := approvals.NewPolicy(approvalStore, approvals.PolicyOptions{Logger: log, Report: reportApprovals(log, hist, bus), Configured: func(server string) bool {
		_, ok := store.Current().Servers[server]
		return ok
	}})
	approved.Prune(maps.Keys(store.Current().Servers))

	// The supervisor runs the servers; the gateway leases their processes
	// and talks to them with MCP clients of its own, which the supervisor
	// gets as hooks before any process exists (d.apply, below, makes them).
	// The confining launcher is the same binary as the reaper, re-run
	// (main calls both confine.RunIfRequested and RunReaperIfRequested).
	// Remote servers connect through their sign-in (OAuth), whose Manager
	// is made once the listener (the redirect's address) is known.
	remoteSignIns := newSignIns(ctx, log, store.Current, bus)
	sup, err := supervisor.New(ctx, supervisor.Options{Logger: log, StateDir: home, Reaper: opts.Reaper, Launcher: opts.Reaper,
		RemoteRoundTripper: remoteSignIns.roundTripper})
	if err != nil {
		return err
	}
	// The tool search index lives in memory: it is fed from the servers'
	// lists (kept ones included) whenever the gateway rebuilds /mcp.
	index, err := toolsearch.New()
	if err != nil {
		return err
	}
	defer index.Close()
	// What a profile names that its endpoint leaves out is logged when new;
	// a server's tools once they are known (set before any server runs,
	// in d.apply).
	profiled := &profileWarnings{log: log}
	board := newAskBoard(log, bus, hist)
	gw := gateway.New(gateway.Options{Asker: boardAsker{board}, AskTimeout: store.Current().AskTimeout.Duration, Backends: gateway.FromSupervisor(sup), Recorder: callFeed{Store: hist, log: log, bus: bus}, Journal: callJournal, Logger: log,
		Version: opts.Version, ClientLabel: api.TokenLabel, ClientToken: api.TokenID, ClientMaxTier: api.TokenMaxTier,
		SessionTimeout: store.Current().SessionTimeout.Duration, KeepAlive: opts.KeepAlive, ListsDir: filepath.Join(home, ListsDir), Reviewer: approved,
		ToolSearch: store.Current().ToolSearch, ToolIndex: toolIndex{index},
		// A client token's label is its client's ID (api's EnsureClient):
		// Claude Code's sessions get names that its mcp__switchboard__
		// prefix keeps within 64 characters.
		NameBudget: func(ctx context.Context, server string) int {
			return clients.ToolNameBudget(api.TokenLabel(ctx), server)
		},
		Listed: func(server string) {
			publish(log, bus, events.TypeTools, events.Tools{Server: server})
			profiled.listed(server)
		}})
	profiled.tools = gw.Tools
	approved.SetShow(gw.Recheck)
	// Server logs, lifecycle events and resource samples go to the history
	// and to the live feed.
	supEvents, stopEvents := sup.Subscribe(4096)
	var recording sync.WaitGroup
	recording.Go(func() { forward(log, supEvents, hist, bus, dropped) })
	defer func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
		defer cancel()
		log.Info("stopping every server")
		gw.Close()
		if err := sup.Close(stopCtx); err != nil {
			log.Error("stopping servers", "err", err)
		}
		stopEvents()
		recording.Wait()
	}()
	if err := sup.SetHooks(supervisor.Hooks{NewClient: gw.NewClient, WrapTransport: gw.WrapTransport,
		WrapRemoteHTTP: gw.WrapRemoteHTTP, Prepare: gw.Prepare}); err != nil {
		return err
	}
	for _, p := range sup.Swept() {
		log.Warn("stopped a server process left behind by an earlier daemon", "server", p.Server, "pid", p.PID)
	}

	listen := opts.Listen
	if listen == "" {
		listen = store.Current().Listen
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			// The config file may not exist yet (a first run): say how to
			// make it rather than point at a file the user cannot find.
			fix := fmt.Sprintf("set \"listen\" in %s to another loopback address", store.Path())
			if _, statErr := os.Stat(store.Path()); errors.Is(statErr, fs.ErrNotExist) {
				fix = fmt.Sprintf("create %s with {\"version\": 1, \"listen\": \"127.0.0.1:7392\"}", store.Path())
			}
			return fmt.Errorf("cannot listen on %s: the address is in use by another program; "+
				"pass --listen 127.0.0.1:7392 (make run LISTEN=127.0.0.1:7392), or %s", listen, fix)
		}
		return fmt.Errorf("cannot listen on %s: %w", listen, err)
	}

	if err := remoteSignIns.start(secretStore, ln.Addr().String(), func(ctx context.Context, server string) {
		if sc, ok := store.Current().Servers[server]; !ok || !sc.IsEnabled() {
			return // signed in while disabled: it connects when enabled
		}
		startCtx, cancel := context.WithTimeout(ctx, signedInStartTimeout)
		defer cancel()
		if err := sup.Start(startCtx, server); err != nil {
			log.Warn("the remote server did not connect after its sign-in", "server", server, "err", err)
		}
	}); err != nil {
		ln.Close()
		return err
	}
	defer remoteSignIns.close() // before the supervisor stops (deferred earlier)
	d := &daemon{listen: ln.Addr().String(), log: log, store: store, sup: sup, gw: gw, bus: bus, secrets: secretStore, hist: hist, approvals: approved, profileWarnings: profiled,
		sandbox: newSandboxer(home, ln.Addr(), log)}
	if err := d.apply(ctx); err != nil {
		log.Error("the config was not applied; no server runs until it is", "err", err)
	}

	started := time.Now()
	address := "http://" + ln.Addr().String()
	clientOpts := api.ClientsOptions{GatewayURL: address + "/mcp", BinaryPath: opts.Binary, OpenApp: browser.OpenApp}
	// A bridge started by a client (Claude Desktop) does not have this
	// daemon's environment: it is told the data directory unless it is the
	// default one.
	if def, err := DefaultHome(); err != nil || filepath.Clean(def) != filepath.Clean(home) {
		clientOpts.Home = home
	}
	if env, err := clients.EnvFromOS(""); err != nil {
		log.Warn("client configs are not available", "err", err)
	} else if clientOpts.Editor, err = clients.New(clients.Options{BackupDir: filepath.Join(home, "backups"),
		StateDir: filepath.Join(home, "clients"), GatewayURL: clientOpts.GatewayURL, BinaryPath: opts.Binary}); err == nil {
		clientOpts.Env = env
	}
	cat, err := catalog.New(catalog.Options{RegistryURL: cmp.Or(opts.RegistryURL, os.Getenv(RegistryEnv)), CacheDir: filepath.Join(home, "catalog"), Logger: log})
	if err != nil {
		ln.Close()
		return err
	}
	defer cat.Close()
	installer, err := install.New(install.Options{Home: home, Secrets: secretStore, Logger: log, PATH: sup.PATH()})
	if err != nil {
		ln.Close()
		return err
	}
	var startAtLogin autostart.Entry
	if len(opts.AutostartCommand) > 0 {
		if env, err := autostart.EnvFromOS(); err != nil {
			log.Warn("start at login is not available", "err", err)
		} else if startAtLogin, err = autostart.New(env); err != nil {
			log.Warn("start at login is not available", "err", err)
		}
	}
	apiServer, err := api.New(api.Options{Autostart: startAtLogin, AutostartCommand: opts.AutostartCommand, Supervisor: sup, Config: d, Tokens: toks, History: hist, Clients: clientOpts, Events: bus, Secrets: secretStore,
		Catalog: cat, Installer: installer, Tools: gw, Journal: journal(hist), Approvals: approved, SignIns: remoteSignIns, Asks: board,
		CapsChanged: gw.CapsChanged,
		Revoked: func(tokenID string) {
			if n := gw.CloseSessionsOf(tokenID); n > 0 {
				log.Info("closed the MCP sessions of a revoked token", "token", tokenID, "sessions", n)
			}
		},
		Quit: quit, Logger: log, Version: opts.Version, Home: home, Started: started, MCPURL: clientOpts.GatewayURL})
	if err != nil {
		ln.Close()
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/api/", apiServer)
	// The browser comes back from a sign-in without a Switchboard token.
	mux.Handle(remoteauth.CallbackPath, apiServer.HostOnly(remoteSignIns.manager.Load().Callback()))
	mux.Handle("/", apiServer.Dashboard(opts.Dashboard))
	mcpHandler := apiServer.Protect(gw.Handler())
	for _, p := range []string{"/mcp", "/mcp/", "/sse", "/sse/"} {
		mux.Handle(p, mcpHandler)
	}
	if opts.RuntimeStats {
		mux.Handle(RuntimeStatsPath, apiServer.Protect(runtimeStatsHandler()))
	}
	defer apiServer.Close() // before the supervisor stops: installs roll back
	limits := opts.HTTP.withDefaults()
	open := newOpenRequests()
	srv := limits.server(open.track(mux))
	srv.BaseContext, srv.ConnState = open.base, open.connState
	defer open.end(nil)
	// What net/http logs is a bug or a resource limit (a handler's panic,
	// a superfluous WriteHeader, accept errors): a warning, not debug noise.
	srv.ErrorLog = slog.NewLogLogger(log.Handler(), slog.LevelWarn)
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(limitListener(ln, limits.MaxConns)) }()

	info := Info{PID: os.Getpid(), Address: address, Home: home,
		Version: opts.Version, Started: started}
	if err := writeInfo(home, info); err != nil {
		srv.Close()
		return err
	}
	defer os.Remove(filepath.Join(home, InfoFile))

	var wg sync.WaitGroup
	watchCtx, stopWatching := context.WithCancel(ctx)
	wg.Go(func() { d.watch(watchCtx) })
	defer wg.Wait()
	defer stopWatching()

	log.Info("switchboard is running", "address", info.Address, "home", home, "pid", info.PID)
	if opts.Ready != nil {
		opts.Ready(info)
	}

	select {
	case <-ctx.Done():
		log.Info("shutting down")
	case err := <-serveErr:
		return fmt.Errorf("serving %s: %w", info.Address, err)
	}
	stopServing(log, srv, open, gw, bus)
	return nil
}

// The history records what the gateway sees.
var _ gateway.Recorder = (*history.Store)(nil)

// daemon applies the config in force to the supervisor, and is the API's
// view of the config.
type daemon struct {
	log     *slog.Logger
	store   *config.Store
	sup     *supervisor.Supervisor
	gw      *gateway.Gateway
	bus     *events.Bus
	secrets *secrets.Store
	hist    *history.Store
	// approvals forgets the tools of a server removed from the config.
	approvals *approvals.Policy
	// profileWarnings warns of a profile's servers that are not installed
	// and tools its server does not offer.
	profileWarnings *profileWarnings
	// sandbox derives the policies of confined servers.
	sandbox sandboxer

	listen string // host:port of the daemon's own listener

	applyMu sync.Mutex     // one Apply at a time, always of the latest config
	applied *config.Config // the config last applied; nil before the first
}

// apply makes the supervisor run the enabled servers of the config in force.
// It returns an error only when the supervisor took none of it (it refused
// a server, or it is shutting down): what runs is then still the config
// applied before, and nothing else (gateway, settings, history) changed.
// Removed servers that were still stopping when ctx ended are logged: the
// config is in force, they go on stopping.
func (d *daemon) apply(ctx context.Context) error {
	d.applyMu.Lock()
	defer d.applyMu.Unlock()
	cfg := d.store.Current()
	// The config change is recorded as of now, before the stops and
	// starts it causes, but only once the supervisor took it.
	changed := time.Now()
	specs := d.sandbox.withConfinement(d.log, withSecrets(d.log, Specs(cfg), cfg, d.secrets), cfg)
	if err := d.sup.Apply(ctx, d.notSelf(cfg, specs)); errors.Is(err, supervisor.ErrStillStopping) {
		d.log.Warn("applying config", "err", err)
	} else if err != nil {
		return fmt.Errorf("applying the config: %w", err)
	}
	var relaunched []string
	if d.applied != nil { // at start the servers are not news
		relaunched = relaunchedServers(d.applied.Servers, cfg.Servers)
		for _, c := range configChanges(d.applied.Servers, cfg.Servers) {
			d.hist.Observe(record.Event{Time: changed, Server: c.server, Kind: EventConfig, Message: c.message})
			if _, ok := cfg.Servers[c.server]; !ok && d.approvals != nil {
				d.approvals.Forget(c.server)
			}
		}
	}
	d.applied = cfg
	d.gw.Sync(GatewayConfigs(cfg))
	d.gw.SetProfiles(ProfileConfigs(cfg))
	if d.profileWarnings != nil {
		d.profileWarnings.applied(cfg)
	}
	// A server that runs another program now (an update, a new command
	// line) may offer other tools: listed again, so that new or changed
	// ones are held until approved instead of waiting for a daemon restart.
	for _, name := range relaunched {
		d.gw.Relist(name)
	}
	d.gw.SetSessionTimeout(cfg.SessionTimeout.Duration)
	d.gw.SetAskTimeout(cfg.AskTimeout.Duration)
	d.gw.SetToolSearch(cfg.ToolSearch)
	d.hist.SetRetention(cfg.History.MaxAge.Duration, cfg.History.MaxBytes)
	d.hist.SetKeepSecretValues(cfg.History.KeepSecretValues)
	publish(d.log, d.bus, events.TypeConfig, struct{}{})
	return nil
}

// GatewayConfigs are the gateway's settings of the enabled servers of cfg.
func GatewayConfigs(cfg *config.Config) []gateway.ServerConfig {
	var out []gateway.ServerConfig
	for name, s := range cfg.Servers {
		if s.IsEnabled() {
			out = append(out, gateway.ServerConfig{Name: name, Alias: s.Alias, Mode: supervisor.Mode(s.Pool.Mode),
				Timeout: s.Timeout.Duration, DisabledTools: s.DisabledTools, Tiers: s.Tiers,
				IdleTimeout: s.Pool.IdleTimeout.Duration, Roots: s.Roots, TrustTools: !s.IsHoldingChangedTools(),
				AskBeforeDestructive: s.AskBeforeDestructive})
		}
	}
	return out
}

// ProfileConfigs are the gateway's settings of the profiles of cfg.
func ProfileConfigs(cfg *config.Config) []gateway.ProfileConfig {
	var out []gateway.ProfileConfig
	for _, name := range slices.Sorted(maps.Keys(cfg.Profiles)) {
		p := cfg.Profiles[name]
		out = append(out, gateway.ProfileConfig{Name: name, Servers: p.Servers, Tools: p.Tools, ToolSearch: p.ToolSearch, MaxTier: p.MaxTier,
			AskBeforeDestructive: p.AskBeforeDestructive})
	}
	return out
}

// watch follows hand edits of config.json and applies them, on its own
// goroutine: the store's callback must return quickly.
func (d *daemon) watch(ctx context.Context) {
	changed := make(chan struct{}, 1)
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-changed:
				if err := d.apply(ctx); err != nil {
					d.log.Error("an edit of the config file was not applied", "err", err)
				}
			}
		}
	})
	listen := d.store.Current().Listen
	err := d.store.Watch(ctx, func(cfg *config.Config, err error) {
		if err != nil {
			return // the store logged it and reports it as the Problem
		}
		if cfg.Listen != listen {
			d.log.Warn("the listen address changed in the config; restart Switchboard to use it",
				"old", listen, "new", cfg.Listen)
		}
		select {
		case changed <- struct{}{}:
		default: // an apply is already pending; it will read the latest config
		}
	})
	if err != nil {
		d.log.Error("cannot watch the config file; edits need a restart", "err", err)
	}
	wg.Wait()
}

// Current, Problem, Path and Update make the daemon the API's Config.
func (d *daemon) Current() *config.Config { return d.store.Current() }
func (d *daemon) Problem() error          { return d.store.Problem() }
func (d *daemon) Path() string            { return d.store.Path() }

// Update changes the config file and applies the result before returning.
// A change the supervisor does not take (see apply) is undone in the file:
// config.json is written back to what it held just before the change (a
// hand edit the store had adopted by then included), so that it never
// claims a change that is not running, and the error says both.
func (d *daemon) Update(ctx context.Context, fn func(*config.Config) error) (*config.Config, error) {
	var before *config.Config
	cfg, err := d.store.Update(func(c *config.Config) error {
		before = c.Clone()
		return fn(c)
	})
	if err != nil {
		return nil, err
	}
	if err := d.apply(ctx); err != nil {
		if _, undo := d.store.Update(func(c *config.Config) error { *c = *before; return nil }); undo != nil {
			d.log.Error("cannot put the config file back after a change that was not applied", "err", undo)
			return nil, fmt.Errorf("the change was not applied, and %s still holds it (putting it back failed: %v): %w", d.store.Path(), undo, err)
		}
		return nil, fmt.Errorf("the change was not applied, and %s was put back as it was: %w", d.store.Path(), err)
	}
	return cfg, nil
}

// withSecrets adds each server's secrets (config secretEnv) to its
// environment and replaces the secret placeholders in its arguments. A
// secret that cannot be read is left out and logged: the server starts and
// says itself what it misses, which the user sees in its logs.
func withSecrets(log *slog.Logger, specs []supervisor.Spec, cfg *config.Config, store *secrets.Store) []supervisor.Spec {
	for i, sp := range specs {
		sc := cfg.Servers[sp.Name]
		if len(sc.SecretHeaders) > 0 && sp.Remote != nil {
			specs[i].Remote = withSecretHeaders(log, sp.Name, *sp.Remote, sc.SecretHeaders, store)
		}
		if len(sc.SecretEnv) > 0 {
			vals, err := store.Resolve(sp.Name, sc.SecretEnv)
			if err != nil {
				log.Warn("cannot read a secret of a server; starting it without", "server", sp.Name, "err", err)
			}
			env := maps.Clone(sp.Env)
			if env == nil {
				env = make(map[string]string, len(vals))
			}
			maps.Copy(env, vals)
			specs[i].Env = env
		}
		if len(secrets.PlaceholderKeys(sp.Args)) > 0 {
			args, err := store.Expand(sp.Name, sp.Args)
			if err != nil {
				log.Warn("cannot read a secret argument of a server", "server", sp.Name, "err", err)
				continue
			}
			specs[i].Args = args
		}
	}
	return specs
}

// withSecretHeaders adds a remote server's secret headers (config
// secretHeaders: header → secret name) to its headers. A secret that cannot
// be read leaves its header out, logged: the server's answer (a 401, say)
// is in its logs.
func withSecretHeaders(log *slog.Logger, server string, r supervisor.RemoteSpec, secretHeaders map[string]string, store *secrets.Store) *supervisor.RemoteSpec {
	headers := maps.Clone(r.Headers)
	if headers == nil {
		headers = make(map[string]string, len(secretHeaders))
	}
	for _, header := range slices.Sorted(maps.Keys(secretHeaders)) {
		vals, err := store.Resolve(server, []string{secretHeaders[header]})
		if err != nil {
			log.Warn("cannot read the secret of a remote server's header; connecting without it", "server", server, "header", header, "err", err)
			continue
		}
		headers[header] = vals[secretHeaders[header]]
	}
	r.Headers = headers
	return &r
}

// notSelf leaves out of specs the remote servers whose URL reaches listen,
// the daemon's own listener, which config validation could not know (the
// address given with --listen, or the port picked for port 0): each is
// logged and noted in its history.
func (d *daemon) notSelf(cfg *config.Config, specs []supervisor.Spec) []supervisor.Spec {
	refused := cfg.CheckNotSelf(d.listen)
	for _, name := range slices.Sorted(maps.Keys(refused)) {
		d.log.Error("a remote server points at Switchboard itself; it is not connected", "server", name, "err", refused[name])
		d.hist.Observe(record.Event{Time: time.Now(), Server: name, Kind: EventConfig, Message: refused[name].Error()})
	}
	return slices.DeleteFunc(specs, func(sp supervisor.Spec) bool { return refused[sp.Name] != nil })
}

// DefaultPoolIdleTimeout stops a process beyond pool.min that served nothing
// this long, when the config does not say: a lazy server (min 0) started
// for a call, or once to learn its tools, does not run forever.
const DefaultPoolIdleTimeout = 10 * time.Minute

// ListsDir is the folder under the data directory where each server's last
// tool, prompt and resource lists are kept (see gateway.Options.ListsDir).
const ListsDir = "lists"

// Specs turns the enabled servers of cfg into what the supervisor runs.
func Specs(cfg *config.Config) []supervisor.Spec {
	var specs []supervisor.Spec
	for name, s := range cfg.Servers {
		if !s.IsEnabled() {
			continue
		}
		idle := s.Pool.IdleTimeout.Duration
		if idle == 0 {
			idle = DefaultPoolIdleTimeout
		}
		if s.IsRemote() {
			// Its secret headers are added by withSecrets.
			specs = append(specs, supervisor.Spec{Name: name, Pool: supervisor.PoolSpec{IdleTimeout: idle},
				Remote: &supervisor.RemoteSpec{URL: s.URL, Transport: supervisor.RemoteTransport(s.Transport), Headers: s.Headers}})
			continue
		}
		specs = append(specs, supervisor.Spec{
			Name:    name,
			Command: s.Command,
			Args:    s.Args,
			Env:     s.Env,
			Dir:     s.Cwd,
			Pool: supervisor.PoolSpec{
				Mode:        supervisor.Mode(s.Pool.Mode),
				Min:         s.Pool.Min,
				Max:         s.Pool.Max,
				IdleTimeout: idle,
			},
		})
	}
	return specs
}
