// Package api is the daemon's local REST API: what the CLI verbs, the tray
// and the dashboard use to see and change the servers. The request and
// response types are those of app/api/wire (the names below); the handlers
// convert the daemon's internal types into them. The Go client is
// app/api/client.
//
// Routes (all JSON; errors are {"error": "message"} with a fitting status):
//
//	GET    /api/v1/status                       Status
//	GET    /api/v1/servers                      []ServerView, sorted by name
//	POST   /api/v1/servers                      AddServerRequest → 201 ServerView
//	POST   /api/v1/remotes                      AddRemoteRequest → 201 ServerView (secret headers to the secret store)
//	GET    /api/v1/servers/{name}               ServerView
//	PUT    /api/v1/servers/{name}               ServerConfig → ServerView
//	DELETE /api/v1/servers/{name}               204
//	POST   /api/v1/servers/{name}/start         ServerView once a process is ready
//	POST   /api/v1/servers/{name}/stop          ServerView once the processes exited
//	POST   /api/v1/servers/{name}/restart       ServerView once a new process is ready
//	GET    /api/v1/servers/{name}/logs?n=100    []LogLine
//	GET    /api/v1/servers/{name}/logs?follow=1 text/event-stream of LogLine
//	GET    /api/v1/events[?since=ID&types=a,b]  text/event-stream of the live feed (see events.go)
//	GET    /api/v1/clients[?workspace=DIR]      []ClientView (workspace: VS Code's DIR/.vscode/mcp.json)
//	POST   /api/v1/clients/{id}/plan            ClientChange → ClientPlan (the diff; nothing written)
//	POST   /api/v1/clients/{id}/apply           ClientChange with the plan's hash → ClientView
//	POST   /api/v1/clients/{id}/import/plan     ImportRequest → ImportPlan (servers to add, file diff)
//	POST   /api/v1/clients/{id}/import/apply    ImportRequest with the plan's hash → ImportResult
//	GET    /api/v1/clients/{id}/backups         []BackupView
//	POST   /api/v1/clients/{id}/restore/plan    RestoreRequest → ClientPlan (the diff back to the backup)
//	POST   /api/v1/clients/{id}/restore/apply   RestoreRequest with the plan's hash → ClientView
//	POST   /api/v1/clients/{id}/offer           ClientOfferRequest → ClientOffer (Cherry Studio's install link; nothing written)
//	                                            (every /clients route takes ?workspace=DIR, absolute)
//	GET    /api/v1/tokens                       []TokenView (never a secret)
//	DELETE /api/v1/tokens/{label}               []TokenView revoked; "cli" is refused (403)
//	GET    /api/v1/catalog?q=&limit=            CatalogResult (curated + registry; see installs.go)
//	GET    /api/v1/catalog/{name}               CatalogEntry
//	POST   /api/v1/installs                     InstallRequest → 202 InstallView; progress on /events
//	GET    /api/v1/installs[/{id}]              InstallView(s); POST .../{id}/cancel
//	GET    /api/v1/servers/{name}/update        UpdateCheck; POST → 202 InstallView
//	POST   /api/v1/servers/{name}/uninstall     204: out of the config, files and secrets removed
//	GET    /api/v1/settings; PUT                Settings (history retention), kept in config.json
//	GET    /api/v1/profiles                     []ProfileView: config.json's profiles, their tools and clients
//	POST   /api/v1/profiles                     ProfileRequest → 201 ProfileView (409 if it exists)
//	PUT    /api/v1/profiles/{name}              ProfileRequest → ProfileView (its clients stay bound)
//	DELETE /api/v1/profiles/{name}              204; 409 while a client's token is bound to it
//	GET    /api/v1/held-tools[?server=NAME]    []HeldTool: tools held until approved (approvals.go)
//	POST   /api/v1/servers/{name}/approve       ApproveRequest → ApproveResult
//	POST   /api/v1/login-codes                  201 LoginCode: a one-time sign-in link for the dashboard (dashboard.go)
//	GET    /api/v1/servers/{name}/tools/{tool}  TryTool: the tool as /mcp/<name>'s clients get it (trytool.go)
//	POST   /api/v1/servers/{name}/tools/{tool}/call  TryRequest → TryResult: called through the daemon's own gateway
//
// Every request passes these checks, in order (see security.go):
//
//	Host is a loopback name ─▶ Origin, if any, is this server's ─▶
//	http.CrossOriginProtection ─▶ bearer token (or dashboard session) ─▶
//	admin scope ─▶ a body is application/json ─▶ route
//
// failing with 403, 403, 403, 401 (with WWW-Authenticate: Bearer), 403 and
// 415. Client-scoped tokens (those in MCP clients' configs) reach the MCP
// endpoints only; see docs/threat-model.md.
package api

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/app/autostart"
	"github.com/switchboardhq/switchboard/app/config"
	"github.com/switchboardhq/switchboard/app/events"
	"github.com/switchboardhq/switchboard/app/gateway"
	"github.com/switchboardhq/switchboard/app/secrets"
	"github.com/switchboardhq/switchboard/app/tokens"
	"github.com/switchboardhq/switchboard/supervisor"
)

