package mcpscan

import (
	"bytes"
	"slices"
)

// DropMembers returns obj, a JSON object, without its top-level members
// whose key is one of drop, and, when nulls is set, without those whose
// value is null; obj itself when none goes. The members kept keep their
// order and their bytes. ok is false when obj is not an object or has a
// key written with an escape (a decoder reads "result\u0054ype" as
// resultType, which this does not look for): the caller decodes obj then.
//
// It is one walk over obj where decoding the object into a map and
// encoding it again walks every value three times (and copies it twice):
// what the gateway shapes are whole results, tool lists with their
// schemas and resources read.
func DropMembers(obj []byte, drop []string, nulls bool) (out []byte, ok bool) {
	type member struct{ start, keyEnd, end int }
	var kept [16]member
	members := kept[:0]
	dropped := false
	s := scanner{b: obj}
	ok = objectMembers(&s, func(key []byte, keyStart, valueStart int) bool {
		if !s.value() {
			return false
		}
		if slices.Contains(drop, string(key[1:len(key)-1])) {
			dropped = true
			return true
		}
		if nulls && string(obj[valueStart:s.i]) == "null" {
			// A decoder keeps the last of duplicate keys: this null is
			// the member's value, which the ones before must not become.
			dropped = true
			members = slices.DeleteFunc(members, func(m member) bool { return bytes.Equal(obj[m.start:m.keyEnd], key) })
			return true
		}
		members = append(members, member{keyStart, keyStart + len(key), s.i})
		return true
	})
	if s.space(); !ok || s.i != len(obj) {
		return nil, false
	}
	if !dropped {
		return obj, true
	}
	out = make([]byte, 0, len(obj))
	out = append(out, '{')
	for i, m := range members {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, obj[m.start:m.end]...)
	}
	return append(out, '}'), true
}

// CompleteResourceContents reports whether data, a resources/read result,
// is one the go-sdk would pass on unchanged but for its own era's keys: an
// object of only "contents" and "_meta" whose contents are objects that
// each name their "uri" and "mimeType" (non-empty strings: the go-sdk
// fills in those left empty) — no resultType (an input-required result is
// acted on), no cache hints, no key written with an escape. Their other
// members are not looked into. data is valid JSON (the gateway's lines
// are checked when read).
func CompleteResourceContents(data []byte) bool {
	s := scanner{b: data}
	contents := false
	ok := objectMembers(&s, func(key []byte, _, _ int) bool {
		switch string(key) {
		case `"_meta"`:
			return s.value()
		case `"contents"`:
			contents = true
			return resourceContents(&s)
		}
		return false
	})
	return ok && contents
}

// resourceContents walks an array of resource contents at s, each of
// which must name a non-empty uri and mimeType.
func resourceContents(s *scanner) bool {
	if !s.eat('[') {
		return false
	}
	for first := true; ; first = false {
		s.space()
		if s.eat(']') {
			return true
		}
		if !first && !(s.eat(',') && s.spaceThen()) {
			return false
		}
		uri, mimeType := false, false
		ok := objectMembers(s, func(key []byte, _, start int) bool {
			if !s.value() {
				return false
			}
			nonEmpty := s.i-start > 2 && s.b[start] == '"'
			switch string(key) {
			case `"uri"`:
				uri = nonEmpty
			case `"mimeType"`:
				mimeType = nonEmpty
			}
			return true
		})
		if !ok || !uri || !mimeType {
			return false
		}
	}
}

// objectMembers walks the object at s, calling member for each key (with
// its quotes, which start at keyStart) with s at the start of its value,
// valueStart, which member must walk; it reports false for an escaped
// key, bad structure, or when member does.
func objectMembers(s *scanner, member func(key []byte, keyStart, valueStart int) bool) bool {
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
		keyStart := s.i
		key, ok := s.str()
		s.space()
		if !ok || bytes.IndexByte(key, '\\') >= 0 || !s.eat(':') {
			return false
		}
		s.space()
		if !member(key, keyStart, s.i) {
			return false
		}
	}
}
