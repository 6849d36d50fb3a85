// Package asks is the daemon's board of pending asks: calls of destructive
// tools that wait for the user's yes when their client cannot ask the user
// itself (see the gateway's asks.go). Each pending ask is shown on the
// dashboard, in the tray and by `switchboard asks`, with its server, tool,
// redacted arguments and deadline, until the user allows or denies it or
// its deadline (the gateway's ask timeout) passes.
package asks

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"
)

// An Ask is one call waiting for the user's answer.
type Ask struct {
	ID       string `json:"id"`
	Server   string `json:"server"`
	Tool     string `json:"tool"`
	Endpoint string `json:"endpoint,omitempty"`
	Client   string `json:"client,omitempty"`
	Tier     string `json:"tier"`
	// Arguments are redacted as the history redacts a call's.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Asked     time.Time       `json:"asked"`
	Deadline  time.Time       `json:"deadline"`
}

// An Answer is how an ask ended.
type Answer struct {
	ID      string    `json:"id"`
	Allowed bool      `json:"allowed"`
	By      string    `json:"by"` // record.DecidedBy...
	At      time.Time `json:"at"`
}

// Options configure a Board.
type Options struct {
	// Redact returns a call's arguments as shown (nil: shown as sent).
	Redact func(json.RawMessage) json.RawMessage
	// Asked and Answered hear of each ask as it starts and ends (a
	// timeout or a client gone away is an answer too, By "timeout" or
	// "cancelled"); they must not block. Either may be nil.
	Asked    func(Ask)
	Answered func(Ask, Answer)
}

// ErrUnknown is Answer's error for an ask that is not pending (never was,
// or was answered or timed out already).
var ErrUnknown = errors.New("no such pending ask")

// A Board holds the pending asks. Its zero value is not usable: use New.
type Board struct {
	opts Options

	mu      sync.Mutex
	pending map[string]*entry
}

type entry struct {
	ask    Ask
	answer chan Answer // buffered, written once under Board.mu
}

// New makes an empty board.
func New(opts Options) *Board {
	return &Board{opts: opts, pending: map[string]*entry{}}
}

// Ask puts a on the board and waits until the user answers it or ctx
// ends (a's deadline is ctx's). It returns whether the call is allowed and
// who said so, or ctx's error.
func (b *Board) Ask(ctx context.Context, a Ask) (allowed bool, by string, err error) {
	a.ID = "ask-" + rand.Text()[:12]
	a.Asked = time.Now().UTC()
	if d, ok := ctx.Deadline(); ok {
		a.Deadline = d.UTC()
	}
	if b.opts.Redact != nil {
		a.Arguments = b.opts.Redact(a.Arguments)
	}
	e := &entry{ask: a, answer: make(chan Answer, 1)}
	b.mu.Lock()
	b.pending[a.ID] = e
	b.mu.Unlock()
	if b.opts.Asked != nil {
		b.opts.Asked(a)
	}
	select {
	case ans := <-e.answer:
		return ans.Allowed, ans.By, nil
	case <-ctx.Done():
	}
	b.mu.Lock()
	_, still := b.pending[a.ID]
	delete(b.pending, a.ID)
	b.mu.Unlock()
	if !still { // answered just as ctx ended: the answer stands
		ans := <-e.answer
		return ans.Allowed, ans.By, nil
	}
	by = "timeout"
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		by = "cancelled"
	}
	if b.opts.Answered != nil {
		b.opts.Answered(a, Answer{ID: a.ID, By: by, At: time.Now().UTC()})
	}
	return false, "", ctx.Err()
}

// Answer decides the pending ask id: allowed or not, by who.
func (b *Board) Answer(id string, allowed bool, by string) (Answer, error) {
	b.mu.Lock()
	e, ok := b.pending[id]
	if ok {
		delete(b.pending, id)
	}
	b.mu.Unlock()
	if !ok {
		return Answer{}, fmt.Errorf("answering %q: %w", id, ErrUnknown)
	}
	ans := Answer{ID: id, Allowed: allowed, By: by, At: time.Now().UTC()}
	e.answer <- ans
	if b.opts.Answered != nil {
		b.opts.Answered(e.ask, ans)
	}
	return ans, nil
}

// Pending returns the pending asks, oldest first.
func (b *Board) Pending() []Ask {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]Ask, 0, len(b.pending))
	for _, id := range slices.Sorted(maps.Keys(b.pending)) {
		out = append(out, b.pending[id].ask)
	}
	slices.SortStableFunc(out, func(x, y Ask) int { return x.Asked.Compare(y.Asked) })
	return out
}
