package tray

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/app/api/client"
	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/autostart"
)

// Defaults of Options.
const (
	DefaultCapacity     = 12
	DefaultPollInterval = 3 * time.Second
	// DefaultWindowStop bounds waiting for the window to close on Quit.
	DefaultWindowStop = 5 * time.Second
	// minRefresh spaces snapshot reads: events come in bursts (a sample
	// per server every 2 s, a call per tool call).
	minRefresh = 500 * time.Millisecond
	// callsRefresh redraws now and then even without events, so that
	// "calls last hour" forgets calls older than an hour.
	callsRefresh = time.Minute
	// requestTimeout bounds one snapshot read.
	requestTimeout = 5 * time.Second
	// actionTimeout bounds a start, stop or restart from the menu.
	actionTimeout = 3 * time.Minute
)

// Options configure an App.
type Options struct {
	// Client calls the daemon's API. Required.
	Client *client.Client
	// Endpoint is the MCP endpoint URL that "Copy endpoint" copies.
	Endpoint string
	// Windows opens and closes the dashboard window process. Required.
	Windows *Windows
	// Autostart is the start-at-login entry; nil hides nothing but makes
	// the toggle report an error.
	Autostart autostart.Entry
	// AutostartCommand is what the entry runs at login.
	AutostartCommand []string
	// Clipboard copies text; nil makes "Copy endpoint" report an error.
	Clipboard func(string) error
	// Notify shows a desktop notification; nil shows none.
	Notify func(title, message string) error
	// OpenURL opens a remote server's sign-in link in the browser when the
	// daemon could not (its answer says so); nil opens the server's page
	// in the dashboard instead, which shows the link.
	OpenURL func(link string) error
	// Logger receives what happens; nil discards.
	Logger *slog.Logger
	// Capacity is how many server submenus the menu has
	// (DefaultCapacity when 0); more servers get an "N more…" item.
	Capacity int
	// PollInterval is how often the menu is refreshed when the daemon has
	// no event stream (DefaultPollInterval when 0).
	PollInterval time.Duration
	// LogsPath is the dashboard page of a server's logs (default
	// "/#/servers/NAME").
	LogsPath func(server string) string
}

// An App is the tray's logic: it keeps the menu in step with the daemon
// and carries out clicks. It does not know which tray library draws it.
type App struct {
	o   Options
	log *slog.Logger

	mu     sync.Mutex
	paused []string          // servers Pause all stopped
	states map[string]string // last seen state per server, for notifications
	auth   map[string]string // last seen sign-in state per remote server, for notifications
	seen   bool              // states holds a snapshot
}

