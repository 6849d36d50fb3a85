// Package daemon runs Switchboard's daemon: it composes the config store, the
// supervisor and the local API, owns the data directory's lock and
// daemon.json, and applies config changes to the supervisor.
package daemon

import (
	"bytes"
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
	"github.com/switchboardhq/switchboard/app/asks"
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

// historyCloseTimeout bounds flushing the history's queue when the daemon
// exits.
const historyCloseTimeout = 10 * time.Second

// Run starts the daemon and serves until ctx ends, then stops every server
// and returns.
//
// It takes the steps of (*run).steps in order. A step that starts something
// pushes what stops it on a teardown, which runs in reverse when Run
// returns: once ctx ends (or POST /api/v1/quit), once serving fails, or as
// soon as a step fails. A step's failure is Run's error, naming the step
// (see stepError), and leaves nothing behind: no server process and no
// reaper, no goroutine, no listener, no daemon.json, and the lock released.
//
// On a normal stop the teardown drains HTTP (stopServing: the calls in
// flight are answered), stops following config.json, removes daemon.json,
// closes the API (installs roll back), the sign-ins and the catalog, then
// the gateway's sessions and the servers (the supervisor kills what does
// not stop in time, then the reaper), and last flushes the history and the
// journal and releases the lock.
func Run(ctx context.Context, opts Options) error {
	r := &run{opts: opts, home: opts.Home, log: opts.Logger}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	// POST /api/v1/quit ends the daemon as ending ctx does. Cancelled after
	// the teardown, as nothing stops on it.
	ctx, r.quit = context.WithCancel(ctx)
	defer r.quit()
	r.down.log = r.log
	defer r.down.run()
	for _, s := range r.steps() {
		if err := s.start(ctx); err != nil {
			return &stepError{step: s.name, err: err}
		}
	}
	r.log.Info("switchboard is running", "address", r.info.Address, "home", r.home, "pid", r.info.PID)
	if opts.Ready != nil {
		opts.Ready(r.info)
	}
	select {
	case <-ctx.Done():
		r.log.Info("shutting down")
		return nil
	case err := <-r.serveErr:
		return fmt.Errorf("serving %s: %w", r.info.Address, err)
	}
}

// A stepError is Run's error when one of its steps fails: "<step>: <why>".
type stepError struct {
	step string // what Run was doing: "opening the history"
	err  error
}

func (e *stepError) Error() string { return e.step + ": " + e.err.Error() }
func (e *stepError) Unwrap() error { return e.err }

// A step is one part of starting the daemon.
type step struct {
	name  string // in the error when it fails (stepError)
	start func(ctx context.Context) error
}

// A run is one call of Run: the parts its steps built, each set by one
// step, and the teardown that stops them.
type run struct {
	opts Options
	home string
	log  *slog.Logger
	quit context.CancelFunc
	down teardown

	store     *config.Store
	toks      *tokens.Store
	bus       *events.Bus
	secrets   *secrets.Store
	journal   *history.Journal
	hist      *history.Store
	dropped   *droppedFeed
	approved  *approvals.Policy
	index     *toolsearch.Index
	signIns   *signIns
	sup       *supervisor.Supervisor
	profiled  *profileWarnings
	board     *asks.Board
	gw        *gateway.Gateway
	cat       *catalog.Catalog
	installer *install.Installer
	ln        net.Listener
	d         *daemon
	started   time.Time
	mux       *http.ServeMux
	info      Info
	serveErr  chan error // what Serve returned, if it ended before ctx
}

// steps are Run's steps, in the order the parts need each other. The
// listener is opened once everything it serves is built but what needs its
// address (host:port, which a port 0 picks only then): the sign-ins'
// redirect, the check that no remote server is the daemon itself, the
// confined servers' policies, the MCP URL given to the API and to clients;
// serving starts last, once daemon.json says where.
func (r *run) steps() []step {
	return []step{
		{"creating the data directory", r.makeHome},
		{"locking the data directory", r.lockHome},
		{"opening the config", r.openConfig},
		{"opening the tokens", r.openTokens},
		{"starting the live feed", r.startFeed},
		{"opening the secret store", r.openSecrets},
		{"opening the history", r.openHistory},
		{"opening the tool approvals", r.openApprovals},
		{"building the tool search index", r.openToolIndex},
		{"starting the supervisor", r.startSupervisor},
		{"building the gateway", r.buildGateway},
		{"opening the catalog", r.openCatalog},
		{"preparing the installer", r.prepareInstaller},
		{"opening the listener", r.listen},
		{"starting the remote sign-ins", r.startSignIns},
		{"applying the config", r.applyConfig},
		{"building the API", r.buildAPI},
		{"writing daemon.json", r.writeInfo},
		{"watching the config file", r.watchConfig},
		{"serving", r.serve},
	}
}

func (r *run) makeHome(context.Context) error {
	if err := os.MkdirAll(r.home, 0o700); err != nil {
		return fmt.Errorf("creating data directory: %w", err)
	}
	return tightenHome(r.home, r.log)
}

// lockHome takes the data directory's lock, held until the teardown's
// very end: a second daemon for the same home refuses to start.
func (r *run) lockHome(context.Context) error {
	lock := flock.New(filepath.Join(r.home, lockFile))
	locked, err := lock.TryLock()
	if err != nil {
		return fmt.Errorf("locking %s: %w", lock.Path(), err)
	}
	if !locked {
		if info, err := ReadInfo(r.home); err == nil {
			return fmt.Errorf("%w for %s (pid %d, %s)", ErrAlreadyRunning, r.home, info.PID, info.Address)
		}
		return fmt.Errorf("%w for %s (another process holds %s)", ErrAlreadyRunning, r.home, lock.Path())
	}
	r.down.push("unlocking the data directory", lock.Unlock)
	return nil
}

func (r *run) openConfig(context.Context) error {
	store, err := config.NewStore(filepath.Join(r.home, ConfigFile), r.log)
	if err != nil {
		return err
	}
	if p := store.Problem(); p != nil {
		r.log.Error("config file has an error; fix it and it is picked up at once", "err", p)
	}
	r.store = store
	return nil
}

func (r *run) openTokens(context.Context) error {
	toks, err := tokens.Open(filepath.Join(r.home, TokensFile))
	if err != nil {
		return err
	}
	// Every request's token is verified: the kernel says when tokens.json
	// changed, instead of a stat per request. Without it, each check stats.
	if err := toks.WatchFile(); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		r.log.Warn("token file: checking it with a stat per request", "err", err)
	}
	r.down.push("closing the token file's watch", toks.Close)
	if _, err := toks.Ensure("cli"); err != nil {
		return err
	}
	r.toks = toks
	return nil
}

