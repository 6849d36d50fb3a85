package clients

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/tailscale/hujson"
)

// jsonDoc edits JSON and JSONC (JSON with comments and trailing commas) as
// text, using hujson's syntax tree only for the offsets of values. What it
// inserts is strict JSON and it adds a trailing comma only where the
// object already ends with one, so a strict JSON file stays strict.
type jsonDoc struct {
	file  string
	bom   []byte // a UTF-8 byte order mark, kept in front of text
	text  []byte
	path  []string
	nl    string
	unit  string // one level of indentation
	colon string // ": " or ":"
	root  hujson.Value
}

func newJSONDoc(file string, data []byte, path []string) (*jsonDoc, error) {
	d := &jsonDoc{file: file, path: path}
	if bytes.HasPrefix(data, bom) {
		d.bom, data = bom, data[len(bom):]
	}
	d.nl = newline(data)
	if err := d.reparse(data); err != nil {
		return nil, err
	}
	d.detectStyle()
	return d, nil
}

func (d *jsonDoc) bytes() []byte { return append(bytes.Clone(d.bom), d.text...) }

func (d *jsonDoc) reparse(b []byte) error {
	v, err := hujson.Parse(b)
	if err != nil {
		pe := &ParseError{File: d.file, Msg: err.Error()}
		// hujson says "hujson: line L, column C: message".
		var msg string
		if n, _ := fmt.Sscanf(err.Error(), "hujson: line %d, column %d:", &pe.Line, &pe.Column); n == 2 {
			if i := strings.Index(err.Error(), ": "); i >= 0 {
				msg = err.Error()[i+2:]
				if j := strings.Index(msg, ": "); j >= 0 {
					msg = msg[j+2:]
				}
				pe.Msg = msg
			}
		}
		// hujson reports a string left open where it gives up, often
		// lines later (at the end of the file); the string's own line and
		// column are where the user has to look.
		if at := unclosedString(b); at >= 0 {
			line, col := 1+bytes.Count(b[:at], []byte("\n")), 1+at-lineStart(b, at)
			if pe.Line == 0 || line < pe.Line || line == pe.Line && col <= pe.Column {
				pe.Line, pe.Column, pe.Msg = line, col, "a string that is not closed on its line"
			}
		}
		return pe
	}
	if _, ok := v.Value.(*hujson.Object); !ok {
		return d.errAt(b, v.StartOffset, "the top level is not an object")
	}
	d.text, d.root = b, v
	return nil
}

func (d *jsonDoc) errAt(b []byte, off int, format string, args ...any) *ParseError {
	line := 1 + bytes.Count(b[:off], []byte("\n"))
	col := 1 + off - lineStart(b, off)
	return &ParseError{File: d.file, Line: line, Column: col, Msg: fmt.Sprintf(format, args...)}
}

// detectStyle learns the indentation unit and the colon spacing from the
// top-level object.
func (d *jsonDoc) detectStyle() {
	d.unit, d.colon = "  ", ": "
	obj := d.root.Value.(*hujson.Object)
	if len(obj.Members) == 0 {
		return
	}
	m := obj.Members[0]
	if ind, ok := ownLine(d.text, m.Name.StartOffset); ok && ind != "" {
		d.unit = strings.TrimPrefix(ind, lineIndent(d.text, d.root.StartOffset))
		if d.unit == "" {
			d.unit = ind
		}
	}
	if sep := d.text[m.Name.EndOffset:m.Value.StartOffset]; string(sep) == ":" {
		d.colon = ":"
	}
}

// servers finds the servers object, or returns the deepest object on the
// way and the key missing from it.
func (d *jsonDoc) servers() (v *hujson.Value, missing string, err error) {
	v = &d.root
	for _, key := range d.path {
		obj := v.Value.(*hujson.Object)
		var next *hujson.Value
		for i := range obj.Members {
			if lit, ok := obj.Members[i].Name.Value.(hujson.Literal); ok && lit.String() == key {
				next = &obj.Members[i].Value
				break
			}
		}
		if next == nil {
			return v, key, nil
		}
		if _, ok := next.Value.(*hujson.Object); !ok {
			return nil, "", d.errAt(d.text, next.StartOffset, "%q is not an object", strings.Join(d.path, "."))
		}
		v = next
	}
	return v, "", nil
}

