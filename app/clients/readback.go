package clients

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"

	toml "github.com/pelletier/go-toml/v2"
	"github.com/tailscale/hujson"
	"go.yaml.in/yaml/v3"
)

// The editors find where to edit from a syntax tree, which can differ from
// what the client's own parser makes of the same bytes (a key twice, a
// YAML document end, an indented YAML mapping). So every plan is read back
// with the format's decoder before anything is written: each entry
// Switchboard wrote must be there exactly once, holding exactly what was
// written, and each entry it removed must be gone. If not, the plan is
// refused: a user must never be told "connected" for an entry the client
// does not see.

// readBack decodes b as the client's parser does and checks it against
// what the plan wrote (name to value) and removed.
func readBack(c Client, path string, b []byte, wrote map[string]obj, removed []string) error {
	if b == nil || len(wrote) == 0 && len(removed) == 0 {
		return nil
	}
	got, count, err := decodedEntries(c, b)
	if err == nil {
		for name, v := range wrote {
			want := toPlain(v)
			if c.List {
				want.(map[string]any)["name"] = name
			}
			switch {
			case count[name] == 0:
				err = fmt.Errorf("it would not hold the entry %q", name)
			case count[name] > 1:
				err = fmt.Errorf("it would hold the entry %q %d times", name, count[name])
			case !reflect.DeepEqual(got[name], want):
				err = fmt.Errorf("its entry %q would not read as written", name)
			}
			if err != nil {
				break
			}
		}
	}
	if err == nil {
		for _, name := range removed {
			if _, ok := wrote[name]; !ok && count[name] > 0 {
				err = fmt.Errorf("the entry %q would still be there", name)
				break
			}
		}
	}
	if err != nil {
		return fmt.Errorf("clients: the edited %s, read back as %s reads it: %w; the file is left as it is "+
			"(this is a shape of file Switchboard does not edit correctly: please report it)", path, c.Name, err)
	}
	return nil
}

// decodedEntries decodes b with the format's decoder and returns the
// entries under the servers key by name, and how many have each name (a
// YAML list can hold a name twice).
func decodedEntries(c Client, b []byte) (map[string]any, map[string]int, error) {
	b = bytes.TrimPrefix(b, bom)
	var top any
	switch c.Format {
	case JSON, JSONC:
		std, err := hujson.Standardize(bytes.Clone(b))
		if err == nil {
			err = json.Unmarshal(std, &top)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("it does not decode: %w", err)
		}
	case TOML:
		var m map[string]any
		if err := toml.Unmarshal(b, &m); err != nil {
			return nil, nil, fmt.Errorf("it does not decode: %w", err)
		}
		top = m
	case YAML:
		if err := yaml.Unmarshal(b, &top); err != nil {
			return nil, nil, fmt.Errorf("it does not decode: %w", err)
		}
	default:
		return nil, nil, fmt.Errorf("unknown format %q", c.Format)
	}
	v := top
	for _, key := range c.ServersKey {
		var ok bool
		if v, ok = field(v, key); !ok {
			return map[string]any{}, map[string]int{}, nil
		}
	}
	got, count := map[string]any{}, map[string]int{}
	switch s := v.(type) {
	case map[string]any:
		for k, e := range s {
			got[k], count[k] = e, 1
		}
	case []any: // Continue, Vibe: a list of mappings (tables) with a name
		for _, it := range s {
			if m, ok := it.(map[string]any); ok {
				if name, ok := m["name"].(string); ok {
					got[name] = m
					count[name]++
				}
			}
		}
	case nil:
	default:
		return nil, nil, fmt.Errorf("%s is a %T", c.ServersKey[len(c.ServersKey)-1], v)
	}
	return got, count, nil
}

// field is the value of key in a decoded mapping (YAML gives map[any]any
// when a key is not a string).
func field(v any, key string) (any, bool) {
	switch m := v.(type) {
	case map[string]any:
		x, ok := m[key]
		return x, ok
	case map[any]any:
		x, ok := m[key]
		return x, ok
	}
	return nil, false
}

// toPlain is v as a decoder gives it: map[string]any, []any, string.
func toPlain(v any) any {
	switch v := v.(type) {
	case obj:
		m := make(map[string]any, len(v))
		for _, mb := range v {
			m[mb.key] = toPlain(mb.val)
		}
		return m
	case []string:
		l := make([]any, len(v))
		for i, s := range v {
			l[i] = s
		}
		return l
	}
	return v
}
