package clients

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/pelletier/go-toml/v2"
	"github.com/tailscale/hujson"
	"go.yaml.in/yaml/v3"
)

// The fuzz targets feed arbitrary file contents to the editors of each
// format. Whatever a file holds, an edit that succeeds must leave a file
// that parses again, holds the entry as written, and is unchanged in
// everything else (compared as decoded data); removing the entry must do
// the same. Seeds are in testdata/fuzz/<target>/ (the golden originals and
// odd shapes); `make fuzz` runs each target for a bounded time.

func FuzzEditJSON(f *testing.F) {
	f.Add([]byte(`{"mcpServers":{"a":{"command":"x"}}}`), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, which uint8) {
		// strict JSON and JSONC clients, each with its own entry shape
		ids := []string{"cursor", "claude-desktop", "gemini-cli", "vscode", "zed"}
		checkEdit(t, mustLookup(t, ids[int(which)%len(ids)]), data, decodeJSON)
	})
}

func FuzzEditTOML(f *testing.F) {
	f.Add([]byte("model = \"o3\"\n[mcp_servers.a]\ncommand = \"x\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkEdit(t, mustLookup(t, "codex"), data, decodeTOML)
	})
}

func FuzzEditYAML(f *testing.F) {
	f.Add([]byte("name: x\nmcpServers:\n  - name: a\n    command: x\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if bytes.Contains(data, []byte("<<")) {
			// A merge key: yaml.v3 resolves it when decoding, YAML 1.2
			// parsers such as Continue's take it for a plain key; the
			// decoded comparison would not be fair.
			return
		}
		checkEdit(t, mustLookup(t, "continue"), data, decodeYAML)
	})
}

// FuzzEditGoose edits Goose's config.yaml, whose servers are a mapping
// keyed by name (extensions: {NAME: {…}}), as the golden files show.
func FuzzEditGoose(f *testing.F) {
	f.Add([]byte("GOOSE_MODEL: x\nextensions:\n  developer:\n    type: builtin\n    enabled: true\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if bytes.Contains(data, []byte("<<")) {
			return // a merge key: see FuzzEditYAML
		}
		checkEdit(t, mustLookup(t, "goose"), data, decodeYAML)
	})
}

// FuzzEditVibe edits Mistral Vibe's config.toml, whose servers are an
// array of tables ([[mcp_servers]]) each with its name.
func FuzzEditVibe(f *testing.F) {
	f.Add([]byte("active_model = \"x\"\n[[mcp_servers]]\nname = \"a\"\ntransport = \"stdio\"\ncommand = \"x\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkEdit(t, mustLookup(t, "vibe"), data, decodeTOML)
	})
}

func mustLookup(t *testing.T, id string) Client {
	c, ok := Lookup(id)
	if !ok {
		t.Fatalf("no client %s", id)
	}
	return c
}

// checkEdit connects (upsert) and then disconnects (remove) on data, and
// checks each result against the invariants above.
func checkEdit(t *testing.T, c Client, data []byte, decode func([]byte) (any, error)) {
	if len(data) > 64<<10 {
		return
	}
	doc, err := openDocument(c, "f", data)
	if err != nil {
		return // refused with an error: fine
	}
	if _, err := doc.entries(); err != nil {
		return
	}
	orig := doc.bytes()
	before, err := decode(orig)
	if err != nil {
		t.Fatalf("%s: the editor accepted a file its format's parser refuses: %v\n%q", c.ID, err, orig)
	}
	want := entryValue(c, Connect{URL: "http://127.0.0.1:7391/mcp", Token: "sb_tok", BinaryPath: "/bin/sb"}, "")
	if err := doc.upsert(EntryName, want); err != nil {
		return // an entry of a shape it does not edit: refused, fine
	}
	connected := doc.bytes()
	after := reparse(t, c, connected, decode)
	if got, n := entryIn(c, after); n != 1 || !reflect.DeepEqual(got, plainEntry(c, want)) {
		t.Fatalf("%s: the connected file has %d %s entries, not one as written (%#v)\n%q\n->\n%q", c.ID, n, EntryName, got, orig, connected)
	}
	sameElsewhere(t, c, before, after, orig, connected)

	if _, err := doc.remove(EntryName); err != nil {
		t.Fatalf("%s: removing the entry just written: %v\n%q", c.ID, err, connected)
	}
	disconnected := doc.bytes()
	gone := reparse(t, c, disconnected, decode)
	if hasEntry(c, gone) {
		t.Fatalf("%s: the entry is still there after remove\n%q", c.ID, disconnected)
	}
	sameElsewhere(t, c, before, gone, orig, disconnected)
}

