package tokens_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/app/tokens"
)

// A version 1 file (no scopes) keeps working: every secret still verifies,
// the labels of Switchboard's own programs become admin and every other
// label a client, and the file is rewritten with the scopes.
func TestMigrateVersion1(t *testing.T) {
	v1, err := os.ReadFile(filepath.Join("testdata", "tokens-v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	path := tokenPath(t)
	if err := os.WriteFile(path, v1, 0o600); err != nil {
		t.Fatal(err)
	}
	s := open(t, path)
	want := map[string]tokens.Scope{"cli": tokens.ScopeAdmin, "cursor": tokens.ScopeClient,
		"dashboard": tokens.ScopeAdmin, "bridge": tokens.ScopeClient, "tray": tokens.ScopeAdmin}
	for _, label := range []string{"cli", "cursor", "dashboard", "bridge", "tray"} {
		tok, ok := s.Verify("sb_" + label + "-secret-from-a-version-1-file")
		if !ok || tok.Label != label || tok.Scope != want[label] {
			t.Errorf("Verify of the %s secret: %v %+v, want scope %s", label, ok, tok, want[label])
		}
	}

	// On disk: the same entries, secrets and ids, each with its scope.
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var onDisk []map[string]string
	if err := json.Unmarshal(data, &onDisk); err != nil {
		t.Fatal(err)
	}
	if len(onDisk) != len(want) {
		t.Fatalf("migrated file has %d entries:\n%s", len(onDisk), data)
	}
	for _, e := range onDisk {
		if e["scope"] != string(want[e["label"]]) || e["token"] != "sb_"+e["label"]+"-secret-from-a-version-1-file" {
			t.Errorf("migrated entry %v", e)
		}
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("migrated file mode: %v %v", fi.Mode(), err)
	}

	// Opening the migrated file again changes nothing.
	s2 := open(t, path)
	again, _ := os.ReadFile(path)
	if string(again) != string(data) {
		t.Errorf("second open rewrote the file:\n%s\nthen\n%s", data, again)
	}
	if tok, err := s2.Ensure("cursor"); err != nil || tok.ID != "tok_00000000000000c2" {
		t.Errorf("Ensure(cursor) on the migrated file: %+v %v, want the old token", tok, err)
	}
}

func TestScopes(t *testing.T) {
	s := open(t, tokenPath(t))
	for label, want := range map[string]tokens.Scope{"cli": tokens.ScopeAdmin, "tray": tokens.ScopeAdmin,
		"window": tokens.ScopeAdmin, "dashboard": tokens.ScopeAdmin, "cursor": tokens.ScopeClient,
		"bridge": tokens.ScopeClient, "CLI": tokens.ScopeClient, "cli ": tokens.ScopeClient} {
		if got := tokens.ScopeOf(label); got != want {
			t.Errorf("ScopeOf(%q) = %s, want %s", label, got, want)
		}
	}
	cursor, err := s.EnsureClient("cursor")
	if err != nil || cursor.Scope != tokens.ScopeClient {
		t.Fatalf("EnsureClient(cursor): %+v %v", cursor, err)
	}
	if got, ok := s.Verify(cursor.Secret); !ok || got.Scope != tokens.ScopeClient {
		t.Errorf("Verify of a client token: %+v", got)
	}
	if got, ok := s.Lookup(cursor.ID); !ok || got.Secret != "" || got.Label != "cursor" {
		t.Errorf("Lookup: %+v %v", got, ok)
	}
	if _, ok := s.Lookup("tok_nope"); ok {
		t.Error("Lookup of an unknown id succeeded")
	}
	// No client name yields an admin token: not the bridge's --client cli,
	// nor a client whose id is one of the admin labels.
	for _, label := range []string{"cli", "tray", "window", "dashboard"} {
		if tok, err := s.EnsureClient(label); !errors.Is(err, tokens.ErrAdminLabel) || tok.Secret != "" {
			t.Errorf("EnsureClient(%q): %+v %v, want ErrAdminLabel", label, tok, err)
		}
	}
	if cli := issue(t, s, "cli"); cli.Scope != tokens.ScopeAdmin {
		t.Errorf("cli token scope %s", cli.Scope)
	}
	if !strings.Contains(cursor.String(), "client") {
		t.Errorf("String without the scope: %s", cursor)
	}
}

// A file may not give a client's label the admin scope, nor name a scope
// this build does not know: Open says which entry is wrong.
func TestBadScopeInFile(t *testing.T) {
	for name, file := range map[string]string{
		"client label with admin scope": `[{"id":"tok_1","label":"cursor","token":"sb_x","scope":"admin","created":"2026-01-02T15:04:05Z"}]`,
		"unknown scope":                 `[{"id":"tok_1","label":"cli","token":"sb_x","scope":"root","created":"2026-01-02T15:04:05Z"}]`,
	} {
		path := tokenPath(t)
		if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := tokens.Open(path); err == nil || !strings.Contains(err.Error(), "entry 1") || !strings.Contains(err.Error(), "scope") {
			t.Errorf("%s: Open error %v", name, err)
		}
	}
}
