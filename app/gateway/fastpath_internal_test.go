package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestFastEnvelope: only a response to one of the gateway's own calls is
// taken off a backend connection; everything else is the go-sdk's.
func TestFastEnvelope(t *testing.T) {
	for _, c := range []struct {
		line         string
		id           string
		result, eobj string
	}{
		{line: `{"jsonrpc":"2.0","id":"sbf-1","result":{"content":[]}}`, id: "sbf-1", result: `{"content":[]}`},
		{line: ` { "result" : {"a":"}"} , "jsonrpc":"2.0", "id":"sbf-z9" }`, id: "sbf-z9", result: `{"a":"}"}`},
		{line: `{"jsonrpc":"2.0","id":"sbf-2","error":{"code":-32602,"message":"no"}}`, id: "sbf-2", eobj: `{"code":-32602,"message":"no"}`},
		{line: `{"jsonrpc":"2.0","id":3,"result":{}}`},                                 // the go-sdk's call
		{line: `{"jsonrpc":"2.0","id":"sbf-4","method":"x","result":{}}`},              // not a response
		{line: `{"jsonrpc":"1.0","id":"sbf-5","result":{}}`},                           // not JSON-RPC 2.0
		{line: `{"jsonrpc":"2.0","id":"sbf-6","result":{},"error":{"code":1}}`},        // both
		{line: `{"jsonrpc":"2.0","id":"sbf-7","result":{"a":1}`},                       // cut short
		{line: `{"jsonrpc":"2.0","method":"notifications/progress","params":{"x":1}}`}, // a notification
		// "error": null is no error, as the go-sdk reads it (responseError).
		{line: `{"jsonrpc":"2.0","id":"sbf-8","result":{"a":1},"error":null}`, id: "sbf-8", result: `{"a":1}`},
		{line: `{"jsonrpc":"2.0","id":"sbf-9","error" : null }`}, // neither: the go-sdk's empty result
	} {
		id, result, eobj, ok := fastEnvelope([]byte(c.line))
		if ok != (c.id != "") || id != c.id || string(result) != c.result || string(eobj) != c.eobj {
			t.Errorf("fastEnvelope(%s) = %q, %s, %s, %v", c.line, id, result, eobj, ok)
		}
	}
}

// TestBackendCallsDeliver: a response reaches the waiting call once; a
// closed connection fails the calls left.
func TestBackendCallsDeliver(t *testing.T) {
	var bc backendCalls
	a := &backendCall{done: make(chan struct{})}
	b := &backendCall{done: make(chan struct{})}
	if err := bc.add("sbf-a", a); err != nil {
		t.Fatal(err)
	}
	if err := bc.add("sbf-b", b); err != nil {
		t.Fatal(err)
	}
	if !bc.deliverLine([]byte(`{"jsonrpc":"2.0","id":"sbf-a","result":{"ok":true}}`), true) {
		t.Fatal("the response to sbf-a was not taken")
	}
	<-a.done
	if string(a.result) != `{"ok":true}` {
		t.Errorf("sbf-a got %s", a.result)
	}
	if bc.deliverLine([]byte(`{"jsonrpc":"2.0","id":"sbf-a","result":{}}`), false) {
		t.Error("a second response to sbf-a was taken")
	}
	// A call with a progress token (ordered) is left by the tap, for Read:
	// its response must come after the notifications read before it.
	o := &backendCall{ordered: true, done: make(chan struct{})}
	if err := bc.add("sbf-o", o); err != nil {
		t.Fatal(err)
	}
	if bc.deliverLine([]byte(`{"jsonrpc":"2.0","id":"sbf-o","result":{}}`), true) {
		t.Error("the tap took the response to an ordered call")
	}
	if !bc.deliverLine([]byte(`{"jsonrpc":"2.0","id":"sbf-o","result":{}}`), false) {
		t.Error("Read did not take the response to an ordered call")
	}
	<-o.done
	bc.fail(errConnClosed)
	<-b.done
	if b.err != errConnClosed {
		t.Errorf("sbf-b ended with %v", b.err)
	}
	if err := bc.add("sbf-c", &backendCall{done: make(chan struct{})}); err == nil {
		t.Error("a call was added to a closed connection")
	}
}

// TestNeedsCompact: a result is compacted exactly when encoding/json would
// change it.
func TestNeedsCompact(t *testing.T) {
	for _, s := range []string{`{"a":"b c"}`, `{"a": "b"}`, `{"a":"\" "}`, "{\"a\":\n1}", `{"a":"\\"}`, `[1,2]`, `{"a":"x\\\" y"}`} {
		var b bytes.Buffer
		if err := json.Compact(&b, []byte(s)); err != nil {
			t.Fatal(err)
		}
		if got, want := needsCompact([]byte(s)), b.String() != s; got != want {
			t.Errorf("needsCompact(%s) = %v, want %v", s, got, want)
		}
	}
}

// lineRecorder is a backend connection that keeps the lines written to it.
type lineRecorder struct {
	mcp.Connection
	lines chan string
}

func (l *lineRecorder) WriteLine(_ context.Context, data []byte) error {
	l.lines <- string(data)
	return nil
}

// TestCallBackend: a call goes out as one line with the gateway's id, its
// response comes back as the server's bytes, and a call given up is
// forgotten and cancelled at the server.
func TestCallBackend(t *testing.T) {
	g := &Gateway{}
	lines := &lineRecorder{lines: make(chan string, 4)}
	c := &backendConn{Connection: lines, g: g}

	type outcome struct {
		raw json.RawMessage
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		raw, err := g.callBackend(t.Context(), c, "tools/call", []byte(`{"name":"echo"}`), false)
		done <- outcome{raw, err}
	}()
	sent := <-lines.lines
	if sent != `{"jsonrpc":"2.0","id":"sbf-1","method":"tools/call","params":{"name":"echo"}}`+"\n" {
		t.Fatalf("sent %q", sent)
	}
	if !c.calls.deliverLine([]byte(`{"jsonrpc":"2.0","id":"sbf-1","result":{"content":[]}}`), true) {
		t.Fatal("the response was not taken")
	}
	if o := <-done; o.err != nil || string(o.raw) != `{"content":[]}` {
		t.Errorf("callBackend = %s, %v", o.raw, o.err)
	}

	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		raw, err := g.callBackend(ctx, c, "tools/call", []byte(`{"name":"hang"}`), false)
		done <- outcome{raw, err}
	}()
	<-lines.lines
	cancel()
	if o := <-done; !errors.Is(o.err, context.Canceled) {
		t.Errorf("cancelled call = %s, %v", o.raw, o.err)
	}
	if note := <-lines.lines; note != `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"reason":"context canceled","requestId":"sbf-2"}}`+"\n" {
		t.Errorf("after the cancellation the server got %q", note)
	}
	if c.calls.deliverLine([]byte(`{"jsonrpc":"2.0","id":"sbf-2","result":{}}`), true) {
		t.Error("a late response to a cancelled call was taken")
	}
}
