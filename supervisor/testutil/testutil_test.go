package testutil

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestEventuallyWaitsForTheCondition(t *testing.T) {
	var calls atomic.Int32
	Eventually(t, 5*time.Second, "the third call", func() bool { return calls.Add(1) >= 3 })
	if n := calls.Load(); n != 3 {
		t.Errorf("cond called %d times, want 3", n)
	}
}

// failRecorder is a testing.TB that records Fatalf instead of ending the test.
type failRecorder struct {
	testing.TB
	msg string
}

func (f *failRecorder) Helper() {}
func (f *failRecorder) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
}

func TestEventuallyFailsAtTheDeadline(t *testing.T) {
	rec := &failRecorder{TB: t}
	start := time.Now()
	fails := 0
	Eventually(rec, 50*time.Millisecond, "something that never happens", func() bool {
		if rec.msg != "" { // Fatalf returned: stop the loop as FailNow would
			fails++
			return true
		}
		return false
	})
	if took := time.Since(start); took < 50*time.Millisecond {
		t.Errorf("gave up after %s, before the deadline", took)
	}
	if fails != 1 || !strings.Contains(rec.msg, "timed out after 50ms waiting for something that never happens") {
		t.Errorf("failure message %q", rec.msg)
	}
}

func TestSyncBufferConcurrentWrites(t *testing.T) {
	var b SyncBuffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				b.Write([]byte("x"))
				_ = b.String()
			}
		})
	}
	wg.Wait()
	if got := len(b.String()); got != 800 {
		t.Errorf("%d bytes, want 800", got)
	}
}
