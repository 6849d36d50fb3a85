package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/internal/mcpscan"
)

// The fast path's backend hop. A forwarded call is written onto the
// server's connection as the gateway's own JSON-RPC request, with an id of
// the gateway's ("sbf-<n>"), and the server's response to that id is taken
// off the connection as bytes before the go-sdk's jsonrpc2 reads it:
//
//	callBackend ──line "sbf-7" (WriteLine, serialized with the go-sdk's writes)──▶ server
//	                                                                                │
//	tapLine, on the supervisor's reader of stdout: a response with id "sbf-7" ◀─────┘
//	     goes to the waiting call (result or error as the server's bytes)
//	backendConn.Read: the same for a call with a progress token (its response
//	     must follow the notifications read before it, see drain); every other
//	     message goes on to the go-sdk, as before
//
// The go-sdk keeps the handshake, pings, notifications (progress among them:
// the gateway's progress routing passes them on) and the server's requests
// (sampling, elicitation, roots). A call whose context ends while it waits
// is forgotten and the server gets notifications/cancelled, as the go-sdk
// client would send.

// backendCalls are the gateway's own calls in flight on one connection.
type backendCalls struct {
	mu     sync.Mutex
	calls  map[string]*backendCall // by id
	closed error                   // the connection ended: no more calls
	n      atomic.Int32            // len(calls), read on every line without the lock
}

// A backendCall waits for the server's response to one call.
type backendCall struct {
	// ordered: the response must reach the call after every message the
	// server sent before it has been read (the call has a progress token:
	// drain counts its notifications as Read reads them), so it is taken
	// in Read; else it is taken as soon as the line is read (tapLine).
	ordered bool
	done    chan struct{} // closed once one of the fields below is set
	result  json.RawMessage
	rpcErr  *jsonrpc.Error
	err     error // the connection ended
}

func (bc *backendCalls) add(id string, call *backendCall) error {
	bc.mu.Lock()
	defer bc.mu.Unlock()
	if bc.closed != nil {
		return bc.closed
	}
	if bc.calls == nil {
		bc.calls = map[string]*backendCall{}
	}
	bc.calls[id] = call
	bc.n.Add(1)
	return nil
}

// take removes and returns the call of id, if it still waits; tapped,
// only if it is not ordered.
func (bc *backendCalls) take(id string, tapped bool) *backendCall {
	bc.mu.Lock()
	defer bc.mu.Unlock()
	call := bc.calls[id]
	if call != nil && tapped && call.ordered {
		return nil
	}
	if call != nil {
		delete(bc.calls, id)
		bc.n.Add(-1)
	}
	return call
}

// fail ends every waiting call with err (the connection ended).
func (bc *backendCalls) fail(err error) {
	bc.mu.Lock()
	calls := bc.calls
	bc.calls = nil
	if bc.closed == nil {
		bc.closed = err
	}
	bc.n.Store(0)
	bc.mu.Unlock()
	for _, call := range calls {
		call.err = err
		close(call.done)
	}
}

// deliverLine hands a line the server sent to the call it answers, and
// reports whether it did; a line that is no response to one of the
// gateway's calls is left for the go-sdk. tapped: the line has just been
// read (tapLine), and an ordered call's response is left for Read.
func (bc *backendCalls) deliverLine(line []byte, tapped bool) bool {
	if bc.n.Load() == 0 {
		return false
	}
	id, result, errObj, ok := fastEnvelope(line)
	if !ok {
		return false
	}
	call := bc.take(id, tapped)
	if call == nil {
		return false
	}
	if errObj != nil {
		call.rpcErr = decodeRPCError(errObj)
	} else {
		call.result = result
	}
	close(call.done)
	return true
}

// deliverMessage is deliverLine for a message already decoded (off a
// connection that does not hand out lines, or the rest of a batch).
func (bc *backendCalls) deliverMessage(m *jsonrpc.Response) bool {
	if bc.n.Load() == 0 {
		return false
	}
	id, ok := m.ID.Raw().(string)
	if !ok || len(id) <= len(fastIDPrefix) || id[:len(fastIDPrefix)] != fastIDPrefix {
		return false
	}
	call := bc.take(id, false)
	if call == nil {
		return false
	}
	if m.Error != nil {
		var werr *jsonrpc.Error
		if errors.As(m.Error, &werr) {
			call.rpcErr = werr
		} else {
			call.rpcErr = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: m.Error.Error()}
		}
	} else {
		call.result = m.Result
	}
	close(call.done)
	return true
}

func decodeRPCError(obj []byte) *jsonrpc.Error {
	var e jsonrpc.Error
	if err := json.Unmarshal(obj, &e); err != nil {
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the server's error response is malformed: " + err.Error()}
	}
	return &e
}

