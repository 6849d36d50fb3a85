package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestIndentMatchesJSONIndent(t *testing.T) {
	for _, in := range []string{
		`{}`, `[]`, `1`, `"a"`, `{"a":1,"b":[1,2,{}],"c":{"d":[]}}`, `{"s":"x,y:{[\"]}","t":[{"u":"\\\\"}]}`,
		`{"version":1,"listen":"127.0.0.1:7391","servers":{"fs":{"command":"npx","pool":{"max":2,"note":{"a":[1]}}}}}`,
	} {
		var want bytes.Buffer
		if err := json.Indent(&want, []byte(in), "", "  "); err != nil {
			t.Fatal(err)
		}
		if got := indent(nil, []byte(in), indentDepth); string(got) != want.String() {
			t.Errorf("indent(%s)\n got %s\nwant %s", in, got, want.String())
		}
	}
	// Deeper than the limit: compact from there on.
	got := string(indent(nil, []byte(`{"a":[[[1,2]]]}`), 2))
	want := "{\n  \"a\": [\n    [[1,2]]\n  ]\n}"
	if got != want {
		t.Errorf("capped indent:\n got %q\nwant %q", got, want)
	}
}

// TestDeepUnknownValueStaysSmall is the cause of a 30 KB API body turning
// into a 52 MB config.json: indenting every level of a deeply nested
// unknown value. The file must grow linearly with the value.
func TestDeepUnknownValueStaysSmall(t *testing.T) {
	const levels = 5000
	note := strings.Repeat("[", levels) + strings.Repeat("]", levels)
	var s Server
	if err := json.Unmarshal([]byte(`{"command":"x","note":`+note+`}`), &s); err != nil {
		t.Fatal(err)
	}
	c := Default()
	c.Servers["a"] = s
	data, err := c.encode()
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > 4*len(note)+1024 {
		t.Errorf("config.json is %d bytes for a %d-byte unknown value", len(data), len(note))
	}
	back, err := Parse("config.json", data)
	if err != nil {
		t.Fatal(err)
	}
	if got := back.Servers["a"].extra["note"]; string(got) != note {
		t.Errorf("the unknown value did not survive: %d bytes", len(got))
	}
}

func TestCheckUnknown(t *testing.T) {
	for _, tc := range []struct {
		body  string
		field string
		want  error
	}{
		{`{"command":"x"}`, "", nil},
		{`{"command":"x","note":"hello","meta":{"a":[1,{"b":2}]}}`, "", nil},
		{`{"command":"x","deep":` + strings.Repeat("[", MaxUnknownDepth) + strings.Repeat("]", MaxUnknownDepth) + `}`, "deep", ErrUnknownTooDeep},
		{`{"command":"x","pool":{"max":1,"deep":` + strings.Repeat("[", 20) + strings.Repeat("]", 20) + `}}`, "pool.deep", ErrUnknownTooDeep},
		{`{"command":"x","big":"` + strings.Repeat("a", MaxUnknownBytes) + `"}`, "big", ErrUnknownTooLarge},
		{`{"command":"x","s":"[[[[[[[[[[[[[[[[[[[[[["}`, "", nil}, // brackets in a string
	} {
		var s Server
		if err := json.Unmarshal([]byte(tc.body), &s); err != nil {
			t.Fatal(err)
		}
		err := s.CheckUnknown()
		if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
			t.Errorf("CheckUnknown(%.60s) = %v, want %v", tc.body, err, tc.want)
			continue
		}
		if ce, ok := errors.AsType[*Error](err); tc.want != nil && (!ok || ce.Field != tc.field) {
			t.Errorf("CheckUnknown(%.60s) = %v, want field %q", tc.body, err, tc.field)
		}
	}
}
