package tray

import (
	"context"
	"sync"
)

// A Backend is the tray library as the Renderer uses it: systray in the
// tray build (systray.go), a recording fake in tests.
type Backend interface {
	// AddItem appends a top-level item; checkbox items show a tick.
	AddItem(checkbox bool) Handle
	// AddSubItem appends an item to parent's submenu.
	AddSubItem(parent Handle) Handle
	AddSeparator()
	SetIcon(png, ico []byte)
	SetTooltip(string)
}

// A Handle is one menu item of a Backend.
type Handle interface {
	SetTitle(string)
	SetTooltip(string)
	Show()
	Hide()
	Enable()
	Disable()
	Check()
	Uncheck()
	// Clicked receives a value for each click.
	Clicked() <-chan struct{}
}

// slot is one item of the pool: its handle, what it shows now, and what a
// click on it does.
type slot struct {
	h      Handle
	shown  Item
	fresh  bool // nothing applied yet: every field is set on the first Apply
	action Action
}

// A Renderer draws Menus on a fixed pool of items created once, in menu
// order. Apply changes only what differs from the menu drawn before.
type Renderer struct {
	b        Backend
	capacity int

	mu                              sync.Mutex
	all                             []*slot
	header, endpt, held, signIn     *slot
	ask, askAllow, askDeny          *slot
	srv                             []serverSlots
	over                            *slot
	open, pause, resume, auto, quit *slot

	health  Health
	tooltip string
	icons   Icons
	drawn   bool
}

type serverSlots struct {
	head                                   *slot
	state, calls, usage, start, stop, rest *slot
	logs, signIn                           *slot
}

// NewRenderer creates the menu's items on b, with capacity server
// submenus, all empty until the first Apply.
func NewRenderer(b Backend, capacity int, icons Icons) *Renderer {
	r := &Renderer{b: b, capacity: capacity, icons: icons}
	add := func(h Handle) *slot {
		s := &slot{h: h, fresh: true}
		r.all = append(r.all, s)
		return s
	}
	r.header = add(b.AddItem(false))
	r.endpt = add(b.AddItem(false))
	r.held = add(b.AddItem(false))
	r.signIn = add(b.AddItem(false))
	r.ask = add(b.AddItem(false))
	r.askAllow = add(b.AddItem(false))
	r.askDeny = add(b.AddItem(false))
	b.AddSeparator()
	for range capacity {
		head := add(b.AddItem(false))
		sub := func() *slot { return add(b.AddSubItem(head.h)) }
		r.srv = append(r.srv, serverSlots{head: head, state: sub(), calls: sub(), usage: sub(),
			start: sub(), stop: sub(), rest: sub(), logs: sub(), signIn: sub()})
	}
	r.over = add(b.AddItem(false))
	b.AddSeparator()
	r.open = add(b.AddItem(false))
	r.pause = add(b.AddItem(false))
	r.resume = add(b.AddItem(false))
	r.auto = add(b.AddItem(true))
	b.AddSeparator()
	r.quit = add(b.AddItem(false))
	return r
}

// Capacity is how many server submenus the pool has.
func (r *Renderer) Capacity() int { return r.capacity }

// Items is the number of items in the pool (separators not counted); it
// never changes after NewRenderer.
func (r *Renderer) Items() int { return len(r.all) }

// Apply draws m.
func (r *Renderer) Apply(m Menu) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.drawn || m.Health != r.health {
		r.b.SetIcon(r.icons.PNG[m.Health], r.icons.ICO[m.Health])
	}
	if !r.drawn || m.Tooltip != r.tooltip {
		r.b.SetTooltip(m.Tooltip)
	}
	r.health, r.tooltip, r.drawn = m.Health, m.Tooltip, true

	set(r.header, m.Header)
	set(r.endpt, m.Endpoint)
	set(r.held, m.Held)
	set(r.signIn, m.SignIn)
	set(r.ask, m.Ask)
	set(r.askAllow, m.AskAllow)
	set(r.askDeny, m.AskDeny)
	for i, ss := range r.srv {
		sm := hiddenServer()
		if i < len(m.Servers) {
			sm = m.Servers[i]
		}
		set(ss.head, sm.Item)
		set(ss.state, sm.State)
		set(ss.calls, sm.Calls)
		set(ss.usage, sm.Usage)
		set(ss.start, sm.Start)
		set(ss.stop, sm.Stop)
		set(ss.rest, sm.Restart)
		set(ss.logs, sm.Logs)
		set(ss.signIn, sm.SignIn)
	}
	set(r.over, m.Overflow)
	set(r.open, m.Open)
	set(r.pause, m.PauseAll)
	set(r.resume, m.ResumeAll)
	set(r.auto, m.Autostart)
	set(r.quit, m.Quit)
}

// set makes s show it, calling the backend only for what changed. Hidden
// items keep their other fields as they were: nobody sees them.
func set(s *slot, it Item) {
	s.action = it.Action
	old := s.shown
	if it.Hidden {
		if s.fresh || !old.Hidden {
			s.h.Hide()
		}
		s.shown.Hidden, s.fresh = true, false
		return
	}
	if s.fresh || it.Title != old.Title {
		s.h.SetTitle(it.Title)
	}
	if s.fresh || it.Tooltip != old.Tooltip {
		s.h.SetTooltip(it.Tooltip)
	}
	if s.fresh || it.Disabled != old.Disabled {
		if it.Disabled {
			s.h.Disable()
		} else {
			s.h.Enable()
		}
	}
	if s.fresh || it.Checked != old.Checked {
		if it.Checked {
			s.h.Check()
		} else {
			s.h.Uncheck()
		}
	}
	if s.fresh || old.Hidden {
		s.h.Show()
	}
	s.shown, s.fresh = it, false
}

// Clicks sends the action of every clicked item to out until ctx ends. It
// starts one goroutine per item (a fixed number) and returns at once; wait
// for them with the returned function.
func (r *Renderer) Clicks(ctx context.Context, out chan<- Action) (wait func()) {
	var wg sync.WaitGroup
	for _, s := range r.all {
		ch := s.h.Clicked()
		wg.Go(func() {
			for {
				select {
				case <-ctx.Done():
					return
				case <-ch:
					r.mu.Lock()
					a, hidden := s.action, s.shown.Hidden
					r.mu.Unlock()
					if a.Kind == ActNone || hidden {
						continue
					}
					select {
					case out <- a:
					case <-ctx.Done():
						return
					}
				}
			}
		})
	}
	return wg.Wait
}
