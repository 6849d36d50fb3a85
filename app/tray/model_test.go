package tray

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"image/png"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/switchboardhq/switchboard/app/api/client"
	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/supervisor/testmcp"
)

func TestMain(m *testing.M) {
	// The GUI test's tray runs this test binary as its MCP server.
	testmcp.RunIfRequested()
	goleak.VerifyTestMain(m)
}

func TestBuildFromSnapshot(t *testing.T) {
	failing := view("db", "failing")
	failing.LastError = "exited with status 1"
	failing.Restarts = 5
	snap := Snapshot{
		Endpoint: "http://127.0.0.1:7391/mcp",
		Servers:  []wire.ServerView{view("fs", "running"), failing, view("web", "starting"), view("old", wire.StateDisabled)},
		Calls:    map[string]wire.Stat{"fs": {Server: "fs", Count: 12, Errors: 1}},
	}
	m := Build(snap, 5)

	if m.Health != Failing {
		t.Errorf("Health = %v, want failing", m.Health)
	}
	if want := "Switchboard: 4 servers, 1 running, 1 starting, 1 failing (db)"; m.Tooltip != want {
		t.Errorf("Tooltip = %q, want %q", m.Tooltip, want)
	}
	if m.Endpoint.Title != "Copy endpoint: http://127.0.0.1:7391/mcp" || m.Endpoint.Action.Kind != ActCopyEndpoint {
		t.Errorf("Endpoint = %+v", m.Endpoint)
	}
	if len(m.Servers) != 5 {
		t.Fatalf("%d server menus, want the capacity 5", len(m.Servers))
	}
	// Sorted by name; the fifth slot is hidden.
	var titles []string
	for _, s := range m.Servers {
		if !s.Hidden {
			titles = append(titles, s.Title)
		}
	}
	want := []string{"✕ db — failed", "● fs — running", "– old — disabled", "◐ web — starting"}
	if !slices.Equal(titles, want) {
		t.Errorf("server titles = %q, want %q", titles, want)
	}
	if !m.Servers[4].Hidden || !m.Servers[4].Start.Hidden {
		t.Errorf("unused slot is not hidden: %+v", m.Servers[4])
	}

	db, fs, old := m.Servers[0], m.Servers[1], m.Servers[2]
	tests := []struct {
		name string
		got  Item
		want Item
	}{
		{"fs calls", fs.Calls, Item{Title: "Calls last hour: 12 (1 failed)", Disabled: true}},
		{"fs usage", fs.Usage, Item{Title: "CPU 1.5% · RSS 34.0 MiB · 2 processes", Disabled: true}},
		{"fs state", fs.State, Item{Title: "State: running · pid 4242", Disabled: true}},
		{"fs start", fs.Start, Item{Title: "Start", Disabled: true, Action: Action{Kind: ActStart, Server: "fs"}}},
		{"fs stop", fs.Stop, Item{Title: "Stop", Action: Action{Kind: ActStop, Server: "fs"}}},
		{"fs logs", fs.Logs, Item{Title: "Show logs", Action: Action{Kind: ActShowLogs, Server: "fs"}}},
		{"db calls", db.Calls, Item{Title: "Calls last hour: none", Disabled: true}},
		{"db usage", db.Usage, Item{Title: "CPU/RSS: not running", Disabled: true}},
		{"db state", db.State, Item{Title: "Failed: exited with status 1 · 5 restarts", Tooltip: "Last error: exited with status 1", Disabled: true}},
		{"db start", db.Start, Item{Title: "Start", Action: Action{Kind: ActStart, Server: "db"}}},
		{"db restart", db.Restart, Item{Title: "Restart", Action: Action{Kind: ActRestart, Server: "db"}}},
		{"disabled start", old.Start, Item{Title: "Start", Disabled: true, Action: Action{Kind: ActStart, Server: "old"}}},
		{"disabled stop", old.Stop, Item{Title: "Stop", Disabled: true, Action: Action{Kind: ActStop, Server: "old"}}},
		{"pause", m.PauseAll, Item{Title: "Pause all servers", Action: Action{Kind: ActPauseAll}}},
		{"resume", m.ResumeAll, Item{Title: "Resume all servers", Disabled: true, Action: Action{Kind: ActResumeAll}}},
		{"open", m.Open, Item{Title: "Open Switchboard", Action: Action{Kind: ActOpen}}},
		{"quit", m.Quit, Item{Title: "Quit Switchboard", Tooltip: "Stop every server and quit", Action: Action{Kind: ActQuit}}},
		{"overflow", m.Overflow, Item{Hidden: true}},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s = %+v, want %+v", tt.name, tt.got, tt.want)
		}
	}
}

