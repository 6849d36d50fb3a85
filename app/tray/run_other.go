//go:build !tray

package tray

import (
	"context"
	"errors"
	"time"
)

// InBuild reports whether this binary has the tray.
const InBuild = false

// RunOptions configure Run.
type RunOptions struct {
	Options
	HostWait time.Duration
}

// ErrNoTrayHost is wrapped by Run's error when there is no display or no
// tray host to show the icon in.
var ErrNoTrayHost = errors.New("no tray host")

// Run returns ErrNotInBuild: this build has no systray (see systray.go).
func Run(ctx context.Context, opts RunOptions) error { return ErrNotInBuild }
