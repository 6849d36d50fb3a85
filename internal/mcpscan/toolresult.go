package mcpscan

import (
	"bytes"
	"encoding/json"
)

// PlainToolResult reports whether a tools/call result is neither an error
// nor an input-required result. A key can appear in JSON text only with
// its quotes unescaped, and within a string a quote is always escaped, so
// a result without the bytes "isError" and "resultType" has neither key:
// most results are told apart without being parsed. A key can also be
// written with its letters escaped ("\u0069sError"), which the go-sdk's
// decoder reads as isError: a result with a \u escape of an ASCII letter
// is decoded too.
//
// The decoding matches keys as the go-sdk does (exactly, case-sensitively,
// escapes decoded, the last of duplicate keys kept): encoding/json's
// case-insensitive struct fields would take "IsError" for isError, or a
// later "ISERROR":false over "isError":true.
func PlainToolResult(data json.RawMessage) bool {
	plain, _ := PlainToolResultKeys(data)
	return plain
}

// PlainToolResultKeys is PlainToolResult, and also reports whether data
// holds the bytes "resultType" (with their quotes), which the fast path
// asks next: one look at a big result instead of several.
func PlainToolResultKeys(data json.RawMessage) (plain, resultType bool) {
	mayHaveKey, resultType := resultKeys(data)
	if !mayHaveKey {
		return true, false
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil || top == nil {
		return false, resultType
	}
	var isError bool
	var rt string
	if raw, ok := top["isError"]; ok && json.Unmarshal(raw, &isError) != nil {
		return false, resultType
	}
	if raw, ok := top["resultType"]; ok && json.Unmarshal(raw, &rt) != nil {
		return false, resultType
	}
	return !isError && (rt == "" || rt == "complete"), resultType
}

// resultKeys looks at a result's bytes for PlainToolResult: mayHaveKey is
// true when they hold "isError" or "resultType" (with their quotes) or a
// \u escape of an ASCII letter (escapedLetter); resultType when they hold
// "resultType". One pass from quote to quote (bytes.IndexByte), and one
// from backslash to backslash only when no key was found: on a big text
// result, two scans at memory speed.
func resultKeys(data []byte) (mayHaveKey, resultType bool) {
	isError := false
	for i := 0; ; {
		j := bytes.IndexByte(data[i:], '"')
		if j < 0 {
			break
		}
		i += j + 1 // the byte after the quote
		switch rest := data[i:]; {
		case len(rest) >= len(`isError"`) && rest[0] == 'i' && string(rest[:len(`isError"`)]) == `isError"`:
			isError = true
		case len(rest) >= len(`resultType"`) && rest[0] == 'r' && string(rest[:len(`resultType"`)]) == `resultType"`:
			return true, true
		}
	}
	return isError || escapedLetter(data), false
}

// escapedLetter reports whether data may hold a \u escape of an ASCII
// letter: \u0040 to \u007F, hex digits in either case. That is the only
// way to spell a letter of "isError" or "resultType" other than as itself.
func escapedLetter(data []byte) bool {
	for i := 0; ; i++ {
		j := bytes.IndexByte(data[i:], '\\')
		if j < 0 {
			return false
		}
		i += j
		if i+5 >= len(data) {
			return false
		}
		if data[i+1] == 'u' && data[i+2] == '0' && data[i+3] == '0' && data[i+4] >= '4' && data[i+4] <= '7' {
			return true
		}
	}
}
