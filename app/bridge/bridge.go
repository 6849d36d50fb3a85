// Package bridge is switchboard connect: it serves MCP on stdio, for the
// clients (like Claude Desktop) that can only launch a command, by relaying
// to the daemon's streamable-HTTP endpoint. It is a client of that
// endpoint; what serves its own client, a gateway of one server whose
// backend is the daemon's endpoint, it is given (Options.Front: the
// gateway's Relay, see daemon.NewBridgeFront), so it links none of the
// daemon.
package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/internal/mcpreq"
)

// Options configure Run.
type Options struct {
	// Locate returns the URL of the daemon's MCP endpoint to bridge to, the
	// bearer token to use, and a check that this daemon still runs,
	// starting the daemon when it is not running. It is called again to
	// reconnect after the daemon went away.
	Locate func(ctx context.Context) (url, token string, alive func() bool, err error)
	// In and Out are the client's side: the bridge's stdin and stdout.
	In     io.ReadCloser
	Out    io.WriteCloser
	Logger *slog.Logger
	// Version is reported as Switchboard's version.
	Version string
	// Reconnect bounds waiting for the daemon to come back; 0 means 30 s.
	Reconnect time.Duration
	// Front makes what serves the client, whose upstream sessions acquire
	// gives (see Front).
	Front func(acquire func(context.Context) (Lease, error), logger *slog.Logger, version string) Front
}

// A Front serves the bridge's client: a gateway of one server whose
// backend is the daemon's endpoint (gateway.Relay is one). MCP ends at the
// front and starts again upstream, in sessions it gets from acquire.
type Front interface {
	// Start lists the upstream in the background; the other methods but
	// Client are for after Start.
	Start()
	// Server serves the client.
	Server() *mcp.Server
	// Client is what an upstream session is opened with, introducing
	// itself as impl, so that what the daemon says (progress, logging,
	// list changes, sampling, elicitation, roots) comes back to the
	// client.
	Client(impl *mcp.Implementation) *mcp.Client
	// Relist lists the upstream again, without waiting for the list.
	Relist()
	// Tried is closed after the first list attempt, whatever its outcome.
	Tried() <-chan struct{}
	// Listed reports whether the upstream's lists are known.
	Listed() bool
	Close()
}

// A Lease is the use of the upstream session (gateway.Lease's methods).
type Lease interface {
	Session() *mcp.ClientSession
	// Do runs fn with the session, and returns why the upstream failed if
	// it did during fn.
	Do(ctx context.Context, fn func(context.Context, *mcp.ClientSession) error) error
	Release()
	Err() error
	PID() int
}

// ErrRefused is wrapped by the errors that retrying does not cure:
// Switchboard refused the bridge's token (HTTP 401 or 403), does not serve
// the server or profile it bridges to (HTTP 404 naming it), or Locate
// refused to give a token (a label reserved for Switchboard's own programs).
// The bridge then answers its client's requests with the reason and
// Run returns it once the client leaves.
var ErrRefused = errors.New("Switchboard refused the bridge") //lint:ignore ST1005 the message starts with the product's name, which users read in their client's log

// bridgeName is how the bridge introduces itself upstream before its
// client did.
const bridgeName = "switchboard"

