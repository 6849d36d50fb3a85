package config

import (
	"errors"
	"fmt"
	"maps"
	"slices"
)

// Limits on the keys this package does not know that one edit may bring in
// (see Server.CheckUnknown). They are far above what a note or a newer
// Switchboard's setting needs, and keep a request from growing config.json
// without bound.
const (
	// MaxUnknownBytes bounds the unknown keys of one server entry (its pool
	// included), compacted, keys and values together.
	MaxUnknownBytes = 16 << 10
	// MaxUnknownDepth bounds the nesting of one unknown value: 1 for a
	// string or number, 2 for a flat object or array, and so on.
	MaxUnknownDepth = 8
)

// Errors that Server.CheckUnknown wraps.
var (
	ErrUnknownTooLarge = errors.New("unknown keys are too large")
	ErrUnknownTooDeep  = errors.New("an unknown key's value is nested too deeply")
)

// CheckUnknown reports whether the keys of s this package does not know are
// within MaxUnknownBytes and MaxUnknownDepth. The error is an *Error whose
// Field names the key (relative to the server entry) and which wraps
// ErrUnknownTooLarge or ErrUnknownTooDeep.
//
// Parse keeps unknown keys of any size, so that a file the user wrote is
// never refused for them; this is for edits that arrive over the API.
func (s Server) CheckUnknown() error {
	total := 0
	for _, part := range []struct {
		prefix string
		extra  map[string][]byte
	}{{"", rawMap(s.extra)}, {"pool.", rawMap(s.Pool.extra)}} {
		for _, k := range slices.Sorted(maps.Keys(part.extra)) {
			v := part.extra[k]
			total += len(k) + len(v)
			if total > MaxUnknownBytes {
				return &Error{Field: part.prefix + k, Err: fmt.Errorf("%w: more than %d bytes of keys Switchboard does not know (the limit)", ErrUnknownTooLarge, MaxUnknownBytes)}
			}
			if d := jsonDepth(v); d > MaxUnknownDepth {
				return &Error{Field: part.prefix + k, Err: fmt.Errorf("%w: %d levels, more than the limit of %d", ErrUnknownTooDeep, d, MaxUnknownDepth)}
			}
		}
	}
	return nil
}

func rawMap[V ~[]byte](m map[string]V) map[string][]byte {
	out := make(map[string][]byte, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// jsonDepth returns how deeply valid JSON is nested: 1 for a scalar, 2 for
// an object or array of scalars.
func jsonDepth(v []byte) int {
	depth, deepest := 0, 0
	inString := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case inString:
			if c == '\\' {
				i++
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			deepest = max(deepest, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest + 1
}
