package supervisor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/supervisor/confine"
)

// procState is where a process is in its life, as the pool sees it.
type procState int

const (
	procStarting procState = iota
	procReady
	procStopping
)

func (s procState) String() string {
	return [...]string{"starting", "ready", "stopping"}[s]
}

// stderrTail is how many stderr lines an ExitError carries.
const stderrTail = 10

// A proc is one OS process of a pool. Its supervise goroutine owns the OS
// side (spawn, handshake, wait, shutdown); the pool's run goroutine owns the
// fields marked below. The two meet through Pool.events and stopCh.
type proc struct {
	pool *Pool
	spec Spec
	gen  int // the pool generation (spec version) it was started for

	// Set by supervise before it reports procEventSpawned (osPID) or
	// procEventReady (session, init), read-only afterwards. The pool reads
	// them only after the report.
	osPID int
	// confinement is the launcher's report (nil: no policy), policy what it
	// enforced (the spec's, with the program's folders).
	confinement *confine.Status
	policy      *confine.Policy
	session     *mcp.ClientSession
	init        *mcp.InitializeResult
	// transport is how a remote server's connection was made (remote.go);
	// "" for a process.
	transport RemoteTransport

	// ctx ends, with the reason as its cause, when the process has ended.
	// Lease.Do derives from it so calls fail the moment their process dies.
	ctx    context.Context
	cancel context.CancelCauseFunc

	stopCh   chan struct{} // closed to ask for a stop (Pool.stopProc)
	stopOnce sync.Once
	// stopWhy is why the pool asked for the stop (a stopReason), stored
	// before stopCh is closed: supervise reads it once stopCh is.
	stopWhy atomic.Int32
	// gone is set the moment the OS process has exited, before its exit is
	// described and reported, so that no new call is handed to it meanwhile.
	gone atomic.Bool
	// expired is set when a remote server answered 404 to the session
	// (remote.go): the connection is ended and its calls may be retried.
	expired atomic.Bool
	// sessionEnded is closed, once, when expired is set: runRemote ends the
	// connection on it, as run ends on the process's exit. It is the
	// server's end of the session, not a stop: the pool asked for nothing.
	sessionEnded chan struct{}

	// quick counts the quick leases that hold the process, below the bit
	// quickClosed, which refuses more (quicklease.go); quickUsed is when
	// the last one ended (Unix ns).
	quick     atomic.Int64
	quickUsed atomic.Int64

	// Written by the pool's run goroutine only; read by quick leases too.
	inFlight atomic.Int32 // leases through run
	// lightInFlight counts the housekeeping calls among inFlight.
	lightInFlight atomic.Int32

	// Owned by the pool's run goroutine.
	pid      int // 0 until spawned
	started  time.Time
	state    procState
	leased   bool
	lastUsed time.Time
	lastPing time.Time
	pinging  bool
}

func newProc(p *Pool, spec Spec, gen int) *proc {
	ctx, cancel := context.WithCancelCause(context.Background())
	pr := &proc{pool: p, spec: spec, gen: gen, ctx: ctx, cancel: cancel,
		stopCh: make(chan struct{}), sessionEnded: make(chan struct{}), lastUsed: time.Now()}
	pr.quick.Store(quickClosed) // until run finds it ready (publishQuick)
	return pr
}

// A stopReason is why the pool stops a process (see Pool.stopProc): it
// decides which steps the shutdown takes and how the process's end is
// reported.
type stopReason int32

const (
	// stopAsked: the pool no longer wants the process (Stop, Restart, the
	// server closing or failing, a retired spec, an idle process, a
	// session's lease released). The polite shutdown: stdin closed, then
	// SIGTERM, then SIGKILL, each to the whole group; the end is a stop
	// (ErrStopped).
	stopAsked stopReason = iota + 1
	// stopUnhealthy: the process failed a health check, so it is hung: its
	// group is killed at once, and the end counts as a crash.
	stopUnhealthy
)