// reparse opens an edited file again, as the editor and as its format's
// parser, and returns the decoded data.
func reparse(t *testing.T, c Client, b []byte, decode func([]byte) (any, error)) any {
	t.Helper()
	doc, err := openDocument(c, "f", b)
	if err != nil {
		t.Fatalf("%s: the edited file does not parse again: %v\n%q", c.ID, err, b)
	}
	if _, err := doc.entries(); err != nil {
		t.Fatalf("%s: the edited file's entries do not read: %v\n%q", c.ID, err, b)
	}
	v, err := decode(b)
	if err != nil {
		t.Fatalf("%s: the edited file is not valid for its format: %v\n%q", c.ID, err, b)
	}
	return v
}

// servers returns the container of entries in a decoded file, if any.
func servers(c Client, v any) (any, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	s, ok := m[c.ServersKey[0]]
	return s, ok
}

// entryIn returns Switchboard's entry in a decoded file, and how many
// there are.
func entryIn(c Client, v any) (any, int) {
	s, _ := servers(c, v)
	switch s := s.(type) {
	case map[string]any:
		if e, ok := s[EntryName]; ok {
			return e, 1
		}
	case []any:
		var e any
		n := 0
		for _, it := range s {
			if m, ok := it.(map[string]any); ok && m["name"] == EntryName {
				e, n = m, n+1
			}
		}
		return e, n
	}
	return nil, 0
}

// plainEntry is the entry v as a decoder gives it.
func plainEntry(c Client, v obj) any {
	if c.List {
		v = append(obj{{"name", EntryName}}, v...)
	}
	return plainValue(v)
}

func plainValue(v any) any {
	switch v := v.(type) {
	case obj:
		m := map[string]any{}
		for _, mb := range v {
			m[mb.key] = plainValue(mb.val)
		}
		return m
	case []string:
		l := []any{}
		for _, s := range v {
			l = append(l, s)
		}
		return l
	}
	return v
}

func hasEntry(c Client, v any) bool {
	s, _ := servers(c, v)
	switch s := s.(type) {
	case map[string]any:
		_, ok := s[EntryName]
		return ok
	case []any: // Continue: a list of items with a name
		for _, it := range s {
			if m, ok := it.(map[string]any); ok && m["name"] == EntryName {
				return true
			}
		}
	}
	return false
}

// withoutEntry returns v without Switchboard's entry, and without the
// servers container when it is left empty and skipped is not set (the
// editor may add an empty container, or leave one it emptied).
func withoutEntry(c Client, v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := make(map[string]any, len(m))
	for k, val := range m {
		out[k] = val
	}
	key := c.ServersKey[0]
	switch s := out[key].(type) {
	case map[string]any:
		rest := make(map[string]any, len(s))
		for k, val := range s {
			if k != EntryName {
				rest[k] = val
			}
		}
		out[key] = rest
		if len(rest) == 0 {
			delete(out, key)
		}
	case []any:
		var rest []any
		for _, it := range s {
			if im, ok := it.(map[string]any); ok && im["name"] == EntryName {
				continue
			}
			rest = append(rest, it)
		}
		out[key] = rest
		if len(rest) == 0 {
			delete(out, key)
		}
	case nil:
		delete(out, key) // YAML "mcpServers:" with no value
	}
	return out
}

func sameElsewhere(t *testing.T, c Client, before, after any, from, to []byte) {
	t.Helper()
	if b, a := withoutEntry(c, before), withoutEntry(c, after); !reflect.DeepEqual(b, a) {
		t.Fatalf("%s: the edit changed more than the entry\nbefore %#v\nafter  %#v\n%q\n->\n%q", c.ID, b, a, from, to)
	}
}

func decodeJSON(b []byte) (any, error) {
	std, err := hujson.Standardize(bytes.TrimPrefix(b, bom))
	if err != nil {
		return nil, err
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(std))
	dec.UseNumber()
	return v, dec.Decode(&v)
}

func decodeTOML(b []byte) (any, error) {
	var v map[string]any
	err := toml.Unmarshal(bytes.TrimPrefix(b, bom), &v)
	return normalizeTOML(v), err
}

// normalizeTOML turns go-toml's typed maps into map[string]any, as the
// other decoders give.
func normalizeTOML(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = normalizeTOML(x)
		}
		return out
	case []map[string]any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = normalizeTOML(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = normalizeTOML(x)
		}
		return out
	}
	return v
}

func decodeYAML(b []byte) (any, error) {
	var v any
	if err := yaml.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	if v == nil {
		return map[string]any{}, nil
	}
	return normalizeYAML(v), nil
}

// normalizeYAML turns the map[any]any that yaml gives for a mapping with a
// key that is not a string (0, null) into map[string]any, keys printed.
func normalizeYAML(v any) any {
	switch v := v.(type) {
	case map[any]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[fmt.Sprint(k)] = normalizeYAML(x)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = normalizeYAML(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = normalizeYAML(x)
		}
		return out
	}
	return v
}
