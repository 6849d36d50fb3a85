package config

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/switchboardhq/switchboard/app/tiers"
)

// Parse decodes a config file's content, migrates it in memory to
// CurrentVersion and validates it. It never touches the disk; file is used
// only in error messages.
//
// Problems are reported as an *Error carrying the position in data and,
// when the problem is with one field, its path. A file whose version is
// newer than CurrentVersion is refused with an error matching
// ErrNewerVersion. A leading UTF-8 byte order mark is ignored. Duplicate keys
// in an object are an error (JSON would silently keep the last one, and a
// server pasted twice would vanish).
func Parse(file string, data []byte) (*Config, error) {
	cfg, _, err := parse(file, data)
	return cfg, err
}

// parse is Parse that also returns the version the file had before
// migration.
func parse(file string, data []byte) (cfg *Config, fromVersion int, err error) {
	doc := bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	p := &parser{file: file, doc: doc, pos: map[string]int{}}

	if err := json.Unmarshal(doc, new(json.RawMessage)); err != nil {
		return nil, 0, p.syntaxError(err)
	}
	trimmed := bytes.TrimLeft(doc, " \t\r\n")
	top, err := p.object("", len(doc)-len(trimmed), trimmed, "a JSON object")
	if err != nil {
		return nil, 0, err
	}

	version := 0
	if i := slices.IndexFunc(top, func(m member) bool { return m.key == "version" }); i >= 0 {
		m := top[i]
		if err := p.scalar("version", m.valOff, m.val, &version, "an integer"); err != nil {
			return nil, 0, err
		}
		switch {
		case version < 0:
			return nil, 0, p.errAt(m.valOff, "version", fmt.Errorf("invalid value %d: must not be negative", version))
		case version > CurrentVersion:
			return nil, 0, p.errAt(m.valOff, "version", newerVersion(file, version))
		}
	}

	if version < CurrentVersion {
		raw := make(map[string]json.RawMessage, len(top))
		for _, m := range top {
			raw[m.key] = m.val
		}
		table := migrationTable()
		for v := version; v < CurrentVersion; v++ {
			if v >= len(table) || table[v].from != v {
				return nil, 0, &Error{File: file, Err: fmt.Errorf("no migration from version %d", v)}
			}
			if err := table[v].apply(raw); err != nil {
				var e *Error
				if !errors.As(err, &e) {
					e = &Error{Err: err}
				}
				e.File = file
				e.Err = fmt.Errorf("migrating from version %d to %d: %w", v, v+1, e.Err)
				if i := slices.IndexFunc(top, func(m member) bool { return m.key == e.Field }); i >= 0 && e.Line == 0 {
					e.Line, e.Column = lineCol(doc, top[i].keyOff)
				}
				return nil, 0, e
			}
			raw["version"] = json.RawMessage(strconv.Itoa(v + 1))
		}
		top = remap(top, raw)
	}

	cfg, err = p.config(top)
	if err != nil {
		return nil, 0, err
	}
	if cfg.Version != CurrentVersion {
		return nil, 0, p.errAt(-1, "version", fmt.Errorf("is %d after migration, want %d", cfg.Version, CurrentVersion))
	}
	if err := cfg.Validate(); err != nil {
		var e *Error
		if errors.As(err, &e) {
			e.File = file
			if off, ok := p.lookup(e.Field); ok {
				e.Line, e.Column = lineCol(doc, off)
			}
		}
		return nil, 0, err
	}
	return cfg, version, nil
}

// A parser decodes one JSON document into a Config by hand, member by
// member, so that it can keep unknown keys and say where each problem is.
// The zero parser decodes without positions (for UnmarshalJSON).
type parser struct {
	file string
	// doc is the whole document; offsets index into it.
	doc []byte
	// pos maps a field path to the offset of its key (or, for array
	// elements, its value). Nil when positions are not tracked.
	pos map[string]int
}