func TestBuildHealthAndTooltip(t *testing.T) {
	tests := []struct {
		name    string
		snap    Snapshot
		health  Health
		tooltip string
	}{
		{"empty", Snapshot{}, Well, "Switchboard: no servers yet"},
		{"all running", Snapshot{Servers: []wire.ServerView{view("a", "running"), view("b", "stopped")}}, Well,
			"Switchboard: 2 servers, 1 running"},
		{"starting", Snapshot{Servers: []wire.ServerView{view("a", "starting")}}, Starting,
			"Switchboard: 1 servers, 0 running, 1 starting"},
		{"backoff counts as failing", Snapshot{Servers: []wire.ServerView{view("a", "backoff")}}, Failing,
			"Switchboard: 1 servers, 0 running, 1 failing (a)"},
		{"config problem", Snapshot{Status: wire.Status{ConfigProblem: "bad"}, Servers: []wire.ServerView{view("a", "running")}}, Failing,
			"Switchboard: 1 servers, 1 running; config.json has an error"},
		{"unreachable", Snapshot{Err: errors.New("connection refused")}, Failing,
			"Switchboard: cannot reach the daemon: connection refused"},
	}
	for _, tt := range tests {
		m := Build(tt.snap, 3)
		if m.Health != tt.health || m.Tooltip != tt.tooltip {
			t.Errorf("%s: %v %q, want %v %q", tt.name, m.Health, m.Tooltip, tt.health, tt.tooltip)
		}
	}
	long := Snapshot{}
	for i := range 40 {
		long.Servers = append(long.Servers, view(strings.Repeat("x", 5)+string(rune('a'+i%26))+string(rune('a'+i/26)), "failing"))
	}
	if m := Build(long, 3); len([]rune(m.Tooltip)) > MaxTooltip || !strings.HasSuffix(m.Tooltip, "…") {
		t.Errorf("long tooltip not cut: %d runes", len([]rune(m.Tooltip)))
	}
}

func TestBuildOverflowAndPause(t *testing.T) {
	snap := Snapshot{Servers: []wire.ServerView{view("a", "stopped"), view("b", "stopped"), view("c", "stopped")},
		Paused: []string{"a", "b"}, Autostart: true}
	m := Build(snap, 2)
	if m.Overflow.Hidden || m.Overflow.Title != "1 more servers in Switchboard…" || m.Overflow.Action.Kind != ActOpen {
		t.Errorf("Overflow = %+v", m.Overflow)
	}
	if !m.PauseAll.Disabled {
		t.Error("Pause all enabled with every server stopped")
	}
	if m.ResumeAll.Disabled || m.ResumeAll.Title != "Resume all servers (2 paused)" {
		t.Errorf("ResumeAll = %+v", m.ResumeAll)
	}
	if !m.Autostart.Checked {
		t.Error("Start at login not checked")
	}
}

