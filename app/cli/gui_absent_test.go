//go:build !desktop && !tray

package cli

import (
	"bytes"
	"strings"
	"testing"
)

// TestGUIVerbsNotInBuild: a build without the GUI tags says clearly how to
// get the window and the tray. The build constraint, not a skip, keeps it
// out of a test binary with a GUI linked in.
func TestGUIVerbsNotInBuild(t *testing.T) {
	for verb, want := range map[string]string{
		"window": "the window is not in this build; build with -tags desktop,production,webkit2_41",
		"tray":   "the tray is not in this build; build with -tags tray",
	} {
		var stdout, stderr bytes.Buffer
		code := run("test", []string{"--home", t.TempDir(), verb}, &stdout, &stderr)
		if code != exitError || !strings.Contains(stderr.String(), want) {
			t.Errorf("switchboard %s: exit %d, stderr %q; want %d and %q", verb, code, stderr.String(), exitError, want)
		}
	}
}
