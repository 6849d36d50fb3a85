package mcpscan

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestResultKeys checks the one-pass look at a result's bytes against the
// searches it replaces, on the cases where a quote or backslash sits at an
// edge.
func TestResultKeys(t *testing.T) {
	for _, data := range []string{
		``, `"`, `""`, `"isError`, `"isError"`, `x"isError"`, `"resultType"`, `""resultType"`,
		`"resultType`, `{"a":"isError","b":"\"isError\""}`, `\`, `\u`, `\u00`, `\u004`, `\u0041`,
		`x\u0041`, `\\u0041x`, `\u0031\u0041x`, `\u0080\u0070x`, `{"isError":1,"resultType":"x"}`,
	} {
		mayHaveKey, resultType := resultKeys([]byte(data))
		wantType := strings.Contains(data, `"resultType"`)
		wantKey := strings.Contains(data, `"isError"`) || wantType || escapedLetterBySearch([]byte(data))
		if mayHaveKey != wantKey || resultType != wantType {
			t.Errorf("resultKeys(%s) = %v, %v, want %v, %v", data, mayHaveKey, resultType, wantKey, wantType)
		}
	}
}

func TestPlainToolResult(t *testing.T) {
	for _, c := range []struct {
		result string
		plain  bool
	}{
		{`{"content":[{"type":"text","text":"hi"}]}`, true},
		{`{"content":[{"type":"text","text":"say \"isError\": true"}]}`, true}, // only inside a string
		{`{"content":[],"structuredContent":{"isError":false}}`, true},
		{`{"content":[],"isError":false}`, true},
		{`{"content":[],"resultType":"complete"}`, true},
		{`{"content":[], "isError" : true}`, false},
		{`{"content":[],"structuredContent":{"isError":true},"isError":true}`, false},
		{`{"resultType":"input_required","inputRequests":{}}`, false},
		{`{"isError":`, false}, // not JSON: let the go-sdk report it
		// keys written with escaped letters are the same keys to the go-sdk
		{`{"content":[],"\u0069sError":true}`, false},
		{`{"content":[],"is\u0045rror":true}`, false},
		{`{"content":[],"\u0072esult\u0054ype":"input_required"}`, false},
		{`{"content":[],"\u0069sError":false}`, true},
		{`{"content":[{"type":"text","text":"\u0041\u003c"}]}`, true}, // escapes in a text only
		// keys match exactly, as in the go-sdk, whatever their case
		{`{"content":[],"IsError":true}`, true},
		{`{"content":[],"isError":true,"ISERROR":false}`, false},
		{`{"content":[],"isError":true,"isError":false}`, true}, // the last one counts
		{`{"content":[],"isError":null}`, true},
		{`{"content":[],"isError":"yes"}`, false}, // does not decode: the go-sdk reports it
		// the one-pass look: keys at the very start or end, escapes cut short
		{`{"isError":true}`, false},
		{`{"content":[],"resultType":"input_required"}`, false},
		{`{"content":[],"x":"\u0041"}`, true}, // an escaped letter: decoded, plain
		{`{"content":[],"x":"\\u0069"}`, true},
		{`{"content":[],"x":"\u00"}`, true},
		{`{"content":[],"x":"isError\"","isError":true}`, false},
	} {
		if got := PlainToolResult(json.RawMessage(c.result)); got != c.plain {
			t.Errorf("PlainToolResult(%s) = %v, want %v", c.result, got, c.plain)
		}
	}
}