// Supervisor is what the API needs of the process supervisor;
// *supervisor.Supervisor implements it.
type Supervisor interface {
	Statuses() []supervisor.PoolStatus
	Status(name string) (supervisor.PoolStatus, error)
	Start(ctx context.Context, name string) error
	Stop(ctx context.Context, name string) error
	Restart(ctx context.Context, name string) error
	Subscribe(buffer int) (<-chan *supervisor.Event, func())
}

// Config is what the API needs of the daemon's configuration. The daemon
// implements it over a *config.Store and the supervisor.
type Config interface {
	// Current returns a copy of the configuration in force.
	Current() *config.Config
	// Problem returns the error of the last failed reload of config.json
	// (nil when the file on disk is the one in force).
	Problem() error
	// Path returns the absolute path of config.json.
	Path() string
	// Update applies fn to a copy of the config, validates, saves atomically
	// and applies it to the supervisor. An error returned by fn must come
	// back from Update (it may be wrapped): the API returns its own errors
	// from fn to pick the status code.
	Update(ctx context.Context, fn func(*config.Config) error) (*config.Config, error)
}

// Options configure a Server. Supervisor, Config and Tokens are required.
type Options struct {
	Supervisor Supervisor
	Config     Config
	Tokens     *tokens.Store
	// Logger receives one Debug record per request (method, path, status,
	// duration, the token's label; never the token). Nil discards.
	Logger *slog.Logger
	// Version is the daemon's build version, for Status.
	Version string
	// Home is the data directory, for Status.
	Home string
	// Started is when the daemon started; zero means when New was called.
	Started time.Time

	// ActionTimeout bounds start, stop and restart requests; zero means
	// DefaultActionTimeout.
	ActionTimeout time.Duration
	// KeepAlive is the interval of comments on a log stream that keep
	// idle connections open; zero means DefaultKeepAlive.
	KeepAlive time.Duration
	// History serves /api/v1/history, /stats and /usage; nil answers 503.
	History History
	// Clients serves /api/v1/clients; a nil Editor answers 503.
	Clients ClientsOptions
	// Events serves /api/v1/events; nil answers 503.
	Events *events.Bus
	// Secrets keeps the servers' secret values (API keys) out of
	// config.json: imports and installs put them there.
	Secrets *secrets.Store
	// Catalog serves /api/v1/catalog; nil answers 503.
	Catalog Catalog
	// Installer installs, updates and uninstalls servers; nil answers 503.
	Installer Installer
	// Tools tells the servers' tools (the gateway); nil lists none.
	Tools Tools
	// Approvals serves the held tools and their approval (approvals.go);
	// nil answers 503.
	Approvals Approvals
	// Asks is the board of calls waiting for the user's yes (asks.go);
	// nil: GET /api/v1/asks answers 503.
	Asks Asks
	// SignIns are the remote servers' sign-ins (signins.go); nil: the
	// login and logout routes answer 503 and views carry no auth.
	SignIns SignIns
	// Autostart is the start-at-login entry /api/v1/settings manages, with
	// the command it runs; nil leaves it out of the settings.
	Autostart        autostart.Entry
	AutostartCommand []string
	// Revoked, if set, is told the id of each token revoked while it had
	// requests open, or revoked through the API, once those requests
	// ended: the daemon closes the token's MCP sessions.
	Revoked func(tokenID string)
	// CapsChanged, if set, is told that a client token's tier cap changed:
	// the daemon tells the open MCP sessions that their tool lists changed.
	CapsChanged func()
	// Journal, if set, is told what the API did that belongs in the
	// history beside the supervisor's lifecycle events: an install, update
	// or uninstall that ended, a client's config file written.
	Journal func(JournalEntry)
	// Quit, if set, ends the daemon as the tray's Quit does: POST
	// /api/v1/quit calls it and answers, and the daemon then stops every
	// server and exits. Nil answers 503.
	Quit func()
	// MCPURL is the daemon's own aggregated MCP endpoint
	// ("http://127.0.0.1:7391/mcp"): a tool tried from the dashboard is
	// called through MCPURL/<server> (trytool.go). Empty answers 503.
	MCPURL string
}

