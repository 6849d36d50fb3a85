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
