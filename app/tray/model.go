// Package tray is Switchboard's tray icon and menu: the app as users know
// it, beside the daemon that runs in the same process.
//
// The menu is a pure function of a state snapshot (Build), drawn onto a
// fixed pool of menu items (Renderer) because systray cannot remove items:
// items are retitled, shown and hidden, and only when something changed, so
// a rebuild neither flickers nor leaks. Clicks become Actions, which the
// App turns into calls of the daemon's API. Only systray.go imports
// getlantern/systray, behind the "tray" build tag; without it Run returns
// ErrNotInBuild, and everything else is tested without a display.
package tray

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/app/api/wire"
)

// ErrNotInBuild is returned by Run in a build without the tray.
var ErrNotInBuild = errors.New("the tray is not in this build; build with -tags tray")

// A Snapshot is what the menu shows: the daemon's state at one moment.
type Snapshot struct {
	// Err is why the daemon could not be read; the rest is then stale or
	// empty.
	Err     error
	Status  wire.Status
	Servers []wire.ServerView
	// Calls are the calls of the last hour per server.
	Calls map[string]wire.Stat
	// Endpoint is the MCP endpoint clients connect to.
	Endpoint string
	// Autostart says whether Switchboard starts at login.
	Autostart bool
	// Paused are the servers Pause all stopped, which Resume all starts.
	Paused []string
	// Held are the tools held from clients until the user approves them
	// (new or changed since approved; see app/approvals).
	Held []wire.HeldTool
	// Asks are the calls of destructive tools waiting for the user's yes,
	// oldest first.
	Asks []wire.Ask
	// Now is when the snapshot was read (the asks' time left); zero: now.
	Now time.Time
}

// Health is the overall state the icon shows.
type Health int

const (
	Well     Health = iota // every enabled server runs or is idle
	Starting               // something is starting or stopping
	Failing                // a server is failing, the config is broken, or the daemon is unreachable
)

func (h Health) String() string {
	switch h {
	case Well:
		return "well"
	case Starting:
		return "starting"
	case Failing:
		return "failing"
	}
	return fmt.Sprintf("Health(%d)", int(h))
}

// ActionKind is what a click asks for.
type ActionKind int

const (
	ActNone ActionKind = iota
	ActCopyEndpoint
	ActStart
	ActStop
	ActRestart
	ActShowLogs
	ActOpen
	ActPauseAll
	ActResumeAll
	ActToggleAutostart
	ActReviewHeld // open the page of Server, where its held tools are shown with their diff
	ActSignIn     // start the sign-in of the remote server Server (POST .../login) and open its link
	ActAllowAsk   // allow the pending ask Ask (POST /api/v1/asks/{id})
	ActDenyAsk    // deny the pending ask Ask
	ActQuit
)

var actionNames = map[ActionKind]string{ActNone: "none", ActCopyEndpoint: "copy-endpoint", ActStart: "start",
	ActStop: "stop", ActRestart: "restart", ActShowLogs: "show-logs", ActOpen: "open", ActPauseAll: "pause-all",
	ActResumeAll: "resume-all", ActToggleAutostart: "toggle-autostart", ActReviewHeld: "review-held", ActSignIn: "sign-in",
	ActAllowAsk: "allow-ask", ActDenyAsk: "deny-ask", ActQuit: "quit"}

func (k ActionKind) String() string {
	if s, ok := actionNames[k]; ok {
		return s
	}
	return fmt.Sprintf("ActionKind(%d)", int(k))
}

// An Action is a click: what to do, and to which server (or pending ask).
type Action struct {
	Kind   ActionKind
	Server string
	Ask    string // the id of the pending ask of ActAllowAsk and ActDenyAsk
}

// An Item is how one menu item looks, and what clicking it does.
type Item struct {
	Title   string
	Tooltip string
	Hidden  bool
	// Disabled items are greyed out; information rows are disabled.
	Disabled bool
	Checked  bool
	Action   Action
}

// ServerMenu is one server's submenu.
type ServerMenu struct {
	Item                 // the submenu's own entry: name and state
	State, Calls, Usage  Item
	Start, Stop, Restart Item
	Logs                 Item
	// SignIn starts a remote server's sign-in; hidden unless it needs one.
	SignIn Item
}

