package history

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app/record"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if path := os.Getenv(crashWriterEnv); path != "" {
		runCrashWriter(path) // the child of TestKill9DuringHeavyWrites; never returns
	}
	code := m.Run()
	cleanupBenchDB()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// t0 is a fixed clock origin, so tests never depend on the wall clock.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// fakeClock is an injectable Options.Now.
type fakeClock struct{ now time.Time }

func (c *fakeClock) Now() time.Time { return c.now }

func testOptions() Options {
	return Options{RetentionInterval: -1} // tests run Retain themselves
}

func openTest(t testing.TB, opts Options) *Store {
	t.Helper()
	return openAt(t, filepath.Join(t.TempDir(), "history.db"), opts)
}

func openAt(t testing.TB, path string, opts Options) *Store {
	t.Helper()
	s, err := Open(context.Background(), path, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// holdWriter holds the writer in each commit until release is called
// (more than once is fine: tests defer it too, to run before the Cleanup's
// Close); entered receives once the writer is held.
func holdWriter(opts *Options) (entered <-chan struct{}, release func()) {
	held := make(chan struct{}, 1)
	released := make(chan struct{})
	opts.beforeCommit = func() {
		select {
		case held <- struct{}{}:
		default:
		}
		<-released
	}
	var once sync.Once
	return held, func() { once.Do(func() { close(released) }) }
}

func flush(t testing.TB, s *Store) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Flush(ctx); err != nil {
		t.Fatalf("Flush: %v", err)
	}
}

// call makes a call started i seconds after t0.
func call(i int, server, name string, args string) record.Call {
	c := record.Call{
		Start:    t0.Add(time.Duration(i) * time.Second),
		Duration: time.Duration(i%100+1) * time.Millisecond,
		Server:   server, Method: "tools/call", Name: name,
		ClientLabel: "cursor", ClientName: "Cursor", ClientVersion: "1.0",
		Session: "s1", Outcome: record.OutcomeOK, PID: 4242,
		Response: json.RawMessage(`{"content":[{"type":"text","text":"done"}]}`), ResponseSize: 42,
	}
	if args != "" {
		c.Arguments = json.RawMessage(args)
	}
	return c
}
