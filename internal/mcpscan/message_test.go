package mcpscan

import "testing"

func TestScanMessageAndToolParams(t *testing.T) {
	m, ok := ScanMessage([]byte(` {"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"a\u00e9","arguments":{"x":[1,"}"]},"_meta":{"progressToken":1}}} `))
	if !ok || m.Method != "tools/call" || string(m.ID) != "7" || !m.HasID {
		t.Fatalf("ScanMessage = %+v, %v", m, ok)
	}
	p, ok := ScanToolParams(m.Params)
	if !ok || p.Name != "a\u00e9" || string(p.Arguments) != `{"x":[1,"}"]}` || string(p.Meta) != `{"progressToken":1}` {
		t.Errorf("ScanToolParams = %+v, %v", p, ok)
	}
	for _, params := range []string{`{}`, `{"name":""}`, `{"name":5}`, `{"name":"a","requestState":"s"}`, `{"name":"a","\u0072equestState":"s"}`, `[1]`} {
		if _, ok := ScanToolParams([]byte(params)); ok {
			t.Errorf("ScanToolParams(%s) took params the go-sdk should judge", params)
		}
	}
	for _, body := range []string{`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, `{"jsonrpc":"2.0","id":1,"method":"tools\/call"}`, `{"id":1} x`} {
		if m, ok := ScanMessage([]byte(body)); ok && m.Method == "tools/call" {
			t.Errorf("ScanMessage(%s) took it as tools/call", body)
		}
	}
}

func TestEchoableID(t *testing.T) {
	for id, want := range map[string]bool{`1`: true, `-12`: true, `"abc"`: true, `""`: true, `0`: true,
		`01`: false, `1.0`: false, `1e3`: false, `"a\"b"`: false, `null`: false, `1234567890123456`: false, `true`: false} {
		if got := EchoableID([]byte(id)); got != want {
			t.Errorf("EchoableID(%s) = %v", id, got)
		}
	}
}
