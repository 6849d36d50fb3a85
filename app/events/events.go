// Package events is the daemon's live feed: calls, server logs, state
// changes, resource samples and install progress, in the order they happened,
// each with an increasing id. The API serves it as one SSE stream
// (/api/v1/events) that the dashboard, the tray and `switchboard top` follow.
//
// A Bus keeps the most recent events in a ring, so a client that reconnects
// with the id of the last event it saw (SSE's Last-Event-ID) gets what it
// missed; one that was away too long (more events, or more bytes of them,
// than the ring keeps) is told to start over (Reset) and refetches its
// snapshots. Publishing never blocks: a subscriber that cannot
// keep up is cut off, and reconnects from where it was.
package events

import (
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/internal/jsonappend"
)

// Event types.
const (
	TypeCall = "call" // a call was recorded (history.Call)
	// TypeCallStart: a call is on its way to a server (CallStart); its
	// "call" event follows when it ends.
	TypeCallStart = "call-start"
	TypeLog       = "log"      // a server wrote a line (Log)
	TypeState     = "state"    // a server's lifecycle changed (record.Event)
	TypeSample    = "sample"   // a resource sample of a server (Sample)
	TypeInstall   = "install"  // install progress
	TypeConfig    = "config"   // the server list or a server's settings changed
	TypeDropped   = "dropped"  // history records were dropped (Dropped)
	TypeApproval  = "approval" // a tool was held until approved, or approved (Approval)

	// TypeCallProgress: a call on its way reported progress (CallProgress).
	TypeCallProgress = "call-progress"
	// TypeTools: a server's tools were listed (Tools), the first time or again.
	TypeTools = "tools"
	// TypeAuth: a remote server's sign-in state changed (Auth).
	TypeAuth = "auth"
	// TypeAsk: a call waits for the user's yes, or no longer does (the
	// API's wire.AskEvent).
	TypeAsk = "ask"
)

// Auth is the data of a TypeAuth event: where a remote server's sign-in
// stands now (its sign-in link is in the server's view, not here).
type Auth struct {
	Server string `json:"server"`
	State  string `json:"state"`
	Reason string `json:"reason,omitempty"`
	Scope  string `json:"scope,omitempty"`
	Error  string `json:"error,omitempty"`
}

// An Event is one entry of the feed. Data is JSON, encoded once when the
// event is published.
type Event struct {
	ID   uint64          `json:"id"`
	Type string          `json:"type"`
	Time time.Time       `json:"time"`
	Data json.RawMessage `json:"data"`
}

// Log is the data of a TypeLog event.
type Log struct {
	Server string    `json:"server"`
	Time   time.Time `json:"time"`
	PID    int       `json:"pid"`
	Stream string    `json:"stream"`
	Text   string    `json:"text"`
}

// Sample is the data of a TypeSample event.
type Sample struct {
	Server     string    `json:"server"`
	Time       time.Time `json:"time"`
	CPUPercent float64   `json:"cpuPercent"`
	RSSBytes   uint64    `json:"rssBytes"`
	Processes  int       `json:"processes"`
}

// CallStart is the data of a TypeCallStart event: a call on its way. Its
// "call" event, when it ends, has the same server, name and start.
type CallStart struct {
	Start       time.Time `json:"start"`
	Server      string    `json:"server"`
	Endpoint    string    `json:"endpoint"` // "" for the aggregated /mcp
	Method      string    `json:"method"`
	Name        string    `json:"name"`
	ClientLabel string    `json:"clientLabel"`
	ClientName  string    `json:"clientName"`
	Session     string    `json:"session"`
	Tool        string    `json:"tool,omitempty"` // as the server calls it (see Call.Tool)
}

// AppendJSON appends c encoded as json.Marshal encodes it, without its
// reflection: one is published for every call (Bus.PublishJSON).
func (c CallStart) AppendJSON(b []byte) []byte {
	b = append(b, `{"start":`...)
	b = jsonappend.Time(b, c.Start)
	for _, f := range [...]struct{ key, v string }{{`,"server":`, c.Server}, {`,"endpoint":`, c.Endpoint},
		{`,"method":`, c.Method}, {`,"name":`, c.Name}, {`,"clientLabel":`, c.ClientLabel},
		{`,"clientName":`, c.ClientName}, {`,"session":`, c.Session}} {
		b = append(b, f.key...)
		b = jsonappend.String(b, f.v)
	}
	if c.Tool != "" { // omitempty
		b = append(b, `,"tool":`...)
		b = jsonappend.String(b, c.Tool)
	}
	return append(b, '}')
}

