package clients

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// yamlDoc edits Continue's config.yaml: mcpServers is a list of mappings,
// each with a "name". The yaml.v3 node tree says where the list and its
// items are (line and column); the edit then replaces, appends or removes
// the lines of one item, so comments, blank lines, quoting and indentation
// elsewhere stay exactly as they were. (Encoding the node tree again would
// keep comments but re-indent the file and drop blank lines.)
type yamlDoc struct {
	file  string
	text  []byte
	path  []string // ["mcpServers"]
	nl    string
	root  *yaml.Node // the top-level mapping; nil for an empty document (allowEmpty)
	lines []int      // offset of the start of each line (0-based index)
	// allowEmpty takes a document without content (nothing, or only
	// comments) as an empty mapping: Goose's config.yaml has no key it
	// needs, so its skeleton is empty.
	allowEmpty bool
}

func newYAMLDoc(file string, data []byte, path []string) (*yamlDoc, error) {
	d := &yamlDoc{file: file, path: path, nl: newline(data)}
	if err := d.reparse(data); err != nil {
		return nil, err
	}
	return d, nil
}

func (d *yamlDoc) bytes() []byte { return bytes.Clone(d.text) }

// yamlParserProblems are the messages of yaml.v3's parser (as opposed to
// its scanner) errors. yaml.v3 numbers their line from 0 (it adds 1 only to
// scanner errors), so the line it gives is one before the real one: an
// unclosed flow list on line 4 is reported on "line 3".
var yamlParserProblems = map[string]bool{
	"did not find expected <stream-start>":   true,
	"did not find expected <document start>": true,
	"found undefined tag handle":             true,
	"did not find expected node content":     true,
	"did not find expected '-' indicator":    true,
	"did not find expected key":              true,
	"did not find expected ',' or ']'":       true,
	"did not find expected ',' or '}'":       true,
	"found duplicate %YAML directive":        true,
	"found incompatible YAML document":       true,
	"found duplicate %TAG directive":         true,
}

var (
	yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)
	// a decoder error: "line 3: cannot unmarshal ..."
	yamlDecodeLine = regexp.MustCompile(`^line (\d+): (.*)`)
	// a decoder error about a tagged scalar: "cannot decode !!str `x` as a !!int"
	yamlTagMismatch = regexp.MustCompile("cannot decode \\S+ `([^`]*)` as a (\\S+)")
)

func (d *yamlDoc) reparse(b []byte) error {
	if err := d.lineBreaks(b); err != nil {
		return err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return d.syntaxError(err)
	}
	if d.allowEmpty && (doc.Kind == 0 || doc.Kind == yaml.DocumentNode && len(doc.Content) == 0) {
		if err := d.noOtherDocument(b); err != nil {
			return err
		}
		d.text, d.root = b, nil
		d.countLines()
		return nil
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return &ParseError{File: d.file, Line: 1, Column: 1, Msg: "the top level is not a mapping"}
	}
	root := doc.Content[0]
	if root.Style&yaml.FlowStyle != 0 {
		return &ParseError{File: d.file, Line: root.Line, Column: root.Column, Msg: "the top level is a flow mapping; Switchboard edits block style only"}
	}
	if err := d.decodable(b, &doc); err != nil {
		return err
	}
	d.text, d.root = b, root
	d.countLines()
	return nil
}

func (d *yamlDoc) countLines() {
	d.lines = []int{0}
	for i, c := range d.text {
		if c == '\n' {
			d.lines = append(d.lines, i+1)
		}
	}
}

