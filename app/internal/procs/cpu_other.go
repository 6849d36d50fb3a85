//go:build !unix && !windows

package procs

import "time"

// processCPU is not known here: Adapt leaves GOMAXPROCS as it is.
func processCPU() (time.Duration, bool) { return 0, false }
