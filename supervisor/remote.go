package supervisor

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A remote server is a pool of at most one connection: the pool's rules
// hold as they are (connected lazily or kept up by min, backoff after a
// lost or refused connection, failing after CrashLimit of them within
// CrashWindow, tried again after FailingCoolDown, health pings), with an
// HTTP connection where a local server has a process. A remote "process"
// has no pid (0): it is never tracked, sampled or signalled.
//
//	proc.runRemote ── connectRemote ── streamable HTTP (or SSE, or auto: one
//	      │                            then the other) through remoteRoundTripper:
//	      │                            the headers, the HTTP errors logged
//	      └── waits for the session to end (lost, expired) or a stop

// RemoteTransport says how a remote server is reached.
type RemoteTransport string

const (
	// RemoteAuto tries streamable HTTP and falls back to the legacy
	// HTTP+SSE transport when the server answers the initialize POST with
	// a 4xx status, as the spec's backward-compatibility section says.
	RemoteAuto RemoteTransport = "auto"
	// RemoteStreamableHTTP is the streamable HTTP transport (2025-03-26 on).
	RemoteStreamableHTTP RemoteTransport = "streamable-http"
	// RemoteSSE is the HTTP+SSE transport of 2024-11-05.
	RemoteSSE RemoteTransport = "sse"
)

// A RemoteSpec says how to reach a remote MCP server.
type RemoteSpec struct {
	// URL is the server's MCP endpoint (for SSE, its event stream).
	URL string
	// Transport is "" (the same as RemoteAuto), RemoteAuto,
	// RemoteStreamableHTTP or RemoteSSE.
	Transport RemoteTransport
	// Headers go with every request to the URL's origin, secret ones
	// included: they are never logged.
	Headers map[string]string
}

func (r *RemoteSpec) equal(o *RemoteSpec) bool {
	if r == nil || o == nil {
		return r == o
	}
	return r.URL == o.URL && r.Transport == o.Transport && maps.Equal(r.Headers, o.Headers)
}

// DefaultRemoteStartTimeout bounds connecting to a remote server (its
// initialize included) when the spec sets no StartTimeout: unlike a local
// server, nothing needs downloading first.
const DefaultRemoteStartTimeout = 30 * time.Second

// remoteStreamRetries is how often the streamable HTTP client tries to
// resume a response stream that broke before it fails the connection: one
// retry rides out a dropped stream, and a remote that is gone fails the
// calls in flight within a couple of seconds (the go-sdk's first retry
// waits 1 to 2s) rather than after five growing retries.
const remoteStreamRetries = 1

// ErrSessionExpired is wrapped by the error of a call whose remote server
// no longer knew the session (HTTP 404): the server did not run the call,
// and the next connection is a new session, so the call can be sent again.
var ErrSessionExpired = errors.New("the remote server ended the session")

// A RemoteError reports a remote server's connection that ended without
// being asked to, or a call that failed on its way to the server.
type RemoteError struct {
	Server string
	URL    string // without query or credentials
	Reason string
	Err    error
}

func (e *RemoteError) Error() string {
	msg := fmt.Sprintf("server %q (remote %s) %s", e.Server, e.URL, e.Reason)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *RemoteError) Unwrap() error { return e.Err }

// shownURL is a URL as logs and errors show it: without user info, query
// or fragment, which may carry credentials.
func shownURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(invalid URL)"
	}
	u.User, u.RawQuery, u.Fragment, u.ForceQuery = nil, "", "", false
	return u.String()
}

// scrub returns err with the remote server's URL, where its text quotes it
// (Go's HTTP errors do: Post "https://…"), shown as shownURL shows it, so
// that a token in the URL's query does not reach logs, the history or a
// client. The error still unwraps to err.
func scrub(err error, raw string) error {
	shown := shownURL(raw)
	if err == nil || shown == raw {
		return err
	}
	msg := err.Error()
	out := strings.ReplaceAll(msg, raw, shown)
	if u, perr := url.Parse(raw); perr == nil {
		out = strings.ReplaceAll(out, u.String(), shown)
	}
	if out == msg {
		return err
	}
	return &scrubbedError{msg: out, err: err}
}

type scrubbedError struct {
	msg string
	err error
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.err }

// remoteLog keeps a line about the remote server's connection in its logs
// (the stream "remote"), as a local server's stderr is kept.
func (p *Pool) remoteLog(format string, args ...any) {
	p.logLine(0, StreamRemote, fmt.Sprintf(format, args...))
}

// StreamRemote is the LogLine.Stream of a remote server's connection
// events and HTTP errors.
const StreamRemote = "remote"

// reasonExpired is a RemoteError's Reason when the server ended the session.
const reasonExpired = "ended the session (HTTP 404); the next call starts a new one"

