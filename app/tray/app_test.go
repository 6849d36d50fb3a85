package tray

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/autostart"
	"github.com/switchboardhq/switchboard/app/internal/testutil"
)

// testApp is an App on a fake API and a fake backend, running in the
// background.
type testApp struct {
	api      *fakeAPI
	app      *App
	b        *fakeBackend
	r        *Renderer
	notified chan string
	copied   chan string
	opened   chan string // links OpenURL opened
	done     chan error
	cancel   context.CancelFunc
}

func startApp(t *testing.T, f *fakeAPI, windowCmd []string, auto autostart.Entry) *testApp {
	t.Helper()
	wins, err := NewWindows(windowCmd, nil)
	if err != nil {
		t.Fatal(err)
	}
	ta := &testApp{api: f, b: &fakeBackend{}, notified: make(chan string, 16), copied: make(chan string, 1), opened: make(chan string, 4), done: make(chan error, 1)}
	ta.app, err = NewApp(Options{Client: f.client(), Endpoint: "http://127.0.0.1:7391/mcp", Windows: wins,
		Autostart: auto, AutostartCommand: []string{"/opt/switchboard/switchboard-tray"},
		Clipboard:    func(s string) error { ta.copied <- s; return nil },
		Notify:       func(title, msg string) error { ta.notified <- title + ": " + msg; return nil },
		OpenURL:      func(link string) error { ta.opened <- link; return nil },
		Capacity:     3,
		PollInterval: 50 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	icons, _ := MakeIcons()
	ta.r = NewRenderer(ta.b, 3, icons)
	ctx, cancel := context.WithCancel(t.Context())
	ta.cancel = cancel
	go func() { ta.done <- ta.app.Run(ctx, ta.r) }()
	t.Cleanup(func() {
		cancel()
		<-ta.done
	})
	return ta
}

func (ta *testApp) click(t *testing.T, title string) {
	t.Helper()
	var h *fakeHandle
	testutil.Eventually(t, 10*time.Second, "item "+title, func() bool { h = ta.b.find(title); return h != nil && !h.isDisabled() })
	select {
	case h.clicked <- struct{}{}:
	case <-time.After(5 * time.Second):
		t.Fatalf("nobody reads clicks of %q", title)
	}
}

func TestAppFollowsTheDaemon(t *testing.T) {
	for _, mode := range []string{"events", "polling"} {
		t.Run(mode, func(t *testing.T) {
			f := newFakeAPI(t, view("fs", "running"), view("db", "starting"))
			f.noSSE = mode == "polling"
			ta := startApp(t, f, []string{"/bin/true"}, nil)
			testutil.Eventually(t, 10*time.Second, "first menu", func() bool { return ta.b.find("◐ db — starting") != nil })

			f.set("db", "running")
			testutil.Eventually(t, 10*time.Second, "db running", func() bool { return ta.b.find("● db — running") != nil })
			_, _, tip, _ := ta.b.snapshot()
			if tip != "Switchboard: 2 servers, 2 running" {
				t.Errorf("tooltip %q", tip)
			}

			// A server that starts failing: the menu says so and a
			// notification goes out, once.
			f.set("db", "failing")
			testutil.Eventually(t, 10*time.Second, "db failed", func() bool { return ta.b.find("✕ db — failed") != nil })
			select {
			case n := <-ta.notified:
				if !strings.HasPrefix(n, "Switchboard: db failed") {
					t.Errorf("notification %q", n)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("no notification for the failing server")
			}

			// Removed from the config: its submenu is hidden, the pool
			// stays.
			items, _, _, _ := ta.b.snapshot()
			f.set("db", "")
			testutil.Eventually(t, 10*time.Second, "db removed", func() bool { return ta.b.find("▲ db") == nil })
			if now, _, _, _ := ta.b.snapshot(); now != items {
				t.Errorf("pool changed from %d to %d items", items, now)
			}
			if ta.b.find("● fs — running > Stop") == nil {
				t.Errorf("fs is gone too: %q", ta.b.visible())
			}
			select {
			case n := <-ta.notified:
				t.Errorf("unexpected notification %q", n)
			default:
			}
		})
	}
}

func TestAppActionsCallTheAPI(t *testing.T) {
	f := newFakeAPI(t, view("fs", "running"), view("git", "stopped"), view("web", "running"))
	ta := startApp(t, f, []string{"/bin/true"}, nil)

	calls := func(n int) func() bool { return func() bool { return len(f.requests()) == n } }
	ta.click(t, "● fs — running > Restart")
	testutil.Eventually(t, 10*time.Second, "restart call", calls(1))
	ta.click(t, "○ git — stopped > Start")
	testutil.Eventually(t, 10*time.Second, "git started", func() bool { return ta.b.find("● git — running") != nil })
	ta.click(t, "● web — running > Stop")
	testutil.Eventually(t, 10*time.Second, "web stopped", func() bool { return ta.b.find("○ web — stopped") != nil })
	want := []string{"POST /api/v1/servers/fs/restart", "POST /api/v1/servers/git/start", "POST /api/v1/servers/web/stop"}
	if got := f.requests(); !slices.Equal(got, want) {
		t.Errorf("API calls %q, want %q", got, want)
	}

	// Pause all stops what runs and remembers it; Resume all starts
	// exactly those again.
	ta.click(t, "Pause all servers")
	testutil.Eventually(t, 10*time.Second, "paused", func() bool { return ta.b.find("Resume all servers (2 paused)") != nil })
	ta.click(t, "Resume all servers (2 paused)")
	testutil.Eventually(t, 10*time.Second, "resumed", func() bool { return ta.b.find("● fs — running") != nil && ta.b.find("● git — running") != nil })
	want = append(want, "POST /api/v1/servers/fs/stop", "POST /api/v1/servers/git/stop",
		"POST /api/v1/servers/fs/start", "POST /api/v1/servers/git/start")
	if got := f.requests(); !slices.Equal(got, want) {
		t.Errorf("API calls %q, want %q", got, want)
	}
	if ta.b.find("○ web — stopped") == nil {
		t.Error("Resume all started a server it had not paused")
	}

	ta.click(t, "Copy endpoint: http://127.0.0.1:7391/mcp")
	if got := <-ta.copied; got != "http://127.0.0.1:7391/mcp" {
		t.Errorf("copied %q", got)
	}
}

// TestAppHeldTools: a tool held until approved is a notification and a
// menu item that opens the server's page, where it is reviewed.
func TestAppHeldTools(t *testing.T) {
	f := newFakeAPI(t, view("fs", "running"))
	ta := startApp(t, f, []string{"/bin/true"}, nil)
	testutil.Eventually(t, 10*time.Second, "menu", func() bool { return ta.b.find("● fs") != nil })
	if ta.b.find("⚠") != nil {
		t.Fatalf("a held-tools item with nothing held: %q", ta.b.visible())
	}
	msg := `tool "read_file" of server "fs" is held: its description changed since you approved it; run: switchboard tools approve fs read_file`
	f.mu.Lock()
	f.held = []wire.HeldTool{{Server: "fs", Tool: "read_file", Change: "description", Reason: "its description changed since you approved it", Message: msg}}
	f.mu.Unlock()
	f.event("approval", fmt.Sprintf(`{"server":"fs","tool":"read_file","state":"held","change":"description","message":%q}`, msg))
	select {
	case n := <-ta.notified:
		if want := "Switchboard: a tool of fs is held: " + msg; !strings.HasPrefix(n, want) {
			t.Errorf("notification %q, want it to start with %q", n, want)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no notification for the held tool")
	}
	testutil.Eventually(t, 10*time.Second, "the held-tools item", func() bool { return ta.b.find("⚠ 1 tool held until you approve…") != nil })
	_, _, tip, _ := ta.b.snapshot()
	if !strings.HasSuffix(tip, "; 1 held tool to review") {
		t.Errorf("tooltip %q", tip)
	}
	// Approved: no more item, and an approval is no notification.
	f.mu.Lock()
	f.held = nil
	f.mu.Unlock()
	f.event("approval", `{"server":"fs","tool":"read_file","state":"approved","message":"approved"}`)
	testutil.Eventually(t, 10*time.Second, "the item hidden", func() bool { return ta.b.find("⚠") == nil })
	select {
	case n := <-ta.notified:
		t.Errorf("unexpected notification %q", n)
	default:
	}
}

// TestAppSignIn: a remote server that turns to needing a sign-in (an
// auth event) is one notification however many events repeat it, and a
// "Sign in to NAME…" item that calls the login route and opens the link
// the daemon could not; signed in, the item goes.
func TestAppSignIn(t *testing.T) {
	f := newFakeAPI(t, view("fs", "running"), view("notion", "running"))
	ta := startApp(t, f, []string{"/bin/true"}, nil)
	testutil.Eventually(t, 10*time.Second, "menu", func() bool { return ta.b.find("● notion") != nil })
	if ta.b.find("Sign in to") != nil {
		t.Fatalf("a sign-in item with nothing to sign in to: %q", ta.b.visible())
	}
	for range 3 { // every refused call says it again
		f.setAuth("notion", &wire.AuthStatus{State: wire.AuthNeedsSignIn, Reason: "first use"})
	}
	select {
	case n := <-ta.notified:
		if want := "Switchboard: notion needs you to sign in: First use"; !strings.HasPrefix(n, want) {
			t.Errorf("notification %q, want it to start with %q", n, want)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no notification for the sign-in")
	}
	testutil.Eventually(t, 10*time.Second, "the sign-in item", func() bool { return ta.b.find("Sign in to notion…") != nil })
	ta.click(t, "Sign in to notion…")
	select {
	case link := <-ta.opened:
		if link != "https://auth.example/authorize?state=s1" {
			t.Errorf("opened %q", link)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the sign-in link was not opened")
	}
	if reqs := ta.api.requests(); !slices.Contains(reqs, "POST /api/v1/servers/notion/login") {
		t.Errorf("requests %q, want the login route", reqs)
	}
	f.setAuth("notion", &wire.AuthStatus{State: wire.AuthSignedIn})
	testutil.Eventually(t, 10*time.Second, "the item hidden once signed in", func() bool { return ta.b.find("Sign in to") == nil })
	select {
	case n := <-ta.notified:
		t.Errorf("unexpected notification %q", n)
	default:
	}
}

func TestAppActionErrorNotifies(t *testing.T) {
	f := newFakeAPI(t, view("fs", "stopped"))
	ta := startApp(t, f, []string{"/bin/true"}, nil)
	testutil.Eventually(t, 10*time.Second, "menu", func() bool { return ta.b.find("○ fs") != nil })
	// The server vanishes between drawing and clicking.
	f.mu.Lock()
	delete(f.views, "fs")
	f.mu.Unlock()
	ta.click(t, "○ fs — stopped > Start")
	select {
	case n := <-ta.notified:
		if !strings.Contains(n, "start failed") || !strings.Contains(n, `no server "fs"`) {
			t.Errorf("notification %q", n)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a failed action was not reported")
	}
}

func TestAppWindowAndQuit(t *testing.T) {
	dir := t.TempDir()
	argsFile := filepath.Join(dir, "args")
	// A stand-in window program: records its arguments and stays open
	// until signalled, like the Wails window.
	script := `echo "$@" >> "` + argsFile + `"; exec sleep 300`
	f := newFakeAPI(t, view("fs", "running"))
	ta := startApp(t, f, []string{"/bin/sh", "-c", script, "window", "--home", "/h"}, nil)
	wins := ta.app.o.Windows

	ta.click(t, "Open Switchboard")
	ta.click(t, "● fs — running > Show logs")
	testutil.Eventually(t, 10*time.Second, "two window launches", func() bool {
		data, _ := os.ReadFile(argsFile)
		return strings.Count(string(data), "\n") == 2
	})
	data, _ := os.ReadFile(argsFile)
	got := strings.Split(strings.TrimSpace(string(data)), "\n")
	slices.Sort(got) // the two clicks run concurrently
	if want := []string{"--home /h", "--home /h --path /#/servers/fs"}; !slices.Equal(got, want) {
		t.Errorf("window arguments %q, want %q", got, want)
	}
	// A window can write its arguments before Open has recorded its pid.
	testutil.Eventually(t, 10*time.Second, "two window pids", func() bool { return len(wins.PIDs()) == 2 })
	pids := wins.PIDs()

	ta.click(t, "Quit Switchboard")
	select {
	case err := <-ta.done:
		ta.done <- err // for the cleanup
		if !errors.Is(err, ErrQuit) {
			t.Fatalf("Run returned %v, want ErrQuit", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("Quit did not end Run")
	}
	if left := wins.PIDs(); len(left) != 0 {
		t.Errorf("window processes left after Quit: %v", left)
	}
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("window process %d still runs", pid)
		}
	}
}

// alive reports whether pid runs (a zombie does not: kill -0 would say so).
func alive(pid int) bool {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return false
	}
	return !strings.Contains(string(data), "State:\tZ")
}

func TestAppAutostartToggle(t *testing.T) {
	home := t.TempDir()
	auto, err := autostart.New(autostart.Env{GOOS: "linux", Home: home})
	if err != nil {
		t.Fatal(err)
	}
	f := newFakeAPI(t)
	ta := startApp(t, f, []string{"/bin/true"}, auto)
	path := filepath.Join(home, ".config", "autostart", autostart.Name+".desktop")

	ta.click(t, "Start at login")
	testutil.Eventually(t, 10*time.Second, "autostart file", func() bool { _, err := os.Stat(path); return err == nil })
	testutil.Eventually(t, 10*time.Second, "checked", func() bool { h := ta.b.find("Start at login"); return h != nil && h.isChecked() })
	ta.click(t, "Start at login")
	testutil.Eventually(t, 10*time.Second, "autostart removed", func() bool { _, err := os.Stat(path); return errors.Is(err, os.ErrNotExist) })
	testutil.Eventually(t, 10*time.Second, "unchecked", func() bool { h := ta.b.find("Start at login"); return h != nil && !h.isChecked() })
}

func TestNewAppChecksOptions(t *testing.T) {
	wins, _ := NewWindows([]string{"/bin/true"}, nil)
	if _, err := NewApp(Options{Windows: wins}); err == nil || !strings.Contains(err.Error(), "Client") {
		t.Errorf("no client: %v", err)
	}
	if _, err := NewWindows(nil, nil); err == nil {
		t.Error("NewWindows(nil) succeeded")
	}
}

// TestAppAsks: a call waiting for the user's yes is a notification and
// three menu items: what waits (with the time left, the arguments in the
// tooltip), Allow and Deny, which answer it through the API; answered, the
// items go; one that timed out meanwhile is a notification that says so.
func TestAppAsks(t *testing.T) {
	f := newFakeAPI(t, view("fs", "running"))
	ta := startApp(t, f, []string{"/bin/true"}, nil)
	testutil.Eventually(t, 10*time.Second, "menu", func() bool { return ta.b.find("● fs") != nil })
	if ta.b.find("⚠") != nil {
		t.Fatalf("an ask item with nothing pending: %q", ta.b.visible())
	}
	ask := wire.Ask{ID: "ask-1", Server: "fs", Tool: "delete_file", Client: "cursor", Tier: "destructive",
		Arguments: json.RawMessage(`{"path":"/tmp/x","token":"[redacted]"}`), Asked: time.Now(), Deadline: time.Now().Add(90 * time.Second)}
	pend := func(a wire.Ask) {
		f.mu.Lock()
		f.asks = append(f.asks, a)
		f.mu.Unlock()
		data, _ := json.Marshal(wire.AskEvent{State: wire.AskPending, Ask: a})
		f.event("ask", string(data))
	}
	pend(ask)
	select {
	case n := <-ta.notified:
		if !strings.HasPrefix(n, "Switchboard: delete_file of fs waits for your yes: ") || !strings.Contains(n, "Allow or deny it in the Switchboard menu") {
			t.Errorf("notification %q", n)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no notification for the pending ask")
	}
	var item *fakeHandle
	testutil.Eventually(t, 10*time.Second, "the ask items", func() bool {
		item = ta.b.find("⚠ delete_file of fs waits for your yes (")
		return item != nil && ta.b.find("    Allow delete_file") != nil && ta.b.find("    Deny delete_file") != nil
	})
	ta.b.mu.Lock()
	title, tip := item.title, item.tooltip
	ta.b.mu.Unlock()
	if !strings.Contains(title, "s left)") || !strings.Contains(tip, `"token":"[redacted]"`) || !strings.Contains(tip, "From: cursor") {
		t.Errorf("ask item %q, tooltip %q", title, tip)
	}
	if _, _, tooltip, _ := ta.b.snapshot(); !strings.Contains(tooltip, "1 call waits for your yes") {
		t.Errorf("tooltip %q", tooltip)
	}
	ta.click(t, "    Allow delete_file")
	testutil.Eventually(t, 10*time.Second, "the allow sent", func() bool {
		return slices.Contains(f.requests(), "POST /api/v1/asks/ask-1 allow=true")
	})
	testutil.Eventually(t, 10*time.Second, "the ask items hidden", func() bool { return ta.b.find("⚠") == nil && ta.b.find("    Allow") == nil })

	// Denied.
	pend(wire.Ask{ID: "ask-2", Server: "fs", Tool: "drop_table", Tier: "destructive", Deadline: time.Now().Add(time.Minute)})
	<-ta.notified
	ta.click(t, "    Deny drop_table")
	testutil.Eventually(t, 10*time.Second, "the deny sent", func() bool {
		return slices.Contains(f.requests(), "POST /api/v1/asks/ask-2 allow=false")
	})

	// Gone by the time it is answered (timed out): the failure is told.
	pend(wire.Ask{ID: "ask-3", Server: "fs", Tool: "wipe", Tier: "destructive", Deadline: time.Now().Add(time.Minute)})
	<-ta.notified
	testutil.Eventually(t, 10*time.Second, "the third ask", func() bool { return ta.b.find("    Allow wipe") != nil })
	f.mu.Lock()
	f.asks = nil // timed out, and the tray has not heard yet
	f.mu.Unlock()
	ta.click(t, "    Allow wipe")
	select {
	case n := <-ta.notified:
		if !strings.Contains(n, "allow-ask failed") || !strings.Contains(n, "no longer waits") {
			t.Errorf("notification %q", n)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no notification for an ask gone")
	}
}
