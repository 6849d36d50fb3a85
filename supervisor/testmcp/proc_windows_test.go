package testmcp_test

import (
	"syscall"
	"testing"
)

// stillActive is the exit code GetExitCodeProcess reports for a running process.
const stillActive = 259

// processAlive reports whether pid is a running process.
func processAlive(pid int) bool {
	h, err := syscall.OpenProcess(syscall.PROCESS_QUERY_INFORMATION, false, uint32(pid))
	if err != nil {
		return false
	}
	defer syscall.CloseHandle(h)
	var code uint32
	if err := syscall.GetExitCodeProcess(h, &code); err != nil {
		return false
	}
	return code == stillActive
}

// checkSameGroup is a no-op on Windows, which has no process groups in the Unix sense.
func checkSameGroup(t *testing.T, parent, child int) {}
