package mcpscan

import "encoding/binary"

// ValidJSON reports whether b is one JSON value (with space around it),
// exactly as encoding/json's Valid does, nesting limit included. It exists
// for speed: every line a server writes is checked before it is taken as
// a message, and a tool result of 256 KiB is almost all string, which
// encoding/json's scanner walks a byte at a time through a state machine
// (about 7 ns a byte; this loop is several times faster).
func ValidJSON(b []byte) bool {
	var stackBuf [32]byte
	stack := stackBuf[:0] // '{' or '[' per open container
	i := jsonSpace(b, 0)
	for {
		// A value starts at i.
		if i >= len(b) {
			return false
		}
		switch c := b[i]; {
		case c == '{' || c == '[':
			if len(stack) >= maxJSONDepth {
				return false
			}
			i = jsonSpace(b, i+1)
			if i < len(b) && (b[i] == '}' && c == '{' || b[i] == ']' && c == '[') {
				i++
				break // an empty container is a whole value
			}
			stack = append(stack, c)
			if c == '{' {
				var ok bool
				if i, ok = jsonKey(b, i); !ok {
					return false
				}
			}
			continue
		case c == '"':
			var ok bool
			if i, ok = jsonString(b, i); !ok {
				return false
			}
		case c == '-' || c >= '0' && c <= '9':
			var ok bool
			if i, ok = jsonNumber(b, i); !ok {
				return false
			}
		case c == 't':
			if !hasAt(b, i, "true") {
				return false
			}
			i += 4
		case c == 'f':
			if !hasAt(b, i, "false") {
				return false
			}
			i += 5
		case c == 'n':
			if !hasAt(b, i, "null") {
				return false
			}
			i += 4
		default:
			return false
		}
		// A value ended at i: close containers, or go on to the next value.
		for {
			i = jsonSpace(b, i)
			if len(stack) == 0 {
				return i == len(b)
			}
			if i >= len(b) {
				return false
			}
			top := stack[len(stack)-1]
			if b[i] == ',' {
				i = jsonSpace(b, i+1)
				if top == '{' {
					var ok bool
					if i, ok = jsonKey(b, i); !ok {
						return false
					}
				}
				break
			}
			if top == '{' && b[i] == '}' || top == '[' && b[i] == ']' {
				stack = stack[:len(stack)-1]
				i++
				continue
			}
			return false
		}
	}
}

// maxJSONDepth is encoding/json's limit on nesting.
const maxJSONDepth = 10000

func jsonSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

func hasAt(b []byte, i int, lit string) bool {
	return len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit
}

// jsonKey checks an object's key and its colon at i, and returns where its
// value starts.
func jsonKey(b []byte, i int) (int, bool) {
	if i >= len(b) || b[i] != '"' {
		return i, false
	}
	i, ok := jsonString(b, i)
	if !ok {
		return i, false
	}
	i = jsonSpace(b, i)
	if i >= len(b) || b[i] != ':' {
		return i, false
	}
	return jsonSpace(b, i+1), true
}

// jsonString checks the string starting at i (a quote) and returns the
// index after it. Bytes from 0x20 up are taken as they are (encoding/json
// does not check UTF-8 either).
func jsonString(b []byte, i int) (int, bool) {
	for i++; i < len(b); i++ {
		// Eight bytes at a time while none is a quote, a backslash or a
		// control character (the bytes that need a look).
		for len(b)-i >= 8 && !specialIn(binary.LittleEndian.Uint64(b[i:])) {
			i += 8
		}
		if i >= len(b) {
			break
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, true
		case c == '\\':
			i++
			if i >= len(b) {
				return i, false
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if len(b)-i <= 4 {
					return i, false
				}
				for _, h := range b[i+1 : i+5] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return i, false
					}
				}
				i += 4
			default:
				return i, false
			}
		case c < 0x20:
			return i, false
		}
	}
	return i, false
}

// specialIn reports whether any byte of x is below 0x20, a quote or a
// backslash (the usual bit tricks: a byte below n sets its top bit in
// x - n*0x01..01 where it was clear in x).
func specialIn(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	below := func(v uint64, n uint64) uint64 { return (v - ones*n) &^ v & highs }
	return below(x, 0x20)|below(x^(ones*'"'), 1)|below(x^(ones*'\\'), 1) != 0
}

// jsonNumber checks the number starting at i and returns the index after it.
func jsonNumber(b []byte, i int) (int, bool) {
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(b, i)
	default:
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		start := i + 1
		if i = digits(b, start); i == start {
			return i, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		start := i
		if i = digits(b, start); i == start {
			return i, false
		}
	}
	return i, true
}

// digits returns the index of the first byte at or after i in b that is
// not a decimal digit.
func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}