// Run serves MCP on In/Out (for clients, like Claude Desktop, that can
// only launch a command) by relaying to the daemon's streamable-HTTP
// endpoint, until the client closes In or ctx ends.
//
// The bridge is a gateway of one server, whose backend is the daemon's
// endpoint instead of a process: MCP ends at the bridge and starts again
// upstream. So when the daemon restarts, the bridge opens a new upstream
// session and lists again, and the client's session goes on; only calls in
// flight at that moment fail.
func Run(ctx context.Context, opts Options) error {
	if opts.Front == nil {
		return errors.New("bridge: no Front to serve the client with")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Reconnect == 0 {
		opts.Reconnect = 30 * time.Second
	}
	upCtx, stop := context.WithCancel(ctx)
	up := &upstream{opts: opts, ctx: upCtx}
	front := opts.Front(up.Acquire, opts.Logger, opts.Version)
	up.front = front
	defer func() {
		stop() // first: a reconnect in progress holds the upstream's lock
		front.Close()
		up.close()
		up.wg.Wait()
	}()
	front.Start()
	server := front.Server()
	// The daemon records calls under the client that opened the upstream
	// session: once the real client introduces itself (at initialize, or
	// in each request's _meta in the stateless era), the upstream session
	// is opened again in its name (see upstream.introduce).
	var initialized atomic.Bool // the client sent notifications/initialized
	server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if r, ok := req.(*mcp.ServerRequest[*mcp.InitializeParams]); ok && r.Params != nil && r.Params.ClientInfo != nil {
				up.introduce(r.Params.ClientInfo.Name, r.Params.ClientInfo.Version)
			} else if name, version := mcpreq.ClientInfo(req); name != "" {
				up.introduce(name, version)
			}
			res, err := next(ctx, method, req)
			if method == "notifications/initialized" {
				initialized.Store(true)
			}
			return res, err
		}
	})
	// The lists arrive in the background (the daemon may still be starting)
	// while the client's session is open on stdio, where the go-sdk would
	// tell it of each change even before it initialized. A client hears of
	// list changes only once initialized: before that it has listed
	// nothing, and it lists after initializing. (A client of the stateless
	// era never initializes: it hears of changes on its
	// subscriptions/listen stream, whose notifications carry its id.)
	server.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if isListChanged(method) && !initialized.Load() && !forSubscription(req) {
				return nil, nil
			}
			return next(ctx, method, req)
		}
	})
	// List before serving, so the client's first tools/list is complete:
	// Sync lists the new server in the background; wait for that first
	// list rather than making a second one.
	select {
	case <-front.Tried():
	case <-ctx.Done():
		return nil
	}
	refused := up.refused()
	switch {
	case refused != nil:
		// Waiting would not help: the client would wait for answers that
		// never come. It gets the reason instead, and the bridge's exit
		// status says it failed.
		opts.Logger.Error("Switchboard refused this bridge; answering the client with the reason", "err", refused)
		server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if strings.HasPrefix(method, "notifications/") {
					return nil, nil
				}
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: refused.Error()}
			}
		})
	case !front.Listed():
		opts.Logger.Warn("cannot reach Switchboard yet; serving an empty list until it answers")
	}
	err := server.Run(ctx, &mcp.IOTransport{Reader: opts.In, Writer: opts.Out})
	if refused != nil {
		return refused
	}
	// Refused later (the token was revoked during the session): the
	// bridge failed as it would have at the start.
	if refused := up.refused(); refused != nil {
		return refused
	}
	if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// isListChanged reports whether method notifies that a list changed.
func isListChanged(method string) bool {
	switch method {
	case "notifications/tools/list_changed", "notifications/prompts/list_changed", "notifications/resources/list_changed":
		return true
	}
	return false
}

// forSubscription reports whether the notification req answers a
// subscriptions/listen request (its _meta names the subscription).
func forSubscription(req mcp.Request) bool {
	p := mcpreq.Params(req)
	if p == nil {
		return false
	}
	_, ok := p.GetMeta()[mcp.MetaKeySubscriptionID]
	return ok
}

// upstream is the front's backend: a client session to the daemon's
// endpoint, reopened when it breaks.
type upstream struct {
	opts  Options
	front Front
	// ctx ends when the bridge does; the background reconnects (wg) use it.
	ctx context.Context
	wg  sync.WaitGroup

	mu     sync.Mutex
	client *mcp.Implementation // the bridge's client, once it introduced itself
	cs     *mcp.ClientSession
	note   *refusalNote // the daemon's refusal of a request of cs, if any
	alive  func() bool  // whether the daemon behind cs still runs
	dialed bool         // a session was opened before: a new one means relisting
	closed bool
	// refusal is Switchboard's last refusal of the bridge (an error
	// wrapping ErrRefused), at a dial or during a session, until a dial
	// succeeds. It has its own lock: a dial holds mu for long.
	refusal refusalNote
}

// refused returns why Switchboard refused the bridge at the last attempt
// to connect or during the session; nil when it did not.
func (u *upstream) refused() error { return u.refusal.get() }

// Acquire returns the current upstream session, opening one if there is
// none (waiting up to opts.Reconnect for the daemon to come back).
func (u *upstream) Acquire(ctx context.Context) (Lease, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.closed {
		return nil, errors.New("the bridge is closing")
	}
	if u.cs != nil && u.alive() {
		return &upstreamLease{u: u, cs: u.cs, note: u.note}, nil
	}
	// No session yet, or its daemon died: a request sent now would be lost,
	// so connect to the new daemon (starting it) first.
	if u.cs != nil {
		u.cs.Close()
		u.cs = nil
	}
	cs, note, alive, err := u.dial(ctx)
	if err != nil {
		if errors.Is(err, ErrRefused) {
			u.refusal.set(err)
		}
		return nil, err
	}
	u.refusal.set(nil)
	u.cs, u.note, u.alive = cs, note, alive
	u.wg.Go(func() { u.watch(cs) })
	// After a reconnect the daemon's tools may differ: list them again.
	// (The first session is opened by the bridge's own first listing.)
	if u.dialed {
		u.front.Relist() // asks for a relist; does not wait for it
	}
	u.dialed = true
	return &upstreamLease{u: u, cs: cs, note: note}, nil
}

