// Package testutil holds the helpers the supervisor tree's tests share:
// polling for a condition with a deadline, and a buffer a process writes
// while a test reads it. The app has its own (app/internal/testutil): Go's
// internal rule keeps each one to its tree, and the supervisor imports
// nothing of the app.
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
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(pollInterval)
	}
}

// SyncBuffer is a bytes.Buffer safe for a writing process (a child's
// stderr, a logger) and a reading test at once.
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