// startFeed starts the live feed: calls once stored, and what the
// supervisor reports.
func (r *run) startFeed(context.Context) error {
	r.bus = events.New(0)
	r.down.push("closing the live feed", func() error { r.bus.Close(); return nil })
	r.dropped = &droppedFeed{log: r.log, bus: r.bus}
	return nil
}

func (r *run) openSecrets(ctx context.Context) error {
	store, err := secrets.Open(ctx, secrets.Options{
		Dir:    r.home,
		Logger: r.log,
	})
	if err != nil {
		return err
	}
	if why := store.FallbackReason(); why != "" {
		r.log.Info("server secrets are kept in a 0600 file: no OS keychain answered", "why", why)
	}
	r.secrets = store
	return nil
}

// openHistory opens the call journal and the history. Calls are noted in
// the journal when they start: those an earlier daemon left in flight when
// it died are recorded as interrupted. The journal closes after the
// history, whose writer ends the calls in it.
func (r *run) openHistory(ctx context.Context) error {
	callJournal, interrupted, err := history.OpenJournal(filepath.Join(r.home, JournalFile), r.log)
	if err != nil {
		return err
	}
	r.journal = callJournal
	r.down.push("closing the call journal", callJournal.Close)

	retention := r.store.Current().History
	var scratch []byte // OnCommit's encoding buffer: only the history's writer calls it
	hist, err := history.Open(ctx, filepath.Join(r.home, HistoryFile), history.Options{
		Logger:           r.log,
		MaxAge:           retention.MaxAge.Duration,
		MaxBytes:         retention.MaxBytes,
		KeepSecretValues: retention.KeepSecretValues,
		Journal:          callJournal,
		OnCommit: func(calls []history.Call, droppedSoFar uint64) {
			for _, c := range calls {
				// The event ring keeps the event: a copy of its size.
				scratch = c.AppendJSON(scratch[:0])
				r.bus.PublishJSON(events.TypeCall, bytes.Clone(scratch))
			}
			r.dropped.check(droppedSoFar)
		},
	})
	if err != nil {
		return err
	}
	r.hist = hist
	r.down.push("closing the history database", func() error {
		closeCtx, cancel := context.WithTimeout(context.Background(), historyCloseTimeout)
		defer cancel()
		return hist.Close(closeCtx)
	})
	if rec := hist.Recovered(); rec != nil {
		r.log.Error("the history database was damaged; it was moved aside and a new one started", "detail", rec.String())
	}
	if len(interrupted) > 0 {
		r.log.Warn("calls were in flight when the last daemon stopped; recorded as interrupted", "calls", len(interrupted))
	}
	for _, c := range interrupted {
		hist.RecordCall(c)
	}
	return nil
}

