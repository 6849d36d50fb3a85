package mcpscan

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	segjson "github.com/segmentio/encoding/json"
)

// The scanners read outside input (a client's POST body, a server's stdout
// line) without decoding it; each fuzz target checks one against the
// go-sdk's own decoding of the same bytes (jsonrpc.DecodeMessage, and the
// SDK's case-sensitive decoder for params): whatever a scanner takes, the
// SDK must read the same way. A scanner may always decline (ok false): the
// message then goes to the SDK. Seeds are in testdata/fuzz/<target>/ too.
// The tests may import the SDK; the package itself imports only the
// standard library.

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

// FuzzScanMessage checks ScanMessage, which reads a client's POST body on
// the fast path, against the SDK's decoding of the message: when it takes
// a message, the SDK decodes it too, to the same method (a request) or the
// same result and error (a response), the same params and id.
func FuzzScanMessage(f *testing.F) {
	for _, s := range messageSeeds {
		f.Add([]byte(s))
	}
	addSessionSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		m, ok := ScanMessage(data)
		if !ok || !json.Valid(data) {
			return // the gateway's checkRequest refuses a body that is not JSON before the fast path sees it
		}
		msg, err := jsonrpc.DecodeMessage(data)
		if err != nil && m.Method == "" && m.Error != nil && !sdkDecodesError(m.Error) {
			return // a reply whose error the SDK refuses: the gateway's fastReply leaves it to the SDK too
		}
		if err != nil {
			t.Fatalf("ScanMessage took %s (method %q), which the SDK refuses: %v", data, m.Method, err)
		}
		checkID := func(id jsonrpc.ID) {
			if !m.HasID {
				if id.IsValid() {
					t.Fatalf("ScanMessage(%s) found no id, the SDK %v", data, id.Raw())
				}
				return
			}
			if EchoableID(m.ID) {
				got, err := decodeID(m.ID)
				if err != nil || got != id {
					t.Fatalf("ScanMessage(%s): id %s decodes to %v (%v), the SDK's is %v", data, m.ID, got.Raw(), err, id.Raw())
				}
			}
		}
		switch msg := msg.(type) {
		case *jsonrpc.Request:
			if msg.Method == "" {
				t.Fatalf("ScanMessage took %s, a request with an empty method, which it cannot tell from a response", data)
			}
			if m.Method != msg.Method {
				t.Fatalf("ScanMessage(%s): method %q, the SDK's %q", data, m.Method, msg.Method)
			}
			if !bytes.Equal(m.Params, msg.Params) {
				t.Fatalf("ScanMessage(%s): params %s, the SDK's %s", data, m.Params, msg.Params)
			}
			checkID(msg.ID)
		case *jsonrpc.Response:
			if m.Method != "" {
				t.Fatalf("ScanMessage(%s): method %q, the SDK reads a response", data, m.Method)
			}
			if !bytes.Equal(m.Result, msg.Result) {
				t.Fatalf("ScanMessage(%s): result %s, the SDK's %s", data, m.Result, msg.Result)
			}
			if (m.Error != nil && string(m.Error) != "null") != (msg.Error != nil) {
				t.Fatalf("ScanMessage(%s): error %s, the SDK's %v", data, m.Error, msg.Error)
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

// FuzzScanToolParams checks ScanToolParams against the SDK's decoding of
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
	addSessionParts(f, "params")
	f.Fuzz(func(t *testing.T, data []byte) {
		p, ok := ScanToolParams(data)
		if !ok || !json.Valid(data) {
			return // params of a body the gateway's checkRequest found valid JSON
		}
		var sdk sdkToolParams
		if err := sdkDecode(data, &sdk); err != nil {
			t.Fatalf("ScanToolParams took %s, which the SDK does not decode: %v", data, err)
		}
		if p.Name != sdk.Name {
			t.Fatalf("ScanToolParams(%s): name %q, the SDK's %q", data, p.Name, sdk.Name)
		}
		if args := sdk.Arguments; !bytes.Equal(p.Arguments, args) && !(p.Arguments == nil && string(args) == "null") {
			t.Fatalf("ScanToolParams(%s): arguments %s, the SDK's %s", data, p.Arguments, args)
		}
		if !bytes.Equal(p.Meta, sdk.Meta) {
			t.Fatalf("ScanToolParams(%s): _meta %s, the SDK's %s", data, p.Meta, sdk.Meta)
		}
		if sdk.InputResponses != nil || sdk.RequestState != nil {
			t.Fatalf("ScanToolParams took %s, which has the stateless era's fields", data)
		}
	})
}

// FuzzScanResponse checks ScanResponse, which takes a server's response
// to a call off its stdout line (the gateway's responseEnvelope and
// fastEnvelope), against the SDK's decoding of the line: a response the
// gateway takes (an id, and a result or an error), the SDK reads as a
// response with that id, that result, and an error where it has one.
func FuzzScanResponse(f *testing.F) {
	for _, s := range messageSeeds {
		f.Add([]byte(s))
	}
	addSessionSeeds(f)
	f.Add([]byte(`{"id":"sbf-1","result":{},"jsonrpc":"2.0"}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":"sbf-1","result":{},"error":null}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		r, ok := ScanResponse(line)
		if !ok || r.ID == nil || (r.Result == nil) == (r.Error == nil) {
			return // what neither caller takes
		}
		id, err := decodeID(r.ID)
		if err != nil {
			return // an id no caller takes (an object, an array)
		}
		msg, err := jsonrpc.DecodeMessage(line)
		if err != nil {
			if !json.Valid(line) {
				return // more than one value on the line: the supervisor's ValidJSON drops it first
			}
			if r.Error != nil {
				return // an error the SDK refuses: the gateway's decodeRPCError reports it as malformed
			}
			t.Fatalf("ScanResponse took %s, which the SDK refuses: %v", line, err)
		}
		resp, isResp := msg.(*jsonrpc.Response)
		if !isResp {
			t.Fatalf("ScanResponse took %s as a response, the SDK reads a %T", line, msg)
		}
		if resp.ID != id || !bytes.Equal(resp.Result, r.Result) || (r.Error != nil && string(r.Error) != "null") != (resp.Error != nil) {
			t.Fatalf("ScanResponse(%s) = %v, %s, error %s; the SDK reads %v, %s, error %v", line, id.Raw(), r.Result, r.Error, resp.ID.Raw(), resp.Result, resp.Error)
		}
	})
}

// sdkDecode decodes data into v as the go-sdk decodes messages: field
// names matched case-sensitively (the gateway's decodeAnswer).
func sdkDecode(data []byte, v any) error {
	d := segjson.NewDecoder(bytes.NewReader(data))
	d.DontMatchCaseInsensitiveStructFields()
	return d.Decode(v)
}

// sdkDecodesError reports whether the go-sdk takes obj as a reply's error
// (the gateway's clientError).
func sdkDecodesError(obj []byte) bool {
	var e jsonrpc.Error
	return string(obj) != "null" && sdkDecode(obj, &e) == nil
}

// decodeID turns an id as written into a jsonrpc.ID, as the gateway does.
func decodeID(id []byte) (jsonrpc.ID, error) {
	var v any
	if err := json.Unmarshal(id, &v); err != nil {
		return jsonrpc.ID{}, err
	}
	return jsonrpc.MakeID(v)
}