// stop hands the stop to the proc's supervise goroutine, which shuts the
// process down (shutdown, runRemote). Only Pool.stopProc calls it, once per
// process; the Once keeps a second call harmless all the same.
func (pr *proc) stop(why stopReason) {
	pr.stopOnce.Do(func() {
		pr.stopWhy.Store(int32(why))
		close(pr.stopCh)
	})
}

// stopReason is why the pool stopped the process; 0 while it has not.
func (pr *proc) stopReason() stopReason { return stopReason(pr.stopWhy.Load()) }

func (pr *proc) stopRequested() bool {
	select {
	case <-pr.stopCh:
		return true
	default:
		return false
	}
}

// procEvent is what a proc's goroutines tell the pool.
type procEvent struct {
	proc *proc
	kind procEventKind
	err  error // why it ended (exited), or the ping failure (pingFailed)
}

type procEventKind int

const (
	procEventSpawned procEventKind = iota
	procEventReady
	procEventExited
	procEventPinged
)

// supervise runs the process from spawn to exit and reports to the pool.
func (pr *proc) supervise() {
	err := pr.run()
	pr.cancel(err)
	pr.pool.report(procEvent{proc: pr, kind: procEventExited, err: err})
}

// run spawns, handshakes, waits and shuts down. It returns why the process
// ended: an error wrapping ErrStopped after a requested stop, a *StartError or
// an *ExitError otherwise.
func (pr *proc) run() error {
	if pr.spec.Remote != nil {
		return pr.runRemote()
	}
	p := pr.pool
	s := p.sup
	env := buildEnv(s.env, pr.spec.Env)
	path, err := lookPath(pr.spec.Command, env, pr.spec.Dir)
	if err != nil {
		return &StartError{Server: pr.spec.Name, Err: err}
	}

	var files []*os.File // every pipe end, closed on the way out
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	pipe := func() (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		if err == nil {
			files = append(files, r, w)
		}
		return r, w, err
	}
	stdinR, stdinW, err1 := pipe()
	stdoutR, stdoutW, err2 := pipe()
	stderrR, stderrW, err3 := pipe()
	if err := errors.Join(err1, err2, err3); err != nil {
		return &StartError{Server: pr.spec.Name, Err: fmt.Errorf("creating pipes: %w", err)}
	}

	cmd := exec.Command(path, pr.spec.Args...)
	cmd.Env = env
	cmd.Dir = pr.spec.Dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinR, stdoutW, stderrW
	prepareGroup(cmd)
	statusR, unconfined, err := pr.confine(cmd, path, pipe)
	if err != nil {
		return &StartError{Server: pr.spec.Name, Err: err}
	}
	if err := cmd.Start(); err != nil {
		return &StartError{Server: pr.spec.Name, Err: err}
	}
	// The child has its copies; ours would keep its stdin open and its
	// stdout from ever ending.
	stdinR.Close()
	stdoutW.Close()
	stderrW.Close()
	for _, f := range cmd.ExtraFiles {
		f.Close()
	}
	pid := cmd.Process.Pid
	pr.osPID = pid
	pr.confinement = unconfined
	if statusR != nil {
		pr.confinement = readConfineStatus(statusR, pr.spec.StartTimeout)
	}
	if st := pr.confinement; st != nil {
		level := slog.LevelInfo
		if !st.Enforced {
			level = slog.LevelWarn
		}
		s.logger.Log(context.Background(), level, "server confinement", "server", pr.spec.Name, "pid", pid, "confinement", st.String())
	}
	p.report(procEvent{proc: pr, kind: procEventSpawned})

	exited := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		pr.gone.Store(true)
		close(exited)
	}()

	grp, err := newGroup(cmd)
	if err != nil {
		_ = cmd.Process.Kill()
		<-exited
		return &StartError{Server: pr.spec.Name, Err: err}
	}
	defer grp.release()
	s.track(pr.spec.Name, pid, grp.id())
	defer s.untrack(pid, grp.id())

	stderrDone := make(chan struct{})
	go func() {
		defer close(stderrDone)
		readLines(stderrR, func(line string) { p.logLine(pid, "stderr", line) })
	}()
	defer func() {
		// A descendant that left the group may still hold stderr open; do not
		// wait for it forever.
		select {
		case <-stderrDone:
		case <-time.After(time.Second):
			stderrR.Close()
			<-stderrDone
		}
	}()

	p.publish(Event{Kind: EventStarting, PID: pid})
	s.logger.Info("server process started", "server", pr.spec.Name, "pid", pid, "command", path)

	cs, err := pr.handshake(stdoutR, stdinW, exited)
	if err != nil {
		if pr.stopRequested() {
			pr.shutdown(stdinW, exited, grp)
			return fmt.Errorf("server %q (pid %d) was %w during initialize", pr.spec.Name, pid, ErrStopped)
		}
		err = pr.describeExit(err, &waitErr, exited, stderrDone)
		pr.shutdown(stdinW, exited, grp)
		return &StartError{Server: pr.spec.Name, Err: err, Stderr: pr.stderrTail()}
	}
	defer cs.Close()
	pr.session = cs
	pr.init = cs.InitializeResult()
	p.report(procEvent{proc: pr, kind: procEventReady})

	select {
	case <-exited:
		// Let the last stderr lines (often the reason) arrive, then fail the
		// calls in flight at once; the group's leftovers can go after.
		waitFor(stderrDone, 200*time.Millisecond)
		err := &ExitError{Server: pr.spec.Name, PID: pid, Status: exitStatus(cmd, waitErr),
			Reason: "exited unexpectedly", Stderr: pr.stderrTail()}
		pr.cancel(err)
		pr.reapGroup(grp)
		return err
	case <-pr.stopCh:
		pr.shutdown(stdinW, exited, grp)
		if pr.stopReason() == stopUnhealthy {
			return &ExitError{Server: pr.spec.Name, PID: pid, Status: exitStatus(cmd, waitErr),
				Reason: "stopped answering pings and was restarted", Stderr: pr.stderrTail()}
		}
		return fmt.Errorf("server %q (pid %d) was %w", pr.spec.Name, pid, ErrStopped)
	}
}

