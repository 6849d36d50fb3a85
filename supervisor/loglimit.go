package supervisor

import (
	"fmt"
	"sync"
	"time"
)

// A server's log lines (stderr, and text on stdout) are rate-limited before
// they become events, so that a server that floods its stderr cannot flood
// the daemon's memory, the history or the live views: a burst is let
// through whole, then lines pass at a steady rate, and past that one line
// in logSample is kept. Every second in which lines were dropped ends with
// a line of stream StreamDropped saying how many and when.
const (
	logBurstLines = 1000
	logRateLines  = 200 // lines a second
	logBurstBytes = 2 << 20
	logRateBytes  = 256 << 10 // bytes a second
	logSample     = 100       // past the rate, one line in logSample is kept
	logReportAt   = time.Second
)

// StreamDropped is the stream of the line that reports dropped log lines.
const StreamDropped = "dropped"

// logLimiter is one pool's token buckets (lines and bytes) and its count of
// dropped lines since the last report. It is safe for concurrent use.
type logLimiter struct {
	report func(LogLine) // emits a report line

	mu           sync.Mutex
	lines, bytes float64   // tokens left
	refilled     time.Time // when tokens were last added
	sampled      int       // lines since the last one kept while over the rate
	drop         dropCount
	armed        bool // a report is due
	closed       bool
	timer        *time.Timer
}

// dropCount is what one report says.
type dropCount struct {
	lines, bytes int64
	first, last  time.Time
	pid          int
}

func newLogLimiter(report func(LogLine)) *logLimiter {
	return &logLimiter{report: report, lines: logBurstLines, bytes: logBurstBytes}
}

// admit says whether a line of n bytes written by pid at now is kept.
func (l *logLimiter) admit(now time.Time, pid, n int) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.refilled.IsZero() {
		dt := now.Sub(l.refilled).Seconds()
		l.lines = min(logBurstLines, l.lines+dt*logRateLines)
		l.bytes = min(logBurstBytes, l.bytes+dt*logRateBytes)
	}
	l.refilled = now
	if l.lines >= 1 && l.bytes >= float64(n) {
		l.lines--
		l.bytes -= float64(n)
		l.sampled = 0
		return true
	}
	l.sampled++
	if l.sampled >= logSample {
		l.sampled = 0
		return true
	}
	d := &l.drop
	if d.lines == 0 {
		d.first = now
	}
	d.lines++
	d.bytes += int64(n)
	d.last, d.pid = now, pid
	if !l.armed && !l.closed {
		l.armed = true
		l.timer = time.AfterFunc(logReportAt, l.flush)
	}
	return false
}

// flush reports the lines dropped since the last report.
func (l *logLimiter) flush() {
	l.mu.Lock()
	d := l.drop
	l.drop = dropCount{}
	l.armed = false
	l.mu.Unlock()
	if d.lines > 0 {
		l.report(LogLine{Time: time.Now(), PID: d.pid, Stream: StreamDropped, Text: d.text()})
	}
}

// close reports what is left and stops reporting.
func (l *logLimiter) close() {
	l.mu.Lock()
	l.closed = true
	t := l.timer
	l.mu.Unlock()
	if t != nil && t.Stop() {
		l.flush()
	}
}

func (d dropCount) text() string {
	return fmt.Sprintf("switchboard dropped %d log lines (%s) written from %s to %s: "+
		"past a burst of %d lines the server may log %d lines or %d KiB a second, and one line in %d beyond that is kept",
		d.lines, sizeText(d.bytes), d.first.UTC().Format(timeMilli), d.last.UTC().Format(timeMilli),
		logBurstLines, logRateLines, logRateBytes>>10, logSample)
}

const timeMilli = "2006-01-02T15:04:05.000Z07:00"

func sizeText(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