// Menu is the whole tray: icon, tooltip and items.
type Menu struct {
	Health  Health
	Tooltip string
	// Header is the first line, information only: "3 of 4 servers
	// running", so the menu says the state before it is read item by item.
	Header   Item
	Endpoint Item
	// Held says that tools are held until approved, and opens the page
	// where they are reviewed; hidden when none are.
	Held Item
	// SignIn starts the sign-in of the first remote server (by name) that
	// needs one, the others named in its tooltip (each server's submenu
	// has its own); hidden when none needs one.
	SignIn Item
	// Ask says that a call waits for the user's yes (the oldest, the
	// others counted), and AskAllow and AskDeny answer it; all three are
	// hidden when none waits.
	Ask, AskAllow, AskDeny Item
	// Servers has exactly the renderer's capacity of entries; those past
	// the server count are hidden.
	Servers   []ServerMenu
	Overflow  Item // "N more servers…" when there are more than the capacity
	Open      Item
	PauseAll  Item
	ResumeAll Item
	Autostart Item
	Quit      Item
}

// MaxTooltip bounds the tooltip: Windows cuts at 127 characters.
const MaxTooltip = 127

// Build makes the menu for a snapshot, with capacity server submenus.
func Build(s Snapshot, capacity int) Menu {
	m := Menu{
		Endpoint: Item{Title: "Copy endpoint: " + s.Endpoint, Tooltip: "Copy the MCP endpoint URL for a client's config",
			Action: Action{Kind: ActCopyEndpoint}},
		Open:      Item{Title: "Open Switchboard", Action: Action{Kind: ActOpen}},
		PauseAll:  Item{Title: "Pause all servers", Action: Action{Kind: ActPauseAll}, Disabled: true},
		ResumeAll: Item{Title: "Resume all servers", Action: Action{Kind: ActResumeAll}, Disabled: true},
		Autostart: Item{Title: "Start at login", Checked: s.Autostart, Action: Action{Kind: ActToggleAutostart}},
		Quit:      Item{Title: "Quit Switchboard", Tooltip: "Stop every server and quit", Action: Action{Kind: ActQuit}},
	}
	if s.Endpoint == "" {
		m.Endpoint.Title, m.Endpoint.Disabled = "Endpoint: not serving", true
	}
	m.Held = heldItem(s.Held)
	m.Ask, m.AskAllow, m.AskDeny = askItems(s.Asks, s.Now)
	servers := append([]wire.ServerView(nil), s.Servers...)
	sort.Slice(servers, func(i, j int) bool { return servers[i].Name < servers[j].Name })
	m.SignIn = signInItem(servers)

	shown := servers
	if len(servers) > capacity {
		shown = servers[:capacity]
		m.Overflow = Item{Title: fmt.Sprintf("%d more servers in Switchboard…", len(servers)-capacity),
			Action: Action{Kind: ActOpen}}
	} else {
		m.Overflow = Item{Hidden: true}
	}
	m.Servers = make([]ServerMenu, capacity)
	for i := range m.Servers {
		if i < len(shown) {
			v := shown[i]
			m.Servers[i] = serverMenu(v, s.Calls[v.Name])
		} else {
			m.Servers[i] = hiddenServer()
		}
	}

	paused := make(map[string]bool, len(s.Paused))
	for _, n := range s.Paused {
		paused[n] = true
	}
	var running, starting, failing []string
	for _, v := range servers {
		switch v.State {
		case wire.StateRunning:
			running = append(running, v.Name)
		case wire.StateStarting, wire.StateStopping:
			starting = append(starting, v.Name)
		case wire.StateFailing, wire.StateBackoff:
			failing = append(failing, v.Name)
		default:
			if displayState(v) == stateFailed {
				failing = append(failing, v.Name)
			}
		}
		if stoppable(v) {
			m.PauseAll.Disabled = false
		}
		if paused[v.Name] {
			m.ResumeAll.Disabled = false
		}
	}
	if len(s.Paused) > 0 {
		m.ResumeAll.Title = fmt.Sprintf("Resume all servers (%d paused)", len(s.Paused))
	}

	switch {
	case s.Err != nil:
		m.Health = Failing
		m.Tooltip = "Switchboard: cannot reach the daemon: " + s.Err.Error()
		m.PauseAll.Disabled, m.ResumeAll.Disabled = true, true
	case len(failing) > 0 || s.Status.ConfigProblem != "":
		m.Health = Failing
	case len(starting) > 0:
		m.Health = Starting
	default:
		m.Health = Well
	}
	m.Header = Item{Title: header(s.Err, len(servers), len(running)), Disabled: true}
	if s.Err == nil {
		m.Tooltip = tooltip(len(servers), running, starting, failing, s.Status.ConfigProblem)
		if n := len(s.Asks); n > 0 {
			m.Tooltip += fmt.Sprintf("; %d call%s wait%s for your yes", n, plural(n), map[bool]string{true: "s"}[n == 1])
		}
		if n := len(s.Held); n > 0 {
			m.Tooltip += fmt.Sprintf("; %d held tool%s to review", n, plural(n))
		}
		if need := needSignIn(servers); len(need) > 0 {
			m.Tooltip += "; sign in to " + strings.Join(need, ", ")
		}
	}
	m.Tooltip = truncate(m.Tooltip, MaxTooltip)
	return m
}

