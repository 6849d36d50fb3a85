package supervisor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/supervisor/confine"
)

// A Pool runs the processes of one server.
//
// One goroutine (run) owns all of the pool's state. Callers talk to it by
// sending closures on calls (do waits for the result, post does not), and
// the processes talk to it through events:
//
//	Acquire ──calls──▶ ┌──────────┐ ◀──events── proc.supervise (one per process)
//	Release ──calls──▶ │ Pool.run │ ◀──events── proc.ping
//	Stop/Start ──────▶ └──────────┘ ──stop()──▶ proc
//
// A call on a shared pool with a free ready process skips the calls
// channel: it takes a quick lease (quicklease.go), which run counts but
// does not hand out.
//
// After every message run reconciles: it hands waiting callers a process,
// starts processes (within max, after any backoff), stops idle or retired
// ones, and publishes state changes. Every stop, whatever asks for it, goes
// through stopProc on run, which hands it to the proc's goroutine (stop).
type Pool struct {
	sup    *Supervisor
	name   string
	client *mcp.Client
	logs   *logRing
	limit  *logLimiter // log lines past the rate are dropped and reported

	calls  chan func()
	events chan procEvent
	done   chan struct{} // closed when run returns

	usage       atomic.Pointer[Usage]
	nonProtocol atomic.Int64 // lines on stdout that were not JSON-RPC messages
	quickState               // leases taken without run (quicklease.go)

	// Owned by run.
	spec Spec
	// confinement is what the last process started reported (run goroutine).
	confinement *confine.Status
	policy      *confine.Policy
	policyGen   int
	gen         int // bumped by update and restart; older processes retire
	procs       []*proc
	waiters     []*waiter
	readyWait   []chan error // Start and Restart callers waiting for a ready process
	stoppedWait []chan struct{}
	wanted      bool // false after Stop: no process is started
	keepOne     bool // Start asked for a running process even with min 0
	// retry is set when a start someone asked for failed: the pool keeps
	// starting a process, with backoff, until one is ready or the server
	// is failing (and again after the cool-down), so a failed first start
	// follows the crash rules instead of leaving the server down for good.
	retry       bool
	closing     bool
	state       State
	failingTill time.Time // zero unless failing
	crashes     []time.Time
	delay       time.Duration // current backoff step
	lastCrash   time.Time
	notBefore   time.Time // no start before this (backoff)
	restarts    int
	lastErr     error
	lastInit    *mcp.InitializeResult
}

// waiter is an Acquire call waiting for a process.
type waiter struct {
	reply chan acquired // buffered: the pool never blocks on a caller
	light bool          // housekeeping (see Housekeeping): not load
	// state moves once from waiting to granted (by the pool) or to
	// abandoned (by a caller whose context ended), whichever comes first.
	state atomic.Int32
}

const (
	waiting int32 = iota
	granted
	abandoned
)

type acquired struct {
	lease *Lease
	err   error
}

func newPool(s *Supervisor, spec Spec) *Pool {
	p := &Pool{
		sup:    s,
		name:   spec.Name,
		client: s.newClient(spec.Name),
		logs:   newLogRing(s.opts.LogLines),
		calls:  make(chan func()),
		events: make(chan procEvent),
		done:   make(chan struct{}),
		spec:   spec,
		wanted: true,
		state:  StateStopped,
	}
	p.limit = newLogLimiter(p.addLog)
	go p.run()
	return p
}

// Name is the server's name.
func (p *Pool) Name() string { return p.name }

func (p *Pool) run() {
	defer close(p.done)
	defer p.limit.close() // the last report of dropped lines
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		now := time.Now()
		p.reconcile(now)
		if p.closing && len(p.procs) == 0 {
			return
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		if wake := p.nextWake(now); !wake.IsZero() {
			timer.Reset(max(wake.Sub(now), time.Millisecond))
		}
		select {
		case fn := <-p.calls:
			fn()
		case ev := <-p.events:
			p.handle(ev, time.Now())
		case <-timer.C:
		}
	}
}