// handshake runs initialize (or server/discover) over the pipes. It gives up
// when the process exits, a stop is requested, or StartTimeout passes.
func (pr *proc) handshake(stdout, stdin *os.File, exited <-chan struct{}) (*mcp.ClientSession, error) {
	ctx, cancel := context.WithTimeout(context.Background(), pr.spec.StartTimeout)
	defer cancel()
	go func() {
		select {
		case <-exited:
		case <-pr.stopCh:
		case <-ctx.Done():
		}
		cancel()
	}()
	p := pr.pool
	var warned bool // once per process: a chatty server must not flood the daemon's log
	var transport mcp.Transport = &stdioTransport{stdout: stdout, stdin: stdin, maxMessage: p.sup.opts.MaxMessageSize,
		onJunk: func(line string) {
			p.nonProtocol.Add(1)
			p.logLine(pr.osPID, "stdout", line)
			if !warned {
				warned = true
				p.sup.logger.Warn("server writes non-protocol text on stdout; it is kept as the server's output",
					"server", pr.spec.Name, "pid", pr.osPID, "line", line)
			}
		}}
	if wrap := p.sup.hooks.WrapTransport; wrap != nil {
		transport = wrap(pr.spec.Name, transport)
	}
	cs, err := p.connect(ctx, transport)
	if err != nil && ctx.Err() == context.DeadlineExceeded {
		select {
		case <-exited:
		default:
			err = fmt.Errorf("no answer to initialize within %s: %w", pr.spec.StartTimeout, err)
		}
	}
	return cs, err
}

