package clients

import (
	"strings"
	"testing"
)

// readBack refuses a plan whose bytes, decoded as the client decodes them,
// do not hold exactly the entries written (and none of those removed).
// The bad files are what the editors wrote before the fuzz findings were
// fixed: the net is there for a shape not yet found.
func TestReadBack(t *testing.T) {
	yamlItem := "  - name: switchboard\n    type: streamable-http\n    url: http://127.0.0.1:7391/mcp\n"
	tests := []struct {
		id, file string
		removed  []string
		want     string // a part of the error; "" for none
	}{
		{"cursor", `{"mcpServers":{"switchboard":{"url":"http://127.0.0.1:7391/mcp"}}}`, nil, ""},
		{"continue", "name: x\nmcpServers:\n" + yamlItem, nil, ""},
		// duplicate "mcpServers": the edit went into the first, parsers keep the last
		{"cursor", `{"mcpServers":{"a":{},"switchboard":{"url":"http://127.0.0.1:7391/mcp"}},"mcpServers":{"b":{}}}`, nil, `would not hold the entry "switchboard"`},
		// an indented top-level mapping, the key appended at column 1
		{"continue", " 0:\nmcpServers:\n" + yamlItem, nil, `would not hold the entry "switchboard"`},
		// after a document end marker
		{"continue", "0: \n...\nmcpServers:\n" + yamlItem, nil, `would not hold the entry "switchboard"`},
		{"continue", "name: x\nmcpServers:\n" + yamlItem + yamlItem, nil, `"switchboard" 2 times`},
		{"codex", "[mcp_servers.switchboard]\nurl = \"http://127.0.0.1:7391/other\"\n", nil, "would not read as written"},
		{"cursor", `{"mcpServers":{"switchboard":{"url":"http://127.0.0.1:7391/mcp"},"switchboard-x":{}}}`, []string{"switchboard-x"}, `"switchboard-x" would still be there`},
	}
	for _, tt := range tests {
		c := mustClient(t, tt.id)
		wrote := map[string]obj{EntryName: entryValue(c, Connect{URL: testURL}, "")}
		err := readBack(c, "f", []byte(tt.file), wrote, tt.removed)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s %q: %v", tt.id, tt.file, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s %q: error %v, want one with %q", tt.id, tt.file, err, tt.want)
		}
	}
}