// do runs fn on the pool's goroutine and waits for it. It reports false when
// the pool has shut down.
func (p *Pool) do(fn func()) bool {
	ran := make(chan struct{})
	select {
	case p.calls <- func() { fn(); close(ran) }:
		<-ran
		return true
	case <-p.done:
		return false
	}
}

// post runs fn on the pool's goroutine without waiting for it.
func (p *Pool) post(fn func()) {
	select {
	case p.calls <- fn:
	case <-p.done:
	}
}

func (p *Pool) report(ev procEvent) {
	select {
	case p.events <- ev:
	case <-p.done:
	}
}

func (p *Pool) publish(ev Event) {
	ev.Server = p.name
	if ev.Time.IsZero() {
		ev.Time = time.Now()
	}
	p.sup.events.publish(ev)
}

// logLine keeps and publishes a line a process wrote, unless the server
// logs faster than the limiter lets through.
func (p *Pool) logLine(pid int, stream, text string) {
	now := time.Now()
	if !p.limit.admit(now, pid, len(text)) {
		return
	}
	p.addLog(LogLine{Time: now, PID: pid, Stream: stream, Text: text})
}

func (p *Pool) addLog(l LogLine) {
	p.logs.add(l)
	p.publish(Event{Time: l.Time, Kind: EventLog, PID: l.PID, Stream: l.Stream, Message: l.Text})
}

// Acquire returns a lease on a ready process, starting one if needed and
// allowed, and waiting (within ctx) when none is free. In shared mode the
// lease is for one call: release it when the call returns. In session mode
// the process is the caller's alone until it releases the lease, which stops
// the process.
func (p *Pool) Acquire(ctx context.Context) (*Lease, error) {
	light := isHousekeeping(ctx)
	if !light {
		if l := p.acquireQuick(); l != nil {
			return l, nil
		}
	}
	w := &waiter{reply: make(chan acquired, 1), light: light}
	// Queue the waiter without waiting for it to be queued (post, not do):
	// the caller then wakes once, for the answer, instead of once for the
	// queueing and again for the answer — a goroutine wake-up fewer on
	// every call's path. The pool answers every waiter it has queued, with
	// an error if it shuts down.
	select {
	case p.calls <- func() { p.waiters = append(p.waiters, w) }:
	case <-p.done:
		return nil, fmt.Errorf("server %q: %w", p.name, ErrClosed)
	}
	select {
	case r := <-w.reply:
		return r.lease, r.err
	case <-ctx.Done():
		if w.state.CompareAndSwap(waiting, abandoned) {
			return nil, p.waitError(ctx)
		}
		r := <-w.reply // granted while we gave up
		if r.lease != nil {
			r.lease.Release()
		}
		return nil, p.waitError(ctx)
	}
}

// waitError explains why an Acquire gave up.
func (p *Pool) waitError(ctx context.Context) error {
	var msg string
	p.do(func() {
		switch {
		case p.spec.Pool.Mode == ModeSession && len(p.procs) >= p.spec.Pool.Max:
			msg = fmt.Sprintf("all %d processes are leased to other sessions (pool max %d)", len(p.procs), p.spec.Pool.Max)
		case p.state == StateBackoff && p.lastErr != nil:
			msg = fmt.Sprintf("restarting after a crash: %v", p.lastErr)
		default:
			msg = fmt.Sprintf("no process became ready (state %s)", p.state)
		}
	})
	return fmt.Errorf("server %q: %s: %w", p.name, msg, context.Cause(ctx))
}

// Start makes the pool run again after Stop or a failing state and waits
// until a process is ready. On a running pool it returns at once.
func (p *Pool) Start(ctx context.Context) error {
	ready := make(chan error, 1)
	if !p.do(func() {
		p.wanted, p.keepOne = true, true
		p.clearFailing()
		if p.hasReady() {
			ready <- nil
			return
		}
		p.readyWait = append(p.readyWait, ready)
	}) {
		return fmt.Errorf("server %q: %w", p.name, ErrClosed)
	}
	return p.await(ctx, ready)
}