// openApprovals opens the tool approvals: new and changed tools are held
// from clients until the user approves them. A damaged file stops the
// start: holding nothing would defeat it.
func (r *run) openApprovals(context.Context) error {
	approvalStore, err := approvals.Open(filepath.Join(r.home, approvals.FileName))
	if err != nil {
		return err
	}
	r.approved = approvals.NewPolicy(approvalStore, approvals.PolicyOptions{
		Logger: r.log,
		Report: reportApprovals(r.log, r.hist, r.bus),
		Configured: func(server string) bool {
			_, ok := r.store.Current().Servers[server]
			return ok
		},
	})
	r.approved.Prune(maps.Keys(r.store.Current().Servers))
	return nil
}

// openToolIndex builds the tool search index. It lives in memory: it is fed
// from the servers' lists (kept ones included) whenever the gateway rebuilds
// /mcp, and closes once the gateway and the servers are stopped.
func (r *run) openToolIndex(context.Context) error {
	index, err := toolsearch.New()
	if err != nil {
		return err
	}
	r.index = index
	r.down.push("closing the tool search index", index.Close)
	return nil
}

// startSupervisor starts the supervisor, which runs the servers (none yet:
// applyConfig names them), its reaper, and the following of its events.
// The confining launcher is the same binary as the reaper, re-run (main
// calls both confine.RunIfRequested and RunReaperIfRequested). Remote
// servers connect through their sign-in (OAuth), whose Manager is made once
// the listener (the redirect's address) is known.
func (r *run) startSupervisor(ctx context.Context) error {
	r.signIns = newSignIns(ctx, r.log, r.store.Current, r.bus)
	sup, err := supervisor.New(ctx, supervisor.Options{
		Logger:             r.log,
		StateDir:           r.home,
		Reaper:             r.opts.Reaper,
		Launcher:           r.opts.Reaper,
		RemoteRoundTripper: r.signIns.roundTripper,
	})
	if err != nil {
		return err
	}
	r.sup = sup
	// Server logs, lifecycle events and resource samples go to the history
	// and to the live feed: followed until the supervisor has stopped every
	// server, so that their last events are recorded too.
	supEvents, stopEvents := sup.Subscribe(4096)
	var recording sync.WaitGroup
	recording.Go(func() { forward(r.log, supEvents, r.hist, r.bus, r.dropped) })
	r.down.push("stopping servers", func() error {
		stopCtx, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
		defer cancel()
		err := sup.Close(stopCtx)
		stopEvents()
		recording.Wait()
		return err
	})
	return nil
}

