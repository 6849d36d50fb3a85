package gateway_test

import (
	"strings"
	"testing"
)

// TestJSONRPCReplyScanner checks the benchmarks' and the allocation
// guard's reply scanner (bench_raw_test.go), which finds the id and result
// of a reply without decoding it: a wrong scan would count failed calls as
// made.
func TestJSONRPCReplyScanner(t *testing.T) {
	tests := []struct {
		name        string
		msg         string
		id          int64
		result, err string
		bad         bool
	}{
		{name: "reply", msg: `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"a \"}\\\" b"}]}}`,
			id: 7, result: `{"content":[{"type":"text","text":"a \"}\\\" b"}]}`},
		{name: "result first, nested brackets in strings", msg: `{"result":{"x":[1,2,{"y":"}]"}]},"id":12,"jsonrpc":"2.0"}`,
			id: 12, result: `{"x":[1,2,{"y":"}]"}]}`},
		{name: "error", msg: `{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"m"}}`,
			id: 3, err: `{"code":-32601,"message":"m"}`},
		{name: "spaces", msg: " { \"id\" : 5 ,\n \"result\" : true } ", id: 5, result: "true"},
		{name: "notification", msg: `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`, id: -1},
		{name: "string id", msg: `{"id":"abc","result":{}}`, id: -1, result: "{}"},
		{name: "not an object", msg: `[1]`, bad: true},
		{name: "unterminated string", msg: `{"id":1,"result":{"a":"b}}`, bad: true},
		{name: "unterminated object", msg: `{"id":1,"result":{"a":[1}`, bad: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, result, rpcErr, err := jsonrpcReply([]byte(tt.msg))
			if tt.bad {
				if err == nil {
					t.Fatalf("jsonrpcReply(%s) = %d, %s, %s; want an error", tt.msg, id, result, rpcErr)
				}
				return
			}
			if err != nil || id != tt.id || string(result) != tt.result || string(rpcErr) != tt.err {
				t.Errorf("jsonrpcReply(%s) = %d, %q, %q, %v; want %d, %q, %q", tt.msg, id, result, rpcErr, err, tt.id, tt.result, tt.err)
			}
		})
	}
}

func TestFindReply(t *testing.T) {
	reply := `{"jsonrpc":"2.0","id":9,"result":{"content":[]}}`
	stream := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n" +
		"event: message\nid: 1_0\ndata: " + reply + "\n\n"
	for _, tt := range []struct {
		name, body, contentType string
		id                      int64
		want                    string // "" for an error
	}{
		{"JSON", reply, "application/json", 9, `{"content":[]}`},
		{"JSON, other id", reply, "application/json", 8, ""},
		{"SSE after a notification", stream, "text/event-stream", 9, `{"content":[]}`},
		{"SSE with CRLF", strings.ReplaceAll(stream, "\n", "\r\n"), "text/event-stream", 9, `{"content":[]}`},
		{"SSE without the reply", stream, "text/event-stream", 10, ""},
		{"error reply", `{"jsonrpc":"2.0","id":9,"error":{"code":1,"message":"no"}}`, "application/json", 9, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := findReply([]byte(tt.body), tt.contentType, tt.id)
			if tt.want == "" {
				if err == nil {
					t.Fatalf("findReply = %s, want an error", got)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Errorf("findReply = %s, %v; want %s", got, err, tt.want)
			}
		})
	}
}
