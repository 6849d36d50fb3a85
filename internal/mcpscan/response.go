package mcpscan

import "bytes"

// Response is the raw id, result and error of a JSON-RPC response, as
// they stand in the message (nil where the member is absent).
type Response struct {
	ID, Result, Error []byte
}

// ScanResponse finds the members of a JSON-RPC 2.0 response without
// decoding their values. ok is false for a message with a method (a
// request or a notification), one without "jsonrpc": "2.0", one with a key
// written with escapes (the go-sdk reads "m\u0065thod" as method), or bad
// JSON; what follows the object is not looked at.
func ScanResponse(line []byte) (r Response, ok bool) {
	s := scanner{b: line}
	s.space()
	if !s.eat('{') {
		return r, false
	}
	version := false
	for first := true; ; first = false {
		s.space()
		if s.eat('}') {
			return r, version
		}
		if !first && !(s.eat(',') && s.spaceThen()) {
			return r, false
		}
		key, okKey := s.str()
		s.space()
		if !okKey || !s.eat(':') {
			return r, false
		}
		s.space()
		start := s.i
		if !s.value() {
			return r, false
		}
		v := line[start:s.i]
		if bytes.IndexByte(key, '\\') >= 0 {
			return r, false
		}
		switch string(key) {
		case `"id"`:
			r.ID = v
		case `"result"`:
			r.Result = v
		case `"error"`:
			r.Error = v
		case `"jsonrpc"`:
			version = string(v) == `"2.0"`
		case `"method"`:
			return r, false
		}
	}
}

// scanner skips JSON values, checking only their structure: a result is
// checked in full by the client that decodes it.
type scanner struct {
	b []byte
	i int
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

// str skips a string and returns it with its quotes. It looks for the
// next quote and for a backslash before it with bytes.IndexByte, which
// runs at memory speed on the long texts of big results (a loop over
// both bytes at once, as bytes.IndexAny is, takes a byte at a time); each
// byte is looked at once for each of the two.
func (s *scanner) str() ([]byte, bool) {
	start := s.i
	if !s.eat('"') {
		return nil, false
	}
	quote := -1 // the first quote at or after s.i, once found
	for s.i < len(s.b) {
		if quote < s.i {
			j := bytes.IndexByte(s.b[s.i:], '"')
			if j < 0 {
				return nil, false
			}
			quote = s.i + j
		}
		k := bytes.IndexByte(s.b[s.i:quote], '\\')
		if k < 0 {
			s.i = quote + 1
			return s.b[start:s.i], true
		}
		s.i += k + 2 // the backslash and the byte it escapes
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
