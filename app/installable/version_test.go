package installable

import "testing"

func TestNewer(t *testing.T) {
	tests := []struct {
		installed, candidate string
		want                 bool
	}{
		{"1.0.0", "1.0.1", true},
		{"1.0.1", "1.0.0", false},
		{"1.0.0", "1.0.0", false},
		{"1.9.0", "1.10.0", true}, // numeric, not lexical
		{"1.2", "1.2.0", false},   // a missing part is zero
		{"1.2", "1.2.1", true},
		{"v1.5.0", "1.6.0", true}, // OCI tags carry a v
		{"1.6.0", "v1.5.0", false},
		{"2025.4.8", "2026.8.31", true}, // calendar versions
		{"2026.8.31", "2025.12.1", false},
		{"0.0.9", "0.0.83", true},
		{"1.0.0-beta.1", "1.0.0", true}, // a release after its pre-releases
		{"1.0.0", "1.0.0-rc.1", false},
		{"1.0.0-alpha", "1.0.0-alpha.1", true},
		{"1.0.0-alpha.1", "1.0.0-alpha.beta", true}, // numeric before alphanumeric
		{"1.0.0-beta.2", "1.0.0-beta.11", true},
		{"1.0.0-rc.1", "1.0.0-rc.2", true},
		{"1.0.0+build.1", "1.0.0+build.2", false}, // build metadata is ignored
		{"1.0rc1", "1.0", true},                   // PEP 440
		{"1.0a1", "1.0b1", true},
		{"1.0b2", "1.0rc1", true},
		{"1.0rc1", "1.0rc10", true},
		{"1.0.dev1", "1.0a1", true},
		{"1.0.dev2", "1.0.dev10", true},
		{"1.0", "1.0.post1", true},
		{"1.0.post1", "1.0.1", true},
		{"1.0.post2", "1.0.post1", false},
		// Not versions: never reported as newer.
		{"latest", "1.0.0", false},
		{"1.0.0", "latest", false},
		{"", "1.0.0", false},
		{"1.0.0", "sha256:abc", false},
		{"main", "develop", false},
		{"1.0.0", "^1.2.0", false},
		{"1.0.0", "1.x", false},
		{"1.0.0", "1.0.0-", false},
		{"1.0.0", "1..0", false},
	}
	for _, tt := range tests {
		if got := Newer(tt.installed, tt.candidate); got != tt.want {
			t.Errorf("Newer(%q, %q) = %v, want %v", tt.installed, tt.candidate, got, tt.want)
		}
	}
}

func TestCompareVersionsSymmetric(t *testing.T) {
	vs := []string{"0.1.0", "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-beta", "1.0.0-rc.1", "1.0.0", "1.0.post1", "1.0.1", "2025.4.8", "2026.8.31"}
	for i, a := range vs {
		for j, b := range vs {
			c, ok := CompareVersions(a, b)
			if !ok {
				t.Fatalf("CompareVersions(%q, %q) not ok", a, b)
			}
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if c != want {
				t.Errorf("CompareVersions(%q, %q) = %d, want %d", a, b, c, want)
			}
		}
	}
}

func TestIsExactVersion(t *testing.T) {
	for v, want := range map[string]bool{
		"1.0.0": true, "2026.8.31": true, "0.0.83": true, "1.0.0-beta.1": true, "v1.5.0": true, "1.0rc1": true,
		"": false, "latest": false, "^1.0.0": false, "~1.2": false, ">=1.0": false, "1.x": false, "1.2.*": false, "*": false,
	} {
		if got := IsExactVersion(v); got != want {
			t.Errorf("IsExactVersion(%q) = %v, want %v", v, got, want)
		}
	}
}
