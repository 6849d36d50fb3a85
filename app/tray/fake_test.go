package tray

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app/api/client"
	"github.com/switchboardhq/switchboard/app/api/wire"
)

// fakeBackend records what the Renderer does to the menu.
type fakeBackend struct {
	mu       sync.Mutex
	items    []*fakeHandle
	seps     int
	icon     []byte
	tooltip  string
	calls    int // setter calls of items, icon and tooltip
	iconSets int
}

type fakeHandle struct {
	b        *fakeBackend
	parent   *fakeHandle
	checkbox bool
	title    string
	tooltip  string
	hidden   bool
	disabled bool
	checked  bool
	clicked  chan struct{}
}

func (b *fakeBackend) add(parent *fakeHandle, checkbox bool) Handle {
	b.mu.Lock()
	defer b.mu.Unlock()
	h := &fakeHandle{b: b, parent: parent, checkbox: checkbox, clicked: make(chan struct{})}
	b.items = append(b.items, h)
	return h
}
func (b *fakeBackend) AddItem(checkbox bool) Handle { return b.add(nil, checkbox) }
func (b *fakeBackend) AddSubItem(p Handle) Handle   { return b.add(p.(*fakeHandle), false) }
func (b *fakeBackend) AddSeparator()                { b.mu.Lock(); b.seps++; b.mu.Unlock() }
func (b *fakeBackend) SetIcon(png, ico []byte) {
	b.mu.Lock()
	b.icon, b.calls, b.iconSets = png, b.calls+1, b.iconSets+1
	b.mu.Unlock()
}
func (b *fakeBackend) SetTooltip(t string) {
	b.mu.Lock()
	b.tooltip, b.calls = t, b.calls+1
	b.mu.Unlock()
}

func (h *fakeHandle) set(f func())             { h.b.mu.Lock(); f(); h.b.calls++; h.b.mu.Unlock() }
func (h *fakeHandle) SetTitle(s string)        { h.set(func() { h.title = s }) }
func (h *fakeHandle) SetTooltip(s string)      { h.set(func() { h.tooltip = s }) }
func (h *fakeHandle) Show()                    { h.set(func() { h.hidden = false }) }
func (h *fakeHandle) Hide()                    { h.set(func() { h.hidden = true }) }
func (h *fakeHandle) Enable()                  { h.set(func() { h.disabled = false }) }
func (h *fakeHandle) Disable()                 { h.set(func() { h.disabled = true }) }
func (h *fakeHandle) Check()                   { h.set(func() { h.checked = true }) }
func (h *fakeHandle) Uncheck()                 { h.set(func() { h.checked = false }) }
func (h *fakeHandle) Clicked() <-chan struct{} { return h.clicked }

func (h *fakeHandle) isChecked() bool  { h.b.mu.Lock(); defer h.b.mu.Unlock(); return h.checked }
func (h *fakeHandle) isDisabled() bool { h.b.mu.Lock(); defer h.b.mu.Unlock(); return h.disabled }

// visible lists the visible items as "title" (top level) or
// "parent > title", for comparing menus.
func (b *fakeBackend) visible() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, h := range b.items {
		if h.hidden || (h.parent != nil && h.parent.hidden) {
			continue
		}
		if h.parent != nil {
			out = append(out, h.parent.title+" > "+h.title)
		} else {
			out = append(out, h.title)
		}
	}
	return out
}

// find returns the visible item whose title (or "parent > title") has
// the prefix.
func (b *fakeBackend) find(prefix string) *fakeHandle {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, h := range b.items {
		if h.hidden || (h.parent != nil && h.parent.hidden) {
			continue
		}
		name := h.title
		if h.parent != nil {
			name = h.parent.title + " > " + h.title
		}
		if strings.HasPrefix(name, prefix) {
			return h
		}
	}
	return nil
}

func (b *fakeBackend) snapshot() (items, calls int, tooltip string, icon []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.items), b.calls, b.tooltip, b.icon
}

// fakeAPI is a loopback daemon API with servers whose state tests change.
type fakeAPI struct {
	t      *testing.T
	srv    *httptest.Server
	mu     sync.Mutex
	views  map[string]wire.ServerView
	calls  map[string]wire.Stat
	log    []string // "POST /api/v1/servers/fs/stop"
	events chan string
	noSSE  bool
	held   []wire.HeldTool
	asks   []wire.Ask
}

const testToken = "sb_tray-test"