// A JournalEntry is one thing the API did to a server or to a client's
// config file.
type JournalEntry struct {
	Server  string // "" for a client's config file
	Kind    string // JournalInstall or JournalClientConfig
	Message string
}

// Kinds of JournalEntry.
const (
	JournalInstall      = "install"       // an install, update or uninstall ended
	JournalClientConfig = "client-config" // a client's config file was written
)

// journal tells Options.Journal, if set, of one thing the API did.
func (s *Server) journal(server, kind, message string) {
	if s.journalTo != nil {
		s.journalTo(JournalEntry{Server: server, Kind: kind, Message: message})
	}
}

// Tools is what the API needs to show each server's tools;
// *gateway.Gateway implements it. Tools returns nil for a server not
// listed yet, a list (maybe empty) once listed.
type Tools interface {
	Tools(server string) []gateway.ToolInfo
}

// DefaultActionTimeout is a little more than supervisor.DefaultStartTimeout,
// so that a start that takes too long fails with the supervisor's error,
// which names the cause, rather than with the API's timeout. Clients read
// it as wire.DefaultActionTimeout (TestWireConstants keeps the two equal).
const DefaultActionTimeout = supervisor.DefaultStartTimeout + 15*time.Second

// DefaultKeepAlive is how often an idle log stream sends a comment.
const DefaultKeepAlive = 15 * time.Second

// MaxBodyBytes bounds a request body; a larger one gets 413.
const MaxBodyBytes = 1 << 20

// A Server is the API's http.Handler. Mount it at the root of the daemon's
// loopback listener: its routes start with /api/v1/. It is safe for
// concurrent use.
type Server struct {
	sup           Supervisor
	cfg           Config
	history       History
	clients       ClientsOptions
	bus           *events.Bus
	secrets       *secrets.Store
	catalog       Catalog
	installer     Installer
	installs      *installs
	logins        loginCodes
	dash          *dashSessions
	open          *openRequests
	tools         Tools
	approvals     Approvals
	asks          Asks
	capsChanged   func()
	signIns       SignIns
	autostart     autostart.Entry
	autostartCmd  []string
	tokens        *tokens.Store
	journalTo     func(JournalEntry)
	quit          func()
	mcpURL        string
	try           tryCredential // the daemon's own MCP client's (trytool.go)
	log           *slog.Logger
	version, home string
	started       time.Time
	actionTimeout time.Duration
	keepAlive     time.Duration

	mux     *routeMux
	handler http.Handler
}

// routeMux is an http.ServeMux that remembers its patterns, so that Routes
// can list them (the security tests try every one).
type routeMux struct {
	*http.ServeMux
	patterns []string
}

func (m *routeMux) Handle(pattern string, h http.Handler) {
	m.patterns = append(m.patterns, pattern)
	m.ServeMux.Handle(pattern, h)
}

func (m *routeMux) HandleFunc(pattern string, h func(http.ResponseWriter, *http.Request)) {
	m.Handle(pattern, http.HandlerFunc(h))
}

// Routes returns the pattern of every API route ("GET /api/v1/servers/{name}"),
// in the order registered.
func Routes() []string {
	s := &Server{mux: &routeMux{ServeMux: http.NewServeMux()}}
	s.routes()
	return slices.Clone(s.mux.patterns)
}