// NewApp checks opts and returns the App.
func NewApp(opts Options) (*App, error) {
	switch {
	case opts.Client == nil:
		return nil, errors.New("tray: Options.Client is required")
	case opts.Windows == nil:
		return nil, errors.New("tray: Options.Windows is required")
	}
	if opts.Capacity <= 0 {
		opts.Capacity = DefaultCapacity
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = DefaultPollInterval
	}
	if opts.LogsPath == nil {
		// The dashboard routes by hash; a server's page shows its live logs.
		opts.LogsPath = func(server string) string { return "/#/servers/" + url.PathEscape(server) }
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &App{o: opts, log: log, states: map[string]string{}, auth: map[string]string{}}, nil
}

// Capacity is the number of server submenus.
func (a *App) Capacity() int { return a.o.Capacity }

// Snapshot reads the daemon's state for the menu.
func (a *App) Snapshot(ctx context.Context) Snapshot {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	s := Snapshot{Endpoint: a.o.Endpoint}
	a.mu.Lock()
	s.Paused = slices.Clone(a.paused)
	a.mu.Unlock()
	if a.o.Autostart != nil {
		on, err := a.o.Autostart.Enabled()
		if err != nil {
			a.log.Warn("tray: reading the autostart entry", "err", err)
		}
		s.Autostart = on
	}
	var err error
	if s.Status, err = a.o.Client.Status(ctx); err != nil {
		s.Err = err
		return s
	}
	if s.Servers, err = a.o.Client.Servers(ctx); err != nil {
		s.Err = err
		return s
	}
	if s.Asks, err = a.o.Client.Asks(ctx); err != nil {
		// An older daemon has no board of asks: the menu goes without.
		a.log.Debug("tray: reading pending asks", "err", err)
		s.Asks = nil
	}
	s.Now = time.Now()
	if s.Held, err = a.o.Client.HeldTools(ctx, ""); err != nil {
		// An older daemon has no approvals: the menu goes without.
		a.log.Debug("tray: reading held tools", "err", err)
		s.Held = nil
	}
	stats, err := a.o.Client.Stats(ctx, "1h", "server")
	if err != nil {
		// Calls are a detail: the menu still shows the servers.
		a.log.Warn("tray: reading call counts", "err", err)
	}
	s.Calls = make(map[string]wire.Stat, len(stats))
	for _, st := range stats {
		s.Calls[st.Server] = st
	}
	return s
}

// observe notes the states of s and notifies of servers that entered the
// failed state (failing, or down after a failed start) since the last
// snapshot (or are failed at the first), leading with the cause.
func (a *App) observe(s Snapshot) {
	if s.Err != nil {
		return
	}
	a.mu.Lock()
	var failed []wire.ServerView
	next := make(map[string]string, len(s.Servers))
	for _, v := range s.Servers {
		shown := displayState(v)
		next[v.Name] = shown
		// A remote server failing for want of a sign-in is the sign-in's
		// notification (observeAuth), which says what to do.
		if shown == stateFailed && a.states[v.Name] != shown && !needsSignIn(v) {
			failed = append(failed, v)
		}
	}
	a.states, a.seen = next, true
	signIns := a.observeAuth(s.Servers)
	a.mu.Unlock()
	for _, n := range signIns {
		a.notify(n[0], n[1])
	}
	for _, v := range failed {
		msg := failureCause(v.LastError)
		if msg == "" {
			msg = "It crashed too often and stays down until started again."
		}
		a.notify("Switchboard: "+v.Name+" failed", msg)
	}
}

// observeAuth notes the sign-in states of servers (a.mu held) and returns
// the notifications of the remote servers that turned to needing a
// sign-in since the last snapshot (or need one at the first): one per
// transition, not one per event, since the daemon says "needs sign-in" on
// every refused call.
func (a *App) observeAuth(servers []wire.ServerView) [][2]string {
	var out [][2]string
	next := make(map[string]string, len(a.auth))
	for _, v := range servers {
		if v.Auth == nil || !v.Enabled {
			continue
		}
		st := v.Auth.State
		next[v.Name] = st
		prev := a.auth[v.Name]
		if st != wire.AuthNeedsSignIn || prev == st {
			continue
		}
		how := "Choose “Sign in to " + v.Name + "…” in the Switchboard menu."
		if prev == wire.AuthSigningIn && v.Auth.Error != "" {
			out = append(out, [2]string{"Switchboard: signing in to " + v.Name + " failed", v.Auth.Error + ". " + how})
			continue
		}
		out = append(out, [2]string{"Switchboard: " + v.Name + " needs you to sign in", signInReason(v.Auth.Reason, v.Auth.Scope) + ". " + how})
	}
	a.auth = next
	return out
}

func (a *App) notify(title, msg string) {
	if a.o.Notify == nil {
		return
	}
	if err := a.o.Notify(title, msg); err != nil {
		a.log.Debug("tray: no desktop notification", "title", title, "err", err)
	}
}

// Run keeps r's menu in step with the daemon and carries out clicks until
// ctx ends or Quit is chosen; after Quit it closes the window processes
// (within DefaultWindowStop) before returning ErrQuit.
func (a *App) Run(ctx context.Context, r *Renderer) error {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	waitClicks := func() {}
	// Stop every goroutine of Run before returning: cancel first, then wait.
	defer func() {
		cancel()
		waitClicks()
		wg.Wait()
	}()

	refresh := make(chan struct{}, 1)
	poke := func() {
		select {
		case refresh <- struct{}{}:
		default:
		}
	}
	clicks := make(chan Action)
	waitClicks = r.Clicks(ctx, clicks)
	wg.Go(func() { a.followEvents(ctx, poke) })

	draw := func() {
		s := a.Snapshot(ctx)
		a.observe(s)
		r.Apply(Build(s, r.Capacity()))
	}
	draw()
	last := time.Now()
	var later <-chan time.Time
	tick := time.NewTicker(callsRefresh)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			a.closeWindows()
			return ctx.Err()
		case <-refresh:
			if wait := minRefresh - time.Since(last); wait > 0 {
				if later == nil {
					later = time.After(wait)
				}
				continue
			}
			draw()
			last = time.Now()
		case <-later:
			later = nil
			draw()
			last = time.Now()
		case <-tick.C:
			draw()
			last = time.Now()
		case act := <-clicks:
			if act.Kind == ActQuit {
				a.log.Info("tray: quit chosen")
				a.closeWindows()
				return ErrQuit
			}
			wg.Go(func() {
				if err := a.Do(ctx, act); err != nil && ctx.Err() == nil {
					a.log.Warn("tray: action failed", "action", act.Kind, "server", act.Server, "err", err)
					a.notify("Switchboard: "+act.Kind.String()+" failed", err.Error())
				}
				poke()
			})
		}
	}
}