func (d *jsonDoc) entries() ([]Entry, error) {
	v, missing, err := d.servers()
	if err != nil || missing != "" {
		return nil, err
	}
	var out []Entry
	for _, m := range v.Value.(*hujson.Object).Members {
		val := m.Value.Clone()
		val.Standardize()
		var raw any
		if err := json.Unmarshal(val.Pack(), &raw); err != nil {
			return nil, d.errAt(d.text, m.Value.StartOffset, "%v", err)
		}
		mm, ok := raw.(map[string]any)
		if !ok {
			return nil, d.errAt(d.text, m.Value.StartOffset, "server %q is not an object", m.Name.Value.(hujson.Literal).String())
		}
		out = append(out, entryFromMap(m.Name.Value.(hujson.Literal).String(), mm))
	}
	return out, nil
}

func (d *jsonDoc) find(obj *hujson.Object, name string) int {
	for i, m := range obj.Members {
		if lit, ok := m.Name.Value.(hujson.Literal); ok && lit.String() == name {
			return i
		}
	}
	return -1
}

func (d *jsonDoc) upsert(name string, v obj) error {
	for {
		srv, missing, err := d.servers()
		if err != nil {
			return err
		}
		if missing != "" {
			if err := d.insert(srv, missing, obj{}); err != nil {
				return err
			}
			continue
		}
		o := srv.Value.(*hujson.Object)
		i := d.find(o, name)
		if i < 0 {
			return d.insert(srv, name, v)
		}
		m := o.Members[i]
		compact := !bytes.Contains(d.text[srv.StartOffset:srv.EndOffset], []byte("\n"))
		text := d.render(v, lineIndent(d.text, m.Name.StartOffset), compact)
		return d.reparse(applyEdits(d.text, []edit{{m.Value.StartOffset, m.Value.EndOffset, text}}))
	}
}

// nextSignificant skips whitespace and comments from offset i.
func nextSignificant(b []byte, i int) int {
	for i < len(b) {
		switch {
		case b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n':
			i++
		case bytes.HasPrefix(b[i:], []byte("//")):
			j := bytes.IndexByte(b[i:], '\n')
			if j < 0 {
				return len(b)
			}
			i += j + 1
		case bytes.HasPrefix(b[i:], []byte("/*")):
			j := bytes.Index(b[i+2:], []byte("*/"))
			if j < 0 {
				return len(b)
			}
			i += 2 + j + 2
		default:
			return i
		}
	}
	return i
}

// restOfLineQuiet is restOfLineBlank that also accepts a trailing line
// comment.
func restOfLineQuiet(b []byte, i int) (int, bool) {
	for j := i; j < len(b); j++ {
		switch {
		case b[j] == ' ' || b[j] == '\t' || b[j] == '\r':
		case b[j] == '\n':
			return j + 1, true
		case bytes.HasPrefix(b[j:], []byte("//")):
			k := bytes.IndexByte(b[j:], '\n')
			if k < 0 {
				return len(b), true
			}
			return j + k + 1, true
		default:
			return 0, false
		}
	}
	return len(b), true
}

