package supervisor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options configure a Supervisor. The zero value of every field means its
// documented default.
type Options struct {
	Logger *slog.Logger
	// StateDir holds the pid registry (RegistryFile). Empty: no registry,
	// so no sweep of survivors after a crash of the daemon.
	StateDir string
	// Env is the base environment of every server; nil means os.Environ()
	// without Switchboard's own variables (see WithoutSwitchboardEnv),
	// with PATH merged with the login shell's (see LoginShellPATH).
	Env []string
	// Reaper is the command line of the watchdog that kills every server when
	// the daemon dies (see RunReaperIfRequested); typically
	// []string{os.Executable()}. Nil: no reaper (Windows needs none).
	Reaper []string
	// Launcher is the command line of the confining launcher that starts a
	// server whose Spec has a Confine policy (see confine.RunIfRequested);
	// typically []string{os.Executable()}. Nil: such servers run
	// unconfined, and their status says so.
	Launcher []string
	// NewClient makes the MCP client a pool uses toward its processes; the
	// gateway sets it (with SetHooks) to forward server-to-client requests.
	// Nil: a client
	// that declares sampling, elicitation and roots and answers such requests
	// with an error, since no one is there to answer.
	NewClient func(server string) *mcp.Client
	// ProtocolVersion is the version offered to servers; "" means
	// DefaultProtocolVersion.
	ProtocolVersion string
	// WrapTransport, when set, wraps the transport over each process's
	// pipes before the handshake (the gateway watches the order of a
	// server's messages this way). A remote server's MCP transport is not
	// wrapped (see connectOver): WrapRemoteHTTP is its counterpart.
	WrapTransport func(server string, t mcp.Transport) mcp.Transport
	// WrapRemoteHTTP, when set, wraps the HTTP transport under each
	// connection to a remote server (RemoteRoundTripper's, below the
	// server's headers): the gateway reads the responses' event streams
	// this way, in the order the MCP client reads them.
	WrapRemoteHTTP func(server string, rt http.RoundTripper) http.RoundTripper
	// Prepare, when set, runs on each new process's session after the
	// handshake and before the process is handed out (the gateway asks for
	// every log message here). An error counts as a failed start.
	Prepare func(ctx context.Context, server string, cs *mcp.ClientSession) error

	SampleInterval  time.Duration // resource samples; default 2s, negative disables
	HealthInterval  time.Duration // ping each idle process this often; default 30s, negative disables
	HealthTimeout   time.Duration // a ping unanswered this long restarts the process; default 10s
	StopGrace       time.Duration // each polite shutdown step (stdin closed, then SIGTERM); default 2s
	BackoffInitial  time.Duration // first restart delay after a crash; default 500ms
	BackoffMax      time.Duration // default 30s
	BackoffReset    time.Duration // a crash this long after the previous one starts over at BackoffInitial; default 1m
	CrashLimit      int           // crashes within CrashWindow that make a server failing; default 5
	CrashWindow     time.Duration // default 1m
	FailingCoolDown time.Duration // a failing server is tried again after this; default 5m
	LogLines        int           // stderr lines kept per server; default 500
	// RemoteRoundTripper, when set, gives the HTTP transport under a remote
	// server's requests (its headers are added on top); nil, or nil
	// returned, means http.DefaultTransport, which verifies TLS. It is
	// called for each connection. This is where a sign-in (OAuth) puts the
	// server's token on its requests.
	RemoteRoundTripper func(server string) http.RoundTripper
	// MaxMessageSize bounds one JSON-RPC message on a server's stdout; a
	// longer line is cut, logged and dropped. 0 means DefaultMaxMessageSize.
	MaxMessageSize int
}

