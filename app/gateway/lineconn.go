package gateway

import (
	"bytes"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// responseEnvelope finds, in a JSON-RPC message, the id and the result of a
// response without decoding the result: ok is false for anything else (a
// request, a notification, an error response, bad JSON), which is then
// decoded the usual way.
func responseEnvelope(line []byte) (id jsonrpc.ID, result json.RawMessage, ok bool) {
	var idRaw []byte
	version := false
	s := scanner{b: line}
	wellFormed := s.members(func(key, v []byte) bool {
		switch string(key) {
		case `"id"`:
			idRaw = v
		case `"result"`:
			result = v
		case `"jsonrpc"`:
			version = string(v) == `"2.0"`
		case `"method"`, `"error"`:
			return false
		}
		return true
	})
	if !wellFormed {
		return id, nil, false
	}
	if !version || idRaw == nil || result == nil {
		return id, nil, false
	}
	var raw any
	if err := json.Unmarshal(idRaw, &raw); err != nil {
		return id, nil, false
	}
	id, err := jsonrpc.MakeID(raw) // float64 or string, as MakeID wants
	if err != nil {
		return id, nil, false
	}
	return id, result, true
}

// scanner skips JSON values, checking only their structure: a result is
// checked in full by the client that decodes it.
type scanner struct {
	b []byte
	i int
}

// members walks the members of the JSON object at s, calling each with the
// member's key (quotes included) and raw value. It reports false when the
// object is malformed or when each returns false (to give up early on a
// message that is not wanted); what follows the object is not looked at.
func (s *scanner) members(each func(key, value []byte) bool) bool {
	s.space()
	if !s.eat('{') {
		return false
	}
	for first := true; ; first = false {
		s.space()
		if s.eat('}') {
			return true
		}
		if !first && !(s.eat(',') && s.spaceThen()) {
			return false
		}
		key, okKey := s.str()
		s.space()
		if !okKey || !s.eat(':') {
			return false
		}
		s.space()
		start := s.i
		if !s.value() || !each(key, s.b[start:s.i]) {
			return false
		}
	}
}

func (s *scanner) space() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\n' || s.b[s.i] == '\r') {
		s.i++
	}
}

// spaceThen skips space and reports true (for use in conditions).
func (s *scanner) spaceThen() bool { s.space(); return true }

func (s *scanner) eat(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// str skips a string and returns it with its quotes.
func (s *scanner) str() ([]byte, bool) {
	start := s.i
	if !s.eat('"') {
		return nil, false
	}
	for s.i < len(s.b) {
		j := bytes.IndexAny(s.b[s.i:], "\"\\")
		if j < 0 {
			return nil, false
		}
		s.i += j
		if s.b[s.i] == '\\' {
			s.i += 2
			continue
		}
		s.i++
		return s.b[start:s.i], true
	}
	return nil, false
}

// value skips one value.
func (s *scanner) value() bool {
	if s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; c {
	case '"':
		_, ok := s.str()
		return ok
	case '{', '[':
		depth := 0
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case '"':
				if _, ok := s.str(); !ok {
					return false
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					s.i++
					return true
				}
			}
			s.i++
		}
		return false
	default: // number, true, false, null
		start := s.i
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return s.i > start
			}
			s.i++
		}
		return s.i > start
	}
}
