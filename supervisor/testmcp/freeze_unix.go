//go:build unix

package testmcp

import "syscall"

// freeze stops the whole process with SIGSTOP; it returns once the process
// is continued (SIGCONT).
func freeze() error {
	return syscall.Kill(syscall.Getpid(), syscall.SIGSTOP)
}