// dial connects to the daemon, retrying with a short backoff while it is
// (re)starting.
func (u *upstream) dial(ctx context.Context) (*mcp.ClientSession, *refusalNote, func() bool, error) {
	ctx, cancel := context.WithTimeout(ctx, u.opts.Reconnect)
	defer cancel()
	delay := 50 * time.Millisecond
	for {
		cs, note, alive, err := u.dialOnce(ctx)
		if err == nil {
			return cs, note, alive, nil
		}
		if errors.Is(err, ErrRefused) {
			return nil, nil, nil, err
		}
		select {
		case <-ctx.Done():
			return nil, nil, nil, fmt.Errorf("cannot reach Switchboard: %w", err)
		case <-time.After(delay):
		}
		delay = min(delay*2, time.Second)
	}
}

// dialOnce connects to the daemon once. The refusalNote it returns with
// the session notes the daemon refusing any later request of it.
func (u *upstream) dialOnce(ctx context.Context) (*mcp.ClientSession, *refusalNote, func() bool, error) {
	url, token, alive, err := u.opts.Locate(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	refusal := &refusalNote{}
	transport := &mcp.StreamableClientTransport{Endpoint: url,
		HTTPClient: &http.Client{Transport: bearer{token: token, next: http.DefaultTransport, refused: refusal}}}
	// The session era keeps one upstream session per bridge, so a
	// session-mode server gives this client one process of its own.
	impl := &mcp.Implementation{Name: bridgeName, Version: u.opts.Version}
	if u.client != nil {
		impl = u.client
	}
	cs, err := u.front.Client(impl).Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		if r := refusal.get(); r != nil {
			return nil, nil, nil, r
		}
		return nil, nil, nil, err
	}
	return cs, refusal, alive, nil
}

// introduce notes the bridge's client, which the daemon should see as the
// caller: an upstream session opened in another name (the bridge's own
// first listing) is closed, and the next call opens one in the client's.
func (u *upstream) introduce(name, version string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if c := u.client; c != nil && c.Name == name && c.Version == version {
		return
	}
	u.client = &mcp.Implementation{Name: name, Version: version}
	if u.cs != nil {
		u.cs.Close() // watch sees it is no longer current and returns
		u.cs = nil
	}
}

// watch notices an upstream session that ended (the daemon stopped) and
// reconnects in the background, then lists again: the tools may differ.
func (u *upstream) watch(cs *mcp.ClientSession) {
	cs.Wait()
	if !u.drop(cs) {
		return
	}
	u.opts.Logger.Info("lost the connection to Switchboard; reconnecting")
	if _, err := u.Acquire(u.ctx); err != nil {
		u.opts.Logger.Warn("cannot reconnect to Switchboard yet", "err", err)
	}
}

// refuse notes that the daemon refused the bridge during session cs, and
// forgets cs: the next call connects again and is refused at once.
func (u *upstream) refuse(cs *mcp.ClientSession, refused error) {
	if first := u.refusal.swap(refused) == nil; first {
		u.opts.Logger.Error("Switchboard refused this bridge; answering the client with the reason", "err", refused)
	}
	u.drop(cs)
}

// drop forgets cs if it is the current session; it reports whether it was
// (and the bridge is not closing).
func (u *upstream) drop(cs *mcp.ClientSession) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.cs != cs || u.closed {
		return false
	}
	u.cs = nil
	cs.Close()
	return true
}

// reconnect opens a new upstream session in the background, within the
// bridge's lifetime.
func (u *upstream) reconnect() {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.closed {
		return
	}
	u.wg.Go(func() {
		if _, err := u.Acquire(u.ctx); err != nil {
			u.opts.Logger.Warn("cannot reconnect to Switchboard yet", "err", err)
		}
	})
}

func (u *upstream) close() {
	u.mu.Lock()
	u.closed = true
	cs := u.cs
	u.cs = nil
	u.mu.Unlock()
	if cs != nil {
		cs.Close()
	}
}

// upstreamLease is a use of the upstream session.
type upstreamLease struct {
	u    *upstream
	cs   *mcp.ClientSession
	note *refusalNote
}

func (l *upstreamLease) Session() *mcp.ClientSession { return l.cs }
func (l *upstreamLease) Release()                    {}
func (l *upstreamLease) Err() error                  { return nil }
func (l *upstreamLease) PID() int                    { return 0 }

