package supervisor

import (
	"sync"
	"sync/atomic"
)

// broker fans events out to subscribers. Publishing never blocks: a
// subscriber whose buffer is full misses the event, and Dropped counts it.
type broker struct {
	mu      sync.Mutex
	subs    map[chan Event]struct{}
	dropped atomic.Uint64
}

func newBroker() *broker { return &broker{subs: make(map[chan Event]struct{})} }

func (b *broker) publish(ev Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for ch := range b.subs {
		select {
		case ch <- ev:
		default:
			b.dropped.Add(1)
		}
	}
}

func (b *broker) subscribe(buffer int) (<-chan Event, func()) {
	ch := make(chan Event, max(buffer, 1))
	b.mu.Lock()
	b.subs[ch] = struct{}{}
	b.mu.Unlock()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			b.mu.Lock()
			delete(b.subs, ch)
			b.mu.Unlock()
			close(ch)
		})
	}
}