// A member is one key/value pair of a JSON object, or one element of an
// array (key ""), with the offsets of the key and value in the document; -1
// when unknown.
type member struct {
	key    string
	keyOff int
	valOff int
	val    []byte
}

func (p *parser) errAt(off int, field string, err error) *Error {
	e := &Error{File: p.file, Field: field, Err: err}
	if p.doc != nil && off >= 0 {
		e.Line, e.Column = lineCol(p.doc, off)
	}
	return e
}

func (p *parser) record(field string, off int) {
	if p.pos != nil && off >= 0 {
		p.pos[field] = off
	}
}

// lookup finds the position of field, or failing that of the nearest
// enclosing field that is in the file.
func (p *parser) lookup(field string) (int, bool) {
	for field != "" {
		if off, ok := p.pos[field]; ok {
			return off, true
		}
		i := strings.LastIndexAny(field, ".[")
		if i < 0 {
			break
		}
		field = field[:i]
	}
	return 0, false
}

// syntaxError turns an error from encoding/json's validity check into an
// *Error pointing at the offending character.
func (p *parser) syntaxError(err error) error {
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return &Error{File: p.file, Err: fmt.Errorf("invalid JSON: %w", err)}
	}
	// Offset counts the bytes read, the offending one included; at the end
	// of input there is no offending byte and the problem is at the end.
	off := int(se.Offset) - 1
	if strings.Contains(se.Error(), "unexpected end") {
		off = int(se.Offset)
	}
	off = max(0, min(off, len(p.doc)))
	msg := fmt.Errorf("invalid JSON: %w", se)
	rest := p.doc[off:]
	if bytes.HasPrefix(rest, []byte("“")) || bytes.HasPrefix(rest, []byte("”")) ||
		bytes.HasPrefix(rest, []byte("‘")) || bytes.HasPrefix(rest, []byte("’")) {
		msg = fmt.Errorf("invalid JSON: %w (curly quotes are not JSON; use straight quotes \")", se)
	}
	return p.errAt(off, "", msg)
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func isNull(raw []byte) bool { return string(raw) == "null" }

func (p *parser) typeError(field string, off int, raw []byte, want string) *Error {
	return p.errAt(off, field, fmt.Errorf("invalid value %s: expected %s", snippet(raw), want))
}

// secretTypeError is typeError for values that may hold secrets (env):
// it names the JSON type, not the value, since errors end up in logs.
func (p *parser) secretTypeError(field string, off int, raw []byte, want string) *Error {
	kind := "a number"
	switch {
	case len(raw) == 0:
		kind = "nothing"
	case raw[0] == '"':
		kind = "a string"
	case raw[0] == '{':
		kind = "an object"
	case raw[0] == '[':
		kind = "an array"
	case raw[0] == 't' || raw[0] == 'f':
		kind = "a boolean"
	case raw[0] == 'n':
		kind = "null"
	}
	return p.errAt(off, field, fmt.Errorf("invalid value (%s): expected %s", kind, want))
}

// scalar decodes a string, number, boolean or Duration. JSON null leaves dst
// unchanged.
func (p *parser) scalar(field string, off int, raw []byte, dst any, want string) error {
	if isNull(raw) {
		return nil
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return p.typeError(field, off, raw, want)
	}
	return nil
}

// object splits a JSON object into its members and records their
// positions. JSON null is an object with no members.
func (p *parser) object(field string, off int, raw []byte, want string) ([]member, error) {
	if isNull(raw) {
		return nil, nil
	}
	if len(raw) == 0 || raw[0] != '{' {
		return nil, p.typeError(field, off, raw, want)
	}
	ms, err := split(raw, off, true)
	if err != nil {
		return nil, p.errAt(off, field, err)
	}
	seen := make(map[string]bool, len(ms))
	for _, m := range ms {
		if seen[m.key] {
			return nil, p.errAt(m.keyOff, join(field, m.key), fmt.Errorf("duplicate key %q", m.key))
		}
		seen[m.key] = true
		p.record(join(field, m.key), m.keyOff)
	}
	return ms, nil
}

