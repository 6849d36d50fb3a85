package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/supervisor"
)

// WrapTransport wraps a backend process's transport
// (supervisor.Options.WrapTransport) to see its messages as they pass:
//   - each progress notification is counted for its call as it is read:
//     the read loop reads a server's messages in order, so by the time a
//     call's response is read, every progress notification sent before it
//     has been counted (see drain);
//   - a forwarded tools/call's result is kept as the server's bytes (see
//     rawCapture).
//
// Over a process's pipes the supervisor's connection hands out lines
// before decoding them (supervisor.LineConn): a big captured result is
// then never decoded, and stays in the line read (see responseEnvelope).
func (g *Gateway) WrapTransport(_ string, t mcp.Transport) mcp.Transport {
	return countingTransport{Transport: t, g: g}
}

type countingTransport struct {
	mcp.Transport
	g *Gateway
}

func (t countingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	lines, _ := c.(supervisor.LineConn)
	t.g.fast.wrapped.Store(true)
	bc := &backendConn{Connection: c, lines: lines, g: t.g, captures: map[jsonrpc.ID]*rawCapture{}}
	if tapper, ok := c.(supervisor.LineTapper); ok && lines != nil {
		tapper.SetLineTap(bc.tapLine)
	}
	return bc, nil
}

// A backendConn is the connection to one backend process.
type backendConn struct {
	mcp.Connection
	lines supervisor.LineConn // the Connection, when it hands out lines
	g     *Gateway

	mu       sync.Mutex
	captures map[jsonrpc.ID]*rawCapture // tools/call requests in flight whose result is captured
	cs       *mcp.ClientSession         // the session over this connection, once a probe found it (fastback.go)
	closed   bool

	calls backendCalls // the fast path's calls in flight (fastback.go)
}

func (c *backendConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "ping" {
		c.probed(ctx)
	}
	// The go-sdk writes a call with the caller's context, so a capture
	// that callTool put there is found here, with the request's id.
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "tools/call" && req.IsCall() {
		if rc := rawCaptureFrom(ctx); rc != nil {
			c.mu.Lock()
			c.captures[req.ID] = rc
			c.mu.Unlock()
			rc.sent(c, req.ID)
		}
	}
	return c.Connection.Write(ctx, msg)
}

func (c *backendConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.read(ctx)
		if err != nil && ctx.Err() == nil {
			c.closeFast(fmt.Errorf("%w: %w", errConnClosed, err))
		}
		switch m := msg.(type) {
		case *jsonrpc.Request:
			if m.Method == "notifications/progress" {
				c.countProgress(m.Params)
			}
		case *jsonrpc.Response:
			if c.calls.deliverMessage(m) {
				continue // the answer to one of the gateway's own calls
			}
			c.mu.Lock()
			rc := c.captures[m.ID]
			delete(c.captures, m.ID)
			c.mu.Unlock()
			if rc != nil && m.Error == nil {
				if standIn := rc.take(m.Result); standIn != nil {
					m.Result = standIn
				}
			}
		}
		return msg, err
	}
}

func (c *backendConn) Close() error {
	c.closeFast(errConnClosed)
	return c.Connection.Close()
}

// read reads the next message. A big line on a supervisor.LineConn, while
// results are captured, is looked at before it is decoded: a response whose
// result is captured is not decoded (its result stays in the line read).
func (c *backendConn) read(ctx context.Context) (jsonrpc.Message, error) {
	if c.lines == nil || c.lines.Queued() {
		return c.Connection.Read(ctx)
	}
	for {
		line, msg, err := c.lines.NextLine(ctx)
		if err != nil {
			return nil, err
		}
		if msg != nil {
			return msg, nil
		}
		line = bytes.TrimLeft(line, " \t")
		if c.calls.deliverLine(line, false) {
			continue // the answer to one of the gateway's own calls
		}
		if len(line) >= spliceMin && line[0] == '{' {
			c.mu.Lock()
			capturing := len(c.captures) > 0
			c.mu.Unlock()
			if capturing {
				if id, result, ok := responseEnvelope(line); ok {
					return &jsonrpc.Response{ID: id, Result: result}, nil
				}
			}
		}
		// What is not a message is the server's output (the supervisor
		// logs it); the next line may be one.
		if msg, ok := c.lines.DecodeLine(line); ok {
			return msg, nil
		}
	}
}

// forget drops id's capture if it is still rc (no response came).
func (c *backendConn) forget(id jsonrpc.ID, rc *rawCapture) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.captures[id] == rc {
		delete(c.captures, id)
	}
}

