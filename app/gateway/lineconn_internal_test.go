package gateway

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

func TestResponseEnvelope(t *testing.T) {
	id10, _ := jsonrpc.MakeID(float64(10))
	idS, _ := jsonrpc.MakeID("a\"b")
	for _, tc := range []struct {
		line   string
		ok     bool
		id     jsonrpc.ID
		result string
	}{
		{`{"jsonrpc":"2.0","id":10,"result":{"content":[{"type":"text","text":"x\"}\\n]"}]}}`, true, id10, `{"content":[{"type":"text","text":"x\"}\\n]"}]}`},
		{` { "result" : [1, {"a": [true, null]}] , "id" : "a\"b", "jsonrpc" : "2.0" } `, true, idS, `[1, {"a": [true, null]}]`},
		{`{"jsonrpc":"2.0","id":10,"error":{"code":1,"message":"x"}}`, false, jsonrpc.ID{}, ""},
		{`{"jsonrpc":"2.0","id":10,"method":"x","result":{}}`, false, jsonrpc.ID{}, ""},
		{`{"jsonrpc":"2.0","id":10,"result":{"a":1}`, false, jsonrpc.ID{}, ""},
		{`{"jsonrpc":"1.0","id":10,"result":{}}`, false, jsonrpc.ID{}, ""},
		{`{"jsonrpc":"2.0","result":{}}`, false, jsonrpc.ID{}, ""},
		{`[{"jsonrpc":"2.0","id":10,"result":{}}]`, false, jsonrpc.ID{}, ""},
	} {
		id, result, ok := responseEnvelope([]byte(tc.line))
		if ok != tc.ok || (ok && (id != tc.id || string(result) != tc.result)) {
			t.Errorf("%s: %v %q %v, want %v %q %v", tc.line, id, result, ok, tc.id, tc.result, tc.ok)
		}
	}
}
