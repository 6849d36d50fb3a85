package gateway

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	segjson "github.com/segmentio/encoding/json"
)

// The fast path's scanners read outside input (a client's POST body, a
// server's stdout line) without decoding it; each fuzz target checks one
// against the go-sdk's own decoding of the same bytes (jsonrpc.DecodeMessage,
// and the SDK's case-sensitive decoder for params): whatever a scanner
// takes, the SDK must read the same way. A scanner may always decline (ok
// false): the message then goes to the SDK. Seeds are in
// testdata/fuzz/<target>/ too.

// messageSeeds are messages of both sides, with the edge cases found so far.
var messageSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`,
	`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"x","arguments":null,"_meta":{"progressToken":1}}}`,
	`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`,
	`{"jsonrpc":"2.0","id":"sbf-1","result":{"content":[]}}`,
	`{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"no"}}`,
	` { "jsonrpc" : "2.0" , "id" : 1 , "result" : { } } `,
	`{"jsonrpc":"2.0","id":1,"m\u0065thod":"tools/call","params":{}}`,
	`{"jsonrpc":"2.0","\u0069d":1,"result":{}}`,
	`{"JSONRPC":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"","result":{}}`,
	`{"jsonrpc":"2.0","id":1,"method":"a","method":"tools/call"}`,
	`{"jsonrpc":"2.0","id":1.5,"result":{}}`,
	`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
}

// FuzzScanMessage checks scanMessage, which reads a client's POST body on
// the fast path, against the SDK's decoding of the message: when it takes
// a message, the SDK decodes it too, to the same method (a request) or the
// same result and error (a response), the same params and id.
func FuzzScanMessage(f *testing.F) {
	for _, s := range messageSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, ok := scanMessage(data)
		if !ok || !json.Valid(data) {
			return // checkRequest refuses a body that is not JSON before the fast path sees it
		}
		msg, err := jsonrpc.DecodeMessage(data)
		if err != nil && m.method == "" && m.errObj != nil {
			if _, ok := clientError(m.errObj); !ok {
				return // a reply whose error the SDK refuses: fastReply leaves it to the SDK too
			}
		}
		if err != nil {
			t.Fatalf("scanMessage took %s (method %q), which the SDK refuses: %v", data, m.method, err)
		}
		checkID := func(id jsonrpc.ID) {
			if !m.hasID {
				if id.IsValid() {
					t.Fatalf("scanMessage(%s) found no id, the SDK %v", data, id.Raw())
				}
				return
			}
			if echoableID(m.id) {
				got, err := decodeID(m.id)
				if err != nil || got != id {
					t.Fatalf("scanMessage(%s): id %s decodes to %v (%v), the SDK's is %v", data, m.id, got.Raw(), err, id.Raw())
				}
			}
		}
		switch msg := msg.(type) {
		case *jsonrpc.Request:
			if msg.Method == "" {
				t.Fatalf("scanMessage took %s, a request with an empty method, which it cannot tell from a response", data)
			}
			if m.method != msg.Method {
				t.Fatalf("scanMessage(%s): method %q, the SDK's %q", data, m.method, msg.Method)
			}
			if !bytes.Equal(m.params, msg.Params) {
				t.Fatalf("scanMessage(%s): params %s, the SDK's %s", data, m.params, msg.Params)
			}
			checkID(msg.ID)
		case *jsonrpc.Response:
			if m.method != "" {
				t.Fatalf("scanMessage(%s): method %q, the SDK reads a response", data, m.method)
			}
			if !bytes.Equal(m.result, msg.Result) {
				t.Fatalf("scanMessage(%s): result %s, the SDK's %s", data, m.result, msg.Result)
			}
			if (m.errObj != nil && string(m.errObj) != "null") != (msg.Error != nil) {
				t.Fatalf("scanMessage(%s): error %s, the SDK's %v", data, m.errObj, msg.Error)
			}
			checkID(msg.ID)
		}
	})
}