func newFakeAPI(t *testing.T, views ...wire.ServerView) *fakeAPI {
	f := &fakeAPI{t: t, views: map[string]wire.ServerView{}, calls: map[string]wire.Stat{}, events: make(chan string, 16)}
	for _, v := range views {
		f.views[v.Name] = v
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/status", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		running := 0
		for _, v := range f.views {
			if v.State == "running" {
				running++
			}
		}
		json.NewEncoder(w).Encode(wire.Status{Version: "test", Servers: len(f.views), Running: running})
	})
	mux.HandleFunc("GET /api/v1/servers", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(f.list())
	})
	mux.HandleFunc("GET /api/v1/stats", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("since") != "1h" || r.URL.Query().Get("by") != "server" {
			http.Error(w, `{"error":"want since=1h&by=server"}`, http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		var out []wire.Stat
		for _, s := range f.calls {
			out = append(out, s)
		}
		json.NewEncoder(w).Encode(out)
	})
	mux.HandleFunc("GET /api/v1/held-tools", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		json.NewEncoder(w).Encode(append([]wire.HeldTool{}, f.held...))
	})
	mux.HandleFunc("GET /api/v1/asks", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		json.NewEncoder(w).Encode(append([]wire.Ask{}, f.asks...))
	})
	mux.HandleFunc("POST /api/v1/asks/{id}", func(w http.ResponseWriter, r *http.Request) {
		var in wire.AskAnswer
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			http.Error(w, `{"error":"bad body"}`, http.StatusBadRequest)
			return
		}
		id := r.PathValue("id")
		f.mu.Lock()
		f.log = append(f.log, fmt.Sprintf("%s %s allow=%v", r.Method, r.URL.Path, in.Allow))
		n := len(f.asks)
		f.asks = slices.DeleteFunc(f.asks, func(a wire.Ask) bool { return a.ID == id })
		gone := n == len(f.asks)
		f.mu.Unlock()
		if gone {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprintf(w, `{"error":"no pending ask %q"}`, id)
			return
		}
		json.NewEncoder(w).Encode(wire.AskDecision{ID: id, Allowed: in.Allow, By: wire.DecidedByTray, At: time.Now()})
		f.event("ask", fmt.Sprintf(`{"state":"decided","ask":{"id":%q},"decision":{"id":%q,"allowed":%v,"by":"tray"}}`, id, id, in.Allow))
	})
	mux.HandleFunc("POST /api/v1/servers/{name}/{verb}", func(w http.ResponseWriter, r *http.Request) {
		name, verb := r.PathValue("name"), r.PathValue("verb")
		f.mu.Lock()
		f.log = append(f.log, r.Method+" "+r.URL.Path)
		v, ok := f.views[name]
		if !ok {
			f.mu.Unlock()
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprintf(w, `{"error":"no server %q"}`, name)
			return
		}
		if verb == "login" {
			// The daemon could not open a browser here: the tray opens the link.
			v.Auth = &wire.AuthStatus{State: wire.AuthSigningIn, Reason: "first use", SignInURL: "https://auth.example/authorize?state=s1"}
			f.views[name] = v
			f.mu.Unlock()
			json.NewEncoder(w).Encode(wire.LoginResult{Server: name, SignInURL: v.Auth.SignInURL, Auth: *v.Auth})
			f.event("auth", fmt.Sprintf(`{"server":%q,"state":%q}`, name, v.Auth.State))
			return
		}
		switch verb {
		case "start", "restart":
			v.State = "running"
		case "stop":
			v.State = "stopped"
		}
		f.views[name] = v
		f.mu.Unlock()
		json.NewEncoder(w).Encode(v)
		f.event("state", fmt.Sprintf(`{"server":%q,"state":%q}`, name, v.State))
	})
	mux.HandleFunc("GET /api/v1/events", func(w http.ResponseWriter, r *http.Request) {
		if f.noSSE {
			http.Error(w, `{"error":"not found"}`, http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		fmt.Fprint(w, ": hello\n\n")
		rc.Flush()
		for {
			select {
			case <-r.Context().Done():
				return
			case ev := <-f.events:
				fmt.Fprint(w, ev)
				rc.Flush()
			}
		}
	})
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+testToken {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"error":"invalid token"}`)
			return
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeAPI) client() *client.Client {
	return &client.Client{BaseURL: f.srv.URL, Token: testToken}
}

func (f *fakeAPI) list() []wire.ServerView {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]wire.ServerView, 0, len(f.views))
	for _, v := range f.views {
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// set changes (or with state "", removes) a server and says so on the
// event stream.
func (f *fakeAPI) set(name, state string) {
	f.mu.Lock()
	if state == "" {
		delete(f.views, name)
	} else {
		v := f.views[name]
		v.Name, v.State, v.Enabled = name, state, true
		f.views[name] = v
	}
	f.mu.Unlock()
	f.event("config", "{}")
}

// setAuth changes a server's sign-in state and says so on the event stream.
func (f *fakeAPI) setAuth(name string, auth *wire.AuthStatus) {
	f.mu.Lock()
	v := f.views[name]
	v.Auth = auth
	f.views[name] = v
	f.mu.Unlock()
	f.event("auth", fmt.Sprintf(`{"server":%q,"state":%q}`, name, auth.State))
}

func (f *fakeAPI) event(typ, data string) {
	select {
	case f.events <- fmt.Sprintf("id: %d\nevent: %s\ndata: %s\n\n", time.Now().UnixNano(), typ, data):
	default: // nobody follows (polling mode)
	}
}

func (f *fakeAPI) requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.log...)
}

func view(name, state string) wire.ServerView {
	v := wire.ServerView{Name: name, State: state, Enabled: state != wire.StateDisabled, Mode: "shared",
		Processes: []wire.ProcessStatus{}}
	if state == "running" {
		v.Processes = []wire.ProcessStatus{{PID: 4242, State: "ready"}}
		v.Usage = &wire.Usage{CPUPercent: 1.5, RSSBytes: 34 << 20, Processes: 2}
	}
	return v
}
