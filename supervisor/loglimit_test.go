package supervisor

import (
	"strings"
	"sync"
	"testing"
	"time"
)

func TestLogLimiter(t *testing.T) {
	var mu sync.Mutex
	var reports []LogLine
	l := newLogLimiter(func(line LogLine) {
		mu.Lock()
		defer mu.Unlock()
		reports = append(reports, line)
	})
	defer l.close()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

	// A burst passes whole.
	for i := range logBurstLines {
		if !l.admit(t0, 7, 10) {
			t.Fatalf("line %d of the burst dropped", i)
		}
	}
	// Past it, within the same instant: one line in logSample.
	kept := 0
	for range 10 * logSample {
		if l.admit(t0, 7, 10) {
			kept++
		}
	}
	if kept != 10 {
		t.Errorf("kept %d of %d lines past the burst, want 10", kept, 10*logSample)
	}
	// A second later the rate has refilled logRateLines.
	kept = 0
	for range logRateLines {
		if l.admit(t0.Add(time.Second), 7, 10) {
			kept++
		}
	}
	if kept != logRateLines {
		t.Errorf("kept %d lines a second later, want %d", kept, logRateLines)
	}
	// Bytes count too: a big line past the byte burst is dropped.
	l2 := newLogLimiter(func(LogLine) {})
	defer l2.close()
	n := 0
	for l2.admit(t0, 1, 8192) {
		n++
	}
	if n != logBurstBytes/8192 {
		t.Errorf("%d lines of 8 KiB passed the byte burst, want %d", n, logBurstBytes/8192)
	}

	l.flush()
	mu.Lock()
	defer mu.Unlock()
	if len(reports) != 1 {
		t.Fatalf("reports %+v, want one", reports)
	}
	r := reports[0]
	want := "switchboard dropped 990 log lines (9.7 KiB) written from 2026-03-01T12:00:00.000Z to 2026-03-01T12:00:00.000Z"
	if r.Stream != StreamDropped || r.PID != 7 || !strings.HasPrefix(r.Text, want) {
		t.Errorf("report %+v, want %q", r, want)
	}
}