func TestRendererAppliesOnlyChanges(t *testing.T) {
	icons, err := MakeIcons()
	if err != nil {
		t.Fatal(err)
	}
	b := &fakeBackend{}
	r := NewRenderer(b, 3, icons)
	pool, _, _, _ := b.snapshot()
	if pool != r.Items() || pool != 7+3*9+1+5 { // header, endpoint, held, sign-in, ask, allow, deny; 3 servers of 9; overflow; the rest
		t.Fatalf("pool has %d items (renderer says %d)", pool, r.Items())
	}

	s1 := Snapshot{Endpoint: "http://127.0.0.1:1/mcp", Servers: []wire.ServerView{view("a", "running"), view("b", "starting")}}
	r.Apply(Build(s1, 3))
	want := []string{"1 of 2 servers running", "Copy endpoint: http://127.0.0.1:1/mcp",
		"● a — running", "● a — running > State: running · pid 4242", "● a — running > Calls last hour: none",
		"● a — running > CPU 1.5% · RSS 34.0 MiB · 2 processes", "● a — running > Start", "● a — running > Stop",
		"● a — running > Restart", "● a — running > Show logs",
		"◐ b — starting", "◐ b — starting > State: starting", "◐ b — starting > Calls last hour: none",
		"◐ b — starting > CPU/RSS: not running", "◐ b — starting > Start", "◐ b — starting > Stop",
		"◐ b — starting > Restart", "◐ b — starting > Show logs",
		"Open Switchboard", "Pause all servers", "Resume all servers", "Start at login", "Quit Switchboard"}
	if got := b.visible(); !slices.Equal(got, want) {
		t.Fatalf("menu:\n%q\nwant\n%q", got, want)
	}
	_, _, tip, icon := b.snapshot()
	if tip != "Switchboard: 2 servers, 1 running, 1 starting" || !bytes.Equal(icon, icons.PNG[Starting]) {
		t.Errorf("tooltip %q, icon is the starting one: %v", tip, bytes.Equal(icon, icons.PNG[Starting]))
	}

	// The same snapshot again changes nothing: no flicker.
	_, before, _, _ := b.snapshot()
	r.Apply(Build(s1, 3))
	if _, after, _, _ := b.snapshot(); after != before {
		t.Errorf("re-applying the same menu made %d backend calls", after-before)
	}

	// b is ready: only its rows change, the icon turns to "well".
	s2 := Snapshot{Endpoint: s1.Endpoint, Servers: []wire.ServerView{view("a", "running"), view("b", "running")}}
	r.Apply(Build(s2, 3))
	_, after, _, icon := b.snapshot()
	if n := after - before; n == 0 || n > 12 {
		t.Errorf("a state change made %d backend calls, want a few", n)
	}
	if !bytes.Equal(icon, icons.PNG[Well]) || b.find("● b — running") == nil {
		t.Error("b's change is not drawn")
	}

	// a is removed from the config: its slot shows b, the second is hidden.
	s3 := Snapshot{Endpoint: s1.Endpoint, Servers: []wire.ServerView{view("b", "running")}}
	r.Apply(Build(s3, 3))
	if b.find("● a") != nil || b.find("● b — running > Stop") == nil {
		t.Errorf("after removing a: %q", b.visible())
	}
	var heads int
	for _, v := range b.visible() {
		if !strings.Contains(v, " > ") && strings.Contains(v, " — ") {
			heads++
		}
	}
	if heads != 1 {
		t.Errorf("%d server submenus visible, want 1", heads)
	}

	// More servers than ever, and more than the capacity: the pool does
	// not grow; the rest are behind "N more".
	var many []wire.ServerView
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		many = append(many, view(n, "running"))
	}
	r.Apply(Build(Snapshot{Servers: many}, 3))
	if items, _, _, _ := b.snapshot(); items != pool {
		t.Errorf("pool grew from %d to %d items", pool, items)
	}
	if b.find("2 more servers in Switchboard…") == nil || b.find("● d") != nil {
		t.Errorf("overflow not drawn: %q", b.visible())
	}
}

func TestRendererClicks(t *testing.T) {
	icons, _ := MakeIcons()
	b := &fakeBackend{}
	r := NewRenderer(b, 2, icons)
	r.Apply(Build(Snapshot{Servers: []wire.ServerView{view("fs", "running")}}, 2))
	out := make(chan Action)
	ctx, cancel := context.WithCancel(t.Context())
	wait := r.Clicks(ctx, out)
	defer wait()
	defer cancel()

	b.find("● fs — running > Restart").clicked <- struct{}{}
	if a := <-out; a != (Action{Kind: ActRestart, Server: "fs"}) {
		t.Errorf("clicked Restart, got %+v", a)
	}
	// The slot now shows another server: the click follows the menu.
	r.Apply(Build(Snapshot{Servers: []wire.ServerView{view("git", "stopped")}}, 2))
	b.find("○ git — stopped > Start").clicked <- struct{}{}
	if a := <-out; a != (Action{Kind: ActStart, Server: "git"}) {
		t.Errorf("clicked Start, got %+v", a)
	}
	b.find("Quit").clicked <- struct{}{}
	if a := <-out; a.Kind != ActQuit {
		t.Errorf("clicked Quit, got %+v", a)
	}
}