// ErrQuit is returned by Run when the user chose Quit.
var ErrQuit = errors.New("quit chosen in the tray menu")

func (a *App) closeWindows() {
	ctx, cancel := context.WithTimeout(context.Background(), DefaultWindowStop)
	defer cancel()
	if err := a.o.Windows.Close(ctx); err != nil {
		a.log.Warn("tray: closing the window", "err", err)
	}
}

// Do carries out one action (not Quit, which Run handles).
func (a *App) Do(ctx context.Context, act Action) error {
	c := a.o.Client
	switch act.Kind {
	case ActCopyEndpoint:
		if a.o.Clipboard == nil {
			return errors.New("no clipboard in this build")
		}
		return a.o.Clipboard(a.o.Endpoint)
	case ActStart, ActStop, ActRestart:
		ctx, cancel := context.WithTimeout(ctx, actionTimeout)
		defer cancel()
		call := map[ActionKind]func(*client.Client, context.Context, string) (wire.ServerView, error){
			ActStart: (*client.Client).Start, ActStop: (*client.Client).Stop, ActRestart: (*client.Client).Restart}[act.Kind]
		if _, err := call(c, ctx, act.Server); err != nil {
			return fmt.Errorf("%s %s: %w", act.Kind, act.Server, err)
		}
		if act.Kind != ActStop {
			a.unpause(act.Server)
		}
		return nil
	case ActSignIn:
		return a.signIn(ctx, act.Server)
	case ActAllowAsk, ActDenyAsk:
		ctx, cancel := context.WithTimeout(ctx, requestTimeout)
		defer cancel()
		d, err := c.AnswerAsk(ctx, act.Ask, act.Kind == ActAllowAsk)
		if client.IsNotFound(err) {
			return fmt.Errorf("the call of %s no longer waits: it timed out or was answered elsewhere", act.Server)
		} else if err != nil {
			return fmt.Errorf("answering the call of %s: %w", act.Server, err)
		}
		a.log.Info("tray: pending ask answered", "ask", d.ID, "allowed", d.Allowed)
		return nil
	case ActShowLogs, ActReviewHeld: // a server's page shows its logs and its held tools
		return a.o.Windows.Open(a.o.LogsPath(act.Server))
	case ActOpen:
		return a.o.Windows.Open("")
	case ActPauseAll:
		return a.pauseAll(ctx)
	case ActResumeAll:
		return a.resumeAll(ctx)
	case ActToggleAutostart:
		return a.toggleAutostart()
	case ActQuit:
		return errors.New("quit is handled by Run")
	}
	return fmt.Errorf("unknown action %v", act.Kind)
}

// signIn starts a remote server's sign-in. The daemon opens the browser
// where it can; when it could not, the tray opens the link itself, or the
// server's page, which shows it.
func (a *App) signIn(ctx context.Context, name string) error {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	res, err := a.o.Client.Login(ctx, name)
	if err != nil {
		return fmt.Errorf("sign in to %s: %w", name, err)
	}
	a.log.Info("tray: sign-in started", "server", name, "browser_opened", res.BrowserOpened)
	if res.BrowserOpened {
		return nil
	}
	if a.o.OpenURL != nil && res.SignInURL != "" {
		err := a.o.OpenURL(res.SignInURL)
		if err == nil {
			return nil
		}
		a.log.Warn("tray: opening the sign-in link", "server", name, "err", err)
	}
	return a.o.Windows.Open(a.o.LogsPath(name))
}

// pauseAll stops every enabled server that is not stopped, and remembers
// them for Resume all.
func (a *App) pauseAll(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, actionTimeout)
	defer cancel()
	list, err := a.o.Client.Servers(ctx)
	if err != nil {
		return fmt.Errorf("pause all: %w", err)
	}
	var errs []error
	for _, v := range list {
		if !stoppable(v) {
			continue
		}
		if _, err := a.o.Client.Stop(ctx, v.Name); err != nil {
			errs = append(errs, fmt.Errorf("stopping %s: %w", v.Name, err))
			continue
		}
		a.mu.Lock()
		if !slices.Contains(a.paused, v.Name) {
			a.paused = append(a.paused, v.Name)
		}
		a.mu.Unlock()
	}
	return errors.Join(errs...)
}