func (c *backendConn) countProgress(params json.RawMessage) { c.g.countProgress(params) }

// countProgress counts a progress notification (its params) read off a
// server's connection for the call it is about, if the gateway routes it.
func (g *Gateway) countProgress(params json.RawMessage) {
	var p struct {
		Token any `json:"progressToken"`
	}
	if json.Unmarshal(params, &p) == nil {
		if token, ok := p.Token.(string); ok {
			if v, ok := g.progress.Load(token); ok {
				v.(*progressRoute).seen.Add(1)
			}
		}
	}
}

// WrapRemoteHTTP wraps the HTTP transport under a remote server's
// connection (supervisor.Options.WrapRemoteHTTP) to count its progress
// notifications as WrapTransport does over a process's pipes: the go-sdk
// client reads a response's event stream (streamable HTTP's POST and GET
// streams, the SSE transport's one stream) in order, so each progress
// notification before a call's result is counted as its bytes are read,
// before the result's bytes reach the client, and drain waits for it. The
// go-sdk's own connection cannot be wrapped (see supervisor's connectOver).
func (g *Gateway) WrapRemoteHTTP(_ string, rt http.RoundTripper) http.RoundTripper {
	return progressCountingTransport{next: rt, g: g}
}

type progressCountingTransport struct {
	next http.RoundTripper
	g    *Gateway
}

func (t progressCountingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "text/event-stream" {
		resp.Body = &eventStreamBody{ReadCloser: resp.Body, scan: eventScanner{onData: func(data []byte) {
			// Only a notification can be one: a cheap test first.
			if bytes.Contains(data, []byte(`"notifications/progress"`)) {
				var m struct {
					Method string          `json:"method"`
					Params json.RawMessage `json:"params"`
				}
				if json.Unmarshal(data, &m) == nil && m.Method == "notifications/progress" {
					t.g.countProgress(m.Params)
				}
			}
		}}}
	}
	return resp, nil
}

// An eventStreamBody passes a response's event stream through its scanner
// as the stream is read, before the reader sees the bytes.
type eventStreamBody struct {
	io.ReadCloser
	scan eventScanner
}

func (b *eventStreamBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.scan.write(p[:n])
	return n, err
}

// maxScannedLine bounds a line the eventScanner keeps: a longer one (a big
// result) is no progress notification it needs to count, and is skipped
// with its event rather than held.
const maxScannedLine = 64 << 10

// An eventScanner splits a text/event-stream into events and hands each
// event's data (its data lines joined by newlines) to onData, as the
// HTML standard's event stream parsing does; it keeps no other field.
type eventScanner struct {
	onData  func(data []byte)
	line    []byte // the line read so far
	long    bool   // the line passed maxScannedLine: its event is skipped
	data    []byte // the event's data so far
	hasData bool   // the event had a data line
	skip    bool   // the event had a line too long: not handed on
	lastCR  bool   // the last byte written was a CR (its CRLF may be split)
}

func (s *eventScanner) write(p []byte) {
	for len(p) > 0 {
		if s.lastCR {
			s.lastCR = false
			if p[0] == '\n' {
				p = p[1:]
				continue
			}
		}
		i := bytes.IndexAny(p, "\r\n")
		if i < 0 {
			s.add(p)
			return
		}
		s.add(p[:i])
		s.lastCR = p[i] == '\r'
		s.endLine()
		p = p[i+1:]
	}
}

func (s *eventScanner) add(p []byte) {
	if s.long || len(s.line)+len(p) > maxScannedLine {
		s.long, s.line = true, s.line[:0]
		return
	}
	s.line = append(s.line, p...)
}

func (s *eventScanner) endLine() {
	line, long := s.line, s.long
	s.line, s.long = s.line[:0], false
	switch {
	case long:
		s.skip = true
	case len(line) == 0: // the end of an event
		if s.hasData && !s.skip {
			s.onData(s.data)
		}
		s.data, s.hasData, s.skip = s.data[:0], false, false
	case bytes.HasPrefix(line, []byte("data")) && (len(line) == 4 || line[4] == ':'):
		value := bytes.TrimPrefix(line[4:], []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		if s.hasData {
			s.data = append(s.data, '\n')
		}
		if len(s.data)+len(value) > maxScannedLine {
			s.skip = true
		} else {
			s.data = append(s.data, value...)
		}
		s.hasData = true
	}
}
