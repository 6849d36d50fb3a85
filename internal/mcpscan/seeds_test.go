package mcpscan

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpSession is one MCP session as it goes over the wire, both sides: a
// client's requests and replies as the TypeScript and Python SDKs write
// them (their key order, a space after the colon, pretty-printed lines in
// a POST body), a server's requests, notifications and results as the
// spec's examples show them. Every fuzz target starts from it (and from
// sdkMessages), so that its corpus, which plain go test runs, holds the
// messages the parsers meet in use and not only their edge cases.
var mcpSession = []string{
	// Lifecycle.
	`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"roots":{"listChanged":true},"sampling":{},"elicitation":{}},"clientInfo":{"name":"claude-code","version":"2.0.14"}}}`,
	`{"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"mcp-inspector","version":"0.17.0"}},"jsonrpc":"2.0","id":0}`,
	`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"logging":{},"prompts":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true},"tools":{"listChanged":true}},"serverInfo":{"name":"switchboard","title":"Switchboard","version":"1.4.0"},"instructions":"Tools of every server, prefixed by its name."}}`,
	`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	`{"method":"notifications/initialized","jsonrpc":"2.0"}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":1,"result":{}}`,
	// Tools.
	`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":"eyJvZmZzZXQiOjUwfQ=="}}`,
	`{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"github__create_issue","title":"Create issue","description":"Create a new issue in a GitHub repository.\n\nArgs: owner, repo, title, body.","inputSchema":{"type":"object","properties":{"owner":{"type":"string"},"repo":{"type":"string"},"title":{"type":"string"},"body":{"type":"string"}},"required":["owner","repo","title"],"additionalProperties":false,"$schema":"http://json-schema.org/draft-07/schema#"},"annotations":{"readOnlyHint":false,"openWorldHint":true}}],"nextCursor":"eyJvZmZzZXQiOjEwMH0="}}`,
	`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"filesystem__read_file","arguments":{"path":"C:\\Users\\me\\notes.md"},"_meta":{"progressToken":"a1b2c3"}}}`,
	`{"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "fetch", "arguments": {"url": "https://example.com/?q=caf\u00e9&x=\"1\"", "max_length": 5000}}}`,
	"{\n  \"jsonrpc\": \"2.0\",\n  \"id\": \"req-5\",\n  \"method\": \"tools/call\",\n  \"params\": {\n    \"name\": \"everything__echo\",\n    \"arguments\": {\n      \"message\": \"h\u00e9llo \u4e16\u754c \U0001F600\"\n    }\n  }\n}\n",
	`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"# Notes\n\n- [ ] \"quoted\" \\ back\\slash \u00e9 \u2028 tab\there"}],"isError":false}}`,
	`{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"{\"temperature\":22.5,\"conditions\":\"Partly cloudy\"}"}],"structuredContent":{"temperature":22.5,"conditions":"Partly cloudy"}}}`,
	`{"jsonrpc":"2.0","id":"req-5","result":{"content":[{"type":"text","text":"Failed to fetch: 404 Not Found"}],"isError":true}}`,
	`{"jsonrpc":"2.0","id":6,"result":{"content":[{"type":"image","data":"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==","mimeType":"image/png"},{"type":"resource_link","uri":"file:///project/src/main.rs","name":"main.rs","mimeType":"text/x-rust"},{"type":"resource","resource":{"uri":"file:///a.txt","mimeType":"text/plain","text":"x"}}],"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t1"}}}}`,
	`{"jsonrpc":"2.0","id":7,"result":{"resultType":"input_required","inputRequests":{"confirm":{"method":"elicitation/create","params":{"message":"Delete 3 files?","requestedSchema":{"type":"object","properties":{"ok":{"type":"boolean"}}}}}},"requestState":"c3RhdGU="}}`,
	`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"delete_files","arguments":{"glob":"*.tmp"},"inputResponses":{"confirm":{"action":"accept","content":{"ok":true}}},"requestState":"c3RhdGU="}}`,
	// Errors.
	`{"jsonrpc":"2.0","id":9,"error":{"code":-32602,"message":"Unknown tool: invalid_tool_name"}}`,
	`{"jsonrpc":"2.0","id":10,"error":{"code":-32603,"message":"Internal error","data":{"details":"stack\n  at x (y.js:1:2)"}}}`,
	`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`,
	// Notifications, both ways.
	`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"a1b2c3","progress":50,"total":100,"message":"Reading file..."}}`,
	`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4,"reason":"User requested cancellation"}}`,
	`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`,
	`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"error","logger":"database","data":{"error":"Connection failed","details":{"host":"localhost","port":5432}}}}`,
	`{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"file:///project/src/main.rs"}}`,
	// A server's requests to the client and the client's replies.
	`{"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{"message":"Please provide your GitHub username","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"action":"accept","content":{"name":"octocat"}}}`,
	`{"jsonrpc":"2.0","id":"sbf-3","result":{"action":"decline"}}`,
	`{"jsonrpc":"2.0","id":2,"method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"What is the capital of France?"}}],"modelPreferences":{"hints":[{"name":"claude-3-sonnet"}],"intelligencePriority":0.8,"speedPriority":0.5},"systemPrompt":"You are a helpful assistant.","maxTokens":100}}`,
	`{"jsonrpc":"2.0","id":2,"result":{"role":"assistant","content":{"type":"text","text":"The capital of France is Paris."},"model":"claude-3-sonnet-20240307","stopReason":"endTurn"}}`,
	`{"jsonrpc":"2.0","id":3,"method":"roots/list"}`,
	`{"jsonrpc":"2.0","id":3,"result":{"roots":[{"uri":"file:///home/user/projects/myproject","name":"My Project"}]}}`,
	// Resources, prompts, completion.
	`{"jsonrpc":"2.0","id":11,"method":"resources/read","params":{"uri":"file:///project/src/main.rs"}}`,
	`{"jsonrpc":"2.0","id":11,"result":{"contents":[{"uri":"file:///project/src/main.rs","mimeType":"text/x-rust","text":"fn main() {\n    println!(\"Hello world!\");\n}"}]}}`,
	`{"jsonrpc":"2.0","id":12,"method":"prompts/get","params":{"name":"code_review","arguments":{"code":"def hello():\n    print('world')"}}}`,
	`{"jsonrpc":"2.0","id":13,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"code_review"},"argument":{"name":"language","value":"py"}}}`,
	// A batch (the 2025-03-26 era), which the scanners leave to the SDK.
	`[{"jsonrpc":"2.0","id":14,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]`,
}

