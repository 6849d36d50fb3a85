package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strconv"

	"github.com/switchboardhq/switchboard/app/tiers"
)

// encode returns the file content for c: indented JSON (two spaces) with a
// trailing newline. Known keys come first in a fixed order, then unknown
// keys sorted; servers and env entries are sorted by name, so the same
// Config always gives the same bytes.
//
// Values nested deeper than indentDepth are written compactly: indenting
// every level makes the file grow with the square of the nesting (a 10 KB
// unknown value of nested arrays became tens of megabytes).
func (c *Config) encode() ([]byte, error) {
	src := c.appendJSON(nil)
	if !json.Valid(src) {
		return nil, errors.New("config: encoding produced invalid JSON")
	}
	return append(indent(make([]byte, 0, len(src)*2), src, indentDepth), '\n'), nil
}

// indentDepth is the deepest level that encode indents: the known layout is
// at most 4 deep (servers.NAME.pool.KEY); deeper levels are unknown keys'.
const indentDepth = 8

// indent appends compact, valid JSON src to dst indented by two spaces per
// level, as json.Indent does, for the first maxDepth levels; deeper values
// are copied compactly. The output size is linear in len(src).
func indent(dst, src []byte, maxDepth int) []byte {
	newline := func(depth int) {
		dst = append(dst, '\n')
		for range depth {
			dst = append(dst, ' ', ' ')
		}
	}
	depth := 0
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch c {
		case '"':
			j := i + 1
			for ; src[j] != '"'; j++ {
				if src[j] == '\\' {
					j++
				}
			}
			dst = append(dst, src[i:j+1]...)
			i = j
		case '{', '[':
			depth++
			dst = append(dst, c)
			if depth > maxDepth {
				continue
			}
			if i+1 < len(src) && (src[i+1] == '}' || src[i+1] == ']') {
				dst = append(dst, src[i+1]) // empty: {} or []
				i++
				depth--
				continue
			}
			newline(depth)
		case '}', ']':
			if depth <= maxDepth {
				newline(depth - 1)
			}
			dst = append(dst, c)
			depth--
		case ',':
			dst = append(dst, c)
			if depth <= maxDepth {
				newline(depth)
			}
		case ':':
			dst = append(dst, c)
			if depth <= maxDepth {
				dst = append(dst, ' ')
			}
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// MarshalJSON writes c compactly, with the key order and unknown keys of
// the file format. It does not validate c.
func (c Config) MarshalJSON() ([]byte, error) { return c.appendJSON(nil), nil }

// UnmarshalJSON decodes the current file layout, keeping unknown keys. It
// neither migrates nor validates (use Parse for a file); like Parse, it sets
// an empty Listen to DefaultListen and a nil Servers to an empty map.
// Errors are *Error values without a file or position.
func (c *Config) UnmarshalJSON(data []byte) error {
	p := &parser{}
	top, err := p.object("", 0, bytes.TrimSpace(data), "a JSON object")
	if err != nil {
		return err
	}
	cfg, err := p.config(top)
	if err != nil {
		return err
	}
	*c = *cfg
	return nil
}

// MarshalJSON writes s as in the file, unknown keys included.
func (s Server) MarshalJSON() ([]byte, error) { return s.appendJSON(nil), nil }

// UnmarshalJSON decodes a server entry, keeping unknown keys; it does not
// validate. JSON null leaves s unchanged.
func (s *Server) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if isNull(data) {
		return nil
	}
	v, err := (&parser{}).server("", 0, data)
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// MarshalJSON writes p as in the file, unknown keys included.
func (p Pool) MarshalJSON() ([]byte, error) { return p.appendJSON(nil), nil }

// UnmarshalJSON decodes a pool object, keeping unknown keys; it does not
// validate. JSON null leaves p unchanged.
func (p *Pool) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if isNull(data) {
		return nil
	}
	v, err := (&parser{}).pool("", 0, data)
	if err != nil {
		return err
	}
	*p = v
	return nil
}

func (c Config) appendJSON(b []byte) []byte {
	w := objectWriter{b: append(b, '{')}
	w.key("version")
	w.b = strconv.AppendInt(w.b, int64(c.Version), 10)
	w.key("listen")
	w.b = appendString(w.b, c.Listen)
	w.key("servers")
	w.b = appendObject(w.b, c.Servers, func(b []byte, s Server) []byte { return s.appendJSON(b) })
	if c.History != (History{}) {
		w.key("history")
		data, _ := json.Marshal(c.History) // a duration, a number and a bool: cannot fail
		w.b = append(w.b, data...)
	}
	if c.SessionTimeout.Duration != 0 {
		w.key("sessionTimeout")
		w.b = appendString(w.b, c.SessionTimeout.String())
	}
	if c.ToolSearch {
		w.key("toolSearch")
		w.b = append(w.b, "true"...)
	}
	if c.AskTimeout.Duration != 0 {
		w.key("askTimeout")
		w.b = appendString(w.b, c.AskTimeout.String())
	}
	if c.SandboxDefault != "" {
		w.key("sandboxDefault")
		w.b = appendString(w.b, c.SandboxDefault)
	}
	if len(c.Profiles) > 0 {
		w.key("profiles")
		w.b = appendObject(w.b, c.Profiles, func(b []byte, p Profile) []byte { return p.appendJSON(b) })
	}
	w.extra(c.extra)
	return append(w.b, '}')
}

func (s Server) appendJSON(b []byte) []byte {
	w := objectWriter{b: append(b, '{')}
	if s.Command != "" || s.URL == "" {
		w.key("command")
		w.b = appendString(w.b, s.Command)
	}
	if s.URL != "" {
		w.key("url")
		w.b = appendString(w.b, s.URL)
	}
	if s.Transport != "" {
		w.key("transport")
		w.b = appendString(w.b, s.Transport)
	}
	if len(s.Headers) > 0 {
		w.key("headers")
		w.b = appendObject(w.b, s.Headers, appendString)
	}
	if len(s.SecretHeaders) > 0 {
		w.key("secretHeaders")
		w.b = appendObject(w.b, s.SecretHeaders, appendString)
	}
	if s.OAuth != nil {
		w.key("oauth")
		w.b = s.OAuth.appendJSON(w.b)
	}
	if len(s.Args) > 0 {
		w.key("args")
		w.b = appendStrings(w.b, s.Args)
	}
	if len(s.Env) > 0 {
		w.key("env")
		w.b = appendObject(w.b, s.Env, appendString)
	}
	if s.Cwd != "" {
		w.key("cwd")
		w.b = appendString(w.b, s.Cwd)
	}
	if s.Enabled != nil {
		w.key("enabled")
		w.b = strconv.AppendBool(w.b, *s.Enabled)
	}
	if !s.Pool.IsZero() {
		w.key("pool")
		w.b = s.Pool.appendJSON(w.b)
	}
	if s.Timeout.Duration != 0 {
		w.key("timeout")
		w.b = appendString(w.b, s.Timeout.String())
	}
	if len(s.DisabledTools) > 0 {
		w.key("disabledTools")
		w.b = appendStrings(w.b, s.DisabledTools)
	}
	if len(s.Tiers) > 0 {
		w.key("tiers")
		w.b = appendObject(w.b, s.Tiers, func(b []byte, t tiers.Tier) []byte { return appendString(b, string(t)) })
	}
	if s.HoldChangedTools != nil {
		w.key("holdChangedTools")
		w.b = strconv.AppendBool(w.b, *s.HoldChangedTools)
	}
	if s.AskBeforeDestructive {
		w.key("askBeforeDestructive")
		w.b = append(w.b, "true"...)
	}
	if s.Alias != "" {
		w.key("alias")
		w.b = appendString(w.b, s.Alias)
	}
	if len(s.SecretEnv) > 0 {
		w.key("secretEnv")
		w.b = appendStrings(w.b, s.SecretEnv)
	}
	if len(s.Roots) > 0 {
		w.key("roots")
		w.b = appendStrings(w.b, s.Roots)
	}
	if s.Sandbox != nil {
		w.key("sandbox")
		w.b = s.Sandbox.appendJSON(w.b)
	}
	if in := s.Install; in != nil {
		w.key("install")
		data, _ := json.Marshal(in) // strings only: cannot fail
		w.b = append(w.b, data...)
	}
	w.extra(s.extra)
	return append(w.b, '}')
}

func (p Pool) appendJSON(b []byte) []byte {
	w := objectWriter{b: append(b, '{')}
	if p.Mode != "" {
		w.key("mode")
		w.b = appendString(w.b, p.Mode)
	}
	if p.Min != 0 {
		w.key("min")
		w.b = strconv.AppendInt(w.b, int64(p.Min), 10)
	}
	if p.Max != 0 {
		w.key("max")
		w.b = strconv.AppendInt(w.b, int64(p.Max), 10)
	}
	if p.IdleTimeout.Duration != 0 {
		w.key("idleTimeout")
		w.b = appendString(w.b, p.IdleTimeout.String())
	}
	w.extra(p.extra)
	return append(w.b, '}')
}

// An objectWriter appends the members of a JSON object after its '{'.
type objectWriter struct {
	b []byte
	n int
}

func (w *objectWriter) key(k string) {
	if w.n > 0 {
		w.b = append(w.b, ',')
	}
	w.n++
	w.b = appendString(w.b, k)
	w.b = append(w.b, ':')
}

// extra appends unknown members sorted by key.
func (w *objectWriter) extra(m map[string]json.RawMessage) {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		w.key(k)
		w.b = append(w.b, m[k]...)
	}
}

// appendObject appends m as a JSON object with its members sorted by key,
// each value written by appendValue, so that the same map always gives the
// same bytes.
func appendObject[V any](b []byte, m map[string]V, appendValue func([]byte, V) []byte) []byte {
	w := objectWriter{b: append(b, '{')}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		w.key(k)
		w.b = appendValue(w.b, m[k])
	}
	return append(w.b, '}')
}

func appendStrings(b []byte, ss []string) []byte {
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, s)
	}
	return append(b, ']')
}

// appendString appends s as a JSON string without HTML escaping, so that a
// command like "a && b" stays readable in the file.
func appendString(b []byte, s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // encoding a string cannot fail
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})...)
}
