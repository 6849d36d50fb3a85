package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app/api/wire"
)

// TestPrintHeldFindings: the table counts each held tool's findings by
// severity, and --diff lists them, one line each, before the diff.
func TestPrintHeldFindings(t *testing.T) {
	line := `high   conceal: tool "echo" description [85:105] "do not tell the user": tells the model to keep something from the user`
	held := []wire.HeldTool{
		{Server: "demo", Tool: "echo", Change: "new", Message: "held echo", Listed: wire.ToolVersion{Fingerprint: "sha256:1", Time: time.Now()},
			Diff: "+++ b/demo/echo\n", Findings: []wire.Finding{{Severity: "high", Line: line}, {Severity: "medium", Line: "medium x"}, {Severity: "high", Line: "high y"}}},
		{Server: "demo", Tool: "add", Change: "schema", Message: "held add", Listed: wire.ToolVersion{Fingerprint: "sha256:2", Time: time.Now()},
			Diff: "-a\n+b\n", Findings: []wire.Finding{}},
	}
	var b strings.Builder
	printHeld(&b, held, true)
	out := b.String()
	for _, want := range []string{
		"SCAN",
		"the scan found (2 high, 1 medium):\n  " + line + "\n  medium x\n  high y\n+++ b/demo/echo\n",
		"held add\nfingerprint: sha256:2 (approve this version only: switchboard tools approve demo add --fingerprint sha256:2)\n-a\n+b\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("printHeld lacks %q:\n%s", want, out)
		}
	}
	rows := strings.Split(out, "\n")
	if !strings.Contains(rows[1], "2 high, 1 medium") || !strings.Contains(rows[2], "  -  ") {
		t.Errorf("table rows = %q, want the counts and - for none", rows[1:3])
	}
}
