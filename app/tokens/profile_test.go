package tokens_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/app/tokens"
)

// Bind binds a client's tokens to a profile, the file keeps it, another
// store (another process) sees it, Verify reports it, and "" unbinds.
func TestBind(t *testing.T) {
	path := tokenPath(t)
	s := open(t, path)
	cursor := issue(t, s, "cursor")
	other := issue(t, s, "vscode")

	bound, err := s.Bind("cursor", "coding")
	if err != nil {
		t.Fatal(err)
	}
	if len(bound) != 1 || bound[0].ID != cursor.ID || bound[0].Profile != "coding" || bound[0].Secret != "" {
		t.Fatalf("Bind returned %#v", bound)
	}
	if tok, ok := s.Verify(cursor.Secret); !ok || tok.Profile != "coding" {
		t.Errorf("Verify after Bind: %v %#v", ok, tok)
	}
	if tok, ok := s.Verify(other.Secret); !ok || tok.Profile != "" {
		t.Errorf("another client's token: %v %#v", ok, tok)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(string(data), `"profile": "coding"`) != 1 {
		t.Errorf("file:\n%s", data)
	}
	if tok, ok := open(t, path).Verify(cursor.Secret); !ok || tok.Profile != "coding" {
		t.Errorf("another store: %v %#v", ok, tok)
	}
	if !strings.Contains(bound[0].String(), "profile coding") {
		t.Errorf("String: %s", bound[0])
	}

	// Binding again to the same profile writes nothing.
	before, _ := os.Stat(path)
	if _, err := s.Bind("cursor", "coding"); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.Stat(path); !os.SameFile(before, after) {
		t.Error("binding to the same profile rewrote the file")
	}

	if _, err := s.Bind("cursor", ""); err != nil {
		t.Fatal(err)
	}
	if tok, _ := s.Verify(cursor.Secret); tok.Profile != "" {
		t.Errorf("after unbinding: %#v", tok)
	}
	if data, _ := os.ReadFile(path); strings.Contains(string(data), "profile") {
		t.Errorf("unbound file still names a profile:\n%s", data)
	}
}

func TestBindRefused(t *testing.T) {
	s := open(t, tokenPath(t))
	issue(t, s, "cli")
	issue(t, s, "cursor")
	for _, tt := range []struct {
		label, profile string
		is             error
		msg            string
	}{
		{"cli", "coding", tokens.ErrNotClient, "cli"},
		{"dashboard", "coding", tokens.ErrNotClient, "dashboard"},
		{"zed", "coding", tokens.ErrNotFound, `"zed"`},
		{"cursor", "a/b", nil, `invalid profile name "a/b"`},
		{"cursor", "-x", nil, "invalid profile name"},
		{"cursor", strings.Repeat("p", tokens.MaxProfileLen+1), nil, "invalid profile name"},
	} {
		_, err := s.Bind(tt.label, tt.profile)
		if err == nil || (tt.is != nil && !errors.Is(err, tt.is)) || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("Bind(%q, %q) = %v; want %v containing %q", tt.label, tt.profile, err, tt.is, tt.msg)
		}
	}
}

// A file that binds an admin token, or names an impossible profile, is
// refused with the entry named; a version 1 file migrates without any
// profile.
func TestProfileInFile(t *testing.T) {
	for name, file := range map[string]string{
		"admin token with a profile": `[{"id":"tok_1","label":"cli","token":"sb_x","scope":"admin","profile":"coding","created":"2026-01-02T15:04:05Z"}]`,
		"bad profile name":           `[{"id":"tok_1","label":"cursor","token":"sb_x","scope":"client","profile":"../x","created":"2026-01-02T15:04:05Z"}]`,
	} {
		path := tokenPath(t)
		if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := tokens.Open(path); err == nil || !strings.Contains(err.Error(), "entry 1") || !strings.Contains(err.Error(), "profile") {
			t.Errorf("%s: Open error %v", name, err)
		}
	}

	v1, err := os.ReadFile(filepath.Join("testdata", "tokens-v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	path := tokenPath(t)
	if err := os.WriteFile(path, v1, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tok := range open(t, path).List() {
		if tok.Profile != "" {
			t.Errorf("migrated token %v has a profile", tok)
		}
	}
	if data, _ := os.ReadFile(path); strings.Contains(string(data), "profile") {
		t.Errorf("migrated file names a profile:\n%s", data)
	}
}
