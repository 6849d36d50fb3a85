//go:build unix

package testutil

import (
	"syscall"
	"time"
)

// ProcessCPU is the user + system time this process has used; ok is false
// where it cannot be read (then benchmarks report wall time only).
func ProcessCPU() (_ time.Duration, ok bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
