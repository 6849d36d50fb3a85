package gateway

import (
	"slices"
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
		if got := prefixedName(tt.prefix, tt.name, MaxNameLen); got != tt.want {
			t.Errorf("prefixedName(%q, %q) = %q, want %q", tt.prefix, tt.name, got, tt.want)
		}
	}
	a, b := prefixedName("srv", long+"a", MaxNameLen), prefixedName("srv", long+"b", MaxNameLen)
	if len(a) != MaxNameLen || len(b) != MaxNameLen || a == b || !strings.HasPrefix(a, "srv__ttt") {
		t.Errorf("long names %q and %q: want distinct, %d characters, prefix kept", a, b, MaxNameLen)
	}
	if prefixedName("srv", long+"a", MaxNameLen) != a {
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
	got, collisions := assignNames(items, prefixes, MaxNameLen)
	want := []exposed{
		{Name: "same__x", Server: "a", Original: "x", Canonical: "same__x"},
		{Name: "same__y", Server: "a", Original: "y", Canonical: "same__y"},
		{Name: "a__x__", Server: "a__x", Original: "", Canonical: "a__x__"},
		{Name: "same__x_2", Server: "b", Original: "x", Canonical: "same__x_2"},
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
	again, _ := assignNames(items, prefixes, MaxNameLen)
	if diff := cmp.Diff(got, again); diff != "" {
		t.Errorf("not deterministic:\n%s", diff)
	}
}

// TestAssignNamesWithinBudget: with Claude Code's budget (64 less
// "mcp__switchboard__") every name fits, names that fit stay as they are,
// shortened ones differ from each other, and a collision is resolved the
// same way at every budget and on every run.
func TestAssignNamesWithinBudget(t *testing.T) {
	const budget = MaxNameLen - len("mcp__switchboard__")
	server := "everything-long-server-name" // 27 characters
	items := map[string][]string{
		server: {"echo", "trigger-long-running-operation", "trigger-long-running-operation-2", "get-resource-reference"},
		"b":    {"x"},
		"a":    {"x"},
	}
	prefixes := map[string]string{server: server, "a": "same", "b": "same"}
	got, collisions := assignNames(items, prefixes, budget)
	names := map[string]bool{}
	for _, e := range got {
		if len(e.Name) > budget {
			t.Errorf("%s (%s of %s) has %d characters, more than %d", e.Name, e.Original, e.Server, len(e.Name), budget)
		}
		names[e.Name] = true
	}
	if len(names) != len(got) {
		t.Errorf("names are not unique: %v", got)
	}
	if !names[server+"__echo"] {
		t.Errorf("a name that fits was changed: %v", got)
	}
	if len(collisions) != 1 || collisions[0].Got != "same__x_2" || collisions[0].Server != "b" {
		t.Errorf("collisions = %+v, want b's x renamed same__x_2", collisions)
	}
	for range 3 {
		again, _ := assignNames(items, prefixes, budget)
		if diff := cmp.Diff(got, again); diff != "" {
			t.Fatalf("not deterministic:\n%s", diff)
		}
	}
	full, _ := assignNames(items, prefixes, MaxNameLen)
	if !slices.ContainsFunc(full, func(e exposed) bool { return e.Name == server+"__trigger-long-running-operation" }) {
		t.Errorf("the full budget shortened a name that fits 64: %v", full)
	}
}

// TestOwnNames: on a server's own endpoint with Claude Code's budget for a
// 27-character server (18), a name that fits stays as it is, a longer one
// fits and is its own, a shortened name that would be another tool's own
// gets a suffix, and the names do not depend on the order of the list.
func TestOwnNames(t *testing.T) {
	const budget = MaxNameLen - len("mcp__switchboard-everything-long-server-name__")
	long := []string{"a-tool-whose-name-alone-is-fifty-characters-long-x", "a-tool-whose-name-alone-is-forty-one-char",
		"trigger-long-running-operation"}
	clash := ownNames(long[:1], budget)[0].Name // a tool whose own name is a shortened one
	names := append([]string{"echo", clash}, long...)
	got := ownNames(names, budget)
	seen := map[string]bool{}
	for _, e := range got {
		if len(e.Name) > budget || seen[e.Name] {
			t.Errorf("%s: %q is over %d characters or given twice", e.Original, e.Name, budget)
		}
		seen[e.Name] = true
		if e.Canonical != e.Original {
			t.Errorf("%s is recorded as %s", e.Original, e.Canonical)
		}
		if fits := len(e.Original) <= budget; fits != (e.Name == e.Original) {
			t.Errorf("%s (%d characters) is named %s", e.Original, len(e.Original), e.Name)
		}
	}
	if len(got) != len(names) {
		t.Errorf("%d names for %d tools", len(got), len(names))
	}
	reversed := slices.Clone(names)
	slices.Reverse(reversed)
	if diff := cmp.Diff(got, ownNames(reversed, budget)); diff != "" {
		t.Errorf("the names depend on the list's order:\n%s", diff)
	}
}
