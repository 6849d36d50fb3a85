package cli

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/app/tray"
	"github.com/switchboardhq/switchboard/app/window"
)

// TestGUIVerbsNotInBuild: a build without the GUI tags says clearly how to
// get the window and the tray.
func TestGUIVerbsNotInBuild(t *testing.T) {
	if window.InBuild || tray.InBuild {
		t.Skip("this test binary has a GUI linked in")
	}
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

func TestWithDefaultVerb(t *testing.T) {
	for _, args := range [][]string{nil, {"--home", "/x"}, {"status"}} {
		got := withDefaultVerb(args)
		want := args
		if defaultVerb != "" && (len(args) == 0 || args[0] == "--home") {
			want = append([]string{defaultVerb}, args...)
		}
		if !slices.Equal(got, want) {
			t.Errorf("withDefaultVerb(%q) = %q, want %q", args, got, want)
		}
	}
}
