package clients

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	toml "github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// tomlDoc edits Codex's config.toml as text. go-toml/v2 does not keep
// comments when it writes, so it is used only to read: the decoder for the
// values, the parser for where each table starts and ends. An entry
// Switchboard writes is one `[mcp_servers.NAME]` table (plus its
// sub-tables), replaced where it stands or appended at the end of the file,
// after a blank line; every other byte stays as it was.
type tomlDoc struct {
	file string
	bom  []byte
	text []byte
	path []string // ["mcp_servers"]
	nl   string
	data map[string]any
}

func newTOMLDoc(file string, data []byte, path []string) (*tomlDoc, error) {
	d := &tomlDoc{file: file, path: path}
	if bytes.HasPrefix(data, bom) {
		d.bom, data = bom, data[len(bom):]
	}
	d.nl = newline(data)
	if err := d.reparse(data); err != nil {
		return nil, err
	}
	return d, nil
}

func (d *tomlDoc) bytes() []byte { return append(bytes.Clone(d.bom), d.text...) }

func (d *tomlDoc) reparse(b []byte) error {
	var m map[string]any
	if err := toml.Unmarshal(b, &m); err != nil {
		pe := &ParseError{File: d.file, Msg: err.Error()}
		var de *toml.DecodeError
		if errors.As(err, &de) {
			pe.Line, pe.Column = de.Position()
		}
		return pe
	}
	d.text, d.data = b, m
	return nil
}

func (d *tomlDoc) servers() (map[string]any, error) {
	v, ok := d.data[d.path[0]]
	if !ok {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, &ParseError{File: d.file, Msg: fmt.Sprintf("%q is not a table", d.path[0])}
	}
	return m, nil
}

func (d *tomlDoc) entries() ([]Entry, error) {
	srv, err := d.servers()
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(srv))
	for k := range srv {
		names = append(names, k)
	}
	sort.Strings(names)
	var out []Entry
	for _, n := range names {
		m, ok := srv[n].(map[string]any)
		if !ok {
			return nil, &ParseError{File: d.file, Msg: fmt.Sprintf("server %q is not a table", n)}
		}
		out = append(out, entryFromMap(n, m))
	}
	return out, nil
}

// block is where the tables of one server are: [start, end) runs from its
// header's line to the end of the line of its last key.
type block struct {
	start, end int
	found      bool
}

// locate finds the block of server name. It fails when the server is
// defined some other way (inline, by dotted keys, or split across the
// file), which Switchboard does not edit.
func (d *tomlDoc) locate(name string) (block, error) {
	var p unstable.Parser
	p.Reset(d.text)
	want := []string{d.path[0], name}
	var b block
	inBlock := false // the current table belongs to the block
	var table []string
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			keys, first := keyParts(e.Key())
			off := int(first.Raw.Offset)
			table = keys
			under := len(keys) >= 2 && slices.Equal(keys[:2], want)
			switch {
			case under && e.Kind == unstable.Table && len(keys) == 2 && !b.found:
				b = block{start: lineStart(d.text, off), found: true}
				b.end = d.lineEnd(off)
				inBlock = true
			case under && inBlock:
				b.end = d.lineEnd(off)
			case under:
				return block{}, d.unsupported(name, off)
			default:
				inBlock = false
			}
		case unstable.KeyValue:
			keys, first := keyParts(e.Key())
			full := append(slices.Clone(table), keys...)
			if len(full) >= 2 && slices.Equal(full[:2], want) && !inBlock {
				return block{}, d.unsupported(name, int(first.Raw.Offset))
			}
			if len(full) == 2 && full[0] == d.path[0] && full[1] == name {
				return block{}, d.unsupported(name, int(first.Raw.Offset))
			}
			if inBlock {
				b.end = d.lineEnd(int(e.Raw.Offset + e.Raw.Length))
			}
		}
	}
	if err := p.Error(); err != nil {
		return block{}, &ParseError{File: d.file, Msg: err.Error()}
	}
	return b, nil
}

// inlineServers reports where the servers table is given a value at the
// top level ("mcp_servers = { … }"), after which no [mcp_servers.NAME]
// table may follow.
func (d *tomlDoc) inlineServers() (int, bool) {
	var p unstable.Parser
	p.Reset(d.text)
	top := true
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			top = false
		case unstable.KeyValue:
			if keys, first := keyParts(e.Key()); top && len(keys) == 1 && keys[0] == d.path[0] {
				return int(first.Raw.Offset), true
			}
		}
	}
	return 0, false
}

