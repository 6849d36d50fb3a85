//go:build !unix

package testutil

import "time"

// ProcessCPU cannot be read here: benchmarks report wall time only.
func ProcessCPU() (time.Duration, bool) { return 0, false }
