package tokens_test

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/app/tiers"
	"github.com/switchboardhq/switchboard/app/tokens"
)

// SetMaxTier caps a client's tokens, the file keeps it, another store
// (another process) sees it, Verify reports it, "" lifts it; a bad tier,
// an admin label and an unknown label are refused.
func TestSetMaxTier(t *testing.T) {
	path := tokenPath(t)
	s := open(t, path)
	cursor := issue(t, s, "cursor")
	other := issue(t, s, "vscode")
	issue(t, s, "cli")

	capped, err := s.SetMaxTier("cursor", tiers.Read)
	if err != nil {
		t.Fatal(err)
	}
	if len(capped) != 1 || capped[0].ID != cursor.ID || capped[0].MaxTier != tiers.Read || capped[0].Secret != "" {
		t.Fatalf("SetMaxTier returned %#v", capped)
	}
	if tok, ok := s.Verify(cursor.Secret); !ok || tok.MaxTier != tiers.Read {
		t.Errorf("Verify after SetMaxTier: %v %#v", ok, tok)
	}
	if tok, ok := s.Verify(other.Secret); !ok || tok.MaxTier != "" {
		t.Errorf("another client's token: %v %#v", ok, tok)
	}
	if data, _ := os.ReadFile(path); strings.Count(string(data), `"maxTier": "read"`) != 1 {
		t.Errorf("file:\n%s", data)
	}
	if tok, ok := open(t, path).Verify(cursor.Secret); !ok || tok.MaxTier != tiers.Read {
		t.Errorf("another store: %v %#v", ok, tok)
	}
	if !strings.Contains(capped[0].String(), "max tier read") {
		t.Errorf("String: %s", capped[0])
	}

	before, _ := os.Stat(path)
	if _, err := s.SetMaxTier("cursor", tiers.Read); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.Stat(path); !os.SameFile(before, after) {
		t.Error("setting the same cap rewrote the file")
	}
	if _, err := s.SetMaxTier("cursor", ""); err != nil {
		t.Fatal(err)
	}
	if tok, _ := s.Verify(cursor.Secret); tok.MaxTier != "" {
		t.Errorf("after lifting the cap: %#v", tok)
	}
	if data, _ := os.ReadFile(path); strings.Contains(string(data), "maxTier") {
		t.Errorf("uncapped file still names a tier:\n%s", data)
	}

	for _, tt := range []struct {
		label string
		max   tiers.Tier
		is    error
		msg   string
	}{
		{"cli", tiers.Read, tokens.ErrNotClient, "cli"},
		{"zed", tiers.Read, tokens.ErrNotFound, `"zed"`},
		{"cursor", "admin", nil, `unknown tier "admin"`},
	} {
		_, err := s.SetMaxTier(tt.label, tt.max)
		if err == nil || (tt.is != nil && !errors.Is(err, tt.is)) || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("SetMaxTier(%q, %q) = %v; want %v containing %q", tt.label, tt.max, err, tt.is, tt.msg)
		}
	}
}

// A file that caps an admin token, or names an unknown tier, is refused
// with the entry named.
func TestMaxTierInFile(t *testing.T) {
	for name, file := range map[string]string{
		"admin token with a cap": `[{"id":"tok_1","label":"cli","token":"sb_x","scope":"admin","maxTier":"read","created":"2026-01-02T15:04:05Z"}]`,
		"unknown tier":           `[{"id":"tok_1","label":"cursor","token":"sb_x","scope":"client","maxTier":"safe","created":"2026-01-02T15:04:05Z"}]`,
	} {
		path := tokenPath(t)
		if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := tokens.Open(path); err == nil || !strings.Contains(err.Error(), "entry 1") || !strings.Contains(err.Error(), "maxTier") {
			t.Errorf("%s: Open error %v", name, err)
		}
	}
}

// A client's cap survives revoke-and-reissue: it is remembered beside the
// token file (token-caps.json, 0600), so a token issued to the label again
// (here, by another store: another process) has it; lifting the cap of a
// label without tokens forgets it.
func TestCapSurvivesRevokeAndReissue(t *testing.T) {
	path := tokenPath(t)
	s := open(t, path)
	issue(t, s, "cursor")
	if _, err := s.SetMaxTier("cursor", tiers.Read); err != nil {
		t.Fatal(err)
	}
	capsFile := filepath.Join(filepath.Dir(path), tokens.CapsFileName)
	fi, err := os.Stat(capsFile)
	if err != nil {
		t.Fatalf("caps file: %v", err)
	}
	// Windows has ACLs, not mode bits (Go reports 0666 there).
	if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Errorf("caps file mode %v, want 0600", fi.Mode().Perm())
	}
	if _, err := s.RevokeLabel("cursor"); err != nil {
		t.Fatal(err)
	}
	again, err := open(t, path).EnsureClient("cursor")
	if err != nil {
		t.Fatal(err)
	}
	if again.MaxTier != tiers.Read {
		t.Errorf("the token issued again to cursor has cap %q, want read", again.MaxTier)
	}
	if tok, ok := s.Verify(again.Secret); !ok || tok.MaxTier != tiers.Read {
		t.Errorf("Verify of the reissued token: %v %#v", ok, tok)
	}
	if caps, err := s.Caps(); err != nil || caps["cursor"] != tiers.Read {
		t.Errorf("Caps() = %v, %v", caps, err)
	}
	// Another label is not capped by it.
	if fresh := issue(t, s, "vscode"); fresh.MaxTier != "" {
		t.Errorf("vscode's new token has cap %q", fresh.MaxTier)
	}
	// Lifted while the label has no token: forgotten.
	if _, err := s.RevokeLabel("cursor"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetMaxTier("cursor", ""); !errors.Is(err, tokens.ErrNotFound) {
		t.Errorf("lifting the cap of a label without tokens: %v, want ErrNotFound", err)
	}
	if tok := issue(t, s, "cursor"); tok.MaxTier != "" {
		t.Errorf("after the cap was lifted, a new token has cap %q", tok.MaxTier)
	}
	if _, err := os.Stat(capsFile); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the caps file with no caps left: %v", err)
	}
}
