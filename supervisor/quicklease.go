package supervisor

import (
	"slices"
	"sync/atomic"
	"time"
)

// Quick leases: a call's lease on a shared pool's process, taken and given
// back without a message to the pool's goroutine.
//
// Every Acquire and every Release through run costs two goroutine
// hand-offs (the caller's closure to run, and, for Acquire, run's answer)
// and a reconcile over every process: at one call at a time, about a tenth
// of the daemon's CPU per call and a wake-up on each side of the call. Most
// calls need none of it: a ready process is there, and taking it changes
// nothing run decides. So run publishes the processes such a call may take
// (quickSet), and a call takes one by counting itself in the process's
// quick word, with a compare-and-swap; run reads the count wherever it
// weighs a process's load.
//
// What run decides stays run's:
//   - A process stops taking quick leases the moment run decides to stop or
//     retire it (the closed bit, set before the decision is acted on), so
//     none is handed a process on its way out. An idle stop closes the word
//     only if no quick lease holds it, in one compare-and-swap.
//   - A pool that may still grow hands a quick lease only on a process with
//     no other call: a second call at once goes through run, which sees the
//     process loaded and starts another, as before.
//   - A pool at its max has nothing to start: a call takes the least loaded
//     open process, however loaded.
//   - Housekeeping calls, session-mode pools and callers finding no open
//     process take the path through run.

// quickClosed is the bit of proc.quick that refuses quick leases; the bits
// below it count the quick leases held.
const quickClosed = int64(1) << 40

// A quickSet is what run publishes for quick leases: the processes that may
// take them and whether the pool is at its max.
type quickSet struct {
	procs []*proc
	full  bool
}

// quickCalls is how many quick leases hold pr.
func (pr *proc) quickCalls() int { return int(pr.quick.Load() &^ quickClosed) }

// calls is every call pr serves: leases through run and quick ones.
func (pr *proc) calls() int { return int(pr.inFlight.Load()) + pr.quickCalls() }

// load is pr's calls that weigh on it: housekeeping left out.
func (pr *proc) load() int {
	return int(pr.inFlight.Load()-pr.lightInFlight.Load()) + pr.quickCalls()
}

// usedAt is when pr last finished a call, through run or quick.
func (pr *proc) usedAt() time.Time {
	if q := pr.quickUsed.Load(); q > pr.lastUsed.UnixNano() {
		return time.Unix(0, q)
	}
	return pr.lastUsed
}

// closeQuick makes pr refuse quick leases; those it holds run to their end.
func (pr *proc) closeQuick() { pr.quick.Or(quickClosed) }

// closeIdleQuick closes pr's quick word if no quick lease holds it, and
// reports whether it did (or it was closed and free already).
func (pr *proc) closeIdleQuick() bool {
	v := pr.quick.Load()
	switch {
	case v == quickClosed:
		return true
	case v != 0:
		return false
	}
	return pr.quick.CompareAndSwap(0, quickClosed)
}

// acquireQuick returns a quick lease, or nil when the call must go through
// run.
func (p *Pool) acquireQuick() *Lease {
	set := p.quick.Load()
	if set == nil {
		return nil
	}
	for range 2 { // a lost race for a process: one more look
		var best *proc
		bestLoad := 0
		for _, pr := range set.procs {
			if pr.quick.Load()&quickClosed != 0 || pr.ctx.Err() != nil || pr.gone.Load() {
				continue
			}
			load := pr.load()
			if !set.full && load > 0 {
				continue
			}
			if best == nil || load < bestLoad {
				best, bestLoad = pr, load
			}
		}
		if best == nil {
			return nil
		}
		v := best.quick.Load()
		if v&quickClosed != 0 || !set.full && v != 0 {
			continue
		}
		if best.quick.CompareAndSwap(v, v+1) {
			return &Lease{pool: p, proc: best, quick: true}
		}
	}
	return nil
}

// releaseQuick gives back a quick lease. The last one on a process run has
// closed wakes run, which may be waiting for it to stop the process.
func (p *Pool) releaseQuick(pr *proc) {
	pr.quickUsed.Store(time.Now().UnixNano())
	if pr.quick.Add(-1) == quickClosed {
		p.post(func() {})
	}
}

// publishQuick sets which processes quick leases may take, after a
// reconcile (run goroutine): the ready ones of the current spec, in a
// shared pool that is wanted. It opens their quick words; the others'
// were closed when run decided their stop (stopProc) or retirement.
func (p *Pool) publishQuick(open bool) {
	next := p.quickScratch[:0]
	if open && p.spec.Pool.Mode != ModeSession {
		for _, pr := range p.procs {
			if pr.state == procReady && pr.gen == p.gen {
				pr.quick.And(^quickClosed)
				next = append(next, pr)
			}
		}
	}
	p.quickScratch = next
	full := len(p.procs) >= p.spec.Pool.Max
	if cur := p.quick.Load(); cur != nil && cur.full == full && slices.Equal(cur.procs, next) {
		return
	}
	if len(next) == 0 {
		p.quick.Store(nil)
		return
	}
	p.quick.Store(&quickSet{procs: slices.Clone(next), full: full})
}

// quickState is the pool's part of quick leases.
type quickState struct {
	quick        atomic.Pointer[quickSet]
	quickScratch []*proc // run's, reused by publishQuick
}
