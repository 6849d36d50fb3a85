// The call core: forward runs one request on a process of a server (its
// timeout, progress token, lease and caller bookkeeping), acquire picks the
// lease (per call, or per client session in session mode: leases.go), and
// forwardMeta filters the _meta keys that belong to the client's hop.

package gateway

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/supervisor"
)

// progressParams are the params whose progress token the gateway rewrites.
type progressParams interface{ SetProgressToken(any) }

// forward runs fn on a process of server for the client session ss, within
// the server's timeout (restarted by each progress notification). A client's
// progress token is replaced by one unique to the gateway, so that progress
// from a shared process reaches the caller that asked for it.
func (g *Gateway) forward(ctx context.Context, req mcp.Request, server string, token any, params progressParams,
	fn func(context.Context, *mcp.ClientSession) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	return g.forwardIn(ctx, cancel, req, server, token, params, fn)
}

// forwardIn is forward on a context made for this call alone, with its
// cancel: the server's timeout ends it. The fast path makes one for each
// call anyway (its client's cancel and the session's end end it), and one
// context less a call is an allocation of it, of its Done channel and of
// its parent's map of children less (the cancelable contexts were a fifth
// of what an echo call allocated).
func (g *Gateway) forwardIn(ctx context.Context, cancel context.CancelCauseFunc, req mcp.Request, server string, token any,
	params progressParams, fn func(context.Context, *mcp.ClientSession) error) error {
	ss, _ := req.GetSession().(*mcp.ServerSession)
	b, ok := g.backend(server)
	if !ok {
		return fmt.Errorf("server %q is not enabled in Switchboard", server)
	}
	cfg := b.config()
	rec := recordFrom(ctx)
	g.routed(rec, server)
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	timer := time.AfterFunc(timeout, func() {
		cancel(fmt.Errorf("server %q did not answer within %s: %w", server, timeout, context.DeadlineExceeded))
	})
	defer timer.Stop()

	var route *progressRoute
	if token != nil && params != nil {
		gt := "sb-" + strconv.FormatUint(g.nextToken.Add(1), 36)
		route = &progressRoute{ctx: ctx, session: ss, token: token, timer: timer, timeout: timeout,
			delivered: make(chan struct{}, 1), watch: g.progressWatch(rec)}
		g.progress.Store(gt, route)
		defer g.progress.Delete(gt)
		params.SetProgressToken(gt)
	}

	err := g.forwardOnce(ctx, cancel, req, ss, server, cfg, rec, fn)
	if errors.Is(err, supervisor.ErrSessionExpired) && ctx.Err() == nil {
		// A remote server that no longer knew the session did not run
		// the call: sent again, on the new session, unseen by the client.
		g.log.Info("the remote server ended its session; sending the call again on a new one", "server", server)
		err = g.forwardOnce(ctx, cancel, req, ss, server, cfg, rec, fn)
	}
	if err != nil {
		return err
	}
	route.drain()
	return nil
}

// forwardOnce leases a process (or a remote server's connection) of
// server and runs fn on it.
func (g *Gateway) forwardOnce(ctx context.Context, cancel context.CancelCauseFunc, req mcp.Request, ss *mcp.ServerSession, server string, cfg ServerConfig,
	rec *callRecord, fn func(context.Context, *mcp.ClientSession) error) error {
	lease, release, err := g.acquire(ctx, ss, server, cfg.Mode, cfg.leaseIdle())
	if err != nil {
		return g.failure(ctx, err)
	}
	defer release()
	if rec != nil {
		rec.call.PID = lease.PID()
	}
	if p := pendingFrom(ctx); p != nil {
		p.pid.Store(int64(lease.PID()))
	}
	cs := lease.Session()
	g.callers.push(cs, caller{session: ss, ctx: ctx, caps: capabilitiesOf(req), pending: pendingFrom(ctx)})
	defer g.callers.pop(cs, ss)
	if cl, ok := lease.(cancelingLease); ok {
		err = cl.DoCancel(ctx, cancel, fn)
	} else {
		err = lease.Do(ctx, fn)
	}
	if err != nil {
		return g.failure(ctx, err)
	}
	return nil
}

// A cancelingLease runs a call on the caller's own context for it, which
// it cancels when its backend fails (supervisor.Lease.DoCancel), rather
// than on a context of its own.
type cancelingLease interface {
	DoCancel(ctx context.Context, cancel context.CancelCauseFunc, fn func(context.Context, *mcp.ClientSession) error) error
}

// failure puts the most useful cause on err: the timeout or the client's
// cancellation rather than a bare "context canceled".
func (g *Gateway) failure(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); cause != nil && errors.Is(err, context.Canceled) {
		return cause
	}
	return err
}

// acquire leases a process for a call: per call in shared mode, per client
// session in session mode (kept until the session ends). A stateless
// request has no session to keep a process for, so it leases per call.
func (g *Gateway) acquire(ctx context.Context, ss *mcp.ServerSession, server string, mode supervisor.Mode, idle time.Duration) (Lease, func(), error) {
	if mode != supervisor.ModeSession || ss == nil || ss.ID() == "" {
		l, err := g.opts.Backends.Acquire(ctx, server)
		if err != nil {
			return nil, nil, err
		}
		return l, l.Release, nil
	}
	return g.leases.get(ctx, g.opts.Backends, ss, server, idle)
}

// reservedMeta prefixes the _meta keys the protocol itself uses per request
// in the 2026-07-28 era (protocolVersion, clientInfo, clientCapabilities,
// logLevel, ...). They describe one hop: each hop sets its own.
const reservedMeta = "io.modelcontextprotocol/"

// forwardMeta copies a request's _meta for the backend, without the keys
// that belong to the client's hop.
func forwardMeta(m mcp.Meta) mcp.Meta {
	var out mcp.Meta
	for k, v := range m {
		if strings.HasPrefix(k, reservedMeta) {
			continue
		}
		if out == nil {
			out = make(mcp.Meta, len(m))
		}
		out[k] = v
	}
	return out
}
