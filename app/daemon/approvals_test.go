package daemon

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/app/approvals"
	"github.com/switchboardhq/switchboard/app/config"
)

// TestApprovalsPruneAndMigration: at start the approvals of servers no
// longer configured are forgotten, and the first list of a configured
// server the approvals did not know is called a migration; one added later
// is an install.
func TestApprovalsPruneAndMigration(t *testing.T) {
	store, err := approvals.Open(filepath.Join(t.TempDir(), approvals.FileName))
	if err != nil {
		t.Fatal(err)
	}
	tools := []approvals.Tool{{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)}}
	for _, s := range []string{"kept", "gone"} {
		if _, err := store.Review(s, tools, true); err != nil {
			t.Fatal(err)
		}
	}
	a := &toolApprovals{store: store}
	a.prune(map[string]config.Server{"kept": {Command: "x"}, "old": {Command: "y"}})
	if got := store.Servers(); !slices.Equal(got, []string{"kept"}) {
		t.Errorf("servers after prune = %v, want [kept]", got)
	}
	if msg := a.firstListMessage("old", []string{"echo"}); !strings.Contains(msg, "(migration)") {
		t.Errorf("first list of a server configured before: %q, want a migration", msg)
	}
	if msg := a.firstListMessage("old", []string{"echo"}); !strings.Contains(msg, "(its install)") {
		t.Errorf("a second first list (the server removed and added again): %q, want an install", msg)
	}
	if msg := a.firstListMessage("new", []string{"echo"}); !strings.Contains(msg, "(its install)") {
		t.Errorf("first list of a server added while running: %q, want an install", msg)
	}
}