// Restart stops every process of the pool and starts it again.
func (p *Pool) Restart(ctx context.Context) error {
	ready := make(chan error, 1)
	if !p.do(func() {
		p.gen++
		p.stopAll()
		p.wanted, p.keepOne = true, true
		p.clearFailing()
		p.readyWait = append(p.readyWait, ready)
	}) {
		return fmt.Errorf("server %q: %w", p.name, ErrClosed)
	}
	return p.await(ctx, ready)
}

// hasReady reports whether a process of the current spec is ready to serve.
func (p *Pool) hasReady() bool {
	for _, pr := range p.procs {
		if pr.state == procReady && pr.gen == p.gen && pr.ctx.Err() == nil && !pr.gone.Load() {
			return true
		}
	}
	return false
}

func (p *Pool) await(ctx context.Context, ch <-chan error) error {
	select {
	case err := <-ch:
		return err
	case <-ctx.Done():
		return fmt.Errorf("server %q: waiting for a ready process: %w", p.name, context.Cause(ctx))
	}
}

// Stop stops every process and keeps the pool down until Start. It returns
// when the processes have exited. A pool the user stopped is stopped, not
// failed: its last error and failing state are let go (the lifecycle
// history keeps them).
func (p *Pool) Stop(ctx context.Context) error {
	stopped := make(chan struct{})
	if !p.do(func() {
		p.wanted, p.keepOne, p.retry = false, false, false
		if p.lastErr != nil || !p.failingTill.IsZero() {
			p.lastErr = nil
			p.clearFailing()
			if p.state == StateStopped {
				// Down already (a failed start): no state change will tell
				// the pages and the tray that it no longer reads failed.
				p.publish(Event{Kind: EventState, State: StateStopped, Message: "stopped: the last failure is let go"})
			}
		}
		p.stoppedWait = append(p.stoppedWait, stopped)
	}) {
		return nil
	}
	select {
	case <-stopped:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("server %q: waiting for processes to stop: %w", p.name, context.Cause(ctx))
	}
}

// update switches the pool to a new spec. Processes of the old spec finish
// their calls (and leases) and are then stopped; new ones use the new spec.
func (p *Pool) update(spec Spec) {
	p.do(func() {
		live := 0
		for _, pr := range p.procs {
			if pr.state != procStopping {
				live++
			}
		}
		p.spec = spec
		p.gen++
		p.keepOne = p.keepOne || live > 0
		p.clearFailing()
	})
}

// close stops the pool for good and waits for its processes to exit.
func (p *Pool) close(ctx context.Context) error {
	p.post(func() { p.closing = true })
	select {
	case <-p.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("server %q: stopping: %w", p.name, context.Cause(ctx))
	}
}

func (p *Pool) clearFailing() {
	p.failingTill = time.Time{}
	p.crashes = nil
	p.notBefore = time.Time{}
	p.delay = 0
}

// Status returns a snapshot of the pool.
func (p *Pool) Status() PoolStatus {
	st := PoolStatus{Name: p.name}
	p.do(func() {
		st.Mode, st.Min, st.Max = p.spec.Pool.Mode, p.spec.Pool.Min, p.spec.Pool.Max
		if r := p.spec.Remote; r != nil {
			st.URL = shownURL(r.URL)
		}
		st.State = p.state
		st.Waiting = len(p.waiters)
		st.Restarts = p.restarts
		st.Confine = p.spec.Confine.Clone()
		if p.spec.Confine != nil {
			st.Confinement = p.confinement
			if p.policy != nil && p.policyGen == p.gen {
				st.Confine = p.policy.Clone() // with the program's folders
			}
		}
		if p.lastErr != nil {
			st.LastError = p.lastErr.Error()
		}
		for _, pr := range p.procs {
			ps := ProcessStatus{PID: pr.pid, State: pr.state.String(), Started: pr.started,
				InFlight: pr.calls(), Leased: pr.leased, Transport: string(pr.transport)}
			if pr.pid != 0 { // set with the spawn report, after confinement
				ps.Confinement = pr.confinement
			}
			if pr.state == procReady && pr.init != nil {
				ps.Protocol = pr.init.ProtocolVersion
				if si := pr.init.ServerInfo; si != nil {
					ps.Server = si.Name + " " + si.Version
				}
			}
			st.Processes = append(st.Processes, ps)
		}
	})
	st.Usage = p.usage.Load()
	st.NonProtocolLines = p.nonProtocol.Load()
	if usage := p.sup.sampler.perProcess(p.name); usage != nil {
		for i := range st.Processes {
			st.Processes[i].Usage = usage[st.Processes[i].PID]
		}
	}
	st.Logs = p.logs.snapshot(0, 0)
	return st
}

