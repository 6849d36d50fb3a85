package cli

import (
	"io/fs"

	"github.com/switchboardhq/switchboard/frontend"
)

// dashboardAssets is the dashboard build embedded in this binary, and
// whether there is one (a build without `npm run build` first has none:
// the window then shows its built-in status page).
func dashboardAssets() (fs.FS, bool) { return frontend.Assets() }

// builtDashboard is the dashboard embedded in this binary, or nil when it
// was built without running the frontend build.
func builtDashboard() fs.FS {
	if assets, ok := frontend.Assets(); ok {
		return assets
	}
	return nil
}
