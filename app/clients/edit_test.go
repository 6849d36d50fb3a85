package clients

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestEditShapes connects and disconnects small files of unusual shapes,
// checking the connected text and that disconnecting gives the original
// back (roundTrip) or the stated result.
func TestEditShapes(t *testing.T) {
	tests := []struct {
		name, id, original, connected string
		disconnected                  string // "" means the original
		takeOver                      bool   // the original has a "switchboard" entry of its own
	}{
		{
			name: "minified", id: "lm-studio",
			original:  `{"mcpServers":{"a":{"command":"x"}}}`,
			connected: `{"mcpServers":{"a":{"command":"x"},"switchboard":{"url":"http://127.0.0.1:7391/mcp"}}}`,
		},
		{
			name: "one line with spaces", id: "cursor",
			original:  `{"mcpServers": {"a": {"command": "x"}}, "b": 1}` + "\n",
			connected: `{"mcpServers": {"a": {"command": "x"}, "switchboard": {"url": "http://127.0.0.1:7391/mcp"}}, "b": 1}` + "\n",
		},
		{
			name: "servers object on one line in a pretty file", id: "cursor",
			original:  "{\n  \"mcpServers\": {\"a\": {\"command\": \"x\"}}\n}\n",
			connected: "{\n  \"mcpServers\": {\"a\": {\"command\": \"x\"}, \"switchboard\": {\"url\": \"http://127.0.0.1:7391/mcp\"}}\n}\n",
		},
		{
			name: "no servers key", id: "gemini-cli",
			original:  "{\n    \"theme\": \"Dracula\"\n}",
			connected: "{\n    \"theme\": \"Dracula\",\n    \"mcpServers\": {\n        \"switchboard\": {\n            \"httpUrl\": \"http://127.0.0.1:7391/mcp\"\n        }\n    }\n}",
		},
		{
			name: "comment after the last member", id: "zed",
			original:  "{\n  \"context_servers\": {\n    \"a\": {\"command\": \"x\"} // keep me\n  }\n}\n",
			connected: "{\n  \"context_servers\": {\n    \"a\": {\"command\": \"x\"}, // keep me\n    \"switchboard\": {\n      \"url\": \"http://127.0.0.1:7391/mcp\"\n    }\n  }\n}\n",
		},
		{
			name: "comment inside an empty object", id: "vscode",
			original:     "{\n\t\"servers\": {\n\t\t// none yet\n\t}\n}\n",
			connected:    "{\n\t\"servers\": {\n\t\t// none yet\n\t\t\"switchboard\": {\n\t\t\t\"type\": \"http\",\n\t\t\t\"url\": \"http://127.0.0.1:7391/mcp\"\n\t\t}\n\t}\n}\n",
			disconnected: "{\n\t\"servers\": {\n\t\t// none yet\n\t}\n}\n",
		},
		{
			name: "byte order mark", id: "claude-code",
			original:  "\xEF\xBB\xBF{\n  \"mcpServers\": {}\n}\n",
			connected: "\xEF\xBB\xBF{\n  \"mcpServers\": {\n    \"switchboard\": {\n      \"type\": \"http\",\n      \"url\": \"http://127.0.0.1:7391/mcp\"\n    }\n  }\n}\n",
		},
		{
			name: "escaped key and strings kept", id: "windsurf",
			original:  "{\"mcpServers\": {\"\\u00e9t\\u00e9\": {\"command\": \"a\\\\b\"}}}\n",
			connected: "{\"mcpServers\": {\"\\u00e9t\\u00e9\": {\"command\": \"a\\\\b\"}, \"switchboard\": {\"serverUrl\": \"http://127.0.0.1:7391/mcp\"}}}\n",
		},
		{
			name: "toml without final newline", id: "codex",
			original:  "model = \"o3\"",
			connected: "model = \"o3\"\n\n[mcp_servers.switchboard]\nurl = \"http://127.0.0.1:7391/mcp\"\n",
		},
		{
			name: "toml CRLF", id: "codex",
			original:  "model = \"o3\"\r\n",
			connected: "model = \"o3\"\r\n\r\n[mcp_servers.switchboard]\r\nurl = \"http://127.0.0.1:7391/mcp\"\r\n",
		},
		{
			name: "toml entry in the middle keeps its neighbours' comments", id: "codex", takeOver: true,
			original:  "[mcp_servers.switchboard]\nurl = \"http://old\" # old\n\n# next\n[mcp_servers.b]\ncommand = \"y\"\n",
			connected: "[mcp_servers.switchboard]\nurl = \"http://127.0.0.1:7391/mcp\"\n\n# next\n[mcp_servers.b]\ncommand = \"y\"\n",
		},
		{
			name: "yaml null servers", id: "continue",
			original:  "name: x\nmcpServers:\nother: 1\n",
			connected: "name: x\nmcpServers:\n  - name: switchboard\n    type: streamable-http\n    url: http://127.0.0.1:7391/mcp\nother: 1\n",
		},
		{
			name: "yaml no final newline", id: "continue",
			original:  "mcpServers:\n  - name: a\n    command: x",
			connected: "mcpServers:\n  - name: a\n    command: x\n  - name: switchboard\n    type: streamable-http\n    url: http://127.0.0.1:7391/mcp\n",
		},
		{
			name: "yaml item followed by an outer comment", id: "continue",
			original:  "mcpServers:\n    - name: a\n      command: x\n# tail\n",
			connected: "mcpServers:\n    - name: a\n      command: x\n    - name: switchboard\n      type: streamable-http\n      url: http://127.0.0.1:7391/mcp\n# tail\n",
		},
		{
			// Found by FuzzEditYAML (" 0:"): "mcpServers:" at column 1
			// after an indented mapping is not part of it.
			name: "yaml indented top level", id: "continue",
			original:  "  name: x\n  version: 1.0.0\n",
			connected: "  name: x\n  version: 1.0.0\n  mcpServers:\n    - name: switchboard\n      type: streamable-http\n      url: http://127.0.0.1:7391/mcp\n",
		},
		{
			name: "yaml tag before an indented top level", id: "continue",
			original:  "--- !config\n name: x\n",
			connected: "--- !config\n name: x\n mcpServers:\n   - name: switchboard\n     type: streamable-http\n     url: http://127.0.0.1:7391/mcp\n",
		},
		{
			// Found by FuzzEditYAML ("0: \n..."): after the document end
			// marker the entry was outside the document.
			name: "yaml document end", id: "continue",
			original:  "name: x\n# last\n... # end\n",
			connected: "name: x\n# last\nmcpServers:\n  - name: switchboard\n    type: streamable-http\n    url: http://127.0.0.1:7391/mcp\n... # end\n",
		},
		{
			// Found by FuzzEditYAML: a comment less indented than the
			// item's keys ended the item, and its last key stayed.
			name: "yaml comment inside an item", id: "continue", takeOver: true,
			original:  "mcpServers:\n  - name: switchboard\n  # old\n    url: http://old\n",
			connected: "mcpServers:\n  - name: switchboard\n    type: streamable-http\n    url: http://127.0.0.1:7391/mcp\n",
		},
		{
			// JSONC: a key twice away from the servers is the editor's
			// application's business; the edit does not touch it.
			name: "jsonc duplicate key elsewhere", id: "zed",
			original:  "{\"theme\": \"a\", \"theme\": \"b\", \"context_servers\": {}}\n",
			connected: "{\"theme\": \"a\", \"theme\": \"b\", \"context_servers\": {\"switchboard\": {\"url\": \"http://127.0.0.1:7391/mcp\"}}}\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, env, ed := mustClient(t, tt.id), testEnv(t), testEditor(t)
			writeConfig(t, c, env, []byte(tt.original))
			p := apply(t, ed, c, env, Connect{URL: testURL, TakeOver: tt.takeOver})
			if d := cmp.Diff(tt.connected, string(p.New)); d != "" {
				t.Errorf("connected (-want +got):\n%s", d)
			}
			p = apply(t, ed, c, env, Disconnect{})
			want := tt.disconnected
			if want == "" {
				want = tt.original
			}
			if d := cmp.Diff(want, string(p.New)); d != "" {
				t.Errorf("disconnected (-want +got):\n%s", d)
			}
		})
	}
}

// Values that need quoting or escaping come back as written.
func TestAwkwardValues(t *testing.T) {
	for _, id := range []string{"claude-desktop", "codex", "continue"} {
		t.Run(id, func(t *testing.T) {
			c, env, ed := mustClient(t, id), testEnv(t), testEditor(t)
			cn := Connect{URL: testURL + "?a=[1]&b=#x", Token: `t"o\k: en' #{}`, BinaryPath: `C:\Program Files\Switch "board"\sb.exe`}
			apply(t, ed, c, env, cn)
			es, err := Read(c, env)
			if err != nil {
				t.Fatal(err)
			}
			if len(es) != 1 {
				t.Fatalf("entries: %+v", es)
			}
			e := es[0]
			if c.Remote == Bridge {
				if e.Command != cn.BinaryPath || e.Env[TokenEnv] != cn.Token {
					t.Errorf("got %+v", e)
				}
			} else if e.URL != cn.URL || e.Headers["Authorization"] != "Bearer "+cn.Token {
				t.Errorf("got %+v", e)
			}
			if !strings.Contains(Diff("x", nil, []byte(cn.Token)), cn.Token) {
				t.Fatal("diff lost the line")
			}
		})
	}
}