// CallProgress is the data of a TypeCallProgress event: a progress
// notification of a call on its way, named as its CallStart is (server,
// name, start).
type CallProgress struct {
	Start    time.Time `json:"start"`
	Server   string    `json:"server"`
	Name     string    `json:"name"`
	Session  string    `json:"session"`
	Progress float64   `json:"progress"`
	Total    float64   `json:"total,omitempty"` // 0: unknown
	Message  string    `json:"message,omitempty"`
}

// Tools is the data of a TypeTools event.
type Tools struct {
	Server string `json:"server"`
}

// Dropped is the data of a TypeDropped event: the total number of history
// records dropped since the daemon started.
type Dropped struct {
	Count uint64 `json:"count"`
}

// Approval is the data of a TypeApproval event: a tool of a server was
// held from clients because it is new or changed since the user approved
// the server's tools, or a held tool was approved (see app/approvals).
type Approval struct {
	Server string `json:"server"`
	// Tool is "" for an approval of many tools at once (a server's first
	// list, a trusted server's changes).
	Tool string `json:"tool"`
	// State is ApprovalHeld or ApprovalApproved.
	State string `json:"state"`
	// Change is "new", "description", "schema" or "description and schema".
	Change string `json:"change"`
	// Message says it in words (for a held tool, the error its calls get).
	Message string `json:"message"`
}

// States of an Approval.
const (
	ApprovalHeld     = "held"
	ApprovalApproved = "approved"
)

// DefaultRingSize is how many recent events a Bus keeps at most for
// reconnecting subscribers; DefaultRingBytes bounds them too.
const DefaultRingSize = 8192

// DefaultRingBytes bounds the data of the events a Bus keeps: the oldest
// go first when the newest would pass it. At a desktop's pace that is
// several hundred calls' events, minutes of them; under a load of
// thousands of calls a second it is a fraction of a second of them, and a
// client away longer starts over, which it must be able to do anyway.
// What the ring keeps is live heap, which the GC lets the heap grow by as
// much again: without a bound, 8,192 call events held about 3 MiB; at
// 1 MiB the ring was a quarter of the daemon's live heap under load
// (issue 33), for replays of half a second of it.
const DefaultRingBytes = 256 << 10

// DefaultSubscriberBuffer is how many events a subscriber may fall behind
// before it is cut off.
const DefaultSubscriberBuffer = 1024

// A Bus fans events out to subscribers. The zero value is not usable; call
// New. It is safe for concurrent use.
type Bus struct {
	now func() time.Time

	mu   sync.Mutex
	ring []Event // ring[(id-first) % len(ring)] is event id, for ids oldest to next-1
	size int     // the most slots ring grows to
	// first is the id of the first event, oldest that of the oldest one
	// kept, next that of the next one.
	first, oldest, next uint64
	bytes, maxBytes     int // the Data of the events kept, and its bound
	subs                map[*Subscription]struct{}
	closed              bool
}

// firstRing is how many slots a Bus's ring starts with. It doubles while
// it is full, up to the ring's size: a desktop's feed keeps a few hundred
// events, and a ring of 8,192 slots was over half a MiB of the daemon's
// live heap from the start (the GC lets the heap grow by as much again),
// while under load DefaultRingBytes keeps about 750 events in it.
const firstRing = 64

// New returns a Bus that keeps the last ringSize events (DefaultRingSize
// when ringSize <= 0), at most DefaultRingBytes of them.
func New(ringSize int) *Bus {
	if ringSize <= 0 {
		ringSize = DefaultRingSize
	}
	// Ids start at the time the bus was made, in microseconds, so that ids
	// of a later daemon are all larger than an earlier one's: a client that
	// reconnects after a restart is told to start over instead of being
	// handed unrelated events. (They stay below 2^53, exact in JavaScript.)
	first := uint64(time.Now().UnixMicro())
	return &Bus{now: time.Now, ring: make([]Event, min(firstRing, ringSize)), size: ringSize, first: first, oldest: first,
		next: first, maxBytes: DefaultRingBytes, subs: make(map[*Subscription]struct{})}
}

// slot is where event id lives in the ring.
func (b *Bus) slot(id uint64) *Event { return &b.ring[(id-b.first)%uint64(len(b.ring))] }

