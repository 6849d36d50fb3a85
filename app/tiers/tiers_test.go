package tiers

import "testing"

func TestOf(t *testing.T) {
	yes, no := true, false
	for _, tc := range []struct {
		name        string
		readOnly    bool
		destructive *bool
		want        Tier
	}{
		// No annotations at all: the spec's defaults, readOnlyHint false
		// and destructiveHint true.
		{"absent annotations", false, nil, Destructive},
		{"read-only, destructive absent", true, nil, Read},
		{"read-only, destructive true", true, &yes, Read},
		{"read-only, destructive false", true, &no, Read},
		{"not read-only, destructive absent", false, nil, Destructive},
		{"not read-only, destructive true", false, &yes, Destructive},
		{"not read-only, destructive false", false, &no, Write},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Of(tc.readOnly, tc.destructive); got != tc.want {
				t.Errorf("Of(%v, %v) = %q, want %q", tc.readOnly, tc.destructive, got, tc.want)
			}
		})
	}
}

func TestAbove(t *testing.T) {
	for _, tc := range []struct {
		tier, max Tier
		want      bool
	}{
		{Read, "", false}, {Write, "", false}, {Destructive, "", false},
		{Read, Read, false}, {Write, Read, true}, {Destructive, Read, true},
		{Read, Write, false}, {Write, Write, false}, {Destructive, Write, true},
		{Read, Destructive, false}, {Write, Destructive, false}, {Destructive, Destructive, false},
	} {
		if got := tc.tier.Above(tc.max); got != tc.want {
			t.Errorf("%q.Above(%q) = %v, want %v", tc.tier, tc.max, got, tc.want)
		}
	}
}

func TestParseAndMin(t *testing.T) {
	for _, tier := range All {
		if got, err := Parse(string(tier)); err != nil || got != tier {
			t.Errorf("Parse(%q) = %q, %v", tier, got, err)
		}
	}
	for _, bad := range []string{"", "Read", "admin", "destroy"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) gave no error", bad)
		}
	}
	for _, tc := range []struct{ a, b, want Tier }{
		{"", "", ""}, {"", Write, Write}, {Read, "", Read},
		{Read, Destructive, Read}, {Destructive, Write, Write}, {Write, Write, Write},
	} {
		if got := Min(tc.a, tc.b); got != tc.want {
			t.Errorf("Min(%q, %q) = %q, want %q", tc.a, tc.b, got, tc.want)
		}
	}
}
