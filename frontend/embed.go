// Package frontend holds the dashboard UI (a Vite + Svelte app, see
// package.json) and embeds its build into the Go binary.
//
// The build (npm ci && npm run build) writes dist/, which is not tracked
// except for dist/.keep: go:embed needs the directory to exist, so a fresh
// clone builds without Node and Assets then reports that there is no
// dashboard in this binary.
package frontend

import (
	"embed"
	"io/fs"
)

//go:embed all:dist
var dist embed.FS

// Assets returns the dashboard build, rooted at its index.html, and whether
// there is one: false when the binary was built without running the
// frontend build first (dist holds only the placeholder).
func Assets() (fs.FS, bool) {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		// Cannot happen: "dist" is a valid path and embedded above.
		return nil, false
	}
	if _, err := fs.Stat(sub, "index.html"); err != nil {
		return sub, false
	}
	return sub, true
}
