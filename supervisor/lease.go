package supervisor

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A Lease is the right to use one ready process of a pool. In shared mode it
// lasts one call; in session mode it lasts a client session and the process
// is stopped when it is released. Release exactly once (later calls are
// no-ops).
type Lease struct {
	pool  *Pool
	proc  *proc
	light bool
	quick bool // taken without the pool's goroutine (quicklease.go)
	once  sync.Once
}

type housekeepingKey struct{}

// Housekeeping marks ctx as the context of calls a client of the
// supervisor makes for itself (listing a server's tools), not for a user:
// leases acquired with it do not count as load when the pool decides
// whether to start another process.
func Housekeeping(ctx context.Context) context.Context {
	return context.WithValue(ctx, housekeepingKey{}, true)
}

func isHousekeeping(ctx context.Context) bool {
	v, _ := ctx.Value(housekeepingKey{}).(bool)
	return v
}

// Session is the MCP client session to the process, already initialized.
func (l *Lease) Session() *mcp.ClientSession { return l.proc.session }

// InitializeResult is what the process answered to initialize.
func (l *Lease) InitializeResult() *mcp.InitializeResult { return l.proc.init }

// PID is the process id of the server process.
func (l *Lease) PID() int { return l.proc.osPID }

// Done is closed when the process has ended; Err then says why.
func (l *Lease) Done() <-chan struct{} { return l.proc.ctx.Done() }

// Err is nil while the process runs, then why it ended (an *ExitError after
// a crash).
func (l *Lease) Err() error {
	if l.proc.ctx.Err() == nil {
		return nil
	}
	return context.Cause(l.proc.ctx)
}

// Do calls fn with the session and a context that also ends when the process
// does. If the process ended during the call, Do returns why (an *ExitError
// naming the server, its exit status and its last stderr lines) instead of
// fn's error, so the caller learns the cause at once, not at its deadline.
func (l *Lease) Do(ctx context.Context, fn func(ctx context.Context, cs *mcp.ClientSession) error) error {
	if err := l.Err(); err != nil {
		return err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	return l.do(ctx, cancel, fn)
}

// DoCancel is Do on a context the caller made for this call alone, with its
// cancel: the process's end cancels that context, with its cause, instead
// of one of Do's own. The gateway's fast path makes such a context for each
// call anyway; one context less a call is an allocation of it, of its Done
// channel and of its parent's map of children less. A remote server's is
// Do: the end of its session ends its process, and the caller sends the
// call again on the next one (ErrSessionExpired), on its context.
func (l *Lease) DoCancel(ctx context.Context, cancel context.CancelCauseFunc, fn func(ctx context.Context, cs *mcp.ClientSession) error) error {
	if l.proc.spec.Remote != nil {
		return l.Do(ctx, fn)
	}
	if err := l.Err(); err != nil {
		return err
	}
	return l.do(ctx, cancel, fn)
}

// do is Do on ctx, which cancel ends.
func (l *Lease) do(ctx context.Context, cancel context.CancelCauseFunc, fn func(ctx context.Context, cs *mcp.ClientSession) error) error {
	stop := context.AfterFunc(l.proc.ctx, func() { cancel(context.Cause(l.proc.ctx)) })
	defer stop()
	err := fn(ctx, l.proc.session)
	if err == nil {
		return nil
	}
	if perr := l.Err(); perr != nil {
		return perr
	}
	// A transport failure (not an error the server sent) usually means the
	// process just died: its stdout closes a moment before the exit is seen.
	// Wait briefly so the caller gets the exit status and stderr, not "EOF".
	if l.proc.spec.Remote != nil {
		return l.remoteFailure(ctx, err)
	}
	if _, isRPC := errors.AsType[*jsonrpc.Error](err); !isRPC && ctx.Err() == nil {
		if waitFor(l.proc.ctx.Done(), exitReportWait) {
			return context.Cause(l.proc.ctx)
		}
	}
	return err
}

// exitReportWait bounds how long Do waits for a dying process's exit.
const exitReportWait = time.Second

// remoteReportWait bounds how long Do waits for a remote server's
// connection that broke, or whose session the server ended, to say so.
const remoteReportWait = 200 * time.Millisecond

// codeRejected is the go-sdk's JSON-RPC code for a request its HTTP
// transport could not deliver (jsonrpc2.ErrRejected): no answer of the
// server's.
const codeRejected = -32005

// isServerAnswer reports whether err is a JSON-RPC error the server sent.
func isServerAnswer(err error) bool {
	e, ok := errors.AsType[*jsonrpc.Error](err)
	return ok && e.Code != codeRejected
}

// remoteFailure is Do's error for a call to a remote server that failed:
// the connection's end when it ended (a *RemoteError naming the server;
// wrapping ErrSessionExpired when the server ended the session, so that
// the call can be sent again on a new one), the server's JSON-RPC error
// as it is, else the HTTP failure naming the server. A request that did
// not reach the server has the connection checked at once (a ping), so a
// remote that went away is reconnected with backoff.
func (l *Lease) remoteFailure(ctx context.Context, err error) error {
	answered := isServerAnswer(err)
	if (!answered || l.proc.expired.Load()) && ctx.Err() == nil {
		if waitFor(l.proc.ctx.Done(), remoteReportWait) {
			return context.Cause(l.proc.ctx)
		}
	}
	if answered || ctx.Err() != nil {
		return err
	}
	l.pool.checkSoon(l.proc)
	if ue := userAction(err); ue != nil {
		// The server answered (401) and the sign-in could not be renewed:
		// what the user must do names the server and how, and the server
		// did answer.
		return ue
	}
	raw := l.proc.spec.Remote.URL
	return &RemoteError{Server: l.pool.name, URL: shownURL(raw), Reason: "did not answer", Err: scrub(err, raw)}
}

// Release gives the process back to the pool.
func (l *Lease) Release() {
	l.once.Do(func() {
		if l.quick {
			l.pool.releaseQuick(l.proc)
			return
		}
		l.pool.release(l.proc, l.light)
	})
}