func (o Options) withDefaults() Options {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&o.SampleInterval, 2*time.Second)
	def(&o.HealthInterval, 30*time.Second)
	def(&o.HealthTimeout, 10*time.Second)
	def(&o.StopGrace, 2*time.Second)
	def(&o.BackoffInitial, 500*time.Millisecond)
	def(&o.BackoffMax, 30*time.Second)
	def(&o.BackoffReset, time.Minute)
	def(&o.CrashWindow, time.Minute)
	def(&o.FailingCoolDown, 5*time.Minute)
	if o.CrashLimit == 0 {
		o.CrashLimit = 5
	}
	if o.ProtocolVersion == "" {
		o.ProtocolVersion = DefaultProtocolVersion
	}
	if o.MaxMessageSize <= 0 {
		o.MaxMessageSize = DefaultMaxMessageSize
	}
	if o.LogLines == 0 {
		o.LogLines = 500
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// DefaultProtocolVersion is the session era's newest version. Switchboard
// stands between clients and servers, and in the session era a server's
// requests to the client (sampling, elicitation, roots) and the logging
// level travel as messages that the gateway can route to the calling
// client. In the stateless 2026-07-28 era the go-sdk client answers some of
// them itself (roots from its own list), so a gateway could not. A server
// that only speaks older versions negotiates down as usual.
const DefaultProtocolVersion = "2025-11-25"

// A Supervisor runs one Pool per server. Its methods are safe for concurrent use.
type Supervisor struct {
	opts     Options
	logger   *slog.Logger
	env      []string
	events   *broker
	sampler  *sampler
	registry *registry
	reaper   *reaper
	swept    []SweptProcess

	mu      sync.Mutex
	pools   map[string]*Pool
	closed  bool
	applied bool // Apply ran: the hooks are in use

	hooks Hooks // Options' hooks, or those of SetHooks; fixed once Apply runs

	stopSampling context.CancelFunc
	sampling     sync.WaitGroup
}

// Hooks are how the pools talk to their processes when something stands
// between those and the MCP clients (the gateway): see Options.NewClient,
// WrapTransport and Prepare.
type Hooks struct {
	NewClient      func(server string) *mcp.Client
	WrapTransport  func(server string, t mcp.Transport) mcp.Transport
	WrapRemoteHTTP func(server string, rt http.RoundTripper) http.RoundTripper
	Prepare        func(ctx context.Context, server string, cs *mcp.ClientSession) error
}

// ErrHooksLate is SetHooks's refusal once Apply ran or hooks are set.
var ErrHooksLate = errors.New("supervisor: hooks are set once, before the first Apply")

// SetHooks sets the hooks of Options on a supervisor built before what
// provides them: the gateway leases this supervisor's processes, so it is
// built after the supervisor and hands it its hooks here. It must come
// before the first Apply (no process exists yet, so every process gets the
// hooks) and at most once; otherwise it changes nothing and returns
// ErrHooksLate.
func (s *Supervisor) SetHooks(h Hooks) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.applied || s.hooks.NewClient != nil || s.hooks.WrapTransport != nil || s.hooks.WrapRemoteHTTP != nil || s.hooks.Prepare != nil {
		return ErrHooksLate
	}
	s.hooks = h
	return nil
}

// New starts a supervisor with no servers: it sweeps processes left by an
// earlier daemon from the registry, starts the reaper, and starts sampling.
func New(ctx context.Context, opts Options) (*Supervisor, error) {
	opts = opts.withDefaults()
	s := &Supervisor{
		opts:    opts,
		logger:  opts.Logger,
		env:     opts.Env,
		events:  newBroker(),
		sampler: newSampler(),
		pools:   make(map[string]*Pool),
		hooks: Hooks{NewClient: opts.NewClient, WrapTransport: opts.WrapTransport, WrapRemoteHTTP: opts.WrapRemoteHTTP,
			Prepare: opts.Prepare},
	}
	if s.env == nil {
		s.env = WithoutSwitchboardEnv(os.Environ())
		if login := LoginShellPATH(ctx); login != "" {
			s.env = buildEnv(s.env, map[string]string{"PATH": MergePATH(login, os.Getenv("PATH"))})
		}
	}
	if opts.StateDir != "" {
		s.registry = newRegistry(filepath.Join(opts.StateDir, RegistryFile))
		swept, err := s.registry.sweep(ctx, s.logger)
		if err != nil {
			return nil, err
		}
		s.swept = swept
	} else {
		s.registry = newRegistry("")
	}
	if len(opts.Reaper) > 0 {
		r, err := startReaper(opts.Reaper)
		if err != nil {
			return nil, err
		}
		s.reaper = r
	}
	if opts.SampleInterval > 0 {
		sctx, cancel := context.WithCancel(context.Background())
		s.stopSampling = cancel
		s.sampling.Go(func() { s.sampleLoop(sctx) })
	}
	return s, nil
}

