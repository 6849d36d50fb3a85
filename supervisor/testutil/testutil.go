// Package testutil holds the test helpers every package of the module
// shares: polling for a condition with a deadline, and a buffer a process
// writes while a test reads it. It lives in the supervisor's tree because
// the supervisor imports nothing of the app while the app may import the
// supervisor: one copy serves both (app/internal/testutil builds on it).
package testutil

import (
	"bytes"
	"sync"
	"testing"
	"time"
)

// pollInterval is how often Eventually checks its condition.
const pollInterval = 10 * time.Millisecond

// Eventually polls cond until it holds, and fails the test if it does not
// within d; what names the awaited thing in the failure.
func Eventually(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	EventuallyEvery(t, d, pollInterval, what, cond)
}

// EventuallyEvery is Eventually checking cond every interval, for
// conditions that cost something to check (one that runs a program).
func EventuallyEvery(t testing.TB, d, interval time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(interval)
	}
}

// SyncBuffer is a bytes.Buffer safe for a writing process (a child's
// stdout or stderr, a logger) and a reading test at once.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String is everything written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
