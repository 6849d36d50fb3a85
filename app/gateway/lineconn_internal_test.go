package gateway

import (
	"strings"
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

// TestSplices: a placeholder is replaced by its result (after its head),
// once; text that only looks like one, or a placeholder already taken, is
// written as it is.
func TestSplices(t *testing.T) {
	var s splices
	s.init()
	head, rest := withResultType([]byte(`{"content":[]}`))
	ph := s.add(head, rest)
	ph2 := s.add(nil, []byte(`{"x":1}`))
	fake := append(append([]byte(nil), s.prefix...), `999"}`...)
	in := `data: {"jsonrpc":"2.0","id":1,"result":` + string(ph) + `}` + "\n" + string(fake) + string(ph2) + "\n\n"
	var out strings.Builder
	n, err := s.write(&out, []byte(in))
	want := `data: {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[]}}` + "\n" + string(fake) + `{"x":1}` + "\n\n"
	if err != nil || n != len(in) || out.String() != want {
		t.Errorf("write = %d %v\n%s\nwant\n%s", n, err, out.String(), want)
	}
	if s.waiting() {
		t.Error("results still waiting after both were written")
	}
	out.Reset()
	s.write(&out, []byte(in)) // taken already: written as is
	if out.String() != in {
		t.Errorf("second write: %s", out.String())
	}
	if h, r := withResultType([]byte(` { } `)); string(h)+string(r) != `{"resultType":"complete" } ` {
		t.Errorf("empty object: %s%s", h, r)
	}
}