// makeRoom frees a slot for the next event in a full ring: it doubles the
// ring, up to its size, or forgets the oldest event; b.mu must be held.
func (b *Bus) makeRoom() {
	if len(b.ring) == b.size {
		b.forgetOldest() // its slot is the new event's
		return
	}
	ring := make([]Event, min(2*len(b.ring), b.size))
	for id := b.oldest; id < b.next; id++ {
		ring[(id-b.first)%uint64(len(ring))] = *b.slot(id)
	}
	b.ring = ring
}

// Publish adds an event of type typ with data encoded as JSON, and returns
// its id. It never blocks; data that cannot be encoded is an error.
func (b *Bus) Publish(typ string, data any) (uint64, error) {
	raw, err := json.Marshal(data)
	if err != nil {
		return 0, fmt.Errorf("events: encoding a %s event: %w", typ, err)
	}
	return b.PublishJSON(typ, raw), nil
}

// PublishJSON is Publish of data already encoded as JSON, for events made
// on every call (CallStart.AppendJSON), which json.Marshal would encode by
// reflection and then check again. raw must be valid JSON; it is kept, not
// copied: do not change it afterwards.
func (b *Bus) PublishJSON(typ string, raw []byte) uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return 0
	}
	ev := Event{ID: b.next, Type: typ, Time: b.now(), Data: raw}
	if b.next-b.oldest == uint64(len(b.ring)) {
		b.makeRoom()
	}
	b.next++
	*b.slot(ev.ID) = ev
	b.bytes += len(raw)
	for b.bytes > b.maxBytes && b.oldest < ev.ID {
		b.forgetOldest()
	}
	for s := range b.subs {
		select {
		case s.c <- ev:
		default:
			// Too slow: cut it off rather than hold everyone else up. It
			// reconnects with the last id it saw and catches up from the ring.
			s.lagged = true
			b.drop(s)
		}
	}
	return ev.ID
}

// forgetOldest drops the oldest event kept; b.mu must be held.
func (b *Bus) forgetOldest() {
	ev := b.slot(b.oldest)
	b.bytes -= len(ev.Data)
	*ev = Event{}
	b.oldest++
}

// LastID is the id of the latest event; before the first event it is one
// less than the first id, so it is always a valid "since".
func (b *Bus) LastID() uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.next - 1
}

// A Subscription receives the events published after it started.
type Subscription struct {
	bus *Bus
	c   chan Event
	// Backlog holds the events after the id asked for that were still in
	// the ring, oldest first; deliver them before reading C.
	Backlog []Event
	// Reset is true when events after the id asked for were already gone
	// from the ring: the subscriber missed some and must refetch its state.
	Reset  bool
	lagged bool // guarded by bus.mu
}

// C delivers the events published after Subscribe. It is closed when the
// subscription ends: by Close, by the Bus closing, or because the
// subscriber fell more than its buffer behind (Lagged reports that).
func (s *Subscription) C() <-chan Event { return s.c }

// Lagged reports whether the subscription was cut off for falling behind.
func (s *Subscription) Lagged() bool {
	s.bus.mu.Lock()
	defer s.bus.mu.Unlock()
	return s.lagged
}

// Close ends the subscription. It is safe to call more than once.
func (s *Subscription) Close() {
	s.bus.mu.Lock()
	defer s.bus.mu.Unlock()
	s.bus.drop(s)
}

// Subscribe starts a subscription with room for buffer events
// (DefaultSubscriberBuffer when <= 0). since is the id of the last event the
// subscriber has seen: 0 means "only new events"; a larger id fills Backlog
// with what came after it.
func (b *Bus) Subscribe(since uint64, buffer int) *Subscription {
	if buffer <= 0 {
		buffer = DefaultSubscriberBuffer
	}
	s := &Subscription{bus: b, c: make(chan Event, buffer)}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		close(s.c)
		return s
	}
	last := b.next - 1
	switch {
	case since == 0 || since == last:
	case since > last:
		// Not an id of this bus (a clock set back between two daemons).
		s.Reset = true
	default:
		from := since + 1
		if from < b.oldest {
			// Missed events, or an id of an earlier daemon.
			s.Reset = true
			from = b.oldest
		}
		for id := from; id <= last; id++ {
			s.Backlog = append(s.Backlog, *b.slot(id))
		}
	}
	b.subs[s] = struct{}{}
	return s
}

// Close ends every subscription; later publishes are ignored.
func (b *Bus) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	for s := range b.subs {
		b.drop(s)
	}
}

// drop removes s and closes its channel; b.mu must be held.
func (b *Bus) drop(s *Subscription) {
	if _, ok := b.subs[s]; ok {
		delete(b.subs, s)
		close(s.c)
	}
}
