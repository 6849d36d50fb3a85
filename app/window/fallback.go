package window

import (
	"embed"
	"io/fs"
)

//go:embed fallback/index.html
var fallback embed.FS

// FallbackAssets is the built-in page shown when the binary has no
// dashboard build: it says so and lists the daemon's servers through the
// same proxy, so the window is useful (and testable) without the frontend.
func FallbackAssets() fs.FS {
	sub, err := fs.Sub(fallback, "fallback")
	if err != nil {
		// fs.Sub fails only for an invalid directory name, which this is not.
		panic(err)
	}
	return sub
}
