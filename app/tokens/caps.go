package tokens

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/switchboardhq/switchboard/app/atomicfile"
	"github.com/switchboardhq/switchboard/app/tiers"
)

// CapsFileName is the file beside the token file that remembers each
// client label's tier cap (see SetMaxTier), so that a token issued to the
// label again (after a revoke, or by connecting the client again) gets the
// cap its predecessor had: revoking a capped client's token and
// reconnecting the client must not lift the cap. It maps labels to tiers,
// mode 0600, and is written under the token file's lock:
//
//	{"cursor": "read", "windsurf": "write"}
const CapsFileName = "token-caps.json"

func (s *Store) capsPath() string { return filepath.Join(filepath.Dir(s.path), CapsFileName) }

// readCaps reads the caps file (under the token file's lock); a missing
// file has no caps.
func (s *Store) readCaps() (map[string]tiers.Tier, error) {
	data, err := os.ReadFile(s.capsPath())
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]tiers.Tier{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("token caps file: %w", err)
	}
	var caps map[string]tiers.Tier
	if err := json.Unmarshal(data, &caps); err != nil {
		return nil, fmt.Errorf("token caps file %s: %w", s.capsPath(), err)
	}
	for label, t := range caps {
		if !t.Valid() || ScopeOf(label) != ScopeClient {
			return nil, fmt.Errorf("token caps file %s: label %q has cap %q: want a client's label and read, write or destructive", s.capsPath(), label, t)
		}
	}
	if caps == nil {
		caps = map[string]tiers.Tier{}
	}
	return caps, nil
}

// writeCaps writes caps (under the token file's lock); none removes the
// file.
func (s *Store) writeCaps(caps map[string]tiers.Tier) error {
	if len(caps) == 0 {
		if err := os.Remove(s.capsPath()); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("token caps file: %w", err)
		}
		return nil
	}
	ordered := make(map[string]string, len(caps))
	for _, label := range slices.Sorted(maps.Keys(caps)) {
		ordered[label] = string(caps[label])
	}
	data, err := json.MarshalIndent(ordered, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(s.capsPath(), append(data, '\n'), fileMode)
}

// withCap gives t, a new token, the cap remembered for its label (under
// the token file's lock).
func (s *Store) withCap(t Token) (Token, error) {
	if t.Scope != ScopeClient {
		return t, nil
	}
	caps, err := s.readCaps()
	if err != nil {
		return t, err
	}
	t.MaxTier = caps[t.Label]
	return t, nil
}

// Caps returns the remembered tier cap of each client label (see
// CapsFileName), including labels that have no token now.
func (s *Store) Caps() (map[string]tiers.Tier, error) {
	return s.readCaps()
}
