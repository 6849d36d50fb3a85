package gateway

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/app/internal/testutil"
	"github.com/switchboardhq/switchboard/supervisor"
)

// scriptedBackends is a Backends whose Acquire answers as the test says,
// one answer per call, and whose events the test publishes.
type scriptedBackends struct {
	events     chan *supervisor.Event
	mu         sync.Mutex
	subscribed bool
	acquires   int
	// acquire answers the n-th Acquire (from 1).
	acquire func(n int) (Lease, error)
}

func (s *scriptedBackends) Subscribe(int) (<-chan *supervisor.Event, func()) {
	s.mu.Lock()
	s.subscribed = true
	s.mu.Unlock()
	return s.events, func() {}
}

func (s *scriptedBackends) Acquire(_ context.Context, _ string) (Lease, error) {
	s.mu.Lock()
	s.acquires++
	n := s.acquires
	s.mu.Unlock()
	return s.acquire(n)
}

func (s *scriptedBackends) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.acquires
}

// memLease leases an in-memory session.
type memLease struct{ cs *mcp.ClientSession }

func (l memLease) Session() *mcp.ClientSession { return l.cs }
func (l memLease) Do(ctx context.Context, fn func(context.Context, *mcp.ClientSession) error) error {
	return fn(ctx, l.cs)
}
func (memLease) Release()   {}
func (memLease) Err() error { return nil }
func (memLease) PID() int   { return 0 }

// serverWithTools connects an in-memory client session to a server
// offering tools.
func serverWithTools(t *testing.T, tools ...string) *mcp.ClientSession {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "scripted", Version: "1"}, nil)
	for _, name := range tools {
		srv.AddTool(&mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "gateway", Version: "1"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func toolNames(b *backend) []string {
	_, f := b.visible()
	var names []string
	for _, tool := range f.tools {
		names = append(names, tool.Name)
	}
	return names
}

// TestFailedListIsRetriedWhenReady: a list that fails is made again when a
// process of the server is next ready, also for a server listed before in
// this run, and also when the process became ready while the failing list
// ran (its ready event must not be dropped because a list was already
// made).
func TestFailedListIsRetriedWhenReady(t *testing.T) {
	for _, tt := range []struct {
		name string
		// readyDuring publishes the ready event from within the failing
		// Acquire, before the list fails; otherwise after it failed.
		readyDuring bool
	}{
		{"ready while the failing list runs", true},
		{"ready after the list failed", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ready := &supervisor.Event{Server: "alpha", Kind: supervisor.EventReady}
			first, second := serverWithTools(t, "one"), serverWithTools(t, "one", "two")
			failed := make(chan struct{})
			bk := &scriptedBackends{events: make(chan *supervisor.Event, 16)}
			bk.acquire = func(n int) (Lease, error) {
				switch n {
				case 1:
					return memLease{first}, nil
				case 2:
					if tt.readyDuring {
						bk.events <- ready
					}
					defer close(failed)
					return nil, errors.New("the process crashed")
				default:
					return memLease{second}, nil
				}
			}
			g := New(Options{Backends: bk})
			defer g.Close()
			g.Sync([]ServerConfig{{Name: "alpha"}})
			b, _ := g.backend("alpha")
			testutil.Eventually(t, 10*time.Second, "the first list", func() bool {
				return slices.Equal(toolNames(b), []string{"one"})
			})

			g.Relist("alpha") // the server announced a change; this list fails
			<-failed
			if !tt.readyDuring {
				testutil.Eventually(t, 10*time.Second, "the failed list to end", func() bool {
					return !b.fresh.Load()
				})
				bk.events <- ready
			}
			testutil.Eventually(t, 10*time.Second, "the failed list to be made again", func() bool {
				return slices.Equal(toolNames(b), []string{"one", "two"})
			})
			if n := bk.count(); n != 3 {
				t.Errorf("%d lists, want 3", n)
			}
		})
	}
}

// TestSubscribedWhenNewReturns: the gateway follows the supervisor's
// events from the moment New returns, so a server that becomes ready right
// after is seen.
func TestSubscribedWhenNewReturns(t *testing.T) {
	bk := &scriptedBackends{events: make(chan *supervisor.Event, 1)}
	g := New(Options{Backends: bk})
	defer g.Close()
	bk.mu.Lock()
	subscribed := bk.subscribed
	bk.mu.Unlock()
	if !subscribed {
		t.Error("New returned before subscribing to the supervisor's events")
	}
}
