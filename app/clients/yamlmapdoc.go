package clients

import (
	"strings"

	"go.yaml.in/yaml/v3"
)

// yamlMapDoc edits a YAML file whose servers are a mapping keyed by name:
// Goose's config.yaml, "extensions: {NAME: {…}}". Like yamlDoc (whose
// parsing and checks it shares), it finds where things are in yaml.v3's
// node tree and then replaces, inserts or removes just the lines of one
// entry: comments, blank lines, quoting and the order of everything else
// stay as they were.
type yamlMapDoc struct{ *yamlDoc }

func newYAMLMapDoc(file string, data []byte, path []string) (*yamlMapDoc, error) {
	d := &yamlDoc{file: file, path: path, nl: newline(data), allowEmpty: true}
	if err := d.reparse(data); err != nil {
		return nil, err
	}
	return &yamlMapDoc{d}, nil
}

// mapping finds the key and value nodes of the servers mapping; both are
// nil when the key (or the whole document) is absent.
func (d *yamlMapDoc) mapping() (key, val *yaml.Node, err error) {
	if d.root == nil {
		return nil, nil, nil
	}
	for i := 0; i+1 < len(d.root.Content); i += 2 {
		if d.root.Content[i].Value == d.path[0] {
			key, val = d.root.Content[i], d.root.Content[i+1]
		}
	}
	switch {
	case val == nil:
		return nil, nil, nil
	case val.Kind == yaml.ScalarNode && val.Tag == "!!null":
	case val.Kind == yaml.MappingNode:
		for i := 0; i+1 < len(val.Content); i += 2 {
			if k := val.Content[i]; k.Kind != yaml.ScalarNode {
				return nil, nil, d.errAt(k, "a key of %s is not a plain name", d.path[0])
			}
		}
	default:
		return nil, nil, d.errAt(val, "%s is not a mapping", d.path[0])
	}
	return key, val, nil
}

func (d *yamlMapDoc) entries() ([]Entry, error) {
	_, val, err := d.mapping()
	if err != nil || val == nil || val.Kind != yaml.MappingNode {
		return nil, err
	}
	var out []Entry
	for i := 0; i+1 < len(val.Content); i += 2 {
		k, v := val.Content[i], val.Content[i+1]
		var m map[string]any
		if err := v.Decode(&m); err != nil {
			return nil, d.errAt(v, "extension %q is not a mapping: %v", k.Value, err)
		}
		out = append(out, entryFromMap(k.Value, m))
	}
	return out, nil
}

// span is the byte range of the lines of the member whose key is k: from
// its key's line to the last line indented deeper than the key (blank and
// comment lines do not end it). The key must start its line.
func (d *yamlMapDoc) span(k *yaml.Node) (start, end int, err error) {
	ls := d.lines[k.Line-1]
	col := k.Column - 1
	if !isBlank(d.text[ls : ls+col]) {
		return 0, 0, d.errAt(k, "the key %q does not start its line; Switchboard does not edit it", k.Value)
	}
	return ls, d.blockEnd(k.Line, col), nil
}

// render writes member name: v with its key at column indent (0-based).
func (d *yamlMapDoc) render(name string, v obj, indent int) string {
	var b strings.Builder
	b.WriteString(strings.Repeat(" ", indent) + yamlScalar(name) + ":" + d.nl)
	for _, m := range v {
		b.WriteString(strings.Repeat(" ", indent+2))
		d.renderMember(&b, m, indent+2)
	}
	return b.String()
}

func (d *yamlMapDoc) upsert(name string, v obj) error {
	key, val, err := d.mapping()
	if err != nil {
		return err
	}
	if key == nil {
		// The key goes after the document's last line (at the column of
		// the top-level keys), before a document end marker.
		ind, at := 0, len(d.text)
		if d.root != nil {
			ind = len(lineIndent(d.text, d.lines[d.root.Content[0].Line-1]))
			at = d.documentEnd()
		}
		text := strings.Repeat(" ", ind) + d.path[0] + ":" + d.nl + d.render(name, v, ind+2)
		return d.reparse(applyEdits(d.text, []edit{d.insertLines(at, text)}))
	}
	if val.Kind != yaml.MappingNode || len(val.Content) == 0 {
		// `extensions:`, `extensions: ~` or `extensions: {}`: the value
		// after the colon goes, the mapping is written below the key.
		return d.replaceEmptyValue(key, val, yaml.MappingNode, "}", "mapping", d.render(name, v, key.Column-1+2))
	}
	if val.Style&yaml.FlowStyle != 0 {
		return d.errAt(val, "%s is a flow mapping; Switchboard edits block style only", d.path[0])
	}
	var lastEnd, indent int
	for i := 0; i+1 < len(val.Content); i += 2 {
		k := val.Content[i]
		start, end, err := d.span(k)
		if err != nil {
			return err
		}
		if k.Value == name {
			return d.reparse(applyEdits(d.text, []edit{{start, end, d.render(name, v, k.Column-1)}}))
		}
		lastEnd, indent = end, k.Column-1
	}
	return d.reparse(applyEdits(d.text, []edit{d.insertLines(lastEnd, d.render(name, v, indent))}))
}

func (d *yamlMapDoc) remove(name string) (bool, error) {
	key, val, err := d.mapping()
	if err != nil || val == nil || val.Kind != yaml.MappingNode {
		return false, err
	}
	for i := 0; i+1 < len(val.Content); i += 2 {
		k := val.Content[i]
		if k.Value != name {
			continue
		}
		if val.Style&yaml.FlowStyle != 0 {
			return false, d.errAt(val, "%s is a flow mapping; Switchboard edits block style only", d.path[0])
		}
		start, end, err := d.span(k)
		if err != nil {
			return false, err
		}
		return true, d.removeLines(key, start, end, len(val.Content) == 2, "{}")
	}
	return false, nil
}
