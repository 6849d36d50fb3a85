package gateway

import (
	"context"
	"testing"
)

// The answers a legacy SSE session owes: the requests with an id a POST
// carries, and the answers (not requests, not notifications) its stream
// carries.
func TestLegacyAnswerAccounting(t *testing.T) {
	for _, tt := range []struct {
		body string
		want int
	}{
		{`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{}}`, 1},
		{`{"jsonrpc":"2.0","id":"a","method":"ping"}`, 1},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, 0},
		{`{"jsonrpc":"2.0","id":null,"method":"ping"}`, 0},
		{`{"jsonrpc":"2.0","id":3,"result":{}}`, 0}, // the client's answer to a server's request
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`, 2},
		{`not json`, 0},
	} {
		if got := countCalls([]byte(tt.body)); got != tt.want {
			t.Errorf("countCalls(%s) = %d, want %d", tt.body, got, tt.want)
		}
	}
	for _, tt := range []struct {
		event string
		want  bool
	}{
		{"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"content\":[]}}\n\n", true},
		{"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"x\",\"error\":{\"code\":-32603,\"message\":\"m\"}}\n\n", true},
		{"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"roots/list\"}\n\n", false},
		{"event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n", false},
		{"event: endpoint\ndata: /sse/alpha?sessionid=ABC\n\n", false},
		{": keep-alive\n\n", false},
	} {
		if got := isAnswerEvent([]byte(tt.event)); got != tt.want {
			t.Errorf("isAnswerEvent(%q) = %v, want %v", tt.event, got, tt.want)
		}
	}

	var s sessionCalls
	s.init()
	s.owe("S", countCalls([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`)))
	if s.wait(canceledContext()) {
		t.Error("wait reported no answer owed while one is")
	}
	s.owe("S", -1)
	s.owe("S", -1) // a stray answer does not make the count negative
	if !s.wait(canceledContext()) {
		t.Error("wait reported an answer owed after it was written")
	}
	s.owe("T", 2)
	s.forget("T") // its stream ended
	if !s.wait(canceledContext()) {
		t.Error("a session whose stream ended still owes answers")
	}
}

// canceledContext makes wait report the state at once.
func canceledContext() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}