// fastEnvelope finds, in a line, the id of a response to one of the
// gateway's calls and its result or error, without decoding them; ok is
// false for anything else. The gateway's ids are plain strings (no
// escapes), so the id is compared as it is written. An "error": null is
// no error (responseError); a response with neither a result nor an
// error, or with both, is left to the go-sdk (deliverMessage).
func fastEnvelope(line []byte) (id string, result, errObj []byte, ok bool) {
	r, ok := mcpscan.ScanResponse(line)
	errObj = responseError(r.Error)
	if !ok || (r.Result == nil) == (errObj == nil) {
		return "", nil, nil, false
	}
	idRaw := r.ID
	if len(idRaw) < len(fastIDPrefix)+3 || idRaw[0] != '"' || idRaw[len(idRaw)-1] != '"' ||
		string(idRaw[1:1+len(fastIDPrefix)]) != fastIDPrefix {
		return "", nil, nil, false
	}
	return string(idRaw[1 : len(idRaw)-1]), r.Result, errObj, true
}

// lineWriter is a connection that writes encoded messages as they are
// (the supervisor's stdio connection).
type lineWriter interface {
	WriteLine(ctx context.Context, data []byte) error
}

// writeLine writes one encoded message (ending in a newline).
func (c *backendConn) writeLine(ctx context.Context, data []byte) error {
	if w, ok := c.Connection.(lineWriter); ok {
		return w.WriteLine(ctx, data)
	}
	msg, err := jsonrpc.DecodeMessage(data[:len(data)-1])
	if err != nil {
		return fmt.Errorf("internal: the gateway's request is not a message: %w", err)
	}
	return c.Connection.Write(ctx, msg)
}

// callBackend sends the request method with params (JSON, as they go on
// the wire) as the gateway's own call on c, and returns the server's result
// as its bytes, or the error it answered with (a *jsonrpc.Error). When ctx
// ends first, the call is forgotten and the server told with
// notifications/cancelled. ordered: the call has a progress token (see
// backendCall.ordered).
func (g *Gateway) callBackend(ctx context.Context, c *backendConn, method string, params []byte, ordered bool) (json.RawMessage, error) {
	n := g.fast.nextID.Add(1)
	var idBuf [24]byte
	id := string(strconv.AppendUint(append(idBuf[:0], fastIDPrefix...), n, 36))
	line := make([]byte, 0, len(params)+len(method)+len(id)+48)
	line = append(line, `{"jsonrpc":"2.0","id":"`...)
	line = append(line, id...)
	line = append(line, `","method":"`...)
	line = append(line, method...)
	line = append(line, `","params":`...)
	line = append(line, params...)
	line = append(line, "}\n"...)

	call := &backendCall{ordered: ordered, done: make(chan struct{})}
	if err := c.calls.add(id, call); err != nil {
		return nil, err
	}
	if err := c.writeLine(ctx, line); err != nil {
		c.calls.take(id, false)
		return nil, fmt.Errorf("writing the call to the server: %w", err)
	}
	select {
	case <-call.done:
		if call.err != nil {
			return nil, call.err
		}
		if call.rpcErr != nil {
			return nil, call.rpcErr
		}
		return call.result, nil
	case <-ctx.Done():
		if c.calls.take(id, false) != nil {
			// As the go-sdk's client does for a call its caller gave up.
			note, _ := json.Marshal(&mcp.CancelledParams{RequestID: id, Reason: ctx.Err().Error()})
			cancelled := make([]byte, 0, len(note)+64)
			cancelled = append(cancelled, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":`...)
			cancelled = append(cancelled, note...)
			cancelled = append(cancelled, "}\n"...)
			// Off the caller's way, as the go-sdk sends it: a server that
			// stopped reading must not hold the caller.
			go func() { _ = c.writeLine(context.WithoutCancel(ctx), cancelled) }()
		}
		return nil, ctx.Err()
	}
}

// tapLine takes, on the goroutine that reads the server's stdout, a line
// that answers one of the gateway's calls that is not ordered: the call
// gets its response without the go-sdk's reader in between (see
// supervisor.LineTapper). Every other line goes on to Read.
func (c *backendConn) tapLine(line []byte) bool {
	return c.calls.deliverLine(bytes.TrimLeft(line, " \t"), true)
}

// A connProbe finds the backendConn under a client session: the first
// call of the fast path on a session pings through it, and the
// connection's Write sees the probe in the ping's context.
type connProbe struct{ conn *backendConn }

type connProbeKey struct{}

// connOf returns the backendConn of cs, or nil when cs runs over another
// connection (the stdio bridge's HTTP upstream) or over one that is not a
// process's pipes (a remote server's HTTP): the call then goes through
// the go-sdk. The fast path writes lines onto pipes; over HTTP the go-sdk
// client is the transport's own.
func (g *Gateway) connOf(ctx context.Context, cs *mcp.ClientSession) *backendConn {
	if v, ok := g.fast.conns.Load(cs); ok {
		return v.(*backendConn).fast()
	}
	if !g.fast.wrapped.Load() {
		return nil // no connection of this gateway's: not worth a ping
	}
	probe := &connProbe{}
	if err := cs.Ping(context.WithValue(ctx, connProbeKey{}, probe), nil); err != nil || probe.conn == nil {
		if err == nil {
			g.fast.remember(cs, nil)
		}
		return nil
	}
	c := probe.conn
	c.mu.Lock()
	c.cs = cs
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return nil
	}
	g.fast.conns.Store(cs, c)
	return c.fast()
}