// Swept lists the processes of an earlier daemon that New found alive and
// stopped.
func (s *Supervisor) Swept() []SweptProcess { return slices.Clone(s.swept) }

// Subscribe returns a channel of every event from now on, and a function
// that ends the subscription (and closes the channel). Events that do not
// fit in buffer are dropped, not waited for. Every subscriber gets the
// same copy of an event: read it, do not change it.
func (s *Supervisor) Subscribe(buffer int) (<-chan *Event, func()) {
	return s.events.subscribe(buffer)
}

// DroppedEvents counts events subscribers missed because their buffer was full.
func (s *Supervisor) DroppedEvents() uint64 { return s.events.dropped.Load() }

// Apply makes the supervisor run exactly specs: new servers get a pool,
// removed ones are stopped, changed ones switch to their new spec (their
// old processes finish their calls first), and unchanged ones are not
// touched. Invalid specs are refused before anything changes, and so is
// any change once the supervisor is closed (ErrClosed). Apply waits for the
// processes of removed servers to exit: if ctx ends first, the specs are in
// force all the same and the error wraps ErrStillStopping.
func (s *Supervisor) Apply(ctx context.Context, specs []Spec) error {
	want := make(map[string]Spec, len(specs))
	for _, sp := range specs {
		if err := sp.Validate(); err != nil {
			return err
		}
		if _, dup := want[sp.Name]; dup {
			return fmt.Errorf("server %q is configured twice", sp.Name)
		}
		want[sp.Name] = sp.withDefaults()
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	s.applied = true
	var removed []*Pool
	for name, p := range s.pools {
		if _, ok := want[name]; !ok {
			removed = append(removed, p)
			delete(s.pools, name)
		}
	}
	var changed []*Pool
	var changedSpecs []Spec
	for name, sp := range want {
		p, ok := s.pools[name]
		switch {
		case !ok:
			s.pools[name] = newPool(s, sp)
			s.logger.Info("server added", "server", name)
		case !p.currentSpec().Equal(sp):
			changed = append(changed, p)
			changedSpecs = append(changedSpecs, sp)
		}
	}
	s.mu.Unlock()

	for i, p := range changed {
		s.logger.Info("server configuration changed; replacing its processes", "server", p.name)
		p.update(changedSpecs[i])
	}
	if err := closePools(ctx, removed, s.logger); err != nil {
		return fmt.Errorf("%w: %w", ErrStillStopping, err)
	}
	return nil
}

func (p *Pool) currentSpec() Spec {
	var sp Spec
	p.do(func() { sp = p.spec })
	return sp
}

// closePools closes pools in parallel.
func closePools(ctx context.Context, pools []*Pool, logger *slog.Logger) error {
	errs := make([]error, len(pools))
	var wg sync.WaitGroup
	for i, p := range pools {
		wg.Go(func() {
			logger.Info("stopping server", "server", p.name)
			errs[i] = p.close(ctx)
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Pool returns the pool of the named server.
func (s *Supervisor) Pool(name string) (*Pool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	p, ok := s.pools[name]
	if !ok {
		return nil, fmt.Errorf("server %q: %w", name, ErrUnknownServer)
	}
	return p, nil
}

// Acquire leases a process of the named server; see Pool.Acquire.
func (s *Supervisor) Acquire(ctx context.Context, name string) (*Lease, error) {
	p, err := s.Pool(name)
	if err != nil {
		return nil, err
	}
	return p.Acquire(ctx)
}

// Start, Stop and Restart act on the named server's pool.
func (s *Supervisor) Start(ctx context.Context, name string) error {
	return s.onPool(name, func(p *Pool) error { return p.Start(ctx) })
}

func (s *Supervisor) Stop(ctx context.Context, name string) error {
	return s.onPool(name, func(p *Pool) error { return p.Stop(ctx) })
}

func (s *Supervisor) Restart(ctx context.Context, name string) error {
	return s.onPool(name, func(p *Pool) error { return p.Restart(ctx) })
}

func (s *Supervisor) onPool(name string, fn func(*Pool) error) error {
	p, err := s.Pool(name)
	if err != nil {
		return err
	}
	return fn(p)
}

// Status returns a snapshot of the named server's pool.
func (s *Supervisor) Status(name string) (PoolStatus, error) {
	p, err := s.Pool(name)
	if err != nil {
		return PoolStatus{}, err
	}
	return p.Status(), nil
}

// Statuses returns a snapshot of every pool, sorted by name.
func (s *Supervisor) Statuses() []PoolStatus {
	s.mu.Lock()
	pools := slices.Collect(maps.Values(s.pools))
	s.mu.Unlock()
	out := make([]PoolStatus, 0, len(pools))
	for _, p := range pools {
		out = append(out, p.Status())
	}
	slices.SortFunc(out, func(a, b PoolStatus) int { return cmpString(a.Name, b.Name) })
	return out
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Close stops every server in parallel, each within the shutdown bound, then
// the reaper. It returns when every process has exited or ctx ends.
func (s *Supervisor) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	pools := slices.Collect(maps.Values(s.pools))
	s.pools = map[string]*Pool{}
	s.mu.Unlock()

	err := closePools(ctx, pools, s.logger)
	if s.stopSampling != nil {
		s.stopSampling()
		s.sampling.Wait()
	}
	if rerr := s.reaper.close(); rerr != nil && err == nil {
		s.logger.Warn("reaper did not exit cleanly", "err", rerr)
	}
	return err
}

// track records a new process in the registry and with the reaper.
func (s *Supervisor) track(server string, pid, group int) {
	started, err := processStartTime(context.Background(), pid)
	if err != nil {
		s.logger.Warn("cannot read process start time; it will not be swept after a crash", "pid", pid, "err", err)
	} else if err := s.registry.add(registryEntry{PID: pid, Group: group, Started: started, Server: server}); err != nil {
		s.logger.Warn("cannot record process in the registry", "pid", pid, "err", err)
	}
	if err := s.reaper.watch(group); err != nil {
		s.logger.Warn("cannot tell the reaper about a process", "pid", pid, "err", err)
	}
}

func (s *Supervisor) untrack(pid, group int) {
	if err := s.registry.remove(pid); err != nil {
		s.logger.Warn("cannot update the process registry", "pid", pid, "err", err)
	}
	_ = s.reaper.unwatch(group)
}

func (s *Supervisor) sampleLoop(ctx context.Context) {
	t := time.NewTicker(s.opts.SampleInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.mu.Lock()
		pools := slices.Collect(maps.Values(s.pools))
		s.mu.Unlock()
		roots := make(map[string][]int, len(pools))
		byName := make(map[string]*Pool, len(pools))
		for _, p := range pools {
			if pids := p.readyPIDs(); len(pids) > 0 {
				roots[p.name] = pids
			}
			byName[p.name] = p
		}
		totals := s.sampler.sample(ctx, roots)
		for name, p := range byName {
			u := totals[name]
			p.usage.Store(u)
			if u != nil {
				p.publish(Event{Kind: EventUsage, Usage: u})
			}
		}
	}
}

// newClient makes the MCP client for a pool's processes.
func (s *Supervisor) newClient(server string) *mcp.Client {
	if s.hooks.NewClient != nil {
		return s.hooks.NewClient(server)
	}
	return DefaultClient(server)
}

// DefaultClient declares every client capability (servers hide tools from
// clients that lack sampling, elicitation or roots) and refuses the requests
// behind them, since no user is attached to answer.
func DefaultClient(server string) *mcp.Client {
	noOne := func(what string) error {
		return fmt.Errorf("server %q asked for %s, but no MCP client is attached to answer it", server, what)
	}
	return mcp.NewClient(&mcp.Implementation{Name: "switchboard", Version: "1"}, &mcp.ClientOptions{
		//lint:ignore SA1019 backend sessions still answer a server's roots requests, which the gateway relays (deprecated by SEP-2577, functional in its deprecation window)
		Capabilities: &mcp.ClientCapabilities{RootsV2: &mcp.RootCapabilities{}},
		//lint:ignore SA1019 backend sessions still answer a server's sampling requests, which the gateway relays (deprecated by SEP-2577, functional in its deprecation window)
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return nil, noOne("sampling")
		},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return nil, noOne("elicitation")
		},
	})
}

// PATH is the search path servers are started with: the daemon's own, with
// the user's login shell's in front (see New), so that programs a desktop
// app does not see on its PATH (node from nvm, uvx) are found. Installers use
// it too.
func (s *Supervisor) PATH() string {
	for i := len(s.env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(s.env[i], "="); ok && k == "PATH" {
			return v
		}
	}
	return ""
}
