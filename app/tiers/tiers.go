// Package tiers sorts tools into what they may do to the world: read,
// write or destroy. A tool's tier follows from its MCP annotations, with
// the spec's defaults for the hints it leaves out; the user may override
// it per tool, and a profile or a client token may cap the tiers its
// client sees (a tool above the cap is neither listed nor callable).
//
// It is its own package, with no import of the go-sdk, because the
// gateway (which enforces caps), the API (which shows tiers) and the
// config (which validates overrides and caps) all need the same rule.
package tiers

import "fmt"

// A Tier is what a tool may do. The zero Tier is no tier: as a cap, it
// caps nothing.
type Tier string

const (
	// Read tools only read: annotations.readOnlyHint is true.
	Read Tier = "read"
	// Write tools change things but say they destroy nothing:
	// readOnlyHint false and destructiveHint false.
	Write Tier = "write"
	// Destructive tools may destroy: destructiveHint true, or left out
	// (the spec's default is true) on a tool that is not read-only.
	Destructive Tier = "destructive"
)

// All are the tiers, from the least to the most a tool may do.
var All = [...]Tier{Read, Write, Destructive}

// Of is the tier of a tool whose annotations say readOnly (readOnlyHint;
// absent means false, as the spec says) and destructive (destructiveHint;
// nil when absent, which the spec reads as true). The destructive hint
// means nothing on a read-only tool.
func Of(readOnly bool, destructive *bool) Tier {
	switch {
	case readOnly:
		return Read
	case destructive != nil && !*destructive:
		return Write
	default:
		return Destructive
	}
}

// rank orders the tiers; 0 is no tier.
func (t Tier) rank() int {
	switch t {
	case Read:
		return 1
	case Write:
		return 2
	case Destructive:
		return 3
	}
	return 0
}

// Valid reports whether t is one of All.
func (t Tier) Valid() bool { return t.rank() > 0 }

// Above reports whether t is above the cap max: a tool of tier t is not
// offered to a client capped at max. No cap (max "") caps nothing.
func (t Tier) Above(max Tier) bool {
	return max.rank() > 0 && t.rank() > max.rank()
}

// Parse returns the tier s names, or an error saying which names are.
func Parse(s string) (Tier, error) {
	if t := Tier(s); t.Valid() {
		return t, nil
	}
	return "", fmt.Errorf("unknown tier %q: want %q, %q or %q", s, Read, Write, Destructive)
}

// Min returns the lower of two caps, where "" is no cap.
func Min(a, b Tier) Tier {
	switch {
	case a.rank() == 0:
		return b
	case b.rank() == 0 || a.rank() <= b.rank():
		return a
	}
	return b
}