// insert adds the member name: v at the end of the object at ov.
func (d *jsonDoc) insert(ov *hujson.Value, name string, v obj) error {
	o := ov.Value.(*hujson.Object)
	open, closing := ov.StartOffset, ov.EndOffset-1
	// A file written on one line (minified) gets the member on that line
	// too; an empty top level ("{}", a new file) is expanded.
	rootObj := d.root.Value.(*hujson.Object)
	compact := len(rootObj.Members) > 0 && !bytes.Contains(d.text[d.root.StartOffset:d.root.EndOffset], []byte("\n"))
	key := jsonString(name) + d.colon
	parent := lineIndent(d.text, open)
	var edits []edit
	if len(o.Members) == 0 {
		inner := d.text[open+1 : closing]
		if compact {
			edits = []edit{{closing, closing, key + d.render(v, "", true)}}
		} else {
			ind := parent + d.unit
			kept := strings.TrimRight(string(inner), " \t\r\n")
			edits = []edit{{open + 1, closing, kept + d.nl + ind + key + d.render(v, ind, false) + d.nl + parent}}
		}
		return d.reparse(applyEdits(d.text, edits))
	}
	last := o.Members[len(o.Members)-1]
	end := last.Value.EndOffset
	c := nextSignificant(d.text, end)
	hasComma := c < len(d.text) && d.text[c] == ','
	if compact || !bytes.Contains(d.text[open:closing], []byte("\n")) {
		if hasComma {
			edits = []edit{{c + 1, c + 1, d.sep() + key + d.render(v, "", true) + ","}}
		} else {
			edits = []edit{{end, end, "," + d.sep() + key + d.render(v, "", true)}}
		}
		return d.reparse(applyEdits(d.text, edits))
	}
	ind, ok := ownLine(d.text, last.Name.StartOffset)
	if !ok {
		ind = parent + d.unit
	}
	member := ind + key + d.render(v, ind, false)
	if hasComma {
		if eol, ok := restOfLineQuiet(d.text, c+1); ok {
			edits = []edit{{eol, eol, member + "," + d.nl}}
		} else {
			edits = []edit{{c + 1, c + 1, d.nl + member + ","}}
		}
	} else if eol, ok := restOfLineQuiet(d.text, end); ok {
		edits = []edit{{end, end, ","}, {eol, eol, member + d.nl}}
	} else {
		edits = []edit{{end, end, "," + d.nl + member}}
	}
	return d.reparse(applyEdits(d.text, edits))
}

func (d *jsonDoc) remove(name string) (bool, error) {
	srv, missing, err := d.servers()
	if err != nil || missing != "" {
		return false, err
	}
	o := srv.Value.(*hujson.Object)
	i := d.find(o, name)
	if i < 0 {
		return false, nil
	}
	m := o.Members[i]
	open, closing := srv.StartOffset, srv.EndOffset-1
	c := nextSignificant(d.text, m.Value.EndOffset)
	hasComma := c < len(d.text) && d.text[c] == ','
	var edits []edit
	if len(o.Members) == 1 {
		after := m.Value.EndOffset
		if hasComma {
			after = c + 1
		}
		if isBlank(d.text[open+1:m.Name.StartOffset]) && isBlank(d.text[after:closing]) {
			return true, d.reparse(applyEdits(d.text, []edit{{open + 1, closing, ""}}))
		}
	}
	start := m.Name.StartOffset
	own := false
	if _, ok := ownLine(d.text, start); ok && bytes.Contains(d.text[open:closing], []byte("\n")) {
		start, own = lineStart(d.text, start), true
	}
	end := m.Value.EndOffset
	if hasComma {
		end = c + 1
	}
	if own {
		if eol, ok := restOfLineBlank(d.text, end); ok {
			end = eol
		}
	} else if hasComma {
		for end < closing && (d.text[end] == ' ' || d.text[end] == '\t') {
			end++
		}
	}
	if !hasComma && i > 0 {
		prev := o.Members[i-1]
		pc := nextSignificant(d.text, prev.Value.EndOffset)
		if own {
			edits = append(edits, edit{pc, pc + 1, ""})
		} else {
			start = prev.Value.EndOffset
		}
	}
	edits = append(edits, edit{start, end, ""})
	return true, d.reparse(applyEdits(d.text, edits))
}

// sep is what follows a comma on one line: a space when the file puts one
// after its colons.
func (d *jsonDoc) sep() string {
	if d.colon == ":" {
		return ""
	}
	return " "
}