// connect runs the MCP handshake over transport and the Prepare hook on
// the new session: a process's pipes, or a remote server's HTTP.
func (p *Pool) connect(ctx context.Context, transport mcp.Transport) (*mcp.ClientSession, error) {
	cs, err := p.client.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: p.sup.opts.ProtocolVersion})
	if err == nil && p.sup.hooks.Prepare != nil {
		if err = p.sup.hooks.Prepare(ctx, p.name, cs); err != nil {
			cs.Close()
			cs, err = nil, fmt.Errorf("preparing the session: %w", err)
		}
	}
	return cs, err
}

// describeExit turns a failed handshake into the most useful error: the exit
// status when the process died, the handshake error otherwise. A process
// that dies closes stdout a moment before its exit is reaped, so the exit
// gets a brief chance to show up.
func (pr *proc) describeExit(hsErr error, waitErr *error, exited, stderrDone <-chan struct{}) error {
	if !waitFor(exited, 200*time.Millisecond) {
		return hsErr
	}
	waitFor(stderrDone, 200*time.Millisecond)
	status := "exit status 0"
	if *waitErr != nil {
		status = (*waitErr).Error()
	}
	// A server that refused initialize said why; that beats its exit status.
	if rpcErr, ok := errors.AsType[*jsonrpc.Error](hsErr); ok {
		return fmt.Errorf("answered initialize with an error: %s; then exited (%s)", rpcErr.Message, status)
	}
	return fmt.Errorf("exited during initialize (%s)", status)
}

// shutdown follows the MCP stdio shutdown order, applied to the whole group:
// close stdin, wait; SIGTERM, wait; SIGKILL. Then the descendants left in the
// group get the same. It returns once the process has exited. A hung
// process (stopUnhealthy) goes straight to SIGKILL: it would answer
// neither, and the polite steps only cost two StopGraces.
//
// From the spec (basic/transports, stdio): "the client SHOULD initiate
// shutdown by first closing the input stream to the child process, waiting
// for the server to exit, or sending SIGTERM if the server does not exit
// within a reasonable time, and then SIGKILL".
func (pr *proc) shutdown(stdin *os.File, exited <-chan struct{}, grp *group) {
	grace := pr.pool.sup.opts.StopGrace
	hung := pr.stopReason() == stopUnhealthy
	stdin.Close()
	if !hung && waitFor(exited, grace) {
		pr.reapGroup(grp)
		return
	}
	if !hung {
		_ = grp.terminate()
		if waitFor(exited, grace) {
			pr.reapGroup(grp)
			return
		}
	}
	_ = grp.kill()
	<-exited
	pr.reapGroup(grp)
}

// reapGroup stops what is left of the group after its leader exited:
// grandchildren that did not follow their parent out.
func (pr *proc) reapGroup(grp *group) {
	if grp.alive() {
		stopOrphanGroup(grp.id(), pr.pool.sup.opts.StopGrace/2)
	}
}

func (pr *proc) stderrTail() []string {
	lines := pr.pool.logs.snapshot(pr.osPID, stderrTail)
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = l.Text
	}
	return out
}

// ping checks the process still answers, within timeout.
func (pr *proc) ping(timeout time.Duration) {
	ctx, cancel := context.WithTimeout(pr.ctx, timeout)
	defer cancel()
	err := pr.session.Ping(ctx, nil)
	if err != nil && pr.ctx.Err() == nil {
		err = fmt.Errorf("no answer to ping within %s: %w", timeout, err)
	} else {
		err = nil // the process ended meanwhile; its exit tells the story
	}
	pr.pool.report(procEvent{proc: pr, kind: procEventPinged, err: err})
}

func waitFor(ch <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}

func exitStatus(cmd *exec.Cmd, waitErr error) string {
	if cmd.ProcessState != nil {
		return cmd.ProcessState.String()
	}
	if waitErr != nil {
		return waitErr.Error()
	}
	return ""
}
