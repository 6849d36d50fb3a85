//go:build unix && !linux

package testmcp

import "syscall"

// freeze stops the whole process with SIGSTOP; it returns once the process
// is continued (SIGCONT).
//
// Unlike on Linux (see freeze_linux.go) the signal goes to the process, so
// the kernel may deliver it on another thread a moment after kill returns:
// in that window the tool can still answer. There is no portable way to aim
// it at the calling thread without cgo (pthread_kill).
func freeze() error {
	return syscall.Kill(syscall.Getpid(), syscall.SIGSTOP)
}
