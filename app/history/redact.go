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
// any depth replaced by "[redacted]". Object key order is kept. ok is false
// when data is not valid JSON.
func redactJSON(data []byte) (out []byte, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var buf bytes.Buffer
	buf.Grow(len(data))
	if err := redactValue(dec, &buf); err != nil {
		return nil, false
	}
	if _, err := dec.Token(); err == nil { // trailing data
		return nil, false
	}
	return buf.Bytes(), true
}

func redactValue(dec *json.Decoder, buf *bytes.Buffer) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			buf.WriteByte('{')
			for n := 0; dec.More(); n++ {
				kt, err := dec.Token()
				if err != nil {
					return err
				}
				key, _ := kt.(string)
				if n > 0 {
					buf.WriteByte(',')
				}
				appendString(buf, key)
				buf.WriteByte(':')
				if secretName(key) {
					var skip json.RawMessage
					if err := dec.Decode(&skip); err != nil {
						return err
					}
					appendString(buf, Redacted)
					continue
				}
				if err := redactValue(dec, buf); err != nil {
					return err
				}
			}
			buf.WriteByte('}')
		case '[':
			buf.WriteByte('[')
			for n := 0; dec.More(); n++ {
				if n > 0 {
					buf.WriteByte(',')
				}
				if err := redactValue(dec, buf); err != nil {
					return err
				}
			}
			buf.WriteByte(']')
		}
		_, err := dec.Token() // the closing delimiter
		return err
	case string:
		appendString(buf, t)
	case json.Number:
		buf.WriteString(string(t))
	case bool:
		buf.WriteString(strconv.FormatBool(t))
	case nil:
		buf.WriteString("null")
	}
	return nil
}

// appendString writes s as a JSON string, without HTML escaping (the text
// stays searchable as written).
func appendString(buf *bytes.Buffer, s string) {
	const hex = "0123456789abcdef"
	buf.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				buf.WriteByte('\\')
				buf.WriteByte(c)
			case c == '\n':
				buf.WriteString(`\n`)
			case c == '\r':
				buf.WriteString(`\r`)
			case c == '\t':
				buf.WriteString(`\t`)
			case c < 0x20:
				buf.WriteString(`\u00`)
				buf.WriteByte(hex[c>>4])
				buf.WriteByte(hex[c&0xf])
			default:
				buf.WriteByte(c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			buf.WriteString(`\ufffd`)
		} else {
			buf.WriteString(s[i : i+size])
		}
		i += size
	}
	buf.WriteByte('"')
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
		var buf bytes.Buffer
		appendString(&buf, string(raw))
		out = buf.Bytes()
	}
	if len(out) <= limit {
		return out
	}
	// Leave room for the wrapper and the escaping of the preview.
	// appendString at most doubles it: out is JSON, without control characters.
	keep := cutUTF8(string(out), max(limit/2-64, 0))
	var buf bytes.Buffer
	buf.WriteString(`{"_truncated":true,"size":`)
	buf.WriteString(strconv.Itoa(len(out)))
	buf.WriteString(`,"preview":`)
	appendString(&buf, keep)
	buf.WriteByte('}')
	return buf.Bytes()
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