// Do runs fn. A failure that is not an answer from the daemon drops the
// session, so the next call reconnects; when the request cannot have
// reached a daemon (see unsent), Do reconnects at once and sends it again,
// so the client does not notice the restart.
func (l *upstreamLease) Do(ctx context.Context, fn func(context.Context, *mcp.ClientSession) error) error {
	err := fn(ctx, l.cs)
	if err == nil || ctx.Err() != nil {
		return err
	}
	if refused := l.note.get(); refused != nil {
		// The daemon refused the token during the session (it was
		// revoked): no reconnecting cures that. The call fails with the
		// reason, as every later one will, and the bridge's exit status
		// says it failed.
		l.u.refuse(l.cs, refused)
		return refused
	}
	if _, ok := errors.AsType[*jsonrpc.Error](err); ok {
		return err
	}
	l.u.drop(l.cs)
	if unsent(err) {
		fresh, aerr := l.u.Acquire(ctx)
		if aerr != nil {
			//lint:ignore ST1005 the message starts with the product's name, which users read in their client's log
			return fmt.Errorf("Switchboard went away and did not come back: %w", aerr)
		}
		return fn(ctx, fresh.Session())
	}
	l.u.reconnect() // now; the next call reports a failure
	return fmt.Errorf("the connection to Switchboard broke during the call (it is being re-established): %w", err)
}

// unsent reports whether a call that failed with err cannot have reached a
// daemon, so that sending it again cannot run it twice: the connection was
// refused, the daemon (restarted) does not know the session, or the session
// was closed before the request was written. The last is a call that leased
// the session just as another request on it found the session unknown and
// dropped it (or as the client introduced itself anew): the go-sdk answers
// it ErrConnectionClosed without sending it.
func unsent(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, mcp.ErrSessionMissing) ||
		errors.Is(err, mcp.ErrConnectionClosed)
}

// bearer adds the token to every request, and notes the daemon refusing it.
type bearer struct {
	token   string
	next    http.RoundTripper
	refused *refusalNote
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	resp, err := b.next.RoundTrip(r)
	if err != nil {
		return resp, err
	}
	switch resp.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound:
	default:
		return resp, err
	}
	// The go-sdk's error names the status only: keep the daemon's reason.
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	reason := strings.TrimSpace(string(body))
	if resp.StatusCode == http.StatusNotFound {
		// Only the 404 of an endpoint the daemon does not serve (an
		// unknown server or profile, see the gateway's refuseUnknownEndpoint) is a
		// refusal: a 404 of a session the daemon does not know (it
		// restarted) means connecting again.
		var e struct {
			Error struct {
				Message string            `json:"message"`
				Data    map[string]string `json:"data"`
			} `json:"error"`
		}
		if json.Unmarshal(body, &e) != nil {
			return resp, err
		}
		_, server := e.Error.Data["server"]
		_, profile := e.Error.Data["profile"]
		if !server && !profile {
			return resp, err
		}
		reason = e.Error.Message
	} else {
		if msg := refusalMessage(body); msg != "" {
			reason = msg
		}
		if resp.StatusCode == http.StatusUnauthorized {
			reason += " (the bridge's token was revoked, or is not this Switchboard's: " + reconnectHint + ")"
		}
	}
	b.refused.set(fmt.Errorf("%w: %s answered %s: %s", ErrRefused, r.URL.Redacted(), resp.Status, reason))
	return resp, err
}

// refusalMessage is the message of the daemon's refusal body: a JSON-RPC
// error (what the MCP endpoints answer), or the API's {"error": "..."}
// (what a daemon before 2026-12 answered there); "" when it is neither.
func refusalMessage(body []byte) string {
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil {
		return ""
	}
	var rpc struct{ Message string }
	if json.Unmarshal(e.Error, &rpc) == nil && rpc.Message != "" {
		return rpc.Message
	}
	var plain string
	_ = json.Unmarshal(e.Error, &plain)
	return plain
}

// reconnectHint says how a client whose token Switchboard refuses gets a
// new one.
const reconnectHint = "connect the client again to give it a new token: switchboard clients connect CLIENT, " +
	"or Reconnect on the dashboard's Clients page"

// refusalNote holds the daemon's refusal of one upstream connection (or,
// as upstream.refusal, of the bridge).
type refusalNote struct {
	mu  sync.Mutex
	err error
}

func (n *refusalNote) set(err error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.err = err
}

// swap sets err and returns the error it replaces.
func (n *refusalNote) swap(err error) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	old := n.err
	n.err = err
	return old
}

func (n *refusalNote) get() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.err
}