// buildGateway builds the gateway, which leases the supervisor's processes
// and talks to them with MCP clients of its own: the supervisor gets them
// as hooks before any process exists (applyConfig makes them). It closes
// its sessions before the supervisor stops the servers.
func (r *run) buildGateway(context.Context) error {
	// What a profile names that its endpoint leaves out is logged when new;
	// a server's tools once they are known (set before any server runs,
	// in applyConfig).
	profiled := &profileWarnings{log: r.log}
	r.profiled = profiled
	r.board = newAskBoard(r.log, r.bus, r.hist)
	cfg := r.store.Current()
	gw := gateway.New(gateway.Options{
		Asker:          boardAsker{r.board},
		AskTimeout:     cfg.AskTimeout.Duration,
		Backends:       gateway.FromSupervisor(r.sup),
		Recorder:       callFeed{Store: r.hist, log: r.log, bus: r.bus},
		Journal:        r.journal,
		Logger:         r.log,
		Version:        r.opts.Version,
		ClientLabel:    api.TokenLabel,
		ClientToken:    api.TokenID,
		ClientMaxTier:  api.TokenMaxTier,
		SessionTimeout: cfg.SessionTimeout.Duration,
		KeepAlive:      r.opts.KeepAlive,
		ListsDir:       filepath.Join(r.home, ListsDir),
		Reviewer:       r.approved,
		ToolSearch:     cfg.ToolSearch,
		ToolIndex:      toolIndex{r.index},
		// A client token's label is its client's ID (api's EnsureClient):
		// Claude Code's sessions get names that its mcp__switchboard__
		// prefix keeps within 64 characters.
		NameBudget: func(ctx context.Context, server string) int {
			return clients.ToolNameBudget(api.TokenLabel(ctx), server)
		},
		Listed: func(server string) {
			publish(r.log, r.bus, events.TypeTools, events.Tools{Server: server})
			profiled.listed(server)
		},
	})
	r.gw = gw
	r.down.push("closing the gateway", func() error {
		r.log.Info("stopping every server")
		gw.Close()
		return nil
	})
	profiled.tools = gw.Tools
	r.approved.SetShow(gw.Recheck)
	if err := r.sup.SetHooks(supervisor.Hooks{
		NewClient:      gw.NewClient,
		WrapTransport:  gw.WrapTransport,
		WrapRemoteHTTP: gw.WrapRemoteHTTP,
		Prepare:        gw.Prepare,
	}); err != nil {
		return err
	}
	for _, p := range r.sup.Swept() {
		r.log.Warn("stopped a server process left behind by an earlier daemon", "server", p.Server, "pid", p.PID)
	}
	return nil
}

func (r *run) openCatalog(context.Context) error {
	cat, err := catalog.New(catalog.Options{
		RegistryURL: cmp.Or(r.opts.RegistryURL, os.Getenv(RegistryEnv)),
		CacheDir:    filepath.Join(r.home, "catalog"),
		Logger:      r.log,
	})
	if err != nil {
		return err
	}
	r.cat = cat
	r.down.push("closing the catalog", func() error { cat.Close(); return nil })
	return nil
}

func (r *run) prepareInstaller(context.Context) error {
	installer, err := install.New(install.Options{
		Home:    r.home,
		Secrets: r.secrets,
		Logger:  r.log,
		PATH:    r.sup.PATH(),
	})
	if err != nil {
		return err
	}
	r.installer = installer
	return nil
}

// listen opens the listener; serve accepts on it. Until then a client's
// connection waits in the backlog.
func (r *run) listen(context.Context) error {
	listen := cmp.Or(r.opts.Listen, r.store.Current().Listen)
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			// The config file may not exist yet (a first run): say how to
			// make it rather than point at a file the user cannot find.
			fix := fmt.Sprintf("set \"listen\" in %s to another loopback address", r.store.Path())
			if _, statErr := os.Stat(r.store.Path()); errors.Is(statErr, fs.ErrNotExist) {
				fix = fmt.Sprintf("create %s with {\"version\": 1, \"listen\": \"127.0.0.1:7392\"}", r.store.Path())
			}
			return fmt.Errorf("cannot listen on %s: the address is in use by another program; "+
				"pass --listen 127.0.0.1:7392 (make run LISTEN=127.0.0.1:7392), or %s", listen, fix)
		}
		return fmt.Errorf("cannot listen on %s: %w", listen, err)
	}
	r.ln = ln
	// Once serving, stopServing has closed it already.
	r.down.push("closing the listener", func() error {
		if err := ln.Close(); !errors.Is(err, net.ErrClosed) {
			return err
		}
		return nil
	})
	return nil
}