// decodable refuses what the node tree holds but a YAML decoder does not
// take: a key twice in a mapping, an alias inside its own anchor, a merge
// key ("<<") whose value is not a mapping, a value its tag does not fit
// ("!!int x"); and a second document, which Continue's parser refuses and
// yaml.v3 ignores. The editor reads the node tree, so it would edit such a
// file, and report an entry that the client never reads.
func (d *yamlDoc) decodable(b []byte, doc *yaml.Node) error {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var first, second yaml.Node
	if err := dec.Decode(&first); err != nil {
		return d.syntaxError(err)
	}
	// yaml.Unmarshal reads the first document and ignores the rest, even
	// when the rest does not parse (" a: 1\nb: 2" is {a: 1} to it).
	switch err := dec.Decode(&second); {
	case err == nil:
		return &ParseError{File: d.file, Line: second.Line, Column: second.Column,
			Msg: "a second YAML document: the client reads a config.yaml of one document; remove the \"---\" and what follows, or merge them"}
	case !errors.Is(err, io.EOF):
		pe := d.syntaxError(err)
		if pe.Msg == "did not find expected <document start>" {
			pe.Msg = "this line is not part of the top-level mapping (it is indented less than the mapping's first key); " +
				"indent it as the other top-level keys"
		}
		return pe
	}
	var v any
	err := doc.Decode(&v)
	if err == nil {
		return nil
	}
	if pe := d.undecodable(doc.Content[0], nil); pe != nil {
		return pe
	}
	// Another refusal: the decoder names the line ("line 3: cannot
	// unmarshal ..."), or not.
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	msg = strings.TrimSpace(strings.TrimPrefix(msg, "unmarshal errors:"))
	pe := &ParseError{File: d.file, Line: doc.Content[0].Line, Column: doc.Content[0].Column, Msg: "a YAML reader refuses this file: " + msg}
	if m := yamlDecodeLine.FindStringSubmatch(msg); m != nil {
		pe.Line, _ = strconv.Atoi(m[1])
		pe.Column, pe.Msg = 0, "a YAML reader refuses this file: "+m[2]
	} else if n := taggedMismatch(doc.Content[0], msg); n != nil {
		pe.Line, pe.Column = n.Line, n.Column
	}
	return pe
}

// noOtherDocument refuses, in a file whose first document is empty, a
// later document with content: the client would read only the first.
func (d *yamlDoc) noOtherDocument(b []byte) error {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return d.syntaxError(err)
		}
		if len(n.Content) > 0 {
			return &ParseError{File: d.file, Line: n.Line, Column: n.Column,
				Msg: "a second YAML document: the client reads a config.yaml of one document; remove the \"---\" before it"}
		}
	}
}

// undecodable finds, in n and below, what yaml.v3's decoder refuses and
// says where: a duplicate key (compared as the decoder does: same kind,
// same text), an alias inside its own anchor, a merge of something that is
// not a mapping. path holds n's ancestors.
func (d *yamlDoc) undecodable(n *yaml.Node, path []*yaml.Node) *ParseError {
	at := func(n *yaml.Node, format string, args ...any) *ParseError {
		return &ParseError{File: d.file, Line: n.Line, Column: n.Column, Msg: fmt.Sprintf(format, args...)}
	}
	switch n.Kind {
	case yaml.AliasNode:
		for _, a := range path {
			if a == n.Alias {
				return at(n, "the alias *%s is inside its own anchor &%s (line %d, column %d): a YAML reader cannot resolve it",
					n.Value, n.Alias.Anchor, n.Alias.Line, n.Alias.Column)
			}
		}
		return nil
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			for j := 0; j < i; j += 2 {
				if p := n.Content[j]; p.Kind == k.Kind && p.Value == k.Value {
					return at(k, "the key %q is already in this mapping (at line %d, column %d): a YAML reader refuses the file; merge the two or remove one",
						k.Value, p.Line, p.Column)
				}
			}
			if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" && !mergeable(v) {
				return at(k, "the merge key << has a value that is not a mapping (or a list of mappings): a YAML reader refuses it")
			}
		}
	}
	path = append(path, n)
	for _, c := range n.Content {
		if pe := d.undecodable(c, path); pe != nil {
			return pe
		}
	}
	return nil
}

