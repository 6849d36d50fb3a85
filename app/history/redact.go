package history

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Redacted replaces the value of a field whose name looks secret.
const Redacted = "[redacted]"

// secretWords are the name parts that make a field secret.
//
// The rule: a field name is split into parts at every character that is not a
// letter or digit and at camelCase boundaries ("githubToken" → github, token;
// "x-api-key" → x, api, key; "APIKey" → api, key). The field is secret when
// one part, lowercased, is one of these words, or when the whole name with
// separators removed is ("API_KEY" → apikey). Trailing digits of a part are
// ignored ("token2"). Parts must match whole, so
// look-alikes are kept: "keyboard", "monkey", "author", "tokenizer". Plurals
// are secret only where a plural still names a secret ("credentials",
// "secrets", "passwords", "cookies"): "max_tokens" and "keys" (a list of
// names) are common, harmless arguments and are kept.
//
// A secret field's value is replaced whatever its type: an object under
// "auth" is replaced whole.
var secretWords = map[string]bool{
	"token": true, "key": true, "apikey": true, "password": true, "passwords": true,
	"passwd": true, "passphrase": true, "secret": true, "secrets": true,
	"authorization": true, "auth": true, "cookie": true, "cookies": true,
	"credential": true, "credentials": true,
}

// secretStems are parts of the secret words: each word contains one.
var secretStems = [][]byte{[]byte("token"), []byte("key"), []byte("pass"), []byte("secret"),
	[]byte("auth"), []byte("cookie"), []byte("credential")}

// maybeSecretName is a quick test that settles most field names without
// splitting them: false means secretName(name) is false. The parts of a
// name, joined and lowercased, are its letters and digits; a secret name
// has a secret word among them, so they contain a stem.
func maybeSecretName(name []byte) bool {
	var buf [64]byte
	joined := buf[:0]
	for _, c := range name {
		switch {
		case c >= utf8.RuneSelf:
			return true // left to secretName's Unicode rules
		case 'A' <= c && c <= 'Z':
			joined = append(joined, c+'a'-'A')
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
			joined = append(joined, c)
		}
	}
	for _, stem := range secretStems {
		if bytes.Contains(joined, stem) {
			return true
		}
	}
	return false
}

// secretName reports whether a field named name holds a secret.
func secretName(name string) bool {
	joined := make([]byte, 0, len(name))
	secret := false
	eachPart(name, func(part string) {
		p := strings.ToLower(part)
		joined = append(joined, p...)
		if secretWords[p] || secretWords[strings.TrimRight(p, "0123456789")] {
			secret = true
		}
	})
	return secret || secretWords[string(joined)]
}

// eachPart calls f with each part of name: runs of letters and digits, split
// further at lower→Upper and at the last capital of an acronym ("APIKey").
func eachPart(name string, f func(string)) {
	rs := []rune(name)
	start := -1
	for i, r := range rs {
		alnum := unicode.IsLetter(r) || unicode.IsDigit(r)
		if !alnum {
			if start >= 0 {
				f(string(rs[start:i]))
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
			continue
		}
		if unicode.IsUpper(r) {
			prev := rs[i-1]
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
				f(string(rs[start:i]))
				start = i
			}
		}
	}
	if start >= 0 {
		f(string(rs[start:]))
	}
}

// redactJSON returns data, compacted, with the value of every secret field at
// any depth replaced by "[redacted]". Object key order is kept, numbers stay
// as written, and strings are written as appendString writes them. ok is
// false when data is not valid JSON.
//
// It runs in the history writer for every call's arguments and response, so
// it copies the text through in one pass instead of decoding it: once
// json.Valid has checked the text, only object keys (to be named) and
// strings with escapes or non-UTF-8 bytes (to be written out again) are
// decoded.
func redactJSON(data []byte) (out []byte, ok bool) {
	if !json.Valid(data) {
		return nil, false
	}
	r := redactor{in: data, out: make([]byte, 0, len(data))}
	r.value()
	return r.out, true
}

// redactor copies valid JSON from in to out, redacting secret fields.
type redactor struct {
	in  []byte
	i   int // the next byte of in
	out []byte
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

func (r *redactor) value() {
	r.space()
	switch r.in[r.i] {
	case '{':
		r.i++
		r.out = append(r.out, '{')
		r.space()
		for n := 0; r.in[r.i] != '}'; n++ {
			if n > 0 {
				r.i++ // ','
				r.out = append(r.out, ',')
				r.space()
			}
			key := r.string()
			r.space()
			r.i++ // ':'
			r.out = append(r.out, ':')
			if maybeSecretName(key) && secretName(string(key)) {
				r.space()
				r.skip()
				r.out = appendString(r.out, Redacted)
			} else {
				r.value()
			}
			r.space()
		}
		r.i++
		r.out = append(r.out, '}')
	case '[':
		r.i++
		r.out = append(r.out, '[')
		r.space()
		for n := 0; r.in[r.i] != ']'; n++ {
			if n > 0 {
				r.i++ // ','
				r.out = append(r.out, ',')
			}
			r.value()
			r.space()
		}
		r.i++
		r.out = append(r.out, ']')
	case '"':
		r.string()
	default: // a number, true, false or null, as written
		start := r.i
		r.skip()
		r.out = append(r.out, r.in[start:r.i]...)
	}
}

// string copies the string at r.i and returns its text. A string with
// neither escapes nor invalid UTF-8 is copied as it is: that is what
// appendString writes for it.
func (r *redactor) string() []byte {
	start := r.i
	escaped, ascii := false, true
	for r.i++; r.in[r.i] != '"'; r.i++ {
		switch c := r.in[r.i]; {
		case c == '\\':
			escaped = true
			r.i++
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	r.i++
	raw := r.in[start:r.i]
	if !escaped && (ascii || utf8.Valid(raw)) {
		r.out = append(r.out, raw...)
		return raw[1 : len(raw)-1]
	}
	var text string
	_ = json.Unmarshal(raw, &text) // cannot fail: json.Valid passed
	r.out = appendString(r.out, text)
	return []byte(text)
}

// skip passes over the value at r.i.
func (r *redactor) skip() {
	depth := 0
	for {
		switch r.in[r.i] {
		case '"':
			for r.i++; r.in[r.i] != '"'; r.i++ {
				if r.in[r.i] == '\\' {
					r.i++
				}
			}
			r.i++
		case '{', '[':
			depth++
			r.i++
		case '}', ']':
			depth--
			r.i++
		default:
			if depth == 0 { // a number, true, false or null
				for r.i < len(r.in) && strings.IndexByte(",}] \t\n\r", r.in[r.i]) < 0 {
					r.i++
				}
				return
			}
			r.i++ // inside a container: a literal's byte, a separator or space
		}
		if depth == 0 {
			return
		}
	}
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
// Text that is not JSON is stored as a JSON
// string (it has no field names to redact).
func prepareArguments(raw json.RawMessage, limit int) []byte {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	out, ok := redactJSON(raw)
	if !ok {
		out = appendString(nil, string(raw))
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
// redacted like arguments when the response is small enough to parse.
func preparePreview(resp json.RawMessage, limit int) string {
	if len(resp) == 0 {
		return ""
	}
	text := resp
	if len(resp) <= previewLimitForRedaction {
		if out, ok := redactJSON(resp); ok {
			text = out
		}
	}
	return cutUTF8(string(text), limit)
}