// resumeAll starts the servers Pause all stopped.
func (a *App) resumeAll(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, actionTimeout)
	defer cancel()
	a.mu.Lock()
	names := slices.Clone(a.paused)
	a.mu.Unlock()
	var errs []error
	for _, n := range names {
		if _, err := a.o.Client.Start(ctx, n); err != nil && !client.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("starting %s: %w", n, err))
			continue
		}
		a.unpause(n)
	}
	return errors.Join(errs...)
}

func (a *App) unpause(name string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.paused = slices.DeleteFunc(a.paused, func(n string) bool { return n == name })
}

func (a *App) toggleAutostart() error {
	if a.o.Autostart == nil {
		return errors.New("start at login is not available on this system")
	}
	on, err := a.o.Autostart.Enabled()
	if err != nil {
		return err
	}
	if on {
		return a.o.Autostart.Disable()
	}
	return a.o.Autostart.Enable(a.o.AutostartCommand)
}

// followEvents pokes a redraw on every event of the daemon's stream, and
// notifies of finished installs. Without a stream it polls.
func (a *App) followEvents(ctx context.Context, poke func()) {
	var lastID uint64
	backoff := time.Second
	for ctx.Err() == nil {
		started := time.Now()
		var err error
		lastID, err = followEvents(ctx, a.o.Client, lastID, func(ev wire.Event) {
			switch ev.Type {
			case wire.TypeInstall:
				a.installEvent(ev.Data)
			case wire.TypeApproval:
				a.approvalEvent(ev.Data)
			case wire.TypeAsk:
				a.askEvent(ev.Data)
			}
			poke()
		})
		if ctx.Err() != nil {
			return
		}
		if errors.Is(err, errNoEvents) {
			a.log.Info("tray: the daemon has no event stream; polling", "every", a.o.PollInterval)
			a.poll(ctx, poke)
			return
		}
		a.log.Debug("tray: event stream ended; reconnecting", "err", err, "in", backoff)
		poke() // the stream broke: what it would have said is unknown
		if time.Since(started) > 30*time.Second {
			backoff = time.Second
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 10*time.Second)
	}
}

func (a *App) poll(ctx context.Context, poke func()) {
	t := time.NewTicker(a.o.PollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			poke()
		}
	}
}

// approvalEvent notifies of a tool held until the user approves it: a
// server changed what a tool says or takes, or added one.
func (a *App) approvalEvent(data json.RawMessage) {
	var ev wire.ApprovalEvent
	if err := json.Unmarshal(data, &ev); err != nil {
		a.log.Debug("tray: unreadable approval event", "err", err)
		return
	}
	if ev.State != wire.ApprovalHeld {
		return
	}
	a.notify("Switchboard: a tool of "+ev.Server+" is held", ev.Message+" (or review it in the dashboard)")
}

// askEvent notifies of a call that waits for the user's yes: the menu
// has Allow and Deny for it.
func (a *App) askEvent(data json.RawMessage) {
	var ev wire.AskEvent
	if err := json.Unmarshal(data, &ev); err != nil {
		a.log.Debug("tray: unreadable ask event", "err", err)
		return
	}
	if ev.State != wire.AskPending {
		return
	}
	a.notify("Switchboard: "+ev.Ask.Tool+" of "+ev.Ask.Server+" waits for your yes",
		"A destructive tool. Allow or deny it in the Switchboard menu ("+timeLeft(ev.Ask.Deadline, time.Now())+"), or in the dashboard.")
}

func (a *App) installEvent(data json.RawMessage) {
	var ev InstallEvent
	if err := json.Unmarshal(data, &ev); err != nil {
		a.log.Debug("tray: unreadable install event", "err", err)
		return
	}
	if !ev.Done {
		return
	}
	if ev.Error != "" {
		a.notify("Switchboard: installing "+ev.Server+" failed", ev.Error)
		return
	}
	msg := "It is ready."
	var tools []json.RawMessage
	if json.Unmarshal(ev.Tools, &tools) == nil && len(tools) > 0 {
		msg = fmt.Sprintf("It is ready, with %d tools.", len(tools))
	}
	a.notify("Switchboard: "+ev.Server+" is installed", msg)
}
