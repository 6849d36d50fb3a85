//go:build unix

package daemon

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tightenHome takes only the group and other bits off the data directory:
// a home open to others becomes private, a read-only one stays read-only.
func TestTightenHome(t *testing.T) {
	for _, tc := range []struct {
		was, want os.FileMode
	}{
		{0o755, 0o700},
		{0o555, 0o500}, // read-only by the user's choice: no write bit given back
		{0o750, 0o700},
		{0o707, 0o700},
		{0o500, 0o500}, // already private: left alone
	} {
		t.Run(fmt.Sprintf("%#o", tc.was), func(t *testing.T) {
			home := filepath.Join(t.TempDir(), "home")
			if err := os.Mkdir(home, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(home, tc.was); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.Chmod(home, 0o700) }) // let TempDir remove it
			var out bytes.Buffer
			log := slog.New(slog.NewTextHandler(&out, nil))
			if err := tightenHome(home, log); err != nil {
				t.Fatal(err)
			}
			info, err := os.Stat(home)
			if err != nil {
				t.Fatal(err)
			}
			if m := info.Mode().Perm(); m != tc.want {
				t.Errorf("mode after tightenHome = %#o, want %#o", m, tc.want)
			}
			if tc.was == tc.want {
				if out.Len() != 0 {
					t.Errorf("private home: log %q", out.String())
				}
				return
			}
			if want := fmt.Sprintf("now private (%#o)", tc.want); !strings.Contains(out.String(), want) ||
				!strings.Contains(out.String(), fmt.Sprintf("was=%#o", tc.was)) {
				t.Errorf("log does not say %q and was=%#o: %s", want, tc.was, out.String())
			}
			// Once private, nothing more to say.
			out.Reset()
			if err := tightenHome(home, log); err != nil || out.Len() != 0 {
				t.Errorf("second tightenHome: %v, log %q", err, out.String())
			}
		})
	}
}
