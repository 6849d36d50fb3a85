package installable

import (
	"strconv"
	"strings"
)

// Versions in the catalog come from npm (semver: "1.2.3", "1.2.3-beta.1"),
// PyPI (PEP 440: "2025.4.25", "1.0rc1", "1.0.post2"), OCI tags ("v1.5.0")
// and calendar-versioned releases ("2026.8.31"). One parser covers the
// common ground: an optional "v", a dot-separated numeric core of any
// length, then a pre-release ("-beta.1", "rc1", "a2", ".dev3") or a
// post-release (".post2"), then build metadata ("+abc", ignored as semver
// says). Anything else ("latest", a digest, a branch name) is not a
// version this package compares.

// version is a parsed version.
type version struct {
	core []uint64
	// pre holds pre-release identifiers; empty for a release. A release
	// sorts after its pre-releases.
	pre []string
	// post is the post-release number, -1 when there is none.
	post int64
}

// parseVersion parses s as described above; ok is false when s is not such
// a version.
func parseVersion(s string) (v version, ok bool) {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(strings.TrimPrefix(s, "v"), "V")
	if i := strings.IndexByte(s, '+'); i >= 0 {
		if i == len(s)-1 {
			return version{}, false
		}
		s = s[:i]
	}
	v.post = -1
	if i := strings.IndexByte(s, '-'); i >= 0 {
		// semver pre-release: "1.2.3-beta.1".
		pre := s[i+1:]
		s = s[:i]
		if pre == "" {
			return version{}, false
		}
		v.pre = strings.Split(pre, ".")
		for _, p := range v.pre {
			if p == "" {
				return version{}, false
			}
		}
	}
	semverPre := v.pre != nil
	parts := strings.Split(s, ".")
	for i, p := range parts {
		// A PEP 440 suffix ends the version: nothing may follow it, and
		// it cannot be combined with a semver pre-release.
		suffixed := (v.pre != nil && !semverPre) || v.post >= 0
		digits := leadingDigits(p)
		if digits == "" {
			// PEP 440 ".post2" and ".dev3" segments after the core.
			if i == 0 || suffixed || semverPre {
				return version{}, false
			}
			switch {
			case strings.HasPrefix(p, "post"):
				n, err := strconv.ParseInt(p[len("post"):], 10, 64)
				if err != nil || i != len(parts)-1 {
					return version{}, false
				}
				v.post = n
			case strings.HasPrefix(p, "dev"):
				n := p[len("dev"):]
				if _, err := strconv.ParseUint(n, 10, 64); err != nil || i != len(parts)-1 {
					return version{}, false
				}
				// A dev release comes before the alpha, beta and rc
				// releases: the empty identifier (which semver never
				// produces) sorts before any letter.
				v.pre = []string{"", n}
			default:
				return version{}, false
			}
			continue
		}
		if suffixed {
			return version{}, false // a number after a pre- or post-release
		}
		n, err := strconv.ParseUint(digits, 10, 64)
		if err != nil {
			return version{}, false
		}
		v.core = append(v.core, n)
		if rest := p[len(digits):]; rest != "" {
			// PEP 440 pre-release glued to the number: "1.0rc1", "2.0b3".
			pre, ok := pep440Pre(rest)
			if !ok || i != len(parts)-1 || semverPre {
				return version{}, false
			}
			v.pre = pre
		}
	}
	if len(v.core) == 0 {
		return version{}, false
	}
	return v, true
}

func leadingDigits(s string) string {
	i := 0
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	return s[:i]
}

// pep440Pre turns a PEP 440 pre-release suffix ("rc1", "b2", "alpha3")
// into identifiers that sort like semver's: a < b < rc, then the number.
func pep440Pre(s string) ([]string, bool) {
	for _, p := range []struct{ spelling, kind string }{
		{"alpha", "a"}, {"beta", "b"}, {"rc", "rc"}, {"a", "a"}, {"b", "b"}, {"c", "rc"},
	} {
		if n, ok := strings.CutPrefix(s, p.spelling); ok && n != "" && leadingDigits(n) == n {
			return []string{p.kind, n}, true
		}
	}
	return nil, false
}

// compare returns -1, 0 or 1 as a is older than, the same as, or newer
// than b.
func (a version) compare(b version) int {
	for i := 0; i < max(len(a.core), len(b.core)); i++ {
		// A missing trailing number is zero: "1.2" equals "1.2.0".
		var x, y uint64
		if i < len(a.core) {
			x = a.core[i]
		}
		if i < len(b.core) {
			y = b.core[i]
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	if c := comparePre(a.pre, b.pre); c != 0 {
		return c
	}
	switch {
	case a.post < b.post:
		return -1
	case a.post > b.post:
		return 1
	}
	return 0
}

// comparePre orders pre-release identifiers as semver does: a release
// (nil) after any pre-release, numeric identifiers numerically and before
// alphanumeric ones, a shorter list first when one is a prefix of the other.
func comparePre(a, b []string) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return 1
	case b == nil:
		return -1
	}
	for i := 0; i < min(len(a), len(b)); i++ {
		x, y := a[i], b[i]
		if x == y {
			continue
		}
		nx, errx := strconv.ParseUint(x, 10, 64)
		ny, erry := strconv.ParseUint(y, 10, 64)
		switch {
		case errx == nil && erry == nil:
			if nx < ny {
				return -1
			}
			return 1
		case errx == nil:
			return -1
		case erry == nil:
			return 1
		case x < y:
			return -1
		default:
			return 1
		}
	}
	switch {
	case len(a) < len(b):
		return -1
	case len(a) > len(b):
		return 1
	}
	return 0
}

// CompareVersions returns -1, 0 or 1 as a is older than, the same as, or
// newer than b. ok is false when either is not a version this package
// understands (see the comment at the top of version.go); the result is 0
// then.
func CompareVersions(a, b string) (c int, ok bool) {
	va, oka := parseVersion(a)
	vb, okb := parseVersion(b)
	if !oka || !okb {
		return 0, false
	}
	return va.compare(vb), true
}

// Newer reports whether candidate is a newer version than installed. Two
// versions it cannot compare (a tag such as "latest", a digest) are not
// newer: telling a user to update on a guess would make an update loop
// when the registry and the installed package spell versions differently.
func Newer(installed, candidate string) bool {
	c, ok := CompareVersions(candidate, installed)
	return ok && c > 0
}

// IsExactVersion reports whether v names one exact version, as server.json
// requires: not empty, not "latest", not a range ("^1.2", "~1.2", ">=1",
// "1.x", "1.2.*").
func IsExactVersion(v string) bool {
	_, ok := parseVersion(v)
	return ok
}
