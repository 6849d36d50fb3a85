//go:build !desktop

package window

import "context"

// InBuild reports whether this binary can open the window.
const InBuild = false

// Run returns ErrNotInBuild: this build has no Wails (see run_desktop.go).
func Run(ctx context.Context, opts Options) error {
	if err := opts.Validate(); err != nil {
		return err
	}
	return ErrNotInBuild
}