// sdkMessages are messages as the go-sdk encodes them (jsonrpc.EncodeMessage
// of its own param and result types): what the gateway's backend client
// writes to a server, and what a server built on the go-sdk writes back.
func sdkMessages(tb testing.TB) [][]byte {
	tb.Helper()
	id := func(v any) jsonrpc.ID {
		id, err := jsonrpc.MakeID(v)
		if err != nil {
			tb.Fatal(err)
		}
		return id
	}
	raw := func(v any) json.RawMessage {
		b, err := json.Marshal(v)
		if err != nil {
			tb.Fatal(err)
		}
		return b
	}
	msgs := []jsonrpc.Message{
		&jsonrpc.Request{ID: id(float64(1)), Method: "initialize", Params: raw(&mcp.InitializeParams{
			ProtocolVersion: "2025-06-18", ClientInfo: &mcp.Implementation{Name: "switchboard", Version: "1.4.0"},
			Capabilities: &mcp.ClientCapabilities{}})},
		&jsonrpc.Request{ID: id(float64(2)), Method: "tools/call", Params: raw(&mcp.CallToolParams{
			Name: "echo", Arguments: map[string]any{"text": "<b>\"hi\" & bye</b>\u2028"}, Meta: mcp.Meta{"progressToken": float64(7)}})},
		&jsonrpc.Request{Method: "notifications/progress", Params: raw(&mcp.ProgressNotificationParams{
			ProgressToken: "sb-1", Progress: 1, Total: 3, Message: "one of three"})},
		&jsonrpc.Response{ID: id(float64(2)), Result: raw(&mcp.CallToolResult{
			Content: []mcp.Content{&mcp.TextContent{Text: "line one\nline \"two\"\t\\"}}})},
		&jsonrpc.Response{ID: id(float64(3)), Result: raw(&mcp.CallToolResult{IsError: true,
			Content: []mcp.Content{&mcp.TextContent{Text: "no such file"}}})},
		&jsonrpc.Response{ID: id("sbf-9"), Error: &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found"}},
	}
	var out [][]byte
	for _, m := range msgs {
		b, err := jsonrpc.EncodeMessage(m)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// sessionMessages are mcpSession and sdkMessages.
func sessionMessages(tb testing.TB) [][]byte {
	tb.Helper()
	var out [][]byte
	for _, s := range mcpSession {
		out = append(out, []byte(s))
	}
	return append(out, sdkMessages(tb)...)
}

// addSessionSeeds adds sessionMessages to f's corpus.
func addSessionSeeds(f *testing.F) {
	for _, b := range sessionMessages(f) {
		f.Add(b)
	}
}

// addSessionParts adds to f's corpus the values under key ("params" or
// "result") of sessionMessages: the tools/call params and the tool
// results of a real session, and the other methods' for contrast.
func addSessionParts(f *testing.F, key string) {
	for _, b := range sessionMessages(f) {
		var m map[string]json.RawMessage
		if json.Unmarshal(b, &m) == nil && m[key] != nil {
			f.Add([]byte(m[key]))
		}
	}
}

// TestSessionSeedsScan checks that the scanners take the session's
// messages (so that the corpus reaches past their first refusals), all
// but a batch and a response without an id, and the tools/call params
// but the stateless era's.
func TestSessionSeedsScan(t *testing.T) {
	calls, responses := 0, 0
	for _, b := range sessionMessages(t) {
		if !ValidJSON(b) {
			t.Errorf("ValidJSON(%s) = false", b)
			continue
		}
		m, ok := ScanMessage(b)
		if b[0] == '[' || bytes.Contains(b, []byte(`"id":null`)) {
			if ok {
				t.Errorf("ScanMessage took %s, a batch or a response without an id", b)
			}
			continue
		}
		if !ok {
			t.Errorf("ScanMessage(%s) declined", b)
			continue
		}
		if m.Method == "tools/call" {
			calls++
			if _, ok := ScanToolParams(m.Params); ok == containsStateless(m.Params) {
				t.Errorf("ScanToolParams(%s) = %v, want it to take all but the stateless era's params", m.Params, ok)
			}
		}
		if m.Method == "" && m.HasID {
			responses++
			if _, ok := ScanResponse(b); !ok {
				t.Errorf("ScanResponse(%s) declined", b)
			}
		}
	}
	if calls < 4 || responses < 10 {
		t.Errorf("the session seeds hold %d tools/call requests and %d responses", calls, responses)
	}
}

// containsStateless reports whether tools/call params carry the stateless
// era's fields, which ScanToolParams leaves to the SDK.
func containsStateless(params []byte) bool {
	var p map[string]json.RawMessage
	_ = json.Unmarshal(params, &p)
	_, a := p["inputResponses"]
	_, b := p["requestState"]
	return a || b
}
