package mcpscan

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzPlainToolResult checks the quick test of a tools/call result
// envelope (PlainToolResult, which the gateway uses to decide whether a result is
// passed on as raw bytes) against a full decoding with the go-sdk's rules:
// exact, case-sensitive keys, escapes in keys decoded. A result is plain
// when it is not an error (isError true) and not an input-required result
// (resultType other than "complete"); a result that does not decode is not
// plain. A result taken for plain must be plain (else an error is recorded
// as a success, or an input request is not acted on); the reverse only
// costs a decoding, but a JSON object without either key, spelled plainly
// or escaped, must be plain.
// Seeds are in testdata/fuzz/FuzzPlainToolResult, and the results of
// mcpSession.
func FuzzPlainToolResult(f *testing.F) {
	f.Add([]byte(`{"content":[{"type":"text","text":"hi"}],"isError":false}`))
	f.Add([]byte(`{"content":[],"isError":false,"resultType":"complete"}`))
	f.Add([]byte(`{"content":[{"type":"text","text":"a\\u0041"}],"x":"\u00"}`))
	f.Add([]byte(`""resultType":1}`))
	addSessionParts(f, "result")
	f.Fuzz(func(t *testing.T, data []byte) {
		// The one-pass look at the bytes finds what the plain searches find.
		mayHaveKey, resultType := resultKeys(data)
		if want := bytes.Contains(data, []byte(`"resultType"`)); resultType != want {
			t.Fatalf("resultKeys(%s): resultType = %v, bytes.Contains says %v", data, resultType, want)
		}
		if want := bytes.Contains(data, []byte(`"isError"`)) || resultType || escapedLetterBySearch(data); mayHaveKey != want {
			t.Fatalf("resultKeys(%s): mayHaveKey = %v, the searches say %v", data, mayHaveKey, want)
		}
		if plain, rt := PlainToolResultKeys(data); plain != PlainToolResult(data) || rt != resultType {
			t.Fatalf("PlainToolResultKeys(%s) = %v, %v: not PlainToolResult's answer and resultKeys'", data, plain, rt)
		}
		want, keys, ok := plainByDecoding(data)
		if !ok {
			return // not a JSON object: the go-sdk reports it, whatever the quick test says
		}
		got := PlainToolResult(json.RawMessage(data))
		if got && !want {
			t.Fatalf("PlainToolResult(%s) = true, but decoded it is not plain", data)
		}
		if !got && !keys {
			t.Fatalf("PlainToolResult(%s) = false for a result with neither key", data)
		}
	})
}

// escapedLetterBySearch is escapedLetter as a search for each "\u00" in
// turn: the reference the one-pass version is checked against.
func escapedLetterBySearch(data []byte) bool {
	for i := bytes.Index(data, []byte(`\u00`)); i >= 0 && i+5 < len(data); {
		if h := data[i+4]; h >= '4' && h <= '7' {
			return true
		}
		j := bytes.Index(data[i+4:], []byte(`\u00`))
		if j < 0 {
			return false
		}
		i += 4 + j
	}
	return false
}

// plainByDecoding decodes data's top-level keys exactly and says whether
// the result is plain, and whether it has either key; ok is false when
// data is not a JSON object.
func plainByDecoding(data []byte) (plain, keys, ok bool) {
	var top map[string]json.RawMessage
	if json.Unmarshal(data, &top) != nil || top == nil {
		return false, false, false
	}
	_, hasError := top["isError"]
	_, hasType := top["resultType"]
	keys = hasError || hasType
	var isError bool
	if raw, has := top["isError"]; has && !bytes.Equal(raw, []byte("null")) {
		if json.Unmarshal(raw, &isError) != nil {
			return false, keys, true // does not decode: not plain
		}
	}
	var resultType string
	if raw, has := top["resultType"]; has && !bytes.Equal(raw, []byte("null")) {
		if json.Unmarshal(raw, &resultType) != nil {
			return false, keys, true
		}
	}
	return !isError && (resultType == "" || resultType == "complete"), keys, true
}