// heldItem is the menu's word on held tools: how many, which (in the
// tooltip), and a click to review them on the first one's server page.
func heldItem(held []wire.HeldTool) Item {
	if len(held) == 0 {
		return Item{Hidden: true}
	}
	lines := make([]string, 0, len(held))
	for _, h := range held {
		lines = append(lines, h.Server+" · "+h.Tool+": "+h.Reason)
	}
	return Item{Title: fmt.Sprintf("⚠ %d tool%s held until you approve…", len(held), plural(len(held))),
		Tooltip: truncate(strings.Join(lines, "\n"), 500), Action: Action{Kind: ActReviewHeld, Server: held[0].Server}}
}

// askItems are the menu's word on the calls waiting for the user's yes:
// the oldest one (server, tool, time left; its redacted arguments in the
// tooltip), with Allow and Deny for it; the others are counted, and come
// up once it is answered.
func askItems(asks []wire.Ask, now time.Time) (ask, allow, deny Item) {
	if len(asks) == 0 {
		h := Item{Hidden: true}
		return h, h, h
	}
	if now.IsZero() {
		now = time.Now()
	}
	a := asks[0]
	title := fmt.Sprintf("⚠ %s of %s waits for your yes (%s)", a.Tool, a.Server, timeLeft(a.Deadline, now))
	if len(asks) > 1 {
		title += fmt.Sprintf(", %d more", len(asks)-1)
	}
	tip := "A destructive tool: the call runs only if you allow it"
	if a.Client != "" {
		tip += "\nFrom: " + a.Client
	}
	if len(a.Arguments) > 0 {
		tip += "\nArguments: " + truncate(string(a.Arguments), 300)
	}
	ask = Item{Title: title, Tooltip: tip, Action: Action{Kind: ActOpen}}
	allow = Item{Title: "    Allow " + a.Tool, Tooltip: "Let this call of " + a.Tool + " run", Action: Action{Kind: ActAllowAsk, Server: a.Server, Ask: a.ID}}
	deny = Item{Title: "    Deny " + a.Tool, Tooltip: "Refuse this call of " + a.Tool, Action: Action{Kind: ActDenyAsk, Server: a.Server, Ask: a.ID}}
	return ask, allow, deny
}