// InitializeResult returns what the most recent process answered to
// initialize (capabilities, server info, instructions, protocol version), or
// nil if none has started yet.
func (p *Pool) InitializeResult() *mcp.InitializeResult {
	var res *mcp.InitializeResult
	p.do(func() { res = p.lastInit })
	return res
}

// readyPIDs lists the processes that answered initialize.
func (p *Pool) readyPIDs() []int {
	var pids []int
	p.do(func() {
		for _, pr := range p.procs {
			if pr.state == procReady && pr.pid > 0 { // a remote server's connection has none
				pids = append(pids, pr.pid)
			}
		}
	})
	return pids
}

// handle applies what a process reported.
func (p *Pool) handle(ev procEvent, now time.Time) {
	pr := ev.proc
	switch ev.kind {
	case procEventSpawned:
		pr.pid, pr.started = pr.osPID, now
		if pr.confinement != nil {
			p.confinement, p.policy, p.policyGen = pr.confinement, pr.policy, pr.gen
		}

	case procEventReady:
		if pr.state == procStarting {
			pr.state = procReady
			pr.lastUsed, pr.lastPing = now, now
		}
		if pr.gen == p.gen {
			p.retry = false
		}
		p.lastInit = pr.init
		p.publish(Event{Kind: EventReady, PID: pr.pid})
		p.sup.logger.Info("server ready", "server", p.name, "pid", pr.pid, "protocol", pr.init.ProtocolVersion)
		if pr.gen == p.gen {
			p.notifyReady(nil)
		}

	case procEventPinged:
		pr.pinging = false
		pr.lastPing = now
		if ev.err != nil && pr.state == procReady {
			p.sup.logger.Warn("server stopped answering pings; restarting it", "server", p.name, "pid", pr.pid, "err", ev.err)
			p.stopProc(pr, stopUnhealthy)
		}

	case procEventExited:
		p.procs = slices.DeleteFunc(p.procs, func(x *proc) bool { return x == pr })
		// A remote session the server ended is no failure of the server's:
		// the next call connects again, at once.
		crashed := !errors.Is(ev.err, ErrStopped) && !errors.Is(ev.err, ErrSessionExpired)
		if !crashed {
			p.publish(Event{Kind: EventStopped, PID: pr.pid, Message: ev.err.Error()})
			p.sup.logger.Info("server process stopped", "server", p.name, "pid", pr.pid, "reason", ev.err)
			break
		}
		p.crashed(pr, ev.err, now)
	}
}

