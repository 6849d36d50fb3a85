package clients

import (
	"fmt"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2/unstable"
)

// tomlListDoc edits a TOML file whose servers are an array of tables,
// each with its "name": Mistral Vibe's [[mcp_servers]]. It shares
// tomlDoc's reading (the decoder for the values, the parser for where each
// table is) and writing (one table, appended at the end after a blank
// line, or replaced where it stands); every other byte stays as it was.
type tomlListDoc struct{ *tomlDoc }

func newTOMLListDoc(file string, data []byte, path []string) (*tomlListDoc, error) {
	d, err := newTOMLDoc(file, data, path)
	if err != nil {
		return nil, err
	}
	return &tomlListDoc{d}, nil
}

// items are the tables of the array, in file order, as decoded.
func (d *tomlListDoc) items() ([]map[string]any, error) {
	v, ok := d.data[d.path[0]]
	if !ok {
		return nil, nil
	}
	l, ok := v.([]any)
	if !ok {
		return nil, &ParseError{File: d.file, Msg: fmt.Sprintf("%q is not an array of tables ([[%s]])", d.path[0], d.path[0])}
	}
	out := make([]map[string]any, 0, len(l))
	for i, it := range l {
		m, ok := it.(map[string]any)
		if !ok {
			return nil, &ParseError{File: d.file, Msg: fmt.Sprintf("item %d of %s is not a table", i+1, d.path[0])}
		}
		out = append(out, m)
	}
	return out, nil
}

func (d *tomlListDoc) entries() ([]Entry, error) {
	items, err := d.items()
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, m := range items {
		name, _ := m["name"].(string)
		out = append(out, entryFromMap(name, m))
	}
	return out, nil
}

// locateItem finds the block of the [[mcp_servers]] table whose name is
// name: from its header's line to the end of the line of its last key (or
// sub-table). It fails when the array is given inline (mcp_servers = […]),
// which Switchboard does not edit.
func (d *tomlListDoc) locateItem(name string) (block, error) {
	if off, ok := d.inlineServers(); ok {
		return block{}, d.errAtOffset(off, fmt.Sprintf("%s is written as one inline array; Switchboard edits [[%s]] tables only", d.path[0], d.path[0]))
	}
	var p unstable.Parser
	p.Reset(d.text)
	var cur, found block
	var table []string
	inItem := false
	var named bool
	done := func() {
		if inItem && named && !found.found {
			found = cur
			found.found = true
		}
	}
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.ArrayTable, unstable.Table:
			keys, first := keyParts(e.Key())
			off := int(first.Raw.Offset)
			table = keys
			switch {
			case e.Kind == unstable.ArrayTable && slices.Equal(keys, d.path[:1]):
				done()
				cur = block{start: lineStart(d.text, off), end: d.lineEnd(off)}
				inItem, named = true, false
			case inItem && len(keys) > 1 && keys[0] == d.path[0]:
				cur.end = d.lineEnd(off) // a sub-table of the item ([mcp_servers.auth])
			default:
				done()
				inItem = false
			}
		case unstable.KeyValue:
			if !inItem {
				continue
			}
			cur.end = d.lineEnd(int(e.Raw.Offset + e.Raw.Length))
			keys, _ := keyParts(e.Key())
			if len(table) == 1 && len(keys) == 1 && keys[0] == "name" {
				if v := e.Value(); v.Kind == unstable.String && string(v.Data) == name {
					named = true
				}
			}
		}
	}
	done()
	if err := p.Error(); err != nil {
		return block{}, &ParseError{File: d.file, Msg: err.Error()}
	}
	return found, nil
}

func (d *tomlListDoc) upsert(name string, v obj) error {
	b, err := d.locateItem(name)
	if err != nil {
		return err
	}
	text := d.render(name, v)
	if b.found {
		return d.reparse(applyEdits(d.text, []edit{{b.start, b.end, text}}))
	}
	if _, ok := d.data[d.path[0]]; ok {
		if _, err := d.items(); err != nil {
			return err
		}
	}
	return d.appendTable(text)
}

func (d *tomlListDoc) remove(name string) (bool, error) {
	b, err := d.locateItem(name)
	if err != nil || !b.found {
		return false, err
	}
	return true, d.removeBlock(b)
}

// render writes one [[mcp_servers]] table, its name first.
func (d *tomlListDoc) render(name string, v obj) string {
	var b strings.Builder
	b.WriteString("[[" + tomlKey(d.path[0]) + "]]" + d.nl)
	b.WriteString("name = " + tomlString(name) + d.nl)
	for _, m := range v {
		b.WriteString(tomlKey(m.key) + " = " + tomlValue(m.val) + d.nl)
	}
	return b.String()
}
