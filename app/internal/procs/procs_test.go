package procs

import (
	"context"
	"log/slog"
	"os"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app/internal/testutil"
)

// TestSizer: one P until wideAfter intervals in a row fill most of it (in
// CPU, or goroutines waiting for it), then the default until the load has
// stayed under narrowBelow for narrowAfter intervals.
func TestSizer(t *testing.T) {
	// quiet is n intervals of light load; wide, n answers "wide".
	quiet := func(n int) []float64 { return slices.Repeat([]float64{0.1}, n) }
	wide := func(n int) []bool { return slices.Repeat([]bool{true}, n) }
	// wide2 is wide after the first of n intervals (wideAfter is 2).
	wide2 := func(n int) []bool { return append([]bool{false}, wide(n-1)...) }
	const us = time.Microsecond
	tests := []struct {
		name string
		busy []float64       // cores used, interval by interval
		wait []time.Duration // mean wait for the P (nil: none)
		want []bool          // wide after each
	}{
		{"idle stays on one P", []float64{0, 0.1, 0.3}, nil, []bool{false, false, false}},
		{"a call at a time stays on one P", []float64{0.6, 0.8, 0.89, 0.7}, []time.Duration{10 * us, 16 * us, 12 * us, 29 * us},
			[]bool{false, false, false, false}},
		{"one full interval is not enough", []float64{0.95, 0.2, 0.95, 0.3}, nil, []bool{false, false, false, false}},
		{"a full P widens", []float64{0.2, 0.95, 1.0}, nil, []bool{false, false, true}},
		{"goroutines waiting for the P widen it", []float64{0.7, 0.75, 0.8}, []time.Duration{10 * us, 40 * us, 130 * us},
			[]bool{false, false, true}},
		{"a load near a core stays wide", []float64{0.95, 0.95, 0.85, 0.8, 0.9, 0.82}, nil, wide2(6)},
		{"narrows after narrowAfter light intervals", slices.Concat([]float64{1, 1}, quiet(narrowAfter+1)), nil,
			slices.Concat([]bool{false}, wide(narrowAfter), []bool{false, false})},
		{"a busy interval restarts the count", slices.Concat([]float64{1, 1}, quiet(narrowAfter-1), []float64{0.9}, quiet(narrowAfter)), nil,
			slices.Concat([]bool{false}, wide(2*narrowAfter), []bool{false})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if len(tt.busy) != len(tt.want) {
				t.Fatalf("%d intervals, %d answers", len(tt.busy), len(tt.want))
			}
			var s sizer
			for i, busy := range tt.busy {
				var wait time.Duration
				if tt.wait != nil {
					wait = tt.wait[i]
				}
				s.wide = s.next(busy, wait, minWaits)
				if s.wide != tt.want[i] {
					t.Fatalf("after %v: wide = %v, want %v", tt.busy[:i+1], s.wide, tt.want[i])
				}
			}
		})
	}
}

// TestSizerFewWaits: an idle daemon's few waits, however long, do not
// widen it.
func TestSizerFewWaits(t *testing.T) {
	var s sizer
	for range 2 * wideAfter {
		if s.wide = s.next(0.1, time.Millisecond, minWaits-1); s.wide {
			t.Fatalf("%d waits of 1ms in an interval widened the process", minWaits-1)
		}
	}
}

// TestPause: an idle process on one P reads its load every idleInterval, a
// busy or wide one every interval.
func TestPause(t *testing.T) {
	tests := []struct {
		wide bool
		busy float64
		want time.Duration
	}{
		{false, 0, idleInterval},
		{false, 0.01, idleInterval},
		{false, idleBelow, interval},
		{false, 0.5, interval},
		{true, 0, interval},
		{true, 1.5, interval},
	}
	for _, tt := range tests {
		s := sizer{wide: tt.wide}
		if got := s.pause(tt.busy); got != tt.want {
			t.Errorf("wide %v, %.2f cores busy: pause %s, want %s", tt.wide, tt.busy, got, tt.want)
		}
	}
}

// TestAdapt: Adapt runs the process on one P while it idles, on the
// default Ps while it keeps a core busy, and gives the default back when
// it ends.
func TestAdapt(t *testing.T) {
	if os.Getenv("GOMAXPROCS") != "" {
		t.Skip("GOMAXPROCS is set: Adapt leaves it")
	}
	def := runtime.GOMAXPROCS(0)
	if def == 1 {
		t.Skip("one P by default: nothing to adapt")
	}
	if _, ok := processCPU(); !ok {
		t.Skip("no CPU time on this platform")
	}
	ctx, cancel := context.WithCancel(context.Background())
	var adapting sync.WaitGroup
	adapting.Go(func() { Adapt(ctx, slog.New(slog.DiscardHandler)) })
	testutil.Eventually(t, 5*time.Second, "one P while idle", func() bool { return runtime.GOMAXPROCS(0) == 1 })

	// Goroutines that spin and yield in turn keep the one P full, in CPU
	// and in waits for it: on a machine whose other processes leave this
	// one less than a core (make test runs packages side by side), the
	// waits alone widen it.
	spin, spinning := make(chan struct{}), sync.WaitGroup{}
	for range 16 {
		spinning.Go(func() {
			for {
				select {
				case <-spin:
					return
				default:
				}
				for start := time.Now(); time.Since(start) < 50*time.Microsecond; {
				}
				runtime.Gosched()
			}
		})
	}
	testutil.Eventually(t, 10*time.Second, "the default Ps under load", func() bool { return runtime.GOMAXPROCS(0) == def })
	close(spin)
	spinning.Wait()
	testutil.Eventually(t, 10*time.Second, "one P again once idle", func() bool { return runtime.GOMAXPROCS(0) == 1 })

	cancel()
	adapting.Wait()
	if got := runtime.GOMAXPROCS(0); got != def {
		t.Fatalf("after Adapt ended GOMAXPROCS is %d, want the default %d", got, def)
	}
}

// TestWaitClock: goroutines that share one P wait for it, and the clock's
// mean is about how long a wait was.
func TestWaitClock(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var w waitClock
	w.read()
	// Four goroutines on one P take 100 turns each, a turn a slice of
	// 500 µs and a yield: each waits for the other three's slices, about
	// 1.5 ms, 400 times in all, of which the runtime samples one in eight.
	// (Waits for preemption alone, one per 10 ms slice, were too few to
	// sample every time under Wine; turns counted rather than timed keep
	// the count on a machine whose other work slows the test.)
	const spinners, turns, slice = 4, 100, 500 * time.Microsecond
	var spinning sync.WaitGroup
	began := time.Now()
	for range spinners {
		spinning.Go(func() {
			for range turns {
				for start := time.Now(); time.Since(start) < slice; {
				}
				runtime.Gosched()
			}
		})
	}
	spinning.Wait()
	mean, n := w.read()
	// A turn as it ran: longer than its slice where the clock is coarse
	// (Wine's is 10-15 ms) or the machine busy; a wait is about three.
	turn := time.Since(began) / (spinners * turns)
	if n < 16 || mean < turn/2 || mean > 4*(spinners-1)*turn {
		t.Fatalf("%d goroutines taking %d turns of %s on one P: %d waits sampled, of %s on average; want at least 16, of about %s",
			spinners, turns, turn, n, mean, (spinners-1)*turn)
	}
	t.Logf("%d waits sampled, of %s on average; turns of %s", n, mean, turn)
}
