package testutil

import (
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

func TestLoggerWritesToTheTestLogUntilItEnds(t *testing.T) {
	rec := &logRecorder{TB: t}
	var log *slog.Logger
	t.Run("inner", func(t *testing.T) {
		rec.TB = t
		log = Logger(rec)
		log.Info("hello", "k", "v")
		t.Cleanup(func() { log.Debug("from a cleanup") })
	})
	log.Info("after the end")
	if len(rec.lines) != 2 || !strings.Contains(rec.lines[0], "msg=hello k=v") || !strings.Contains(rec.lines[1], "from a cleanup") {
		t.Errorf("logged %q, want hello and the cleanup's line only", rec.lines)
	}
}

// logRecorder is a testing.TB that records Log lines and runs Cleanup
// functions with the inner test's.
type logRecorder struct {
	testing.TB
	mu    sync.Mutex
	lines []string
}

func (r *logRecorder) Log(args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines = append(r.lines, fmt.Sprint(args...))
}
