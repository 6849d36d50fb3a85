package tokens_test

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app/tokens"
)

// RevokeLabel removes every token of a label, in this store and for
// another process's store of the same file.
func TestRevokeLabel(t *testing.T) {
	path := tokenPath(t)
	s := open(t, path)
	cli := issue(t, s, "cli")
	c1 := issue(t, s, "cursor")
	c2 := issue(t, s, "cursor")
	other := open(t, path) // the daemon, while s is the CLI

	tests := []struct {
		label   string
		wantErr error
		gone    []string
		left    int
	}{
		{"cursor", nil, []string{c1.ID, c2.ID}, 1},
		{"cursor", tokens.ErrNotFound, nil, 1},
		{"nobody", tokens.ErrNotFound, nil, 1},
		{"", tokens.ErrNotFound, nil, 1},
	}
	for _, tt := range tests {
		gone, err := s.RevokeLabel(tt.label)
		if !errors.Is(err, tt.wantErr) {
			t.Fatalf("RevokeLabel(%q) = %v, want %v", tt.label, err, tt.wantErr)
		}
		if tt.wantErr != nil && !strings.Contains(err.Error(), `"`+tt.label+`"`) {
			t.Errorf("error %q does not name the label", err)
		}
		var ids []string
		for _, g := range gone {
			ids = append(ids, g.ID)
			if g.Secret != "" {
				t.Errorf("RevokeLabel returned the secret of %s", g)
			}
		}
		if strings.Join(ids, ",") != strings.Join(tt.gone, ",") {
			t.Errorf("RevokeLabel(%q) removed %v, want %v", tt.label, ids, tt.gone)
		}
		if n := len(s.List()); n != tt.left {
			t.Errorf("%d tokens left, want %d", n, tt.left)
		}
	}
	for _, tok := range []tokens.Token{c1, c2} {
		if _, ok := other.Verify(tok.Secret); ok {
			t.Errorf("the other store still accepts revoked %s", tok)
		}
	}
	if _, ok := other.Verify(cli.Secret); !ok {
		t.Error("the kept cli token no longer verifies")
	}
	data, _ := os.ReadFile(path)
	if strings.Contains(string(data), c1.Secret) || !strings.Contains(string(data), cli.Secret) {
		t.Errorf("file after revoking:\n%s", data)
	}
}

// List tells when Verify last accepted each token; the time is not saved
// to the file.
func TestLastUsed(t *testing.T) {
	path := tokenPath(t)
	s := open(t, path)
	used := issue(t, s, "cursor")
	unused := issue(t, s, "zed")

	before := time.Now().UTC()
	if _, ok := s.Verify(used.Secret); !ok {
		t.Fatal("Verify refused a token just issued")
	}
	after := time.Now().UTC()
	s.Verify("sb_wrong") // a failed attempt marks nothing
	for _, tok := range s.List() {
		switch tok.ID {
		case used.ID:
			if tok.LastUsed.Before(before) || tok.LastUsed.After(after) {
				t.Errorf("LastUsed of %s = %v, want between %v and %v", tok, tok.LastUsed, before, after)
			}
		case unused.ID:
			if !tok.LastUsed.IsZero() {
				t.Errorf("LastUsed of the unused %s = %v", tok, tok.LastUsed)
			}
		}
	}
	data, _ := os.ReadFile(path)
	if strings.Contains(strings.ToLower(string(data)), "lastused") {
		t.Errorf("the last use was written to the file:\n%s", data)
	}
	// A change to the file (another token issued) keeps the record.
	issue(t, s, "cline")
	for _, tok := range s.List() {
		if tok.ID == used.ID && tok.LastUsed.IsZero() {
			t.Error("issuing another token forgot the last use")
		}
	}
}