// sdkToolParams are tools/call params as the SDK decodes them
// (mcp.CallToolParamsRaw), with the stateless era's fields.
type sdkToolParams struct {
	Name           string          `json:"name"`
	Arguments      json.RawMessage `json:"arguments"`
	Meta           json.RawMessage `json:"_meta"`
	InputResponses json.RawMessage `json:"inputResponses"`
	RequestState   json.RawMessage `json:"requestState"`
}

// FuzzScanToolParams checks scanToolParams against the SDK's decoding of
// tools/call params (case-sensitive keys, escapes decoded, the last of
// duplicate keys kept): when it takes params, they decode to the same
// name, arguments and _meta, without the stateless era's fields.
func FuzzScanToolParams(f *testing.F) {
	for _, s := range []string{
		`{"name":"echo","arguments":{"text":"hi"}}`,
		`{"name":"e\u0063ho","arguments":null}`,
		`{"name":"x","_meta":{"progressToken":"t"},"arguments":[1]}`,
		`{"name":"x","Name":"y"}`,
		`{"n\u0061me":"x"}`,
		`{"name":"x","name":"y"}`,
		`{"name":"x","inputResponses":{}}`,
		`{"name":"x","requestState":"s"}`,
		`{"name":""}`,
		`{"name":"x","arguments":{"a":"\"}"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, ok := scanToolParams(data)
		if !ok || !json.Valid(data) {
			return // params of a body checkRequest found valid JSON
		}
		var sdk sdkToolParams
		d := segjson.NewDecoder(bytes.NewReader(data))
		d.DontMatchCaseInsensitiveStructFields()
		if err := d.Decode(&sdk); err != nil {
			t.Fatalf("scanToolParams took %s, which the SDK does not decode: %v", data, err)
		}
		if p.name != sdk.Name {
			t.Fatalf("scanToolParams(%s): name %q, the SDK's %q", data, p.name, sdk.Name)
		}
		if args := sdk.Arguments; !bytes.Equal(p.arguments, args) && !(p.arguments == nil && string(args) == "null") {
			t.Fatalf("scanToolParams(%s): arguments %s, the SDK's %s", data, p.arguments, args)
		}
		if !bytes.Equal(p.meta, sdk.Meta) {
			t.Fatalf("scanToolParams(%s): _meta %s, the SDK's %s", data, p.meta, sdk.Meta)
		}
		if sdk.InputResponses != nil || sdk.RequestState != nil {
			t.Fatalf("scanToolParams took %s, which has the stateless era's fields", data)
		}
	})
}

// FuzzScanResponse checks responseEnvelope (scanResponse), which takes a
// server's response to the gateway's own call off its stdout line, against
// the SDK's decoding of the line: what it takes as a result, the SDK reads
// as a response with that id and result and no error.
func FuzzScanResponse(f *testing.F) {
	for _, s := range messageSeeds {
		f.Add([]byte(s))
	}
	f.Add([]byte(`{"id":"sbf-1","result":{},"jsonrpc":"2.0"}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":"sbf-1","result":{},"error":null}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		id, result, ok := responseEnvelope(line)
		if !ok {
			return
		}
		msg, err := jsonrpc.DecodeMessage(line)
		if err != nil {
			if !json.Valid(line) {
				return // more than one value on the line: see below
			}
			t.Fatalf("responseEnvelope took %s, which the SDK refuses: %v", line, err)
		}
		resp, isResp := msg.(*jsonrpc.Response)
		if !isResp {
			t.Fatalf("responseEnvelope took %s as a response, the SDK reads a %T", line, msg)
		}
		if resp.ID != id || !bytes.Equal(resp.Result, result) || resp.Error != nil {
			t.Fatalf("responseEnvelope(%s) = %v, %s; the SDK reads %v, %s, error %v", line, id.Raw(), result, resp.ID.Raw(), resp.Result, resp.Error)
		}
	})
}