// crashed counts an unexpected end and decides when to start again.
func (p *Pool) crashed(pr *proc, err error, now time.Time) {
	p.restarts++
	p.lastErr = err
	var exit string
	if ee, ok := errors.AsType[*ExitError](err); ok {
		exit = ee.Status
	}
	p.publish(Event{Kind: EventCrashed, PID: pr.pid, Exit: exit, Message: err.Error()})
	p.sup.logger.Error("server process failed", "server", p.name, "pid", pr.pid, "err", err)

	// Callers waiting for this process to become ready get its error now
	// rather than at their deadline.
	if pr.state == procStarting && pr.gen == p.gen {
		p.failWaiters(err)
		p.notifyReady(err)
		p.retry = p.wanted && !p.closing
	}

	o := p.sup.opts
	p.crashes = append(slices.DeleteFunc(p.crashes, func(t time.Time) bool { return now.Sub(t) > o.CrashWindow }), now)
	if needsUser := errors.Is(err, ErrNeedsUser); needsUser || len(p.crashes) >= o.CrashLimit {
		p.failingTill = now.Add(o.FailingCoolDown)
		p.keepOne = false
		msg := fmt.Sprintf("%d crashes within %s; next try at %s", len(p.crashes), o.CrashWindow, p.failingTill.Format(time.TimeOnly))
		if needsUser {
			msg = fmt.Sprintf("%v; next try at %s, or when started again", err, p.failingTill.Format(time.TimeOnly))
		}
		p.publish(Event{Kind: EventFailing, State: StateFailing, Message: msg})
		p.sup.logger.Error("server is failing: too many crashes; it stays down until started again",
			"server", p.name, "crashes", len(p.crashes), "window", o.CrashWindow, "coolDown", o.FailingCoolDown)
		return
	}
	if p.delay == 0 || now.Sub(p.lastCrash) > o.BackoffReset {
		p.delay = o.BackoffInitial
	} else {
		p.delay = min(p.delay*2, o.BackoffMax)
	}
	p.lastCrash = now
	p.notBefore = now.Add(p.delay)
	p.publish(Event{Kind: EventBackoff, Delay: p.delay})
}

func (p *Pool) failing(now time.Time) bool {
	return !p.failingTill.IsZero() && now.Before(p.failingTill)
}

func (p *Pool) failWaiters(err error) {
	for _, w := range p.waiters {
		if w.state.CompareAndSwap(waiting, granted) {
			w.reply <- acquired{err: err}
		}
	}
	p.waiters = nil
}

func (p *Pool) notifyReady(err error) {
	for _, ch := range p.readyWait {
		ch <- err
	}
	p.readyWait = nil
}

// unavailable explains why the pool serves nothing right now.
func (p *Pool) unavailable(now time.Time) error {
	switch {
	case p.closing:
		return fmt.Errorf("server %q is shutting down: %w", p.name, ErrStopped)
	case p.failing(now) && errors.Is(p.lastErr, ErrNeedsUser):
		// The error says what the user should do (sign in), and that
		// starts the server again: nothing to add.
		return fmt.Errorf("%w (%w)", p.lastErr, ErrFailing)
	case p.failing(now):
		return fmt.Errorf("server %q is %w after %d crashes within %s (last: %v); start it again to retry",
			p.name, ErrFailing, len(p.crashes), p.sup.opts.CrashWindow, p.lastErr)
	default:
		return fmt.Errorf("server %q is %w; start it to use it", p.name, ErrStopped)
	}
}

// reconcile moves the pool toward what it should be; see Pool.
func (p *Pool) reconcile(now time.Time) {
	p.waiters = slices.DeleteFunc(p.waiters, func(w *waiter) bool { return w.state.Load() != waiting })
	if !p.failingTill.IsZero() && !p.failing(now) {
		p.sup.logger.Info("failing cool-down over; trying the server again", "server", p.name)
		p.clearFailing()
	}

	if p.closing || !p.wanted || p.failing(now) {
		p.stopAll()
		err := p.unavailable(now)
		p.failWaiters(err)
		p.notifyReady(err)
		if len(p.procs) == 0 {
			for _, ch := range p.stoppedWait {
				close(ch)
			}
			p.stoppedWait = nil
		}
		p.setState(now)
		p.publishQuick(false)
		return
	}

	// Processes of an older spec retire once nothing uses them.
	for _, pr := range p.procs {
		if pr.gen != p.gen {
			pr.closeQuick()
			if pr.calls() == 0 && !pr.leased {
				p.stopProc(pr, stopAsked)
			}
		}
	}
	p.dispatch(now)
	p.scale(now)
	p.stopIdle(now)
	p.pingDue(now)
	p.setState(now)
	p.publishQuick(true)
}