// remember notes that cs runs over no connection of the gateway's (a
// remote server's HTTP), until it closes: one probe per session, not one
// per call.
func (s *fastState) remember(cs *mcp.ClientSession, c *backendConn) {
	if _, loaded := s.conns.LoadOrStore(cs, c); !loaded {
		go func() {
			_ = cs.Wait()
			s.conns.CompareAndDelete(cs, c)
		}()
	}
}

// fast returns c if the fast path can write onto it (a process's pipes),
// else nil.
func (c *backendConn) fast() *backendConn {
	if c == nil || c.lines == nil {
		return nil
	}
	return c
}

// probed notes that a ping through c carried a probe.
func (c *backendConn) probed(ctx context.Context) {
	if p, ok := ctx.Value(connProbeKey{}).(*connProbe); ok {
		p.conn = c
	}
}

// closeFast ends the connection's calls and forgets it.
func (c *backendConn) closeFast(err error) {
	c.mu.Lock()
	c.closed = true
	cs := c.cs
	c.mu.Unlock()
	if cs != nil {
		c.g.fast.conns.CompareAndDelete(cs, c)
	}
	c.calls.fail(err)
}

// errConnClosed ends the calls of a connection that closed.
var errConnClosed = errors.New("the connection to the server closed")

// viaBackend returns how the go-sdk path forwards method: with the fast
// path on, as the gateway's own call on the backend connection (the
// server's result decoded once by decode, not by the go-sdk client's
// jsonrpc2), else, or over another connection, the go-sdk client's sdk.
func viaBackend[P any, R any](g *Gateway, method string, sdk func(*mcp.ClientSession, context.Context, P) (R, error),
	decode func(context.Context, json.RawMessage) (R, error)) func(*mcp.ClientSession, context.Context, P) (R, error) {
	if !g.fast.on {
		return sdk
	}
	return func(cs *mcp.ClientSession, ctx context.Context, params P) (R, error) {
		c := g.connOf(ctx, cs)
		if c == nil {
			return sdk(cs, ctx, params)
		}
		var zero R
		body, err := marshalNoEscape(params)
		if err != nil {
			return zero, fmt.Errorf("encoding %s params: %w", method, err)
		}
		raw, err := g.callBackend(ctx, c, method, body, true)
		if rpcErr, ok := errors.AsType[*jsonrpc.Error](err); ok {
			return zero, fmt.Errorf("calling %q: %w", method, rpcErr) // as the go-sdk client says it
		}
		if err != nil {
			return zero, err
		}
		return decode(ctx, raw)
	}
}

// decodeToolResult is a tools/call result as the go-sdk client makes it,
// except that a plain result a rawCapture waits for is kept as its bytes
// (see rawResults) and not decoded at all.
func decodeToolResult(ctx context.Context, raw json.RawMessage) (*mcp.CallToolResult, error) {
	if rc := rawCaptureFrom(ctx); rc != nil && rc.take(raw) != nil {
		return &mcp.CallToolResult{Content: []mcp.Content{}}, nil // what rawResults replaces
	}
	return decodeInto(&mcp.CallToolResult{}, "tools/call", raw)
}

func decodePromptResult(_ context.Context, raw json.RawMessage) (*mcp.GetPromptResult, error) {
	return decodeInto(&mcp.GetPromptResult{}, "prompts/get", raw)
}

// decodeResourceResult is a resources/read result as the go-sdk client
// makes it, except that one a rawCapture waits for is kept as its bytes
// when the go-sdk would pass it on unchanged (see rawResults); the
// go-sdk's server is handed an empty stand-in, which rawResults replaces.
func decodeResourceResult(ctx context.Context, raw json.RawMessage) (*mcp.ReadResourceResult, error) {
	if rc := rawCaptureFrom(ctx); rc != nil && mcpscan.CompleteResourceContents(raw) {
		rc.keep(raw)
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{}}, nil
	}
	return decodeInto(&mcp.ReadResourceResult{}, "resources/read", raw)
}

// decodeInto decodes raw into into. The go-sdk's result types decode
// (and so check) their JSON themselves, with their UnmarshalJSON, which is
// called directly: json.Unmarshal would first check all of raw and then
// walk it again to find its end (for a 256 KiB resource, two of the three
// passes over it).
func decodeInto[R any](into R, method string, raw json.RawMessage) (R, error) {
	var err error
	if u, ok := any(into).(json.Unmarshaler); ok {
		err = u.UnmarshalJSON(raw)
	} else {
		err = json.Unmarshal(raw, into)
	}
	if err != nil {
		var zero R
		return zero, fmt.Errorf("calling %q: decoding the server's result: %w", method, err)
	}
	return into, nil
}
