package history

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/switchboardhq/switchboard/app/redact"
)

// Redacted replaces the value of a field whose name looks secret, and a
// credential found in a string (see package redact for both rules).
const Redacted = redact.Redacted

// redactJSON returns data, compacted, with the value of every secret field at
// any depth replaced by "[redacted]" (redact.SecretName) and, when values is
// set, every credential inside a string value replaced too (redact.Values).
// Object key order is kept, numbers stay as written, and strings are written
// as appendString writes them. ok is false when data is not valid JSON (as
// json.Valid would say, nesting limit included).
//
// It runs in the history writer for every call's arguments and response, so
// it checks and copies the text in one pass instead of decoding it: only
// object keys (to be named) and strings with escapes or non-UTF-8 bytes (to
// be written out again) are decoded.
func redactJSON(data []byte, values bool) (out []byte, ok bool) {
	r := redactor{in: data, out: make([]byte, 0, len(data)), values: values}
	if !r.value(0) {
		return nil, false
	}
	if r.space(); r.i != len(r.in) {
		return nil, false
	}
	return r.out, true
}

// maxDepth is encoding/json's limit on nested objects and arrays, which
// json.Valid enforces; it also bounds the redactor's recursion.
const maxDepth = 10000

// redactor copies JSON from in to out, checking it and redacting secret
// fields. Its methods return false at the first byte that is not valid
// JSON.
type redactor struct {
	in     []byte
	i      int // the next byte of in
	out    []byte
	values bool // redact credentials inside string values
}

func (r *redactor) space() {
	for r.i < len(r.in) {
		switch r.in[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

// next passes over c, copying it, if it is the next byte.
func (r *redactor) next(c byte) bool {
	if r.i < len(r.in) && r.in[r.i] == c {
		r.i++
		r.out = append(r.out, c)
		return true
	}
	return false
}

// value copies the value at r.i, inside depth objects and arrays.
func (r *redactor) value(depth int) bool {
	r.space()
	if r.i >= len(r.in) {
		return false
	}
	switch r.in[r.i] {
	case '{':
		return r.container(depth+1, '}', r.member)
	case '[':
		return r.container(depth+1, ']', r.value)
	case '"':
		_, ok := r.string(r.values)
		return ok
	case 't':
		return r.literal("true")
	case 'f':
		return r.literal("false")
	case 'n':
		return r.literal("null")
	default:
		return r.number()
	}
}

// container copies the object or array that opens at r.i, at depth, to
// its closing byte: each of its items, separated by commas, by item (an
// object's members, an array's values).
func (r *redactor) container(depth int, closing byte, item func(depth int) bool) bool {
	if depth > maxDepth {
		return false
	}
	r.out = append(r.out, r.in[r.i])
	r.i++
	if r.space(); r.next(closing) {
		return true
	}
	for {
		if !item(depth) {
			return false
		}
		r.space()
		switch {
		case r.next(','):
		case r.next(closing):
			return true
		default:
			return false
		}
	}
}

// member copies an object's "key": value, the value redacted when the key
// names a secret.
func (r *redactor) member(depth int) bool {
	if r.space(); r.i >= len(r.in) || r.in[r.i] != '"' {
		return false
	}
	key, ok := r.string(false)
	if r.space(); !ok || !r.next(':') {
		return false
	}
	if !redact.MaybeSecretName(key) || !redact.SecretName(string(key)) {
		return r.value(depth)
	}
	// Copied to be checked, then replaced.
	mark := len(r.out)
	if !r.value(depth) {
		return false
	}
	r.out = appendString(r.out[:mark], Redacted)
	return true
}

// literal copies true, false or null.
func (r *redactor) literal(word string) bool {
	if len(r.in)-r.i < len(word) || string(r.in[r.i:r.i+len(word)]) != word {
		return false
	}
	r.i += len(word)
	r.out = append(r.out, word...)
	return true
}

// number copies a number as written: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (r *redactor) number() bool {
	start := r.i
	if r.i < len(r.in) && r.in[r.i] == '-' {
		r.i++
	}
	if r.i < len(r.in) && r.in[r.i] == '0' {
		r.i++
	} else if !r.digits() {
		return false
	}
	if r.i < len(r.in) && r.in[r.i] == '.' {
		r.i++
		if !r.digits() {
			return false
		}
	}
	if r.i < len(r.in) && (r.in[r.i] == 'e' || r.in[r.i] == 'E') {
		r.i++
		if r.i < len(r.in) && (r.in[r.i] == '+' || r.in[r.i] == '-') {
			r.i++
		}
		if !r.digits() {
			return false
		}
	}
	r.out = append(r.out, r.in[start:r.i]...)
	return true
}

// digits passes over one digit or more.
func (r *redactor) digits() bool {
	start := r.i
	for r.i < len(r.in) && '0' <= r.in[r.i] && r.in[r.i] <= '9' {
		r.i++
	}
	return r.i > start
}

// string copies the string at r.i and returns its text. A string with
// neither escapes nor invalid UTF-8 is copied as it is: that is what
// appendString writes for it. With values set, credentials in the text are
// replaced in the copy (the returned text is the original).
func (r *redactor) string(values bool) (text []byte, ok bool) {
	start := r.i
	escaped, ascii := false, true
	for r.i++; ; r.i++ {
		if r.i >= len(r.in) {
			return nil, false
		}
		c := r.in[r.i]
		if c == '"' {
			break
		}
		switch {
		case c == '\\':
			escaped = true
			if r.i++; !r.escape() {
				return nil, false
			}
		case c < 0x20:
			return nil, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	r.i++
	raw := r.in[start:r.i]
	if !escaped && (ascii || utf8.Valid(raw)) {
		text := raw[1 : len(raw)-1]
		if values && redact.HasSecretValue(string(text)) {
			r.out = appendString(r.out, redact.Values(string(text)))
		} else {
			r.out = append(r.out, raw...)
		}
		return text, true
	}
	var decoded string
	if err := json.Unmarshal(raw, &decoded); err != nil {
		return nil, false // not reached: the string was checked
	}
	if values {
		r.out = appendString(r.out, redact.Values(decoded))
	} else {
		r.out = appendString(r.out, decoded)
	}
	return []byte(decoded), true
}

// escape checks the escape whose letter is at r.i, leaving r.i on its last
// byte.
func (r *redactor) escape() bool {
	if r.i >= len(r.in) {
		return false
	}
	switch r.in[r.i] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return true
	case 'u':
		if len(r.in)-r.i <= 4 {
			return false
		}
		for _, h := range r.in[r.i+1 : r.i+5] {
			if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
				return false
			}
		}
		r.i += 4
		return true
	}
	return false
}

// appendString appends s as a JSON string, without HTML escaping (the text
// stays searchable as written).
func appendString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\n':
				dst = append(dst, `\n`...)
			case c == '\r':
				dst = append(dst, `\r`...)
			case c == '\t':
				dst = append(dst, `\t`...)
			case c < 0x20:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, `\ufffd`...)
		} else {
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return append(dst, '"')
}

