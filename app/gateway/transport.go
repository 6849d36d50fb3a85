package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
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

func (c *backendConn) countProgress(params json.RawMessage) {
	var p struct {
		Token any `json:"progressToken"`
	}
	if json.Unmarshal(params, &p) == nil {
		if token, ok := p.Token.(string); ok {
			if v, ok := c.g.progress.Load(token); ok {
				v.(*progressRoute).seen.Add(1)
			}
		}
	}
}