// dispatch hands ready processes to waiting callers: in shared mode the
// least busy process, in session mode a spare one.
func (p *Pool) dispatch(now time.Time) {
	for len(p.waiters) > 0 {
		var best *proc
		for _, pr := range p.procs {
			if pr.state != procReady || pr.gen != p.gen || pr.leased || pr.ctx.Err() != nil || pr.gone.Load() {
				continue // a process whose ctx ended died: its exit report is on the way
			}
			if best == nil || pr.calls() < best.calls() {
				best = pr
			}
		}
		if best == nil {
			return
		}
		w := p.waiters[0]
		p.waiters = p.waiters[1:]
		if !w.state.CompareAndSwap(waiting, granted) {
			continue
		}
		best.inFlight.Add(1)
		if w.light {
			best.lightInFlight.Add(1)
		}
		best.lastUsed = now
		if p.spec.Pool.Mode == ModeSession {
			best.leased = true
		}
		w.reply <- acquired{lease: &Lease{pool: p, proc: best, light: w.light}}
	}
}

// scale starts processes: up to min, one for waiting callers, one more when
// every process is loaded (shared) or a spare per waiting session (session) —
// never beyond max counting every process that still exists, and not before
// a backoff delay has passed. A process is loaded when it serves calls
// concurrently: a lone call (say the gateway listing tools on a cold
// start) does not make a second process, calls that overlap do.
func (p *Pool) scale(now time.Time) {
	if now.Before(p.notBefore) {
		return
	}
	var live, starting, ready, busy, spares int
	for _, pr := range p.procs {
		if pr.gen != p.gen || pr.state == procStopping {
			continue
		}
		live++
		switch pr.state {
		case procStarting:
			starting++
		case procReady:
			ready++
			if pr.load() >= loadedInFlight {
				busy++
			}
		}
		if !pr.leased {
			spares++
		}
	}
	var want int
	if p.spec.Pool.Mode == ModeSession {
		// Every waiting session needs a spare of its own; min spares wait ready.
		leased := live - spares
		want = leased + max(p.spec.Pool.Min, len(p.waiters))
	} else {
		want = p.spec.Pool.Min
		if len(p.waiters) > 0 && live == 0 {
			want = max(want, 1)
		}
		if ready > 0 && busy == ready && starting == 0 {
			want = max(want, live+1)
		}
	}
	if (p.keepOne || p.retry) && live == 0 {
		want = max(want, 1)
	}
	n := min(want-live, p.spec.Pool.Max-len(p.procs))
	for range n {
		pr := newProc(p, p.spec, p.gen)
		p.procs = append(p.procs, pr)
		go pr.supervise()
	}
}

// loadedInFlight is how many concurrent calls make a process loaded.
const loadedInFlight = 2

// stopIdle stops processes beyond min that served nothing for IdleTimeout.
func (p *Pool) stopIdle(now time.Time) {
	idle := p.spec.Pool.IdleTimeout
	if idle <= 0 {
		return
	}
	live := 0
	for _, pr := range p.procs {
		if pr.gen == p.gen && pr.state != procStopping {
			live++
		}
	}
	for _, pr := range p.procs {
		if live <= p.spec.Pool.Min {
			return
		}
		if pr.gen == p.gen && pr.state == procReady && pr.calls() == 0 && !pr.leased && now.Sub(pr.usedAt()) >= idle &&
			pr.closeIdleQuick() {
			p.sup.logger.Info("stopping idle server process", "server", p.name, "pid", pr.pid, "idle", now.Sub(pr.usedAt()).Round(time.Second))
			p.stopProc(pr, stopAsked)
			p.keepOne = false
			live--
		}
	}
}

// pingDue starts a health check on every ready process not checked for
// HealthInterval.
func (p *Pool) pingDue(now time.Time) {
	o := p.sup.opts
	if o.HealthInterval <= 0 {
		return
	}
	for _, pr := range p.procs {
		if pr.state == procReady && !pr.pinging && now.Sub(pr.lastPing) >= o.HealthInterval {
			pr.pinging = true
			go pr.ping(o.HealthTimeout)
		}
	}
}