// prepareArguments redacts and caps a call's arguments for storage. It
// returns nil for no arguments. Arguments over limit bytes (after redaction)
// are stored as valid JSON that says so, with the start of the redacted text
// kept for reading and search:
//
//	{"_truncated":true,"size":123456,"preview":"{\"query\":..."}
//
// Text that is not JSON is stored as a JSON string (it has no field names
// to redact; with values set, credentials in it are still replaced).
func prepareArguments(raw json.RawMessage, limit int, values bool) []byte {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	out, ok := redactJSON(raw, values)
	if !ok {
		text := string(raw)
		if values {
			text = redact.Values(text)
		}
		out = appendString(nil, text)
	}
	if len(out) <= limit {
		return out
	}
	// Leave room for the wrapper and the escaping of the preview.
	// appendString at most doubles it: out is JSON, without control characters.
	keep := cutUTF8(string(out), max(limit/2-64, 0))
	buf := []byte(`{"_truncated":true,"size":`)
	buf = strconv.AppendInt(buf, int64(len(out)), 10)
	buf = append(buf, `,"preview":`...)
	buf = appendString(buf, keep)
	return append(buf, '}')
}

// cutUTF8 returns the longest prefix of s of at most n bytes that does not
// split a character.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// previewLimitForRedaction bounds the responses that are redacted before
// their preview is cut: larger ones are cut raw, so that a multi-megabyte
// result costs the writer no parse.
const previewLimitForRedaction = 64 << 10

// preparePreview returns the start of a response, at most limit bytes,
// redacted like arguments when the response is small enough to parse. With
// values set, credentials are replaced in any preview: in a response too
// large to parse, they are looked for in its raw text, a little past limit so
// that the cut cannot leave the start of one that is too short to be known.
func preparePreview(resp json.RawMessage, limit int, values bool) string {
	if len(resp) == 0 {
		return ""
	}
	if len(resp) <= previewLimitForRedaction {
		if out, ok := redactJSON(resp, values); ok {
			return cutUTF8(string(out), limit)
		}
	}
	text := cutUTF8(string(resp), limit+previewRedactionMargin)
	if values {
		text = redact.Values(text)
	}
	return cutUTF8(text, limit)
}

// previewRedactionMargin is how far past a preview's end credentials are
// looked for, so that one cut by the preview is still recognised: longer
// than any credential shape but a PEM block, which is matched from its
// first line.
const previewRedactionMargin = 4 << 10

// redactText returns a line of text for storage: credentials in it
// replaced when values is set.
func redactText(s string, values bool) string {
	if !values {
		return s
	}
	return redact.Values(s)
}

// RedactArguments returns a call's arguments as the store would record
// them: secrets redacted (names always, values unless KeepSecretValues)
// and capped at ArgumentsLimit; nil for none. It is for showing a call
// that is not recorded yet (a pending ask) as its record will show it.
func (s *Store) RedactArguments(raw json.RawMessage) json.RawMessage {
	out := prepareArguments(raw, s.opts.ArgumentsLimit, !s.keepValues.Load())
	if out == nil {
		return nil
	}
	return json.RawMessage(out)
}