// New returns the API server for opts.
func New(opts Options) (*Server, error) {
	switch {
	case opts.Supervisor == nil:
		return nil, errors.New("api: Options.Supervisor is required")
	case opts.Config == nil:
		return nil, errors.New("api: Options.Config is required")
	case opts.Tokens == nil:
		return nil, errors.New("api: Options.Tokens is required")
	}
	s := &Server{
		sup:           opts.Supervisor,
		cfg:           opts.Config,
		history:       opts.History,
		clients:       opts.Clients,
		bus:           opts.Events,
		secrets:       opts.Secrets,
		catalog:       opts.Catalog,
		installer:     opts.Installer,
		installs:      newInstalls(),
		tools:         opts.Tools,
		approvals:     opts.Approvals,
		asks:          opts.Asks,
		capsChanged:   opts.CapsChanged,
		signIns:       opts.SignIns,
		autostart:     opts.Autostart,
		autostartCmd:  opts.AutostartCommand,
		tokens:        opts.Tokens,
		journalTo:     opts.Journal,
		quit:          opts.Quit,
		mcpURL:        strings.TrimSuffix(opts.MCPURL, "/"),
		log:           opts.Logger,
		version:       opts.Version,
		home:          opts.Home,
		started:       opts.Started,
		actionTimeout: opts.ActionTimeout,
		keepAlive:     opts.KeepAlive,
		mux:           &routeMux{ServeMux: http.NewServeMux()},
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	var err error
	if s.try, err = newTryCredential(); err != nil {
		return nil, err
	}
	if s.started.IsZero() {
		s.started = time.Now()
	}
	if s.actionTimeout <= 0 {
		s.actionTimeout = DefaultActionTimeout
	}
	if s.keepAlive <= 0 {
		s.keepAlive = DefaultKeepAlive
	}
	sessionsFile := ""
	if opts.Home != "" {
		sessionsFile = filepath.Join(opts.Home, DashboardSessionsFile)
	}
	s.dash = newDashSessions(opts.Tokens, sessionsFile, s.log)
	s.open = &openRequests{tokens: opts.Tokens, revoked: func(id string) {
		s.dash.endToken(id)
		if opts.Revoked != nil {
			opts.Revoked(id)
		}
	}}
	s.routes()
	s.handler = s.secure(http.HandlerFunc(s.route), true)
	return s, nil
}

func (s *Server) routes() {
	s.mux.Handle("GET /api/v1/status", handle(s.status, http.StatusOK))
	s.mux.Handle("POST /api/v1/quit", handle(s.quitDaemon, http.StatusAccepted))
	s.mux.Handle("GET /api/v1/servers", handle(s.listServers, http.StatusOK))
	s.mux.Handle("POST /api/v1/servers", handle(s.addServer, http.StatusCreated))
	s.mux.Handle("POST /api/v1/remotes", handle(s.addRemote, http.StatusCreated))
	s.mux.Handle("GET /api/v1/servers/{name}", handle(s.getServer, http.StatusOK))
	s.mux.Handle("PUT /api/v1/servers/{name}", handle(s.updateServer, http.StatusOK))
	s.mux.Handle("DELETE /api/v1/servers/{name}", handle(s.removeServer, http.StatusNoContent))
	s.mux.Handle("POST /api/v1/servers/{name}/start", handle(s.startServer, http.StatusOK))
	s.mux.Handle("POST /api/v1/servers/{name}/stop", handle(s.stopServer, http.StatusOK))
	s.mux.Handle("POST /api/v1/servers/{name}/restart", handle(s.restartServer, http.StatusOK))
	s.mux.HandleFunc("GET /api/v1/servers/{name}/logs", s.logs)
	s.mux.HandleFunc("GET /api/v1/events", s.events)
	s.mux.Handle("POST /api/v1/login-codes", handle(s.newLoginCode, http.StatusCreated))
	s.historyRoutes()
	s.clientRoutes()
	s.tokenRoutes()
	s.installRoutes()
	s.settingsRoutes()
	s.profileRoutes()
	s.approvalRoutes()
	s.askRoutes()
	s.signInRoutes()
	s.tryRoutes()
}

// Close cancels the installs in progress and waits until they have rolled
// back. Call it before stopping the supervisor.
func (s *Server) Close() {
	s.installs.close()
}

// ServeHTTP serves the API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.handler.ServeHTTP(w, r)
}

// route dispatches to the mux, turning its plain-text 404 and 405 answers
// into JSON errors.
func (s *Server) route(w http.ResponseWriter, r *http.Request) {
	h, pattern := s.mux.Handler(r)
	if pattern != "" {
		r.Body = http.MaxBytesReader(w, r.Body, MaxBodyBytes)
		s.mux.ServeHTTP(w, r) // sets the path values
		return
	}
	// No route: let the mux decide between 404 and 405 (it sets Allow),
	// and answer in JSON.
	cw := &captureStatus{header: w.Header()}
	h.ServeHTTP(cw, r)
	switch cw.status {
	case http.StatusMethodNotAllowed:
		writeError(w, cw.status, "method "+r.Method+" is not allowed for "+r.URL.Path)
	default:
		writeError(w, http.StatusNotFound, "no such endpoint: "+r.Method+" "+r.URL.Path)
	}
}

// captureStatus is a ResponseWriter that keeps the status and discards the
// body; headers go to the real writer's header map.
type captureStatus struct {
	header http.Header
	status int
}

func (c *captureStatus) Header() http.Header { return c.header }
func (c *captureStatus) WriteHeader(code int) {
	if c.status == 0 {
		c.status = code
	}
}
func (c *captureStatus) Write(b []byte) (int, error) {
	c.WriteHeader(http.StatusOK)
	return len(b), nil
}