func TestIconsDiffer(t *testing.T) {
	icons, err := MakeIcons()
	if err != nil {
		t.Fatal(err)
	}
	// Shapes, not colours: compare the alpha masks.
	masks := map[Health]string{}
	for _, h := range []Health{Well, Starting, Failing} {
		img, err := png.Decode(bytes.NewReader(icons.PNG[h]))
		if err != nil {
			t.Fatalf("%v icon: %v", h, err)
		}
		if b := img.Bounds(); b.Dx() != IconSize || b.Dy() != IconSize {
			t.Fatalf("%v icon is %v", h, b)
		}
		var mask strings.Builder
		opaque := 0
		for y := 0; y < IconSize; y++ {
			for x := 0; x < IconSize; x++ {
				_, _, _, a := img.At(x, y).RGBA()
				if a > 0x8000 {
					mask.WriteByte('#')
					opaque++
				} else {
					mask.WriteByte('.')
				}
			}
		}
		if opaque < IconSize*IconSize/5 {
			t.Errorf("%v icon has only %d opaque pixels", h, opaque)
		}
		masks[h] = mask.String()
		ico := icons.ICO[h]
		if len(ico) != len(icons.PNG[h])+22 || ico[2] != 1 || !bytes.Equal(ico[22:], icons.PNG[h]) {
			t.Errorf("%v ICO is not a one-image PNG icon", h)
		}
	}
	if masks[Well] == masks[Starting] || masks[Well] == masks[Failing] || masks[Starting] == masks[Failing] {
		t.Error("two health icons have the same shape")
	}
}