// mergeable reports whether v can follow "<<": a mapping, an alias of
// one, or a list of those.
func mergeable(v *yaml.Node) bool {
	isMap := func(v *yaml.Node) bool {
		if v.Kind == yaml.AliasNode {
			v = v.Alias
		}
		return v != nil && v.Kind == yaml.MappingNode
	}
	if v.Kind == yaml.SequenceNode {
		for _, it := range v.Content {
			if !isMap(it) {
				return false
			}
		}
		return true
	}
	return isMap(v)
}

// taggedMismatch finds the scalar a message such as "cannot decode !!str
// `x` as a !!int" is about: the first with that tag and value.
func taggedMismatch(n *yaml.Node, msg string) *yaml.Node {
	m := yamlTagMismatch.FindStringSubmatch(msg)
	if m == nil {
		return nil
	}
	var found *yaml.Node
	var walk func(*yaml.Node)
	walk = func(n *yaml.Node) {
		if found != nil {
			return
		}
		if n.Kind == yaml.ScalarNode && n.Value == m[1] && n.ShortTag() == m[2] {
			found = n
			return
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(n)
	return found
}

// lineBreaks refuses a line break other than LF and CRLF: yaml.v3 also
// breaks lines at a lone CR, NEL, U+2028 and U+2029, so its line numbers,
// which the editor counts from LFs, would point elsewhere (found by
// FuzzEditYAML: "0:\r ").
func (d *yamlDoc) lineBreaks(b []byte) error {
	for i := 0; i < len(b); i++ {
		var what string
		switch {
		case b[i] == '\r' && (i+1 == len(b) || b[i+1] != '\n'):
			what = "a carriage return without a line feed"
		case bytes.HasPrefix(b[i:], []byte("\u0085")):
			what = "a next-line character (U+0085)"
		case bytes.HasPrefix(b[i:], []byte("\u2028")):
			what = "a line separator (U+2028)"
		case bytes.HasPrefix(b[i:], []byte("\u2029")):
			what = "a paragraph separator (U+2029)"
		default:
			continue
		}
		line := 1 + bytes.Count(b[:i], []byte("\n"))
		return &ParseError{File: d.file, Line: line, Column: 1 + i - lineStart(b, i),
			Msg: what + ": YAML reads it as a line break; Switchboard edits files whose lines end with LF or CRLF only"}
	}
	return nil
}

// syntaxError is yaml.v3's error for a file that does not parse, with the
// line corrected.
func (d *yamlDoc) syntaxError(err error) *ParseError {
	pe := &ParseError{File: d.file, Msg: err.Error()}
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		pe.Line, _ = strconv.Atoi(m[1])
		pe.Msg = m[2]
		if yamlParserProblems[pe.Msg] {
			pe.Line++
		}
	} else if msg := strings.TrimPrefix(err.Error(), "yaml: "); yamlParserProblems[msg] {
		pe.Line, pe.Msg = 1, msg
	}
	return pe
}

func (d *yamlDoc) errAt(n *yaml.Node, format string, args ...any) error {
	return &ParseError{File: d.file, Line: n.Line, Column: n.Column, Msg: fmt.Sprintf(format, args...)}
}

// offset is the byte offset of a 1-based line and column.
func (d *yamlDoc) offset(line, col int) int {
	if line-1 >= len(d.lines) {
		return len(d.text)
	}
	return d.lines[line-1] + col - 1
}

// list finds the key and value nodes of the servers list; both are nil when
// the key is absent.
func (d *yamlDoc) list() (key, val *yaml.Node, err error) {
	for i := 0; i+1 < len(d.root.Content); i += 2 {
		if d.root.Content[i].Value != d.path[0] {
			continue
		}
		key, val = d.root.Content[i], d.root.Content[i+1]
	}
	if val == nil {
		return nil, nil, nil
	}
	switch {
	case val.Kind == yaml.ScalarNode && val.Tag == "!!null":
	case val.Kind == yaml.SequenceNode:
		for _, it := range val.Content {
			if it.Kind != yaml.MappingNode {
				return nil, nil, d.errAt(it, "an item of %s is not a mapping", d.path[0])
			}
		}
	default:
		return nil, nil, d.errAt(val, "%s is not a list", d.path[0])
	}
	return key, val, nil
}

func itemName(it *yaml.Node) string {
	for i := 0; i+1 < len(it.Content); i += 2 {
		if it.Content[i].Value == "name" {
			return it.Content[i+1].Value
		}
	}
	return ""
}

func (d *yamlDoc) entries() ([]Entry, error) {
	_, val, err := d.list()
	if err != nil || val == nil || val.Kind != yaml.SequenceNode {
		return nil, err
	}
	var out []Entry
	for _, it := range val.Content {
		var m map[string]any
		if err := it.Decode(&m); err != nil {
			return nil, d.errAt(it, "%v", err)
		}
		out = append(out, entryFromMap(itemName(it), m))
	}
	return out, nil
}

// itemSpan is the byte range of the lines of item i of a block list:
// from its dash's line to the last line indented deeper than the dash
// (blank and comment lines do not end it). It also returns the columns
// (0-based) of the dash and of the item's keys.
func (d *yamlDoc) itemSpan(it *yaml.Node) (start, end, dash, keys int, err error) {
	ls := d.lines[it.Line-1]
	keys = it.Column - 1
	dash = bytes.LastIndexByte(d.text[ls:ls+keys], '-')
	if dash < 0 || !isBlank(d.text[ls:ls+dash]) {
		return 0, 0, 0, 0, d.errAt(it, "list item is not written as \"- key: value\"; Switchboard does not edit it")
	}
	return ls, d.blockEnd(it.Line, dash), dash, keys, nil
}

// blockEnd is the offset just past the last line, from 1-based line on,
// that belongs to what starts there at column col (0-based): line itself
// and every following line indented deeper than col. A list item (its
// dash) and a mapping member (its key) end the same way, so yamlDoc and
// yamlMapDoc share this.
func (d *yamlDoc) blockEnd(line, col int) int {
	end := d.lineEndAt(line)
	for l := line + 1; l <= len(d.lines); l++ {
		s := d.text[d.lines[l-1]:d.lineEndAt(l)]
		if isBlank(s) || bytes.HasPrefix(bytes.TrimLeft(s, " \t"), []byte("#")) {
			// A comment line, whatever its indentation, does not end the
			// block: a deeper line after it is still the block's (found by
			// FuzzEditYAML: "- name: a\n  #c\n    k: v").
			continue
		}
		if len(s)-len(bytes.TrimLeft(s, " \t")) <= col {
			break
		}
		end = d.lineEndAt(l)
	}
	return end
}

// documentEnd is the offset where the document's content ends: the start
// of a line "..." or "---" (a document marker, always at column 1) after
// the top-level mapping's last key, or the end of the file.
func (d *yamlDoc) documentEnd() int {
	last := d.root.Content[len(d.root.Content)-2]
	for l := last.Line + 1; l <= len(d.lines); l++ {
		s := d.text[d.lines[l-1]:d.lineEndAt(l)]
		marker := bytes.HasPrefix(s, []byte("...")) || bytes.HasPrefix(s, []byte("---"))
		if marker && (len(s) == 3 || bytes.IndexByte([]byte(" \t\r\n"), s[3]) >= 0) {
			return d.lines[l-1]
		}
	}
	return len(d.text)
}

// lineEndAt is the offset just past the newline of 1-based line l.
func (d *yamlDoc) lineEndAt(l int) int {
	if l < len(d.lines) {
		return d.lines[l]
	}
	return len(d.text)
}

// colonEnd is the offset just past the colon following key.
func (d *yamlDoc) colonEnd(key *yaml.Node) (int, error) {
	off := d.offset(key.Line, key.Column)
	eol := d.lineEndAt(key.Line)
	i := bytes.IndexByte(d.text[off:eol], ':')
	if i < 0 {
		return 0, d.errAt(key, "cannot find the colon after %s", d.path[0])
	}
	return off + i + 1, nil
}

// insertLines is the edit that inserts text (whole lines) at at, a line
// start or the end of the file; at the end of a file whose last line has
// no newline, a newline goes first. yamlDoc and yamlMapDoc add every new
// line this way, so neither can glue an entry to a last line.
func (d *yamlDoc) insertLines(at int, text string) edit {
	if at > 0 && d.text[at-1] != '\n' {
		text = d.nl + text
	}
	return edit{at, at, text}
}

// replaceEmptyValue handles a servers key with no entries yet: `key:`,
// `key: ~`, or an empty flow collection, `key: []` for Continue's list
// (yamlDoc) and `key: {}` for Goose's mapping (yamlMapDoc), which differ
// only in the node kind, the closing bracket and the word for it (what, in
// the error). The value after the colon goes and block, the first entry
// rendered two columns deeper than the key, is written below the key. A
// value followed on its line by anything but a comment is refused.
func (d *yamlDoc) replaceEmptyValue(key, val *yaml.Node, kind yaml.Kind, closeBracket, what, block string) error {
	ce, err := d.colonEnd(key)
	if err != nil {
		return err
	}
	eol := d.lineEndAt(key.Line)
	rest := d.text[ce:eol]
	valueEnd := ce + len(rest) - len(bytes.TrimLeft(rest, " \t"))
	if val.Kind == kind || val.Value != "" {
		if val.Kind == kind && val.Style&yaml.FlowStyle == 0 {
			return d.errAt(val, "unexpected empty %s", what)
		}
		closer := []byte(closeBracket)
		if val.Kind != kind {
			closer = []byte(val.Value)
		}
		j := bytes.Index(d.text[valueEnd:eol], closer)
		if j < 0 {
			return d.errAt(val, "cannot find the end of %s's value", d.path[0])
		}
		valueEnd += j + len(closer)
	} else {
		valueEnd = ce
	}
	if after := d.text[valueEnd:eol]; !isBlank(bytes.TrimRight(after, "\r\n")) && !bytes.HasPrefix(bytes.TrimLeft(after, " \t"), []byte("#")) {
		return d.errAt(key, "%s's value is not written on its own line; Switchboard does not edit it", d.path[0])
	}
	return d.reparse(applyEdits(d.text, []edit{{ce, valueEnd, ""}, d.insertLines(eol, block)}))
}

// removeLines deletes the lines [start, end) of one entry. When it was the
// only one (only), the servers value would be left empty, which YAML reads
// as null, so empty ("[]" for the list, "{}" for the mapping) is written
// after key's colon: both editors keep the key's type.
func (d *yamlDoc) removeLines(key *yaml.Node, start, end int, only bool, empty string) error {
	edits := []edit{{start, end, ""}}
	if only {
		ce, err := d.colonEnd(key)
		if err != nil {
			return err
		}
		edits = append(edits, edit{ce, ce, " " + empty})
	}
	return d.reparse(applyEdits(d.text, edits))
}

func (d *yamlDoc) upsert(name string, v obj) error {
	item := append(obj{{"name", name}}, v...)
	key, val, err := d.list()
	if err != nil {
		return err
	}
	if key == nil {
		// The key goes after the top-level mapping's last line, at the
		// column of its keys (" name: x" is a mapping indented by one: a
		// key at column 1 after it would end the document's mapping), and
		// before a document end marker ("...").
		ind := len(lineIndent(d.text, d.lines[d.root.Content[0].Line-1]))
		text := strings.Repeat(" ", ind) + d.path[0] + ":" + d.nl + d.render(item, ind+2, ind+4)
		return d.reparse(applyEdits(d.text, []edit{d.insertLines(d.documentEnd(), text)}))
	}
	if val.Kind != yaml.SequenceNode || len(val.Content) == 0 {
		// `mcpServers:`, `mcpServers: ~` or `mcpServers: []`: the value
		// after the colon goes, the list is written below the key.
		ind := key.Column - 1
		return d.replaceEmptyValue(key, val, yaml.SequenceNode, "]", "list", d.render(item, ind+2, ind+4))
	}
	if val.Style&yaml.FlowStyle != 0 {
		return d.errAt(val, "%s is a flow list; Switchboard edits block style only", d.path[0])
	}
	var lastEnd, dash, keys int
	for _, it := range val.Content {
		start, end, dsh, ks, err := d.itemSpan(it)
		if err != nil {
			return err
		}
		if itemName(it) == name {
			return d.reparse(applyEdits(d.text, []edit{{start, end, d.render(item, dsh, ks)}}))
		}
		lastEnd, dash, keys = end, dsh, ks
	}
	return d.reparse(applyEdits(d.text, []edit{d.insertLines(lastEnd, d.render(item, dash, keys))}))
}

func (d *yamlDoc) remove(name string) (bool, error) {
	key, val, err := d.list()
	if err != nil || val == nil || val.Kind != yaml.SequenceNode {
		return false, err
	}
	if val.Style&yaml.FlowStyle != 0 {
		for _, it := range val.Content {
			if itemName(it) == name {
				return false, d.errAt(val, "%s is a flow list; Switchboard edits block style only", d.path[0])
			}
		}
		return false, nil
	}
	for _, it := range val.Content {
		if itemName(it) != name {
			continue
		}
		start, end, _, _, err := d.itemSpan(it)
		if err != nil {
			return false, err
		}
		return true, d.removeLines(key, start, end, len(val.Content) == 1, "[]")
	}
	return false, nil
}

// render writes a list item with its dash at column dash and its keys at
// column keys (0-based); nested mappings are indented by two spaces.
func (d *yamlDoc) render(item obj, dash, keys int) string {
	var b strings.Builder
	for i, m := range item {
		if i == 0 {
			b.WriteString(strings.Repeat(" ", dash) + "-" + strings.Repeat(" ", keys-dash-1))
		} else {
			b.WriteString(strings.Repeat(" ", keys))
		}
		d.renderMember(&b, m, keys)
	}
	return b.String()
}

func (d *yamlDoc) renderMember(b *strings.Builder, m member, indent int) {
	b.WriteString(yamlScalar(m.key) + ":")
	switch v := m.val.(type) {
	case string:
		b.WriteString(" " + yamlScalar(v) + d.nl)
	case bool:
		b.WriteString(" " + strconv.FormatBool(v) + d.nl)
	case []string:
		parts := make([]string, len(v))
		for i, s := range v {
			parts[i] = yamlScalar(s)
		}
		b.WriteString(" [" + strings.Join(parts, ", ") + "]" + d.nl)
	case obj:
		if len(v) == 0 {
			b.WriteString(" {}" + d.nl)
			return
		}
		b.WriteString(d.nl)
		for _, c := range v {
			b.WriteString(strings.Repeat(" ", indent+2))
			d.renderMember(b, c, indent+2)
		}
	default:
		panic(fmt.Sprintf("clients: cannot render %T", v))
	}
}

// yamlScalar writes s as yaml.v3 would (plain when that reads back as the
// same string, quoted otherwise), on one line.
func yamlScalar(s string) string {
	out, err := yaml.Marshal(s)
	q := strings.TrimSuffix(string(out), "\n")
	if err != nil || strings.Contains(q, "\n") || strings.ContainsAny(s, "[]{},") {
		return jsonString(s) // a JSON string is a YAML double-quoted scalar
	}
	return q
}