// runRemote connects to the remote server and holds the connection until
// it ends or a stop is asked for. It returns as run does: an error wrapping
// ErrStopped after a stop, a *StartError when no connection was made, a
// *RemoteError when it was lost (wrapping ErrSessionExpired when the server
// ended the session).
func (pr *proc) runRemote() error {
	p := pr.pool
	r := pr.spec.Remote
	shown := shownURL(r.URL)
	p.report(procEvent{proc: pr, kind: procEventSpawned})
	p.publish(Event{Kind: EventStarting})
	// The connection's context: it ends when runRemote returns.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cs, transport, err := pr.connectRemote(ctx, shown)
	err = scrub(err, r.URL)
	if err != nil {
		if pr.stopRequested() {
			return fmt.Errorf("server %q (remote %s) was %w while connecting", pr.spec.Name, shown, ErrStopped)
		}
		if pr.expired.Load() {
			// The server ended the session it had just made (a 404 to a
			// request of the handshake that carried the session's id): no
			// failure of the server's, and the next call connects again.
			p.remoteLog("ended the session it had just made (HTTP 404); the next call starts a new one")
			return &RemoteError{Server: pr.spec.Name, URL: shown, Reason: reasonExpired, Err: ErrSessionExpired}
		}
		p.remoteLog("cannot connect: %v", err)
		return &StartError{Server: pr.spec.Name, Err: fmt.Errorf("connecting to %s: %w", shown, err)}
	}
	pr.session = cs
	pr.init = cs.InitializeResult()
	pr.transport = transport
	info := ""
	if si := pr.init.ServerInfo; si != nil {
		info = si.Name + " " + si.Version
	}
	p.remoteLog("connected over %s (protocol %s, server %s)", transport, pr.init.ProtocolVersion, info)
	p.report(procEvent{proc: pr, kind: procEventReady})

	ended := make(chan error, 1)
	go func() { ended <- cs.Wait() }()
	// The server ended the session (sessionEnded): the connection is ended
	// before the session is closed, so that the calls that fail with it
	// learn that the session expired.
	expired := func() error {
		e := &RemoteError{Server: pr.spec.Name, URL: shown, Reason: reasonExpired, Err: ErrSessionExpired}
		pr.cancel(e)
		cs.Close()
		<-ended
		p.remoteLog("%s", e.Reason)
		return e
	}
	select {
	case err := <-ended:
		err = scrub(err, r.URL)
		e := &RemoteError{Server: pr.spec.Name, URL: shown, Reason: "lost its connection", Err: err}
		if errors.Is(err, mcp.ErrSessionMissing) {
			e.Reason, e.Err = reasonExpired, fmt.Errorf("%w: %w", ErrSessionExpired, err)
		}
		if e.Err == nil {
			e.Err = errors.New("the connection closed")
		}
		p.remoteLog("%s", e.Reason+": "+e.Err.Error())
		pr.cancel(e)
		return e
	case <-pr.sessionEnded:
		return expired()
	case <-pr.stopCh:
		if pr.expired.Load() {
			return expired() // the server ended the session as the pool stopped it
		}
		cs.Close() // ends the session on the server (DELETE)
		<-ended
		if pr.stopReason() == stopUnhealthy {
			p.remoteLog("stopped answering pings; reconnecting")
			return &RemoteError{Server: pr.spec.Name, URL: shown, Reason: "stopped answering pings and is reconnected"}
		}
		p.remoteLog("disconnected")
		return fmt.Errorf("server %q (remote %s) was %w", pr.spec.Name, shown, ErrStopped)
	}
}

// connectRemote makes the MCP session to the remote server over the
// spec's transport, within StartTimeout or until a stop is asked for.
//
// The connection lives in ctx (the SSE client's stream is a request of
// the context it connects with): the start timeout and a stop cancel it
// only while connecting.
func (pr *proc) connectRemote(ctx context.Context, shown string) (*mcp.ClientSession, RemoteTransport, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	timer := time.AfterFunc(pr.spec.StartTimeout, func() {
		cancel(fmt.Errorf("no answer to initialize within %s: %w", pr.spec.StartTimeout, context.DeadlineExceeded))
	})
	connecting := make(chan struct{})
	defer func() {
		timer.Stop()
		close(connecting)
	}()
	go func() {
		select {
		case <-pr.stopCh:
			cancel(ErrStopped)
		case <-pr.sessionEnded:
			cancel(ErrSessionExpired)
		case <-connecting:
		}
	}()
	r := pr.spec.Remote
	switch r.Transport {
	case RemoteStreamableHTTP, RemoteSSE:
		cs, err := pr.connectOver(ctx, r.Transport, shown, nil)
		return cs, r.Transport, err
	}
	// auto: "If it fails with an HTTP 4xx status code (e.g., 405 Method
	// Not Allowed or 404 Not Found): The client should then issue a GET
	// request to the server URL, expecting that this will open an SSE
	// stream and return an endpoint event as the first event." (spec,
	// basic/transports, backwards compatibility). 401 and 403 ask for
	// credentials, not for another transport.
	var initStatus atomic.Int32
	cs, err := pr.connectOver(ctx, RemoteStreamableHTTP, shown, &initStatus)
	if err == nil {
		return cs, RemoteStreamableHTTP, nil
	}
	st := int(initStatus.Load())
	if st < 400 || st >= 500 || st == http.StatusUnauthorized || st == http.StatusForbidden || ctx.Err() != nil {
		return nil, "", err
	}
	pr.pool.remoteLog("the initialize POST got HTTP %d: trying the HTTP+SSE transport", st)
	cs, err = pr.connectOver(ctx, RemoteSSE, shown, nil)
	return cs, RemoteSSE, err
}