func TestBuildHeldTools(t *testing.T) {
	m := Build(Snapshot{Endpoint: "x"}, 2)
	if !m.Held.Hidden {
		t.Errorf("held item with nothing held: %+v", m.Held)
	}
	m = Build(Snapshot{Endpoint: "x", Held: []wire.HeldTool{
		{Server: "git", Tool: "push", Reason: "it is new since you approved the server's tools"},
		{Server: "git", Tool: "log", Reason: "its input schema changed since you approved it"},
	}}, 2)
	if m.Held.Hidden || m.Held.Title != "⚠ 2 tools held until you approve…" || m.Held.Action != (Action{Kind: ActReviewHeld, Server: "git"}) ||
		m.Held.Tooltip != "git · push: it is new since you approved the server's tools\ngit · log: its input schema changed since you approved it" {
		t.Errorf("held item = %+v", m.Held)
	}
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[uint64]string{0: "0 B", 1023: "1023 B", 1536: "1.5 KiB", 34 << 20: "34.0 MiB", 3 << 30: "3.0 GiB"} {
		if got := FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestFailedStartReadsFailed: a server whose command is missing is down
// with its error: the menu says Failed, with a mark of its own, and leads
// with the cause in full.
func TestFailedStartReadsFailed(t *testing.T) {
	broken := view("broken", "stopped")
	broken.LastError = `server "broken" failed to start: command not found: does-not-exist-mcp (searched PATH: /usr/bin:/bin)`
	broken.Restarts = 1
	m := Build(Snapshot{Servers: []wire.ServerView{broken, view("idle", "stopped")}}, 10)
	var b, idle ServerMenu
	for _, s := range m.Servers {
		switch {
		case strings.Contains(s.Title, "broken"):
			b = s
		case strings.Contains(s.Title, "idle"):
			idle = s
		}
	}
	if b.Title != "✕ broken — failed" || idle.Title != "○ idle — stopped" {
		t.Errorf("titles %q, %q", b.Title, idle.Title)
	}
	if b.State.Title != "Failed: Command not found: does-not-exist-mcp · 1 restarts" {
		t.Errorf("state line %q", b.State.Title)
	}
	if m.Health != Failing {
		t.Errorf("Health = %v with a failed server, want failing", m.Health)
	}
}

// TestSignInItemAndNotifications: a remote server's sign-in as snapshots
// after a run of auth events show it: the menu item "Sign in to NAME…"
// appears when it needs a sign-in (once, at the top and in its submenu),
// stays while signing in, and goes when signed in; a notification goes out
// once per turn to needing a sign-in, not for every event that repeats it.
func TestSignInItemAndNotifications(t *testing.T) {
	var notified []string
	wins, err := NewWindows([]string{"/bin/true"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := NewApp(Options{Client: &client.Client{BaseURL: "http://127.0.0.1:1"}, Windows: wins,
		Notify: func(title, msg string) error { notified = append(notified, title+": "+msg); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	// The daemon has a remote server that needs a sign-in failing: the
	// notification is the sign-in's, not a "failed" one.
	remote := func(auth *wire.AuthStatus) wire.ServerView {
		state := "running"
		if auth != nil && auth.State != wire.AuthSignedIn {
			state = "failing"
		}
		v := view("notion", state)
		v.Auth = auth
		return v
	}
	steps := []struct {
		what   string
		auth   *wire.AuthStatus
		item   string // the top-level item's title; "" hidden
		notify string // the notification of this step; "" none
	}{
		{"connected, never asked", nil, "", ""},
		{"a 401: first use", &wire.AuthStatus{State: wire.AuthNeedsSignIn, Reason: "first use"}, "Sign in to notion…",
			"Switchboard: notion needs you to sign in: First use: Switchboard has not signed in to it yet. Choose “Sign in to notion…” in the Switchboard menu."},
		{"another refused call", &wire.AuthStatus{State: wire.AuthNeedsSignIn, Reason: "first use"}, "Sign in to notion…", ""},
		{"and another", &wire.AuthStatus{State: wire.AuthNeedsSignIn, Reason: "first use"}, "Sign in to notion…", ""},
		{"signing in", &wire.AuthStatus{State: wire.AuthSigningIn, Reason: "first use", SignInURL: "https://auth.example/a"}, "Sign in to notion… (waiting for the browser)", ""},
		{"timed out", &wire.AuthStatus{State: wire.AuthNeedsSignIn, Reason: "first use", Error: "sign-in timed out after 5m0s"}, "Sign in to notion…",
			"Switchboard: signing in to notion failed: sign-in timed out after 5m0s. Choose “Sign in to notion…” in the Switchboard menu."},
		{"signing in again", &wire.AuthStatus{State: wire.AuthSigningIn, Reason: "first use"}, "Sign in to notion… (waiting for the browser)", ""},
		{"signed in", &wire.AuthStatus{State: wire.AuthSignedIn}, "", ""},
		{"still signed in", &wire.AuthStatus{State: wire.AuthSignedIn}, "", ""},
		{"refresh refused", &wire.AuthStatus{State: wire.AuthNeedsSignIn, Reason: "refresh refused"}, "Sign in to notion…",
			"Switchboard: notion needs you to sign in: The sign-in expired and the server refused to renew it. Choose “Sign in to notion…” in the Switchboard menu."},
	}
	for _, st := range steps {
		notified = nil
		snap := Snapshot{Servers: []wire.ServerView{view("fs", "running"), remote(st.auth)}}
		a.observe(snap)
		m := Build(snap, 5)
		got := ""
		if !m.SignIn.Hidden {
			got = m.SignIn.Title
			if m.SignIn.Action != (Action{Kind: ActSignIn, Server: "notion"}) {
				t.Errorf("%s: the item's action is %+v", st.what, m.SignIn.Action)
			}
		}
		if got != st.item {
			t.Errorf("%s: top-level item %q, want %q", st.what, got, st.item)
		}
		// The server's own submenu has the same item; fs's never.
		var sub, fs Item
		for _, s := range m.Servers {
			switch {
			case strings.Contains(s.Title, "notion"):
				sub = s.SignIn
			case strings.Contains(s.Title, "fs"):
				fs = s.SignIn
			}
		}
		if (!sub.Hidden) != (st.item != "") || (!sub.Hidden && sub.Title != st.item) {
			t.Errorf("%s: submenu item %+v, want %q", st.what, sub, st.item)
		}
		if !fs.Hidden {
			t.Errorf("%s: a local server has a sign-in item: %+v", st.what, fs)
		}
		if st.item != "" && !strings.HasSuffix(m.Tooltip, "; sign in to notion") {
			t.Errorf("%s: tooltip %q", st.what, m.Tooltip)
		}
		want := []string(nil)
		if st.notify != "" {
			want = []string{st.notify}
		}
		if !slices.Equal(notified, want) {
			t.Errorf("%s: notifications %q, want %q", st.what, notified, want)
		}
	}

	// Two need a sign-in: the first by name at the top, the other named in
	// its tooltip and in its own submenu.
	other := remote(&wire.AuthStatus{State: wire.AuthNeedsSignIn, Reason: "scope needed", Scope: "repo"})
	other.Name = "github"
	m := Build(Snapshot{Servers: []wire.ServerView{remote(&wire.AuthStatus{State: wire.AuthNeedsSignIn, Reason: "first use"}), other}}, 5)
	if m.SignIn.Title != "Sign in to github…" || !strings.Contains(m.SignIn.Tooltip, "The server asks for more access than the last sign-in gave (repo)") ||
		!strings.Contains(m.SignIn.Tooltip, "1 more need a sign-in: notion") {
		t.Errorf("two servers to sign in to: %+v", m.SignIn)
	}
}

// The menu's first line says how many servers run of how many, before the
// user reads the servers one by one.
func TestMenuHeader(t *testing.T) {
	for _, tt := range []struct {
		name    string
		snap    Snapshot
		want    string
		healthy Health
	}{
		{"three of four", Snapshot{Servers: []wire.ServerView{view("a", "running"), view("b", "running"), view("c", "running"), view("d", "stopped")}}, "3 of 4 servers running", Well},
		{"none yet", Snapshot{}, "No servers yet", Well},
		{"one running", Snapshot{Servers: []wire.ServerView{view("a", "running")}}, "1 server, running", Well},
		{"one starting", Snapshot{Servers: []wire.ServerView{view("a", "starting")}}, "1 server, not running", Starting},
		{"daemon down", Snapshot{Err: errors.New("connection refused")}, "Daemon unreachable", Failing},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := Build(tt.snap, 3)
			if m.Header.Title != tt.want || !m.Header.Disabled || m.Health != tt.healthy {
				t.Errorf("header %+v, health %v; want %q (disabled), %v", m.Header, m.Health, tt.want, tt.healthy)
			}
		})
	}
}

// TestBuildAsks: the oldest pending ask is shown with its time left and
// the count of the others, with Allow and Deny for it; none hides all three.
func TestBuildAsks(t *testing.T) {
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	m := Build(Snapshot{}, 1)
	if !m.Ask.Hidden || !m.AskAllow.Hidden || !m.AskDeny.Hidden {
		t.Errorf("no asks: %+v %+v %+v", m.Ask, m.AskAllow, m.AskDeny)
	}
	asks := []wire.Ask{
		{ID: "a1", Server: "fs", Tool: "delete_file", Deadline: now.Add(95 * time.Second), Arguments: json.RawMessage(`{"path":"/x"}`)},
		{ID: "a2", Server: "db", Tool: "drop", Deadline: now.Add(5 * time.Second)},
	}
	m = Build(Snapshot{Asks: asks, Now: now}, 1)
	for _, c := range []struct {
		name      string
		got, want Item
	}{
		{"ask", m.Ask, Item{Title: "⚠ delete_file of fs waits for your yes (1m 35s left), 1 more",
			Tooltip: "A destructive tool: the call runs only if you allow it\nArguments: {\"path\":\"/x\"}", Action: Action{Kind: ActOpen}}},
		{"allow", m.AskAllow, Item{Title: "    Allow delete_file", Tooltip: "Let this call of delete_file run", Action: Action{Kind: ActAllowAsk, Server: "fs", Ask: "a1"}}},
		{"deny", m.AskDeny, Item{Title: "    Deny delete_file", Tooltip: "Refuse this call of delete_file", Action: Action{Kind: ActDenyAsk, Server: "fs", Ask: "a1"}}},
	} {
		if c.got != c.want {
			t.Errorf("%s = %+v, want %+v", c.name, c.got, c.want)
		}
	}
	if !strings.Contains(m.Tooltip, "2 calls wait for your yes") {
		t.Errorf("tooltip %q", m.Tooltip)
	}
	for _, c := range []struct {
		left time.Duration
		want string
	}{{9 * time.Second, "9s left"}, {61 * time.Second, "1m 01s left"}, {0, "timing out"}, {-time.Second, "timing out"}} {
		if got := timeLeft(now.Add(c.left), now); got != c.want {
			t.Errorf("timeLeft(%v) = %q, want %q", c.left, got, c.want)
		}
	}
}
