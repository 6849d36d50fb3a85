package asks_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/switchboardhq/switchboard/app/asks"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// recorder keeps what a Board tells of its asks.
type recorder struct {
	mu       sync.Mutex
	asked    []asks.Ask
	answered []asks.Answer
	posted   chan asks.Ask
}

func newBoard(r *recorder) *asks.Board {
	return asks.New(asks.Options{
		Redact: func(json.RawMessage) json.RawMessage { return json.RawMessage(`{"token":"[redacted]"}`) },
		Asked: func(a asks.Ask) {
			r.mu.Lock()
			r.asked = append(r.asked, a)
			r.mu.Unlock()
			r.posted <- a
		},
		Answered: func(_ asks.Ask, ans asks.Answer) {
			r.mu.Lock()
			r.answered = append(r.answered, ans)
			r.mu.Unlock()
		},
	})
}

// TestBoard: an ask waits until answered (allowed or denied, by whom),
// until its deadline (an error, and "timeout" to Answered), or until its
// caller gives up ("cancelled"); its arguments are redacted; an answer of
// an ask that is not pending is ErrUnknown.
func TestBoard(t *testing.T) {
	for _, tt := range []struct {
		name    string
		answer  func(b *asks.Board, a asks.Ask)
		ctx     func() (context.Context, context.CancelFunc)
		allowed bool
		by      string
		err     error
	}{
		{"allowed", func(b *asks.Board, a asks.Ask) { b.Answer(a.ID, true, "dashboard") }, nil, true, "dashboard", nil},
		{"denied", func(b *asks.Board, a asks.Ask) { b.Answer(a.ID, false, "tray") }, nil, false, "tray", nil},
		{"timeout", func(*asks.Board, asks.Ask) {}, func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 50*time.Millisecond)
		}, false, "timeout", context.DeadlineExceeded},
		{"cancelled", nil, nil, false, "cancelled", context.Canceled},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := &recorder{posted: make(chan asks.Ask, 1)}
			b := newBoard(r)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			if tt.ctx != nil {
				ctx, cancel = tt.ctx()
			}
			defer cancel()
			done := make(chan struct{})
			var allowed bool
			var by string
			var err error
			go func() {
				defer close(done)
				allowed, by, err = b.Ask(ctx, asks.Ask{Server: "fs", Tool: "rm", Tier: "destructive", Arguments: json.RawMessage(`{"token":"sk-secret"}`)})
			}()
			a := <-r.posted
			if string(a.Arguments) != `{"token":"[redacted]"}` || a.ID == "" || a.Deadline.IsZero() || a.Asked.After(a.Deadline) {
				t.Errorf("posted %+v", a)
			}
			if p := b.Pending(); len(p) != 1 || p[0].ID != a.ID {
				t.Errorf("pending %+v", p)
			}
			if tt.answer != nil {
				tt.answer(b, a)
			} else {
				cancel()
			}
			<-done
			if !errors.Is(err, tt.err) || (err == nil && (allowed != tt.allowed || by != tt.by)) {
				t.Errorf("Ask = %v %q %v, want %v %q %v", allowed, by, err, tt.allowed, tt.by, tt.err)
			}
			if p := b.Pending(); len(p) != 0 {
				t.Errorf("still pending: %+v", p)
			}
			r.mu.Lock()
			if len(r.answered) != 1 || r.answered[0].By != tt.by || r.answered[0].Allowed != tt.allowed {
				t.Errorf("Answered heard %+v, want one by %s", r.answered, tt.by)
			}
			r.mu.Unlock()
			if _, err := b.Answer(a.ID, true, "cli"); !errors.Is(err, asks.ErrUnknown) {
				t.Errorf("answering it again: %v, want ErrUnknown", err)
			}
		})
	}
}