func isBlank(b []byte) bool { return len(bytes.TrimSpace(b)) == 0 }

// render writes v as JSON: on one line when compact, else one member per
// line, indented one unit more than indent.
func (d *jsonDoc) render(v any, indent string, compact bool) string {
	switch v := v.(type) {
	case string:
		return jsonString(v)
	case bool:
		if v {
			return "true"
		}
		return "false"
	case []string:
		parts := make([]string, len(v))
		for i, s := range v {
			parts[i] = jsonString(s)
		}
		if compact {
			return "[" + strings.Join(parts, ","+d.sep()) + "]"
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case obj:
		if len(v) == 0 {
			return "{}"
		}
		var b strings.Builder
		b.WriteString("{")
		for i, m := range v {
			if compact {
				if i > 0 {
					b.WriteString("," + d.sep())
				}
			} else {
				if i > 0 {
					b.WriteString(",")
				}
				b.WriteString(d.nl + indent + d.unit)
			}
			b.WriteString(jsonString(m.key) + d.colon + d.render(m.val, indent+d.unit, compact))
		}
		if !compact {
			b.WriteString(d.nl + indent)
		}
		b.WriteString("}")
		return b.String()
	}
	panic(fmt.Sprintf("clients: cannot render %T", v))
}

// jsonString quotes s as JSON without escaping <, > and &.
func jsonString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// valueAt finds the value at the key path from the top level; nil when a
// key is missing.
func (d *jsonDoc) valueAt(path []string) (*hujson.Value, error) {
	v := &d.root
	for i, key := range path {
		obj, ok := v.Value.(*hujson.Object)
		if !ok {
			return nil, d.errAt(d.text, v.StartOffset, "%q is not an object", strings.Join(path[:i], "."))
		}
		j := d.find(obj, key)
		if j < 0 {
			return nil, nil
		}
		v = &obj.Members[j].Value
	}
	return v, nil
}

// array finds the list at path; nil when it is absent.
func (d *jsonDoc) array(path []string) (*hujson.Value, *hujson.Array, error) {
	v, err := d.valueAt(path)
	if err != nil || v == nil {
		return nil, nil, err
	}
	arr, ok := v.Value.(*hujson.Array)
	if !ok {
		return nil, nil, d.errAt(d.text, v.StartOffset, "%q is not a list", strings.Join(path, "."))
	}
	return v, arr, nil
}

// stringList returns the strings of the list at path, and whether the
// list exists.
func (d *jsonDoc) stringList(path []string) ([]string, bool, error) {
	_, arr, err := d.array(path)
	if err != nil || arr == nil {
		return nil, false, err
	}
	var out []string
	for _, el := range arr.Elements {
		if lit, ok := el.Value.(hujson.Literal); ok && lit.Kind() == '"' {
			out = append(out, lit.String())
		}
	}
	return out, true, nil
}

// listAdd appends the string s to the list at path, in the list's layout
// (one element per line, or all on one).
func (d *jsonDoc) listAdd(path []string, s string) error {
	v, arr, err := d.array(path)
	if err != nil || arr == nil {
		return err
	}
	q := jsonString(s)
	open, closing := v.StartOffset, v.EndOffset-1
	if len(arr.Elements) == 0 {
		return d.reparse(applyEdits(d.text, []edit{{open + 1, open + 1, q}}))
	}
	last := arr.Elements[len(arr.Elements)-1]
	c := nextSignificant(d.text, last.EndOffset)
	hasComma := c < len(d.text) && d.text[c] == ','
	sep := d.sep()
	if bytes.Contains(d.text[open:closing], []byte("\n")) {
		ind, ok := ownLine(d.text, last.StartOffset)
		if !ok {
			ind = lineIndent(d.text, open) + d.unit
		}
		sep = d.nl + ind
	}
	if hasComma {
		return d.reparse(applyEdits(d.text, []edit{{c + 1, c + 1, sep + q + ","}}))
	}
	return d.reparse(applyEdits(d.text, []edit{{last.EndOffset, last.EndOffset, "," + sep + q}}))
}

// listRemove removes every element equal to the string s from the list
// at path.
func (d *jsonDoc) listRemove(path []string, s string) error {
	for {
		_, arr, err := d.array(path)
		if err != nil || arr == nil {
			return err
		}
		i := slices.IndexFunc(arr.Elements, func(el hujson.Value) bool {
			lit, ok := el.Value.(hujson.Literal)
			return ok && lit.Kind() == '"' && lit.String() == s
		})
		if i < 0 {
			return nil
		}
		el := arr.Elements[i]
		var e edit
		switch {
		case i < len(arr.Elements)-1:
			e = edit{el.StartOffset, arr.Elements[i+1].StartOffset, ""}
		case i > 0:
			e = edit{arr.Elements[i-1].EndOffset, el.EndOffset, ""}
		default:
			end := el.EndOffset
			if c := nextSignificant(d.text, end); c < len(d.text) && d.text[c] == ',' {
				end = c + 1
			}
			e = edit{el.StartOffset, end, ""}
		}
		if err := d.reparse(applyEdits(d.text, []edit{e})); err != nil {
			return err
		}
	}
}

// duplicateKeys refuses an object that has a key twice. A JSON parser
// keeps one of them (JavaScript's JSON.parse and Go's the last) while the
// editor reads and edits the first, so an entry Switchboard reports as
// written could be one the client never sees. With all, every object in
// the file is checked (strict JSON); otherwise only the keys the editor
// follows to the servers, and the servers' names (JSONC: an editor's
// settings file may hold a key twice elsewhere, which its application
// tolerates, and which the edit does not touch).
func (d *jsonDoc) duplicateKeys(all bool) error {
	if all {
		return d.duplicatesIn(&d.root, true)
	}
	v := &d.root
	for _, key := range d.path {
		obj := v.Value.(*hujson.Object)
		first := -1
		for i := range obj.Members {
			if lit, ok := obj.Members[i].Name.Value.(hujson.Literal); !ok || lit.String() != key {
				continue
			}
			if first >= 0 {
				return d.duplicateAt(key, obj.Members[first].Name.StartOffset, obj.Members[i].Name.StartOffset)
			}
			first = i
		}
		if first < 0 {
			return nil
		}
		v = &obj.Members[first].Value
		if _, ok := v.Value.(*hujson.Object); !ok {
			return nil // servers() reports it
		}
	}
	return d.duplicatesIn(v, false)
}

func (d *jsonDoc) duplicateAt(name string, first, again int) error {
	line := 1 + bytes.Count(d.text[:first], []byte("\n"))
	col := 1 + first - lineStart(d.text, first)
	return d.errAt(d.text, again,
		"the key %s is already in this object (at line %d, column %d): a JSON parser keeps only one of them, "+
			"so the client would not see what Switchboard edits; merge the two or remove one",
		jsonString(name), line, col)
}

// duplicatesIn checks the object v (and, with deep, every object within
// it) for a key written twice, compared as decoded ("a" and "\u0061" are
// the same key).
func (d *jsonDoc) duplicatesIn(v *hujson.Value, deep bool) error {
	switch x := v.Value.(type) {
	case *hujson.Object:
		seen := make(map[string]int, len(x.Members))
		for i := range x.Members {
			m := &x.Members[i]
			name := m.Name.Value.(hujson.Literal).String()
			if first, ok := seen[name]; ok {
				return d.duplicateAt(name, first, m.Name.StartOffset)
			}
			seen[name] = m.Name.StartOffset
			if deep {
				if err := d.duplicatesIn(&m.Value, true); err != nil {
					return err
				}
			}
		}
	case *hujson.Array:
		if deep {
			for i := range x.Elements {
				if err := d.duplicatesIn(&x.Elements[i], true); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
