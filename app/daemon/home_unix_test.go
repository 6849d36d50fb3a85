//go:build unix

package daemon

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTightenHome(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(home, 0o755); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	log := slog.New(slog.NewTextHandler(&out, nil))
	if err := tightenHome(home, log); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(home)
	if err != nil {
		t.Fatal(err)
	}
	if m := info.Mode().Perm(); m != 0o700 {
		t.Errorf("mode after tightenHome = %o, want 700", m)
	}
	if !strings.Contains(out.String(), "now private (0700)") || !strings.Contains(out.String(), "was=0755") {
		t.Errorf("log does not say it: %s", out.String())
	}
	// Already private: nothing to say.
	out.Reset()
	if err := tightenHome(home, log); err != nil || out.Len() != 0 {
		t.Errorf("second tightenHome: %v, log %q", err, out.String())
	}
}
