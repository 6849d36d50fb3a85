package cli

import (
	"slices"
	"testing"
)

func TestWithDefaultVerb(t *testing.T) {
	for _, args := range [][]string{nil, {"--home", "/x"}, {"status"}} {
		got := withDefaultVerb(args)
		want := args
		if defaultVerb != "" && (len(args) == 0 || args[0] == "--home") {
			want = append([]string{defaultVerb}, args...)
		}
		if !slices.Equal(got, want) {
			t.Errorf("withDefaultVerb(%q) = %q, want %q", args, got, want)
		}
	}
}
