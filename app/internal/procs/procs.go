// Package procs sizes the daemon's Go scheduler to its load: one P
// (GOMAXPROCS=1) while the process uses less than a core, the runtime's
// default while it needs more.
//
// Most of a desktop daemon's life is a call now and then. With a second
// P idle, every goroutine made runnable (a request read, a server's
// response handed to its waiting call, a history batch) wakes another
// thread to look for work, which finds none and sleeps again: at one call
// at a time, `switchboard serve` on two Ps spent a fifth to a quarter of
// its CPU there (futex wake-ups, findRunnable, stopm; make bench-serve,
// docs/benchmarks.md), and on one P it served the same calls with that
// much less CPU and about the same latency. A load that fills the one P
// (several clients calling at once) needs the others, and gets them
// within a fifth of a second (half a second more when it starts from idle).
package procs

import (
	"context"
	"log/slog"
	"math"
	"os"
	"runtime"
	"runtime/metrics"
	"time"
)

const (
	// interval is how often the process's load is read.
	interval = 100 * time.Millisecond
	// wideAt and wideWait: on one P, an interval in which the process
	// used wideAt cores, or in which goroutines waited for the P (were
	// runnable, not running) wideWait on average, is a full one; after
	// wideAfter in a row the process gets the default Ps. The waits show
	// a full P on a machine whose cores other processes keep busy too
	// (the bench's clients and servers): the daemon's one thread then
	// gets less than a core, and its goroutines queue for it. Measured on
	// the bench's machine with one P: one call at a time, 0.5-0.6 cores
	// and waits of 9-16 µs; sixteen at a time, 0.7-0.9 cores and 40-130 µs.
	wideAt    = 0.9
	wideWait  = 30 * time.Microsecond
	wideAfter = 2
	// minWaits is the fewest waits sampled in an interval for their mean
	// to count: an idle daemon's few wake-ups say nothing of its load.
	minWaits = 32
	// narrowBelow is the cores used under which, for narrowAfter
	// intervals in a row, the process goes back to one P. The same load
	// takes more CPU on more Ps (the wake-ups one P saves: about a fifth
	// at one call at a time), so a load one P serves narrows the process
	// again once wide.
	narrowBelow = 0.8
	narrowAfter = 10
	// idleBelow and idleInterval: after an interval on one P in which the
	// process used less than idleBelow cores, the next read is
	// idleInterval later, so that an idle daemon wakes twice a second for
	// it, not ten times. A load that starts then gets the default Ps
	// within idleInterval and wideAfter intervals: in make bench-serve,
	// 16 calls at a time for 3.6 s from idle made 0.96 as many calls as
	// with reads every interval (0.92 with a second's pause).
	idleBelow    = 0.05
	idleInterval = 500 * time.Millisecond
)

// Adapt sizes GOMAXPROCS to the process's load until ctx ends, then
// gives it back to the runtime's default. It returns at once, doing
// nothing, when GOMAXPROCS is set in the environment (the user chose),
// when the default is already one P, or when the platform does not tell
// a process its CPU time.
func Adapt(ctx context.Context, log *slog.Logger) {
	if os.Getenv("GOMAXPROCS") != "" || runtime.GOMAXPROCS(0) == 1 {
		return
	}
	lastCPU, ok := processCPU()
	if !ok {
		return
	}
	lastAt := time.Now()
	var waits waitClock
	waits.read()
	runtime.GOMAXPROCS(1)
	defer runtime.SetDefaultGOMAXPROCS()
	var s sizer
	timer := time.NewTimer(interval)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-timer.C:
			cpu, _ := processCPU()
			elapsed := now.Sub(lastAt).Seconds()
			busy := (cpu - lastCPU).Seconds() / elapsed
			wait, waited := waits.read()
			lastCPU, lastAt = cpu, now
			if wide := s.next(busy, wait, waited); wide != s.wide {
				s.wide = wide
				if wide {
					runtime.SetDefaultGOMAXPROCS()
				} else {
					runtime.GOMAXPROCS(1)
				}
				log.Debug("scheduler resized to the load", "procs", runtime.GOMAXPROCS(0), "cores", busy, "wait", wait)
			}
			timer.Reset(s.pause(busy))
		}
	}
}

// A waitClock reads how long goroutines waited for a P, from the
// runtime's histogram of those waits (/sched/latencies:seconds), which
// samples some of them.
type waitClock struct {
	sample []metrics.Sample
	last   []uint64 // the histogram's counts at the last read
}

// read returns the mean of the waits sampled since the last read (each
// counted at the middle of its bucket), and how many there were.
func (w *waitClock) read() (mean time.Duration, n uint64) {
	if w.sample == nil {
		w.sample = []metrics.Sample{{Name: "/sched/latencies:seconds"}}
	}
	metrics.Read(w.sample)
	if w.sample[0].Value.Kind() != metrics.KindFloat64Histogram {
		return 0, 0 // not in this runtime
	}
	h := w.sample[0].Value.Float64Histogram()
	if len(w.last) != len(h.Counts) {
		w.last = make([]uint64, len(h.Counts))
	}
	var waited float64
	for i, count := range h.Counts {
		lo, hi := h.Buckets[i], h.Buckets[i+1]
		switch {
		case math.IsInf(lo, -1):
			lo = hi
		case math.IsInf(hi, 1):
			hi = lo
		}
		waited += float64(count-w.last[i]) * (lo + hi) / 2
		n += count - w.last[i]
		w.last[i] = count
	}
	if n == 0 {
		return 0, 0
	}
	return time.Duration(waited / float64(n) * float64(time.Second)), n
}

// A sizer decides, interval by interval, whether the process runs on one
// P or on the default Ps (wide).
type sizer struct {
	wide bool
	run  int // intervals in a row past the threshold of a change
}

// pause returns how long to wait before reading the load again, after an
// interval in which the process used busy cores.
func (s *sizer) pause(busy float64) time.Duration {
	if !s.wide && busy < idleBelow {
		return idleInterval
	}
	return interval
}

// next returns whether the next interval runs wide, after one in which
// the process used busy cores and goroutines waited wait for a P on
// average (of waits sampled).
func (s *sizer) next(busy float64, wait time.Duration, waits uint64) bool {
	change, after := busy >= wideAt || wait >= wideWait && waits >= minWaits, wideAfter
	if s.wide {
		change, after = busy < narrowBelow, narrowAfter
	}
	if !change {
		s.run = 0
		return s.wide
	}
	s.run++
	if s.run < after {
		return s.wide
	}
	s.run = 0
	return !s.wide
}