// startSignIns makes the remote sign-ins' Manager, with the listener as
// the redirect's address. They end before the supervisor stops: a sign-in
// that completes starts its server.
func (r *run) startSignIns(context.Context) error {
	err := r.signIns.start(r.secrets, r.ln.Addr().String(), func(ctx context.Context, server string) {
		if sc, ok := r.store.Current().Servers[server]; !ok || !sc.IsEnabled() {
			return // signed in while disabled: it connects when enabled
		}
		startCtx, cancel := context.WithTimeout(ctx, signedInStartTimeout)
		defer cancel()
		if err := r.sup.Start(startCtx, server); err != nil {
			r.log.Warn("the remote server did not connect after its sign-in", "server", server, "err", err)
		}
	})
	if err != nil {
		return err
	}
	r.down.push("ending the remote sign-ins", func() error { r.signIns.close(); return nil })
	return nil
}

// applyConfig starts the servers of the config in force. A config the
// supervisor does not take does not stop the start: the daemon serves with
// no server, so that the user can fix it through the API.
func (r *run) applyConfig(ctx context.Context) error {
	r.d = &daemon{
		listen:          r.ln.Addr().String(),
		log:             r.log,
		store:           r.store,
		sup:             r.sup,
		gw:              r.gw,
		bus:             r.bus,
		secrets:         r.secrets,
		hist:            r.hist,
		approvals:       r.approved,
		profileWarnings: r.profiled,
		sandbox:         newSandboxer(r.home, r.ln.Addr(), r.log),
	}
	err := r.d.apply(ctx)
	if errors.Is(err, supervisor.ErrStillStopping) {
		r.log.Warn("applying config", "err", err)
	} else if err != nil {
		r.log.Error("the config was not applied; no server runs until it is", "err", err)
	}
	return nil
}

// buildAPI builds the API and the handlers of every path the listener
// serves. It closes before the supervisor stops: installs roll back.
func (r *run) buildAPI(context.Context) error {
	r.started = time.Now()
	address := "http://" + r.ln.Addr().String()
	clientOpts := api.ClientsOptions{
		GatewayURL: address + "/mcp",
		BinaryPath: r.opts.Binary,
		OpenApp:    browser.OpenApp,
	}
	// A bridge started by a client (Claude Desktop) does not have this
	// daemon's environment: it is told the data directory unless it is the
	// default one.
	if def, err := DefaultHome(); err != nil || filepath.Clean(def) != filepath.Clean(r.home) {
		clientOpts.Home = r.home
	}
	if env, err := clients.EnvFromOS(""); err != nil {
		r.log.Warn("client configs are not available", "err", err)
	} else if clientOpts.Editor, err = clients.New(clients.Options{
		BackupDir:  filepath.Join(r.home, "backups"),
		StateDir:   filepath.Join(r.home, "clients"),
		GatewayURL: clientOpts.GatewayURL,
		BinaryPath: r.opts.Binary,
	}); err == nil {
		clientOpts.Env = env
	}
	var startAtLogin autostart.Entry
	if len(r.opts.AutostartCommand) > 0 {
		if env, err := autostart.EnvFromOS(); err != nil {
			r.log.Warn("start at login is not available", "err", err)
		} else if startAtLogin, err = autostart.New(env); err != nil {
			r.log.Warn("start at login is not available", "err", err)
		}
	}
	apiServer, err := api.New(api.Options{
		Autostart:        startAtLogin,
		AutostartCommand: r.opts.AutostartCommand,
		Supervisor:       r.sup,
		Config:           r.d,
		Tokens:           r.toks,
		History:          r.hist,
		Clients:          clientOpts,
		Events:           r.bus,
		Secrets:          r.secrets,
		Catalog:          r.cat,
		Installer:        r.installer,
		Tools:            r.gw,
		Journal:          journal(r.hist),
		Approvals:        r.approved,
		SignIns:          r.signIns,
		Asks:             r.board,
		CapsChanged:      r.gw.CapsChanged,
		Revoked: func(tokenID string) {
			if n := r.gw.CloseSessionsOf(tokenID); n > 0 {
				r.log.Info("closed the MCP sessions of a revoked token", "token", tokenID, "sessions", n)
			}
		},
		Quit:    r.quit,
		Logger:  r.log,
		Version: r.opts.Version,
		Home:    r.home,
		Started: r.started,
		MCPURL:  clientOpts.GatewayURL,
	})
	if err != nil {
		return err
	}
	r.down.push("closing the API", func() error { apiServer.Close(); return nil })
	mux := http.NewServeMux()
	mux.Handle("/api/", apiServer)
	// The browser comes back from a sign-in without a Switchboard token.
	mux.Handle(remoteauth.CallbackPath, apiServer.HostOnly(r.signIns.manager.Load().Callback()))
	mux.Handle("/", apiServer.Dashboard(r.opts.Dashboard))
	mcpHandler := apiServer.Protect(r.gw.Handler())
	for _, p := range []string{"/mcp", "/mcp/", "/sse", "/sse/"} {
		mux.Handle(p, mcpHandler)
	}
	if r.opts.RuntimeStats {
		mux.Handle(RuntimeStatsPath, apiServer.Protect(runtimeStatsHandler()))
	}
	r.mux = mux
	r.info = Info{
		PID:     os.Getpid(),
		Address: address,
		Home:    r.home,
		Version: r.opts.Version,
		Started: r.started,
	}
	return nil
}

