//go:build unix && !linux

package supervisor

import (
	"errors"
	"syscall"
)

// ProcessAlive reports whether process pid exists.
func ProcessAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
