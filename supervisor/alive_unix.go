//go:build unix

package supervisor

import (
	"errors"
	"syscall"
)

// ProcessAlive reports whether process pid exists (a zombie counts: it is
// for finding a daemon, whose parent reaps it).
func ProcessAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