// writeInfo writes daemon.json, which CLI verbs, the window and a second
// launch read to find the daemon; it is removed before the lock is
// released.
func (r *run) writeInfo(context.Context) error {
	if err := writeInfo(r.home, r.info); err != nil {
		return err
	}
	r.down.push("removing daemon.json", func() error {
		if err := os.Remove(filepath.Join(r.home, InfoFile)); !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	})
	return nil
}

// watchConfig follows hand edits of config.json until the teardown, which
// stops it once HTTP is drained.
func (r *run) watchConfig(ctx context.Context) error {
	var watching sync.WaitGroup
	watchCtx, stopWatching := context.WithCancel(ctx)
	watching.Go(func() { r.d.watch(watchCtx) })
	r.down.push("stopping the config watch", func() error {
		stopWatching()
		watching.Wait()
		return nil
	})
	return nil
}

// serve accepts on the listener, last: everything it serves is ready. Its
// closer, the first to run, drains HTTP (see stopServing), so that every
// call in flight is answered before anything it uses stops; it does so
// also when Serve ended with an error, whose connections may still be open.
func (r *run) serve(context.Context) error {
	limits := r.opts.HTTP.withDefaults()
	open := newOpenRequests()
	srv := limits.server(open.track(r.mux))
	srv.BaseContext, srv.ConnState = open.base, open.connState
	// What net/http logs is a bug or a resource limit (a handler's panic,
	// a superfluous WriteHeader, accept errors): a warning, not debug noise.
	srv.ErrorLog = slog.NewLogLogger(r.log.Handler(), slog.LevelWarn)
	r.serveErr = make(chan error, 1)
	go func() { r.serveErr <- srv.Serve(limitListener(r.ln, limits.MaxConns)) }()
	r.down.push("stopping serving", func() error {
		stopServing(r.log, srv, open, r.gw, r.bus)
		open.end(nil)
		return nil
	})
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
// When the supervisor took none of it (it refused a server, or it is
// shutting down), the error says why: what runs is then still the config
// applied before, and nothing else (gateway, settings, history) changed.
// When removed servers were still stopping as ctx ended, the config is in
// force all the same (they go on stopping) and the error wraps
// supervisor.ErrStillStopping: each caller decides what that is worth.
func (d *daemon) apply(ctx context.Context) error {
	d.applyMu.Lock()
	defer d.applyMu.Unlock()
	cfg := d.store.Current()
	// The config change is recorded as of now, before the stops and
	// starts it causes, but only once the supervisor took it.
	changed := time.Now()
	specs := d.sandbox.withConfinement(d.log, withSecrets(d.log, Specs(cfg), cfg, d.secrets), cfg)
	stillStopping := d.sup.Apply(ctx, d.notSelf(cfg, specs))
	if stillStopping != nil && !errors.Is(stillStopping, supervisor.ErrStillStopping) {
		return fmt.Errorf("applying the config: %w", stillStopping)
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
	return stillStopping
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
				if err := d.apply(ctx); errors.Is(err, supervisor.ErrStillStopping) {
					d.log.Warn("applying config", "err", err)
				} else if err != nil {
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
	if err := d.apply(ctx); errors.Is(err, supervisor.ErrStillStopping) {
		// In force: the removed servers go on stopping.
		d.log.Warn("applying config", "err", err)
	} else if err != nil {
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