// timeLeft says how long until deadline: "1m 30s left", "9s left".
func timeLeft(deadline, now time.Time) string {
	d := deadline.Sub(now).Round(time.Second)
	switch {
	case deadline.IsZero():
		return "no deadline"
	case d <= 0:
		return "timing out"
	case d >= time.Minute:
		return fmt.Sprintf("%dm %02ds left", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%ds left", int(d.Seconds()))
}

// needsSignIn says a remote server waits for the user to sign in: it
// needs one, or one is under way (the browser may not have opened).
func needsSignIn(v wire.ServerView) bool {
	return v.Enabled && v.Auth != nil && v.Auth.State != wire.AuthSignedIn
}

// needSignIn names the servers that need a sign-in, in order.
func needSignIn(servers []wire.ServerView) []string {
	var names []string
	for _, v := range servers {
		if needsSignIn(v) {
			names = append(names, v.Name)
		}
	}
	return names
}

// signInItem is the menu's top-level "Sign in to NAME…" for the first
// server that needs a sign-in (servers are sorted by name).
func signInItem(servers []wire.ServerView) Item {
	need := needSignIn(servers)
	if len(need) == 0 {
		return Item{Hidden: true}
	}
	var first wire.ServerView
	for _, v := range servers {
		if v.Name == need[0] {
			first = v
		}
	}
	it := signInAction(first)
	if len(need) > 1 {
		it.Tooltip += fmt.Sprintf("\n%d more need a sign-in: %s (each in its submenu)", len(need)-1, strings.Join(need[1:], ", "))
	}
	return it
}

// signInAction is the "Sign in to NAME…" item of a server that needs a
// sign-in, its tooltip saying why.
func signInAction(v wire.ServerView) Item {
	it := Item{Title: "Sign in to " + v.Name + "…", Action: Action{Kind: ActSignIn, Server: v.Name}}
	a := v.Auth
	switch {
	case a.State == wire.AuthSigningIn:
		it.Title = "Sign in to " + v.Name + "… (waiting for the browser)"
		it.Tooltip = "A sign-in is under way: finish it in the browser, or click to start it again"
	case a.Error != "":
		it.Tooltip = "The last sign-in failed: " + a.Error
	default:
		it.Tooltip = signInReason(a.Reason, a.Scope)
	}
	return it
}

// signInReason says why a server needs a sign-in, as the dashboard does.
func signInReason(reason, scope string) string {
	switch reason {
	case "first use":
		return "First use: Switchboard has not signed in to it yet"
	case "token rejected":
		return "The server no longer accepts the last sign-in (it expired or was revoked)"
	case "refresh refused":
		return "The sign-in expired and the server refused to renew it"
	case "scope needed":
		if scope != "" {
			return "The server asks for more access than the last sign-in gave (" + scope + ")"
		}
		return "The server asks for more access than the last sign-in gave"
	case "signed out":
		return "You signed out"
	case "":
		return "Its calls fail until you sign in"
	}
	return reason
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// header is the menu's first line: how many servers run of how many.
func header(err error, total, running int) string {
	switch {
	case err != nil:
		return "Daemon unreachable"
	case total == 0:
		return "No servers yet"
	case total == 1:
		if running == 1 {
			return "1 server, running"
		}
		return "1 server, not running"
	}
	return fmt.Sprintf("%d of %d servers running", running, total)
}

func tooltip(total int, running, starting, failing []string, configProblem string) string {
	if total == 0 && configProblem == "" {
		return "Switchboard: no servers yet"
	}
	parts := []string{fmt.Sprintf("%d running", len(running))}
	if len(starting) > 0 {
		parts = append(parts, fmt.Sprintf("%d starting", len(starting)))
	}
	if len(failing) > 0 {
		parts = append(parts, fmt.Sprintf("%d failing (%s)", len(failing), strings.Join(failing, ", ")))
	}
	t := fmt.Sprintf("Switchboard: %d servers, %s", total, strings.Join(parts, ", "))
	if configProblem != "" {
		t += "; config.json has an error"
	}
	return t
}

func hiddenServer() ServerMenu {
	h := Item{Hidden: true}
	return ServerMenu{Item: h, State: h, Calls: h, Usage: h, Start: h, Stop: h, Restart: h, Logs: h, SignIn: h}
}

// stateMarks make the state readable without colour (menus have none).
var stateMarks = map[string]string{
	wire.StateRunning:  "●",
	wire.StateStarting: "◐",
	wire.StateStopping: "◐",
	wire.StateBackoff:  "▲",
	stateFailed:        "✕",
	wire.StateStopped:  "○",
	wire.StateDisabled: "–",
}

// stateFailed is what the menu shows for a server down after a failure:
// failing, or stopped with its last error and no process (a start that
// failed) — never the "stopped" of a server the user stopped (stopping
// clears the last error). The rule is wire.ServerView.ShownState, the
// CLI's too.
const stateFailed = wire.StateFailed

func displayState(v wire.ServerView) string { return v.ShownState() }

var (
	execNotFound = regexp.MustCompile(`(?i)command not found: ([^\s(]+)|exec: "([^"]+)": executable file not found|fork/exec ([^:]+): no such file or directory`)
	errNesting   = regexp.MustCompile(`^(server "[^"]*" (failed to start|is failing|crashed)[^:]*: )+`)
)

// failureCause puts the cause of a server's error first, in words
// ("Command not found: does-not-exist-mcp"), as the dashboard does.
func failureCause(err string) string {
	if m := execNotFound.FindStringSubmatch(err); m != nil {
		return "Command not found: " + m[1] + m[2] + m[3]
	}
	if c := strings.TrimPrefix(errNesting.ReplaceAllString(err, ""), "exec: "); c != "" {
		return c
	}
	return err
}

func serverMenu(v wire.ServerView, calls wire.Stat) ServerMenu {
	shown := displayState(v)
	mark := stateMarks[shown]
	if mark == "" {
		mark = "?"
	}
	sm := ServerMenu{
		Item: Item{Title: fmt.Sprintf("%s %s — %s", mark, v.Name, shown), Tooltip: v.LastError},
	}
	info := func(title string) Item { return Item{Title: title, Disabled: true} }

	state := "State: " + shown
	if shown == stateFailed && v.LastError != "" {
		state = "Failed: " + failureCause(v.LastError)
	}
	if len(v.Processes) > 0 {
		pids := make([]string, len(v.Processes))
		for i, p := range v.Processes {
			pids[i] = fmt.Sprint(p.PID)
		}
		state += " · pid " + strings.Join(pids, ", ")
	}
	if v.Restarts > 0 {
		state += fmt.Sprintf(" · %d restarts", v.Restarts)
	}
	sm.State = info(state)
	if v.LastError != "" {
		sm.State.Tooltip = "Last error: " + v.LastError
		if v.State == wire.StateBackoff {
			sm.State.Title = truncate(state+" — "+v.LastError, 90)
		}
	}

	switch {
	case calls.Count == 0:
		sm.Calls = info("Calls last hour: none")
	case calls.Errors == 0:
		sm.Calls = info(fmt.Sprintf("Calls last hour: %d", calls.Count))
	default:
		sm.Calls = info(fmt.Sprintf("Calls last hour: %d (%d failed)", calls.Count, calls.Errors))
	}
	if v.Usage != nil && len(v.Processes) > 0 {
		procs := "1 process"
		if v.Usage.Processes != 1 {
			procs = fmt.Sprintf("%d processes", v.Usage.Processes)
		}
		sm.Usage = info(fmt.Sprintf("CPU %.1f%% · RSS %s · %s", v.Usage.CPUPercent, FormatBytes(v.Usage.RSSBytes), procs))
	} else {
		sm.Usage = info("CPU/RSS: not running")
	}

	act := func(title string, kind ActionKind, enabled bool) Item {
		return Item{Title: title, Disabled: !enabled, Action: Action{Kind: kind, Server: v.Name}}
	}
	sm.Start = act("Start", ActStart, startable(v))
	sm.Stop = act("Stop", ActStop, stoppable(v))
	sm.Restart = act("Restart", ActRestart, v.Enabled && v.State != wire.StateStopping)
	sm.Logs = act("Show logs", ActShowLogs, true)
	sm.SignIn = Item{Hidden: true}
	if needsSignIn(v) {
		sm.SignIn = signInAction(v)
	}
	return sm
}

func startable(v wire.ServerView) bool {
	if !v.Enabled {
		return false
	}
	switch v.State {
	case wire.StateStopped, wire.StateFailing, wire.StateBackoff:
		return true
	}
	return false
}

func stoppable(v wire.ServerView) bool {
	if !v.Enabled {
		return false
	}
	switch v.State {
	case wire.StateRunning, wire.StateStarting, wire.StateBackoff, wire.StateFailing:
		return true
	}
	return false
}

// FormatBytes writes n bytes for people in binary units, as the dashboard
// does: 512 B, 34.5 MiB, 1.2 GiB.
func FormatBytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
