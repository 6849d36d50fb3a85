package mcpscan

import (
	"encoding/json"
	"strings"
	"testing"
)

var validJSONSeeds = []string{
	``, ` `, `{}`, `[]`, `{"a":1}`, ` {"a" : [1, 2.5, -0, 1e3, 1E-2, true, false, null, "x\"\\\/\b\f\n\r\t\u00e9"]} `,
	`{"a":}`, `{"a" 1}`, `{,}`, `[1,]`, `[,1]`, `{"a":1,}`, `01`, `-`, `1.`, `1e`, `.5`, `+1`, `1.5e+`, `tru`, `nul`, `falsey`,
	`"\x"`, `"\u12"`, `"\u12g4"`, "\"a\tb\"", "\"\x7f\xff\"", `"abc`, `[1 2]`, `{"a":1 "b":2}`, `[]]`, `[[]`, `{}}`, `"a" "b"`,
	`{"jsonrpc":"2.0","id":"sbf-1","result":{"content":[{"type":"text","text":"hi"}]}}`, "[\n1\r\n]\t", `[}`, `{]`, `{"a":1]`,
	`1 `, ` 1`, `-01`, `-0.0e-0`, `[-]`, `{"\u0041":1}`, `"\/"`, `"\'"`, "\xef\xbb\xbf{}",
}

func TestValidJSON(t *testing.T) {
	for _, s := range validJSONSeeds {
		if got, want := ValidJSON([]byte(s)), json.Valid([]byte(s)); got != want {
			t.Errorf("ValidJSON(%q) = %v, encoding/json says %v", s, got, want)
		}
	}
	for _, depth := range []int{maxJSONDepth - 1, maxJSONDepth, maxJSONDepth + 1} {
		for _, s := range []string{strings.Repeat("[", depth) + strings.Repeat("]", depth),
			strings.Repeat(`{"a":`, depth-1) + "{}" + strings.Repeat("}", depth-1)} {
			if got, want := ValidJSON([]byte(s)), json.Valid([]byte(s)); got != want {
				t.Errorf("ValidJSON at depth %d = %v, encoding/json says %v", depth, got, want)
			}
		}
	}
}

// FuzzValidJSON checks ValidJSON, which the supervisor runs on every line
// a server writes to stdout, against encoding/json's Valid.
func FuzzValidJSON(f *testing.F) {
	for _, s := range validJSONSeeds {
		f.Add([]byte(s))
	}
	addSessionSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := ValidJSON(b), json.Valid(b); got != want {
			t.Errorf("ValidJSON(%q) = %v, encoding/json says %v", b, got, want)
		}
	})
}

func BenchmarkValidJSON(b *testing.B) {
	line, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "result": map[string]any{
		"content": []any{map[string]any{"type": "text", "text": strings.Repeat("the quick brown fox jumps over the lazy dog\n", 6000)}}}})
	b.SetBytes(int64(len(line)))
	b.Run("ValidJSON", func(b *testing.B) {
		for b.Loop() {
			ValidJSON(line)
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		for b.Loop() {
			json.Valid(line)
		}
	})
}