func (d *tomlDoc) unsupported(name string, off int) error {
	return d.errAtOffset(off, fmt.Sprintf("server %q is not written as one [%s.%s] table; Switchboard does not edit it", name, d.path[0], name))
}

// errAtOffset is a ParseError at byte offset off, with its line and column
// counted from the text: go-toml's parser gives offsets, the user needs
// lines (both tomlDoc and tomlListDoc point at what they refuse this way).
func (d *tomlDoc) errAtOffset(off int, msg string) *ParseError {
	line := 1 + bytes.Count(d.text[:off], []byte("\n"))
	return &ParseError{File: d.file, Line: line, Column: 1 + off - lineStart(d.text, off), Msg: msg}
}

// lineEnd is the offset just past the newline ending the line holding off
// (a trailing comment stays with its key).
func (d *tomlDoc) lineEnd(off int) int {
	if i := bytes.IndexByte(d.text[off:], '\n'); i >= 0 {
		return off + i + 1
	}
	return len(d.text)
}

func keyParts(it unstable.Iterator) ([]string, *unstable.Node) {
	var keys []string
	var first *unstable.Node
	for it.Next() {
		n := it.Node()
		if first == nil {
			first = n
		}
		keys = append(keys, string(n.Data))
	}
	return keys, first
}

func (d *tomlDoc) upsert(name string, v obj) error {
	b, err := d.locate(name)
	if err != nil {
		return err
	}
	text := d.render(name, v)
	if b.found {
		return d.reparse(applyEdits(d.text, []edit{{b.start, b.end, text}}))
	}
	if off, ok := d.inlineServers(); ok {
		return d.errAtOffset(off, fmt.Sprintf("%s is written as one inline table; TOML allows no [%s.%s] table beside it, so Switchboard does not edit it: write each server as a [%s.NAME] table",
			d.path[0], d.path[0], name, d.path[0]))
	}
	return d.appendTable(text)
}

// appendTable writes text (a server's table) at the end of the file, after
// a blank line unless the file is empty: a new server goes last both as a
// [mcp_servers.NAME] table (tomlDoc) and as an [[mcp_servers]] item
// (tomlListDoc), so both append the same way.
func (d *tomlDoc) appendTable(text string) error {
	out := bytes.Clone(d.text)
	if len(out) > 0 && !bytes.HasSuffix(out, []byte("\n")) {
		out = append(out, d.nl...)
	}
	if len(bytes.TrimSpace(out)) > 0 {
		out = append(out, d.nl...)
	}
	return d.reparse(append(out, text...))
}

func (d *tomlDoc) remove(name string) (bool, error) {
	b, err := d.locate(name)
	if err != nil || !b.found {
		return false, err
	}
	return true, d.removeBlock(b)
}

// removeBlock deletes the lines of block b and the blank line that
// separated it from what precedes it (the one appendTable wrote), so that
// removing what Switchboard added gives back the file as it was; tomlDoc
// and tomlListDoc remove their tables alike.
func (d *tomlDoc) removeBlock(b block) error {
	start := b.start
	if before := d.text[:start]; bytes.HasSuffix(before, []byte("\n\n")) {
		start--
	} else if bytes.HasSuffix(before, []byte("\r\n\r\n")) {
		start -= 2
	}
	return d.reparse(applyEdits(d.text, []edit{{start, b.end, ""}}))
}

// render writes the table of server name.
func (d *tomlDoc) render(name string, v obj) string {
	var b strings.Builder
	b.WriteString("[" + tomlKey(d.path[0]) + "." + tomlKey(name) + "]" + d.nl)
	for _, m := range v {
		b.WriteString(tomlKey(m.key) + " = " + tomlValue(m.val) + d.nl)
	}
	return b.String()
}

func tomlValue(v any) string {
	switch v := v.(type) {
	case string:
		return tomlString(v)
	case []string:
		parts := make([]string, len(v))
		for i, s := range v {
			parts[i] = tomlString(s)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case obj:
		if len(v) == 0 {
			return "{}"
		}
		parts := make([]string, len(v))
		for i, m := range v {
			parts[i] = tomlKey(m.key) + " = " + tomlValue(m.val)
		}
		return "{ " + strings.Join(parts, ", ") + " }"
	}
	panic(fmt.Sprintf("clients: cannot render %T", v))
}

func tomlKey(k string) string {
	if k == "" {
		return `""`
	}
	for _, c := range k {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return tomlString(k)
		}
	}
	return k
}

// tomlString is a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