// stopProc is the pool's one way to stop a process, whatever the reason:
// Stop, close and a failing server (reconcile, stopAll), Restart, a
// retired spec, an idle process (stopIdle), a session's released lease, a
// failed health check (handle). It runs on the run goroutine, which owns
// pr.state: the process is marked stopping, so that dispatch hands it no
// more calls, scale counts it out and a second stop does nothing. A stop
// the pool no longer wants the process for is announced (EventStopping);
// a hung one is told of by its end, as a crash (EventCrashed). The OS side
// is the proc's supervise goroutine's (proc.stop): shutdown escalates to
// SIGKILL of the whole group and reaps what is left of it, so that no
// stop leaves a process or a grandchild running. (A remote session the
// server ended is no stop: the connection ends by itself, as a process
// exits; see proc.sessionEnded.)
func (p *Pool) stopProc(pr *proc, why stopReason) {
	pr.closeQuick()
	if pr.state == procStopping {
		return
	}
	pr.state = procStopping
	if why == stopAsked {
		p.publish(Event{Kind: EventStopping, PID: pr.pid})
	}
	pr.stop(why)
}

// stopAll stops every process (stopProc): the pool is stopped, closing or
// failing, or restarting. Marking them stopping here also keeps the
// retirement of an older generation (reconcile) from stopping them, and
// announcing it, a second time.
func (p *Pool) stopAll() {
	for _, pr := range p.procs {
		p.stopProc(pr, stopAsked)
	}
}

// nextWake is when reconcile has something to do with no message arriving:
// the end of a backoff, an idle timeout, a health check, a cool-down.
func (p *Pool) nextWake(now time.Time) time.Time {
	var wake time.Time
	earliest := func(t time.Time) {
		if !t.IsZero() && (wake.IsZero() || t.Before(wake)) {
			wake = t
		}
	}
	if now.Before(p.notBefore) {
		earliest(p.notBefore)
	}
	earliest(p.failingTill)
	o := p.sup.opts
	for _, pr := range p.procs {
		if pr.state != procReady {
			continue
		}
		if p.spec.Pool.IdleTimeout > 0 && pr.inFlight.Load() == 0 && !pr.leased {
			// Quick leases end without a word to run: with one held, the
			// process is looked at again an idle timeout from now.
			used := pr.usedAt()
			if pr.quickCalls() > 0 {
				used = now
			}
			earliest(used.Add(p.spec.Pool.IdleTimeout))
		}
		if o.HealthInterval > 0 && !pr.pinging {
			earliest(pr.lastPing.Add(o.HealthInterval))
		}
	}
	return wake
}

// setState derives the pool's state and publishes a change.
func (p *Pool) setState(now time.Time) {
	var ready, starting, stopping int
	for _, pr := range p.procs {
		switch pr.state {
		case procReady:
			ready++
		case procStarting:
			starting++
		case procStopping:
			stopping++
		}
	}
	var st State
	switch {
	case p.failing(now):
		st = StateFailing
	case ready > 0:
		st = StateRunning
	case starting > 0:
		st = StateStarting
	case now.Before(p.notBefore):
		st = StateBackoff
	case stopping > 0:
		st = StateStopping
	default:
		st = StateStopped
	}
	if st != p.state {
		p.state = st
		p.publish(Event{Kind: EventState, State: st})
	}
}

// checkSoon has the process pinged now rather than at its next health
// check (a remote server's request failed: it may be gone).
func (p *Pool) checkSoon(pr *proc) {
	p.post(func() {
		if pr.state == procReady && !pr.pinging {
			pr.lastPing = time.Time{}
		}
	})
}

// release returns a lease's process to the pool.
func (p *Pool) release(pr *proc, light bool) {
	p.post(func() {
		pr.inFlight.Add(-1)
		if light {
			pr.lightInFlight.Add(-1)
		}
		pr.lastUsed = time.Now()
		if pr.leased {
			pr.leased = false
			p.stopProc(pr, stopAsked)
		}
	})
}
