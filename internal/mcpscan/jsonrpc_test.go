package mcpscan

import (
	"encoding/json"
	"strings"
	"testing"
)

// shapeSeeds are bodies checkRequest sees, well-formed and not: the scan
// decides the plain ones, the full decode the others, and the answer is
// the same.
var shapeSeeds = []struct {
	body    string
	scanned bool // scanShape decides it
	want    string
}{
	{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a \"q\" {"}}}`, true, ""},
	{` { "jsonrpc" : "2.0" , "method" : "notifications/initialized" } `, true, ""},
	{`{"jsonrpc":"2.0","id":"x","result":{"a":[1,{"b":"}"}]}}`, true, ""},
	{`{"jsonrpc":"2.0","id":null,"error":{"code":-1,"message":"m"}}`, true, ""},
	{`{"id":1,"method":"ping"}`, true, `the message lacks "jsonrpc": "2.0"`},
	{`{"jsonrpc":"1.0","method":"ping"}`, true, `the message lacks "jsonrpc": "2.0"`},
	{`{"jsonrpc":"2.0","method":""}`, true, "the method is empty"},
	{`{"jsonrpc":"2.0","id":1}`, true, "the message is neither a request, a notification nor a response"},
	{`{"jsonrpc":"2.0","result":1}`, true, "the message is neither a request, a notification nor a response"},
	{`{}`, true, `the message lacks "jsonrpc": "2.0"`},
	{`{"x":[true,false,null,-1.5e3,"\\"],"jsonrpc":"2.0","method":"m"}`, true, ""},
	{`{"jsonrpc":"1.0","jsonrpc":"2.0","method":"m"}`, true, ""},
	// Left to encoding/json:
	{`{"JSONRPC":"2.0","method":"m"}`, false, ""},
	{`{"jſonrpc":"2.0","method":"m"}`, false, ""},
	{`{"jsonrpc":"2\u002e0","method":"m"}`, false, ""},
	{`{"json\u0072pc":"2.0","method":"m"}`, false, ""},
	{`{"jsonrpc":2,"method":"m"}`, false, ""},
	{`{"jsonrpc":null,"method":"m"}`, false, ""},
	{`{"jsonrpc":"2.0","method":null,"id":1,"result":1}`, false, ""},
	{`[{"jsonrpc":"2.0","method":"m"}]`, false, ""},
	{`"text"`, false, ""},
}

func TestScanShape(t *testing.T) {
	for _, tc := range shapeSeeds {
		body := []byte(tc.body)
		if !json.Valid(body) {
			t.Fatalf("seed %s is not JSON", tc.body)
		}
		f, scanned := scanShape(body)
		if scanned != tc.scanned {
			t.Errorf("%s: scanned %v, want %v", tc.body, scanned, tc.scanned)
		}
		if scanned {
			if got := f.problem(); got != tc.want {
				t.Errorf("%s: scan says %q, want %q", tc.body, got, tc.want)
			}
		}
		if got, want := JSONRPCProblem(body), notJSONRPC(body); got != want {
			t.Errorf("%s: JSONRPCProblem %q, the full decode %q", tc.body, got, want)
		}
	}
}

// FuzzJSONRPCProblem: on every valid JSON body, the scan's answer is the
// full decode's.
func FuzzJSONRPCProblem(f *testing.F) {
	for _, tc := range shapeSeeds {
		f.Add([]byte(tc.body))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if !json.Valid(body) {
			return
		}
		if got, want := JSONRPCProblem(body), notJSONRPC(body); got != want {
			t.Fatalf("%q: JSONRPCProblem %q, the full decode %q", body, got, want)
		}
	})
}

// BenchmarkJSONRPCProblem is the endpoint's check of each request body: a
// tools/call whose arguments (skipped by the scan's walk over values) hold
// a long text with escapes, and a small one.
func BenchmarkJSONRPCProblem(b *testing.B) {
	large, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": map[string]any{
		"name": "write_file", "arguments": map[string]any{"path": "/tmp/x", "content": strings.Repeat("the \"quick\" brown fox\njumps over the lazy dog\n", 2000)}}})
	small := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello","n":[1,2,3]}}}`)
	for _, bc := range []struct {
		name string
		body []byte
	}{{"large", large}, {"small", small}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.body)))
			for b.Loop() {
				if p := JSONRPCProblem(bc.body); p != "" {
					b.Fatal(p)
				}
			}
		})
	}
}