// strings decodes an array of strings. Null and [] give nil.
func (p *parser) strings(field string, off int, raw []byte) ([]string, error) {
	if isNull(raw) {
		return nil, nil
	}
	if len(raw) == 0 || raw[0] != '[' {
		return nil, p.typeError(field, off, raw, "an array of strings")
	}
	ms, err := split(raw, off, false)
	if err != nil {
		return nil, p.errAt(off, field, err)
	}
	var out []string
	for i, m := range ms {
		f := field + "[" + strconv.Itoa(i) + "]"
		p.record(f, m.valOff)
		if isNull(m.val) || m.val[0] != '"' {
			return nil, p.typeError(f, m.valOff, m.val, "a string")
		}
		var s string
		if err := p.scalar(f, m.valOff, m.val, &s, "a string"); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// tiers decodes an object mapping tool names to tier names. Null and {}
// give nil; whether each is a tier is validate's to say.
func (p *parser) tiers(field string, off int, raw []byte) (map[string]tiers.Tier, error) {
	ms, err := p.object(field, off, raw, `an object mapping tool names to tiers, like {"delete_file": "destructive"}`)
	if err != nil || len(ms) == 0 {
		return nil, err
	}
	out := make(map[string]tiers.Tier, len(ms))
	for _, m := range ms {
		var s string
		f := join(field, m.key)
		if isNull(m.val) || m.val[0] != '"' {
			return nil, p.typeError(f, m.valOff, m.val, `a tier: "read", "write" or "destructive"`)
		}
		if err := p.scalar(f, m.valOff, m.val, &s, "a string"); err != nil {
			return nil, err
		}
		out[m.key] = tiers.Tier(s)
	}
	return out, nil
}

// env decodes an object of strings. Null and {} give nil. Error messages
// do not quote values, which are often tokens.
func (p *parser) env(field string, off int, raw []byte) (map[string]string, error) {
	const want = "an object of strings"
	if !isNull(raw) && (len(raw) == 0 || raw[0] != '{') {
		return nil, p.secretTypeError(field, off, raw, want)
	}
	ms, err := p.object(field, off, raw, want)
	if err != nil || len(ms) == 0 {
		return nil, err
	}
	out := make(map[string]string, len(ms))
	for _, m := range ms {
		var s string
		if len(m.val) == 0 || m.val[0] != '"' || json.Unmarshal(m.val, &s) != nil {
			return nil, p.secretTypeError(join(field, m.key), m.valOff, m.val, "a string")
		}
		out[m.key] = s
	}
	return out, nil
}

func (p *parser) config(top []member) (*Config, error) {
	c := &Config{}
	for _, m := range top {
		var err error
		switch m.key {
		case "version":
			err = p.scalar(m.key, m.valOff, m.val, &c.Version, "an integer")
		case "listen":
			err = p.scalar(m.key, m.valOff, m.val, &c.Listen, "a string")
		case "servers":
			c.Servers, err = p.servers(m.key, m.valOff, m.val)
		case "history":
			err = p.scalar(m.key, m.valOff, m.val, &c.History, `an object like {"maxAge": "720h", "maxBytes": 1073741824, "keepSecretValues": false}`)
		case "sessionTimeout":
			err = p.scalar(m.key, m.valOff, m.val, &c.SessionTimeout, durationWant)
		case "profiles":
			c.Profiles, err = p.profiles(m.key, m.valOff, m.val)
		case "toolSearch":
			err = p.scalar(m.key, m.valOff, m.val, &c.ToolSearch, "true or false")
		case "askTimeout":
			err = p.scalar(m.key, m.valOff, m.val, &c.AskTimeout, durationWant)
		case "sandboxDefault":
			err = p.scalar(m.key, m.valOff, m.val, &c.SandboxDefault, `"confined" or "off"`)
		default:
			c.extra, err = addExtra(c.extra, m)
		}
		if err != nil {
			return nil, err
		}
	}
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	if c.Servers == nil {
		c.Servers = map[string]Server{}
	}
	return c, nil
}

func (p *parser) servers(field string, off int, raw []byte) (map[string]Server, error) {
	ms, err := p.object(field, off, raw, "an object mapping server names to servers")
	if err != nil {
		return nil, err
	}
	out := make(map[string]Server, len(ms))
	for _, m := range ms {
		s, err := p.server(join(field, m.key), m.valOff, m.val)
		if err != nil {
			return nil, err
		}
		out[m.key] = s
	}
	return out, nil
}

func (p *parser) server(field string, off int, raw []byte) (Server, error) {
	var s Server
	if isNull(raw) {
		return s, p.typeError(field, off, raw, `a server object like {"command": "npx"} or {"url": "https://..."}`)
	}
	ms, err := p.object(field, off, raw, `a server object like {"command": "npx"} or {"url": "https://..."}`)
	if err != nil {
		return s, err
	}
	for _, m := range ms {
		f := join(field, m.key)
		switch m.key {
		case "command":
			err = p.scalar(f, m.valOff, m.val, &s.Command, "a string")
		case "url":
			err = p.scalar(f, m.valOff, m.val, &s.URL, "a string")
		case "headers":
			s.Headers, err = p.env(f, m.valOff, m.val)
		case "secretHeaders":
			s.SecretHeaders, err = p.env(f, m.valOff, m.val)
		case "oauth":
			s.OAuth, err = p.oauth(f, m.valOff, m.val)
		case "transport":
			err = p.scalar(f, m.valOff, m.val, &s.Transport, `"auto", "streamable-http" or "sse"`)
		case "args":
			s.Args, err = p.strings(f, m.valOff, m.val)
		case "env":
			s.Env, err = p.env(f, m.valOff, m.val)
		case "cwd":
			err = p.scalar(f, m.valOff, m.val, &s.Cwd, "a string")
		case "enabled":
			s.Enabled, err = p.optionalBool(f, m.valOff, m.val)
		case "pool":
			s.Pool, err = p.pool(f, m.valOff, m.val)
		case "timeout":
			err = p.scalar(f, m.valOff, m.val, &s.Timeout, durationWant)
		case "disabledTools":
			s.DisabledTools, err = p.strings(f, m.valOff, m.val)
		case "tiers":
			s.Tiers, err = p.tiers(f, m.valOff, m.val)
		case "holdChangedTools":
			s.HoldChangedTools, err = p.optionalBool(f, m.valOff, m.val)
		case "askBeforeDestructive":
			err = p.scalar(f, m.valOff, m.val, &s.AskBeforeDestructive, "true or false")
		case "alias":
			err = p.scalar(f, m.valOff, m.val, &s.Alias, "a string")
		case "secretEnv":
			s.SecretEnv, err = p.strings(f, m.valOff, m.val)
		case "roots":
			s.Roots, err = p.strings(f, m.valOff, m.val)
		case "sandbox":
			s.Sandbox, err = p.sandbox(f, m.valOff, m.val)
		case "install":
			if !isNull(m.val) {
				var in Install
				err = p.scalar(f, m.valOff, m.val, &in, `an install object like {"entry": "...", "version": "1.0.0"}`)
				s.Install = &in
			}
		default:
			s.extra, err = addExtra(s.extra, m)
		}
		if err != nil {
			return Server{}, err
		}
	}
	return s, nil
}

// optionalBool decodes a bool that may be left out: JSON null gives nil.
func (p *parser) optionalBool(field string, off int, raw []byte) (*bool, error) {
	if isNull(raw) {
		return nil, nil
	}
	var b bool
	if err := p.scalar(field, off, raw, &b, "true or false"); err != nil {
		return nil, err
	}
	return &b, nil
}

func (p *parser) pool(field string, off int, raw []byte) (Pool, error) {
	var pl Pool
	ms, err := p.object(field, off, raw, `a pool object like {"mode": "shared", "max": 2}`)
	if err != nil {
		return pl, err
	}
	for _, m := range ms {
		f := join(field, m.key)
		switch m.key {
		case "mode":
			err = p.scalar(f, m.valOff, m.val, &pl.Mode, `"shared" or "session"`)
		case "min":
			err = p.scalar(f, m.valOff, m.val, &pl.Min, "an integer")
		case "max":
			err = p.scalar(f, m.valOff, m.val, &pl.Max, "an integer")
		case "idleTimeout":
			err = p.scalar(f, m.valOff, m.val, &pl.IdleTimeout, durationWant)
		default:
			pl.extra, err = addExtra(pl.extra, m)
		}
		if err != nil {
			return Pool{}, err
		}
	}
	return pl, nil
}

// addExtra keeps an unknown member, compacted, in its own memory.
func addExtra(extra map[string]json.RawMessage, m member) (map[string]json.RawMessage, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, m.val); err != nil {
		return extra, err
	}
	if extra == nil {
		extra = map[string]json.RawMessage{}
	}
	extra[m.key] = buf.Bytes()
	return extra, nil
}

// split returns the members of a syntactically valid JSON object (isObject)
// or the elements of an array, with offsets relative to base (the offset of
// raw in the document; -1 when unknown).
func split(raw []byte, base int, isObject bool) ([]member, error) {
	abs := func(rel int) int {
		if base < 0 || rel < 0 {
			return -1
		}
		return base + rel
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil { // '{' or '['
		return nil, err
	}
	var ms []member
	for dec.More() {
		var m member
		m.keyOff = -1
		if isObject {
			keyStart := skipSeparators(raw, int(dec.InputOffset()))
			tok, err := dec.Token()
			if err != nil {
				return nil, err
			}
			key, ok := tok.(string)
			if !ok {
				return nil, fmt.Errorf("unexpected token %v", tok)
			}
			m.key = key
			m.keyOff = abs(keyStart)
		}
		valStart := skipSeparators(raw, int(dec.InputOffset()))
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		// The value's bytes are where we expect them unless encoding/json
		// changed how it reports offsets; then positions are just unknown.
		if valStart+len(v) > len(raw) || !bytes.Equal(raw[valStart:valStart+len(v)], v) {
			valStart = -1
		}
		m.valOff = abs(valStart)
		m.val = v
		ms = append(ms, m)
	}
	return ms, nil
}

// skipSeparators skips white space, commas and colons from offset i.
func skipSeparators(raw []byte, i int) int {
	for i < len(raw) {
		switch raw[i] {
		case ' ', '\t', '\r', '\n', ',', ':':
			i++
		default:
			return i
		}
	}
	return i
}

// remap rebuilds the top-level members after a migration changed the raw
// object, keeping each value's position in the original document: a value
// under the same key with the same bytes keeps its position, and so does a
// value moved to another key unchanged (a rename). Members come back in
// document order, new ones last.
func remap(orig []member, raw map[string]json.RawMessage) []member {
	keys := slices.Sorted(maps.Keys(raw))
	used := make([]bool, len(orig))
	out := make([]member, len(keys))
	for i, k := range keys {
		out[i] = member{key: k, keyOff: -1, valOff: -1, val: raw[k]}
	}
	match := func(i int, sameKey bool) {
		for j, o := range orig {
			if used[j] || (sameKey && o.key != out[i].key) || !bytes.Equal(o.val, out[i].val) {
				continue
			}
			used[j] = true
			out[i].keyOff, out[i].valOff = o.keyOff, o.valOff
			return
		}
	}
	for i := range out {
		match(i, true)
	}
	for i := range out {
		if out[i].valOff < 0 {
			match(i, false)
		}
	}
	slices.SortStableFunc(out, func(a, b member) int {
		if (a.valOff < 0) != (b.valOff < 0) {
			return cmp.Compare(b.valOff, a.valOff) // unknown (-1) last
		}
		return cmp.Compare(a.valOff, b.valOff)
	})
	return out
}
