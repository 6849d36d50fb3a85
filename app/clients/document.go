package clients

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
)

// A ParseError is a configuration file that does not parse, or whose
// servers are not where or what the client expects. Line and Column count
// from 1; Column is 0 when the parser reports only a line (YAML).
type ParseError struct {
	File   string
	Line   int
	Column int
	Msg    string
}

func (e *ParseError) Error() string {
	if e.Column > 0 {
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Column, e.Msg)
	}
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// document is a parsed configuration file that can be edited in place.
// Every edit changes only the bytes of the entry concerned (and the
// separators around it) and parses the result again.
type document interface {
	// entries lists the servers in file order (sorted by name for TOML).
	entries() ([]Entry, error)
	// upsert replaces the entry called name, or adds it after the others.
	upsert(name string, v obj) error
	// remove deletes the entry called name and reports whether there was one.
	remove(name string) (bool, error)
	bytes() []byte
}

// openDocument parses data, the content of file, as client c's format. An
// empty (or all-whitespace) file is treated as the skeleton the client
// expects, as an absent one is.
func openDocument(c Client, file string, data []byte) (document, error) {
	if c.Remote == DeepLink {
		return nil, fmt.Errorf("%s: %w", c.Name, ErrNoFile)
	}
	if len(bytes.TrimSpace(bytes.TrimPrefix(data, bom))) == 0 {
		data = skeleton(c)
	}
	switch c.Format {
	case JSON:
		d, err := newJSONDoc(file, data, c.ServersKey)
		if err != nil {
			return nil, err
		}
		if err := strictJSON(file, bytes.TrimPrefix(data, bom)); err != nil {
			return nil, err
		}
		if err := d.duplicateKeys(true); err != nil {
			return nil, err
		}
		return d, nil
	case JSONC:
		d, err := newJSONDoc(file, data, c.ServersKey)
		if err != nil {
			return nil, err
		}
		if err := d.duplicateKeys(false); err != nil {
			return nil, err
		}
		return d, nil
	case TOML:
		if c.List {
			return newTOMLListDoc(file, data, c.ServersKey)
		}
		return newTOMLDoc(file, data, c.ServersKey)
	case YAML:
		if !c.List {
			return newYAMLMapDoc(file, data, c.ServersKey)
		}
		return newYAMLDoc(file, data, c.ServersKey)
	}
	return nil, fmt.Errorf("clients: unknown format %q", c.Format)
}

// skeleton is the content an absent file of client c starts from.
func skeleton(c Client) []byte {
	switch c.Format {
	case JSON, JSONC:
		return []byte("{}\n")
	case YAML:
		if !c.List {
			return nil // Goose: an empty document, which holds no key yet
		}
		// The top-level keys Continue's config.yaml requires.
		return []byte("name: Local Config\nversion: 1.0.0\nschema: v1\n")
	}
	return nil
}

var bom = []byte("\xEF\xBB\xBF")

// newline is the line ending a file already uses: CRLF when its first line
// ends so, LF otherwise.
func newline(b []byte) string {
	if i := bytes.IndexByte(b, '\n'); i > 0 && b[i-1] == '\r' {
		return "\r\n"
	}
	return "\n"
}

// edit replaces b[start:end] with text.
type edit struct {
	start, end int
	text       string
}

// applyEdits applies non-overlapping edits.
func applyEdits(b []byte, edits []edit) []byte {
	sort.Slice(edits, func(i, j int) bool { return edits[i].start > edits[j].start })
	out := bytes.Clone(b)
	for _, e := range edits {
		out = append(out[:e.start:e.start], append([]byte(e.text), out[e.end:]...)...)
	}
	return out
}

// lineStart is the offset of the first byte of the line holding offset i.
func lineStart(b []byte, i int) int {
	return bytes.LastIndexByte(b[:i], '\n') + 1
}

// ownLine reports whether only spaces and tabs precede offset i on its
// line, and returns them.
func ownLine(b []byte, i int) (string, bool) {
	s := b[lineStart(b, i):i]
	for _, c := range s {
		if c != ' ' && c != '\t' {
			return "", false
		}
	}
	return string(s), true
}

// lineIndent is the leading whitespace of the line holding offset i.
func lineIndent(b []byte, i int) string {
	s := b[lineStart(b, i):]
	n := 0
	for n < len(s) && (s[n] == ' ' || s[n] == '\t') {
		n++
	}
	return string(s[:n])
}

// restOfLineBlank reports whether only whitespace follows offset i on its
// line, and returns the offset just past that line's newline.
func restOfLineBlank(b []byte, i int) (int, bool) {
	for j := i; j < len(b); j++ {
		switch b[j] {
		case ' ', '\t', '\r':
		case '\n':
			return j + 1, true
		default:
			return 0, false
		}
	}
	return len(b), true
}

// strictJSON refuses what hujson reads but strict JSON does not: comments
// and trailing commas. Clients that read strict JSON (Claude Desktop,
// Cursor, …) would not read such a file, so Switchboard does not edit it:
// the error names the line and column of the comment or comma.
func strictJSON(file string, data []byte) error {
	var v any
	err := json.Unmarshal(data, &v)
	var se *json.SyntaxError
	if err == nil || !errors.As(err, &se) || se.Offset < 1 {
		return err
	}
	off := int(se.Offset) - 1 // the byte the decoder stopped at
	msg := "not strict JSON: " + se.Error()
	switch {
	case data[off] == '/':
		msg = "a comment: this client reads strict JSON, which has no comments; remove it"
	case data[off] == '}' || data[off] == ']':
		prev := off - 1
		for prev >= 0 && (data[prev] == ' ' || data[prev] == '\t' || data[prev] == '\r' || data[prev] == '\n') {
			prev--
		}
		if prev >= 0 && data[prev] == ',' {
			off = prev
			msg = "a trailing comma: this client reads strict JSON, which does not allow one; remove it"
		}
	}
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	col := 1 + off - lineStart(data, off)
	return &ParseError{File: file, Line: line, Column: col, Msg: msg}
}

// unclosedString finds a string that a line ends before it is closed
// (JSON strings cannot hold a newline) and returns the offset of its
// opening quote, or -1. Comments are skipped.
func unclosedString(b []byte) int {
	for i := 0; i < len(b); i++ {
		switch {
		case b[i] == '"':
			start := i
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				} else if b[i] == '\n' {
					return start
				}
			}
			if i >= len(b) {
				return start
			}
		case bytes.HasPrefix(b[i:], []byte("//")):
			j := bytes.IndexByte(b[i:], '\n')
			if j < 0 {
				return -1
			}
			i += j
		case bytes.HasPrefix(b[i:], []byte("/*")):
			j := bytes.Index(b[i+2:], []byte("*/"))
			if j < 0 {
				return -1
			}
			i += j + 3
		}
	}
	return -1
}