// connectOver connects over one transport. initStatus, if set, gets the
// status of the first POST (the initialize).
func (pr *proc) connectOver(ctx context.Context, kind RemoteTransport, shown string, initStatus *atomic.Int32) (*mcp.ClientSession, error) {
	p := pr.pool
	r := pr.spec.Remote
	p.remoteLog("connecting to %s over %s", shown, kind)
	client, err := pr.remoteClient(initStatus)
	if err != nil {
		return nil, err
	}
	var transport mcp.Transport
	if kind == RemoteSSE {
		transport = &mcp.SSEClientTransport{Endpoint: r.URL, HTTPClient: client}
	} else {
		// Sign-in (OAuth) will set the transport's OAuthHandler here.
		transport = &mcp.StreamableClientTransport{Endpoint: r.URL, HTTPClient: client, MaxRetries: remoteStreamRetries}
	}
	// Not given to the WrapTransport hook, which is for a process's pipes:
	// the go-sdk's HTTP connections learn the session's protocol version
	// through a method of theirs that a wrapper would hide (every request
	// would then carry the version of whichever client's call it is, and
	// the standalone GET stream would never open). The WrapRemoteHTTP
	// hook sees the messages below, in the HTTP client (remoteClient).
	cs, err := p.connect(ctx, transport)
	if err != nil && ctx.Err() != nil {
		err = fmt.Errorf("%w (%w)", context.Cause(ctx), err)
	}
	return cs, err
}

// remoteClient is the HTTP client of one connection to a remote server:
// Options.RemoteRoundTripper's transport (TLS verified) under the
// server's headers, following redirects only within the URL's origin.
func (pr *proc) remoteClient(initStatus *atomic.Int32) (*http.Client, error) {
	p, r := pr.pool, pr.spec.Remote
	origin, err := url.Parse(r.URL)
	if err != nil {
		return nil, fmt.Errorf("invalid URL: %w", err)
	}
	var base http.RoundTripper
	if rt := p.sup.opts.RemoteRoundTripper; rt != nil {
		base = rt(p.name)
	}
	if base == nil {
		base = http.DefaultTransport
	}
	if wrap := p.sup.hooks.WrapRemoteHTTP; wrap != nil {
		base = wrap(p.name, base)
	}
	rt := &remoteRoundTripper{base: base, scheme: origin.Scheme, host: origin.Host, headers: r.Headers,
		proc: pr, initStatus: initStatus}
	return &http.Client{Transport: rt, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if req.URL.Scheme != origin.Scheme || req.URL.Host != origin.Host {
			return fmt.Errorf("refusing a redirect away from %s://%s (to %s)", origin.Scheme, origin.Host, shownURL(req.URL.String()))
		}
		if len(via) >= 5 {
			return errors.New("more than 5 redirects")
		}
		return nil
	}}, nil
}

// A remoteRoundTripper puts a remote server's headers on each request to
// its origin and logs what went wrong at the HTTP level (status 400 and
// up, failed requests) in the server's logs, without headers or query.
type remoteRoundTripper struct {
	base         http.RoundTripper
	scheme, host string
	headers      map[string]string
	proc         *proc
	initStatus   *atomic.Int32 // see connectOver; nil: not recorded
}

func (t *remoteRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 && req.URL.Scheme == t.scheme && req.URL.Host == t.host {
		req = req.Clone(req.Context()) // a RoundTripper must not change its request
		for k, v := range t.headers {
			req.Header.Set(k, v)
		}
	}
	p := t.proc.pool
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		if req.Context().Err() == nil {
			p.remoteLog("%s %s: %v", req.Method, shownURL(req.URL.String()), err)
		}
		return nil, err
	}
	if t.initStatus != nil && req.Method == http.MethodPost {
		t.initStatus.CompareAndSwap(0, int32(resp.StatusCode))
	}
	if resp.StatusCode >= 400 {
		p.remoteLog("%s %s: HTTP %s", req.Method, shownURL(req.URL.String()), resp.Status)
	}
	// "The server MAY terminate the session at any time, after which it
	// MUST respond to requests containing that session ID with HTTP 404
	// Not Found" (spec, streamable HTTP, session management). The go-sdk
	// client notices a plain 404 itself, but not one with a JSON-RPC body
	// (the TypeScript SDK's): either way the connection is ended here, and
	// the next call starts a new session.
	if resp.StatusCode == http.StatusNotFound && req.Method != http.MethodDelete && req.Header.Get("Mcp-Session-Id") != "" &&
		t.proc.expired.CompareAndSwap(false, true) {
		close(t.proc.sessionEnded)
	}
	return resp, nil
}
