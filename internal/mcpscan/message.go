// Package mcpscan holds the parsers of outside input that read MCP's
// JSON-RPC messages as bytes, without decoding them and without state: a
// client's POST body and a tools/call's params (ScanMessage,
// ScanToolParams, the gateway's fast path), a server's stdout line
// (ValidJSON, the supervisor; ScanResponse, the gateway), a tool result's
// envelope (PlainToolResult). Each is checked by a fuzz target against the
// decoding it stands in for (the go-sdk's, or encoding/json's); a parser
// may decline what it cannot take as it is, and the caller then decodes
// the message the usual way. The package imports only the standard
// library (app/deps_test.go): the supervisor, which must not import the
// app, and the gateway both use it.
package mcpscan

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// Message is the envelope of a JSON-RPC message, its parts as bytes.
type Message struct {
	Method string
	HasID  bool
	ID     json.RawMessage
	Params json.RawMessage
	Result json.RawMessage
	Error  json.RawMessage
}

// ScanMessage scans one JSON-RPC message (not a batch) without decoding its
// params; ok is false for anything it cannot take as it is (a method name
// with escapes, a key with escapes, which the go-sdk reads decoded, an
// empty method, no "jsonrpc": "2.0" with that exact key, neither a method
// nor an id, a batch). Its values are skipped, not checked: the caller
// gives it a body it found valid JSON (the gateway's checkRequest).
func ScanMessage(body []byte) (m Message, ok bool) {
	s := scanner{b: body}
	s.space()
	if !s.eat('{') {
		return m, false
	}
	version := false
	for first := true; ; first = false {
		s.space()
		if s.eat('}') {
			break
		}
		if !first && !(s.eat(',') && s.spaceThen()) {
			return m, false
		}
		key, okKey := s.str()
		s.space()
		if !okKey || !s.eat(':') {
			return m, false
		}
		s.space()
		start := s.i
		if !s.value() {
			return m, false
		}
		v := body[start:s.i]
		if bytes.IndexByte(key, '\\') >= 0 {
			return m, false // maybe one of the keys below, escaped ("m\u0065thod")
		}
		switch string(key) {
		case `"jsonrpc"`:
			version = string(v) == `"2.0"`
		case `"method"`:
			if len(v) <= 2 || v[0] != '"' || bytes.IndexByte(v, '\\') >= 0 || !utf8.Valid(v) {
				return m, false // not a plain method name, or empty: the go-sdk answers
			}
			m.Method = string(v[1 : len(v)-1])
		case `"id"`:
			switch v[0] {
			case '{', '[', 't', 'f':
				return m, false // an id is a string or a number
			case 'n':
				m.HasID, m.ID = false, nil // null: no id, as the go-sdk reads it
			default:
				m.HasID, m.ID = true, v
			}
		case `"params"`:
			m.Params = v
		case `"result"`:
			m.Result = v
		case `"error"`:
			m.Error = v
		}
	}
	s.space()
	// Without a method it is a response, which has an id.
	return m, version && (m.Method != "" || m.HasID) && s.i == len(body)
}

// ToolParams are the parts of tools/call params the fast path reads.
type ToolParams struct {
	Name      string
	Arguments json.RawMessage // nil for null
	Meta      json.RawMessage
}

// ScanToolParams scans tools/call params; ok is false for params it leaves
// to the go-sdk (no object, no name, the stateless era's fields).
func ScanToolParams(params []byte) (p ToolParams, ok bool) {
	s := scanner{b: params}
	s.space()
	if !s.eat('{') {
		return p, false
	}
	hasName := false
	for first := true; ; first = false {
		s.space()
		if s.eat('}') {
			break
		}
		if !first && !(s.eat(',') && s.spaceThen()) {
			return p, false
		}
		key, okKey := s.str()
		s.space()
		if !okKey || !s.eat(':') {
			return p, false
		}
		s.space()
		start := s.i
		if !s.value() {
			return p, false
		}
		v := params[start:s.i]
		switch string(key) {
		case `"name"`:
			if len(v) < 2 || v[0] != '"' {
				return p, false
			}
			if bytes.IndexByte(v, '\\') >= 0 || !utf8.Valid(v) {
				// Decoded as the go-sdk decodes it (bad UTF-8 as U+FFFD).
				if json.Unmarshal(v, &p.Name) != nil {
					return p, false
				}
			} else {
				p.Name = string(v[1 : len(v)-1])
			}
			hasName = true
		case `"arguments"`:
			if string(v) != "null" {
				p.Arguments = v
			}
		case `"_meta"`:
			p.Meta = v
		case `"inputResponses"`, `"requestState"`:
			return p, false
		default:
			if bytes.IndexByte(key, '\\') >= 0 {
				return p, false // maybe one of the above, escaped
			}
		}
	}
	return p, hasName && p.Name != ""
}

// EchoableID reports whether the go-sdk writes id back as it is written: an
// integer that fits an int64, or a string without escapes in valid UTF-8.
func EchoableID(id []byte) bool {
	if len(id) == 0 {
		return false
	}
	if id[0] == '"' {
		return len(id) >= 2 && id[len(id)-1] == '"' && bytes.IndexByte(id, '\\') < 0 && utf8.Valid(id)
	}
	digits := id
	if digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 15 || (len(digits) > 1 && digits[0] == '0') {
		return false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// PlainStringID returns the text of a string id without escapes.
func PlainStringID(id []byte) (string, bool) {
	if len(id) < 2 || id[0] != '"' || id[len(id)-1] != '"' || bytes.IndexByte(id, '\\') >= 0 {
		return "", false
	}
	return string(id[1 : len(id)-1]), true
}
