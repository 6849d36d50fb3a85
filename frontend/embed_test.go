package frontend

import (
	"io/fs"
	"os"
	"strings"
	"testing"
)

// TestAssets checks Assets against what is on disk: with a build, index.html
// and the assets it references are embedded; without one, Assets says so.
func TestAssets(t *testing.T) {
	_, statErr := os.Stat("dist/index.html")
	built := statErr == nil

	assets, ok := Assets()
	if ok != built {
		t.Fatalf("Assets() ok = %v, want %v (dist/index.html on disk: %v)", ok, built, built)
	}
	if assets == nil {
		t.Fatal("Assets() returned a nil fs.FS")
	}
	if !built {
		if _, err := fs.Stat(assets, ".keep"); err != nil {
			t.Errorf("the placeholder dist/.keep is not embedded: %v", err)
		}
		if os.Getenv("SWITCHBOARD_REQUIRE_ALL") != "" {
			t.Fatal("no frontend build in dist/: make test builds it first (SWITCHBOARD_REQUIRE_ALL is set)")
		}
		t.Skip("no frontend build in dist/ (run npm run build): checked the placeholder only")
	}
	index, err := fs.ReadFile(assets, "index.html")
	if err != nil {
		t.Fatalf("reading the embedded index.html: %v", err)
	}
	// Every /assets/... the page loads must be embedded too.
	for _, part := range strings.Split(string(index), `"`)[1:] {
		if !strings.HasPrefix(part, "/assets/") {
			continue
		}
		if _, err := fs.Stat(assets, strings.TrimPrefix(part, "/")); err != nil {
			t.Errorf("index.html references %s, which is not embedded: %v", part, err)
		}
	}
}
