package gateway

import (
	"context"
	"encoding/json"
	"io"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// scriptedConn is the backend end of a connection: what the gateway writes
// is kept, and Read returns the queued messages.
type scriptedConn struct {
	written []jsonrpc.Message
	queued  []jsonrpc.Message
}

func (c *scriptedConn) Read(context.Context) (jsonrpc.Message, error) {
	if len(c.queued) == 0 {
		return nil, io.EOF
	}
	m := c.queued[0]
	c.queued = c.queued[1:]
	return m, nil
}

func (c *scriptedConn) Write(_ context.Context, m jsonrpc.Message) error {
	c.written = append(c.written, m)
	return nil
}

func (c *scriptedConn) Close() error      { return nil }
func (c *scriptedConn) SessionID() string { return "" }

var _ mcp.Connection = (*scriptedConn)(nil)

func TestBackendConnCapturesPlainToolResults(t *testing.T) {
	id := func(n int64) jsonrpc.ID {
		id, err := jsonrpc.MakeID(float64(n))
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	call := func(n int64, method string) *jsonrpc.Request {
		return &jsonrpc.Request{ID: id(n), Method: method, Params: json.RawMessage(`{}`)}
	}
	// Bytes the go-sdk would not write itself (an unknown key, key order,
	// escapes) show that they are passed on as sent.
	plain := json.RawMessage(`{"z":1,"content":[{"text":"\u00e9","type":"text"}]}`)
	failed := json.RawMessage(`{"content":[{"type":"text","text":"no"}],"isError":true}`)

	for _, c := range []struct {
		name       string
		method     string
		result     json.RawMessage
		rpcErr     error
		capture    bool // the request's context carries a capture
		forwarded  bool // callTool passed the result on
		wantRaw    json.RawMessage
		wantResult json.RawMessage // what the go-sdk decodes
	}{
		{"plain", "tools/call", plain, nil, true, true, plain, json.RawMessage(standInResult)},
		{"tool error", "tools/call", failed, nil, true, true, nil, failed},
		{"rpc error", "tools/call", nil, &jsonrpc.Error{Code: 1, Message: "no"}, true, true, nil, nil},
		{"no capture", "tools/call", plain, nil, false, true, nil, plain},
		{"other method", "prompts/get", plain, nil, true, true, nil, plain},
		{"gateway failure", "tools/call", plain, nil, true, false, nil, json.RawMessage(standInResult)},
	} {
		t.Run(c.name, func(t *testing.T) {
			inner := &scriptedConn{queued: []jsonrpc.Message{&jsonrpc.Response{ID: id(7), Result: c.result, Error: c.rpcErr}}}
			conn := &backendConn{Connection: inner, g: &Gateway{}, captures: map[jsonrpc.ID]*rawCapture{}}
			ctx := t.Context()
			rc := &rawCapture{}
			if c.capture {
				ctx = context.WithValue(ctx, rawCaptureKey{}, rc)
			}
			if err := conn.Write(ctx, call(7, c.method)); err != nil {
				t.Fatal(err)
			}
			msg, err := conn.Read(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got := msg.(*jsonrpc.Response).Result; string(got) != string(c.wantResult) {
				t.Errorf("the go-sdk decodes %s, want %s", got, c.wantResult)
			}
			rc.done(c.forwarded)
			if got := rc.raw(); string(got) != string(c.wantRaw) {
				t.Errorf("passed on raw: %s, want %s", got, c.wantRaw)
			}
			if len(conn.captures) != 0 {
				t.Errorf("%d captures left on the connection", len(conn.captures))
			}
		})
	}

	t.Run("no response", func(t *testing.T) {
		conn := &backendConn{Connection: &scriptedConn{}, g: &Gateway{}, captures: map[jsonrpc.ID]*rawCapture{}}
		rc := &rawCapture{}
		if err := conn.Write(context.WithValue(t.Context(), rawCaptureKey{}, rc), call(8, "tools/call")); err != nil {
			t.Fatal(err)
		}
		rc.done(false) // cancelled before the server answered
		if len(conn.captures) != 0 || rc.raw() != nil {
			t.Errorf("a call without response left %d captures, raw %s", len(conn.captures), rc.raw())
		}
	})
}
