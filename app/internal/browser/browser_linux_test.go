package browser

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeOpener puts an xdg-open on PATH that runs script.
func fakeOpener(t *testing.T, script string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "xdg-open"), []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
}

func TestOpen(t *testing.T) {
	for _, tt := range []struct {
		name, script, link string
		wantErr            string // "" for success
	}{
		{"opened", "exit 0\n", "http://127.0.0.1:7391/login?code=x", ""},
		// xdg-open without a browser lists every one it tried: only its last
		// line is kept, in the error, and nothing reaches the terminal.
		{"no browser", "for b in www-browser links2 elinks links lynx w3m firefox; do echo \"/usr/bin/xdg-open: 882: $b: not found\"; done\necho 'xdg-open: no method available for opening' >&2\nexit 3\n",
			"https://example.com/", "no method available for opening"},
		{"not a web link", "echo opened; exit 0\n", "file:///etc/passwd", "not an http(s) URL"},
		{"no host", "exit 0\n", "http:///x", "not an http(s) URL"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fakeOpener(t, tt.script)
			err := Open(t.Context(), tt.link)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("Open(%q) = %v", tt.link, err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("Open(%q) = %v, want an error with %q", tt.link, err, tt.wantErr)
			case tt.wantErr != "" && strings.Count(err.Error(), "not found") > 0:
				t.Errorf("Open(%q) = %v: the opener's noise is in the error", tt.link, err)
			}
		})
	}
}

// TestOpenApp: a deep link reaches the opener (which records it); a link
// of another scheme, a web link among them, does not.
func TestOpenApp(t *testing.T) {
	dir := t.TempDir()
	got := filepath.Join(dir, "opened")
	fakeOpener(t, "printf '%s' \"$1\" > "+got+"\n")
	link := "cherrystudio://mcp/install?servers=eyJ9"
	if err := OpenApp(t.Context(), link, "cherrystudio"); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(got); err != nil || string(b) != link {
		t.Errorf("the opener got %q (%v), want %q", b, err, link)
	}
	for _, bad := range []string{"https://example.com/", "cursor://anysphere.cursor-deeplink/mcp/install", "cherrystudio:opaque"} {
		if err := OpenApp(t.Context(), bad, "cherrystudio"); err == nil {
			t.Errorf("OpenApp(%q) opened it", bad)
		}
	}
}
