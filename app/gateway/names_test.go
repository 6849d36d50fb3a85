package gateway

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPrefixedName(t *testing.T) {
	long := strings.Repeat("t", 70)
	tests := []struct {
		prefix, name, want string
	}{
		{"fs", "read_file", "fs__read_file"},
		{"github", strings.Repeat("x", 56), "github__" + strings.Repeat("x", 56)}, // exactly 64
	}
	for _, tt := range tests {
		if got := prefixedName(tt.prefix, tt.name); got != tt.want {
			t.Errorf("prefixedName(%q, %q) = %q, want %q", tt.prefix, tt.name, got, tt.want)
		}
	}
	a, b := prefixedName("srv", long+"a"), prefixedName("srv", long+"b")
	if len(a) != MaxNameLen || len(b) != MaxNameLen || a == b || !strings.HasPrefix(a, "srv__ttt") {
		t.Errorf("long names %q and %q: want distinct, %d characters, prefix kept", a, b, MaxNameLen)
	}
	if prefixedName("srv", long+"a") != a {
		t.Error("shortened names are not stable")
	}
}

func TestAssignNamesResolvesCollisionsDeterministically(t *testing.T) {
	items := map[string][]string{
		"b":    {"x"},
		"a":    {"x", "y"},
		"a__x": {""}, // "a__x" + "__" + "" collides with nothing; a__x__ is its own
	}
	prefixes := map[string]string{"a": "same", "b": "same", "a__x": "a__x"}
	got, collisions := assignNames(items, prefixes)
	want := []exposed{
		{Name: "same__x", Server: "a", Original: "x"},
		{Name: "same__y", Server: "a", Original: "y"},
		{Name: "a__x__", Server: "a__x", Original: ""},
		{Name: "same__x_2", Server: "b", Original: "x"},
	}
	if diff := cmp.Diff(want, got, cmp.Transformer("sort", func(in []exposed) map[string]exposed {
		out := map[string]exposed{}
		for _, e := range in {
			out[e.Name] = e
		}
		return out
	})); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	if len(collisions) != 1 || collisions[0].Got != "same__x_2" || collisions[0].Server != "b" {
		t.Errorf("collisions = %+v", collisions)
	}
	again, _ := assignNames(items, prefixes)
	if diff := cmp.Diff(got, again); diff != "" {
		t.Errorf("not deterministic:\n%s", diff)
	}
}
