package testmcp

import (
	"runtime"
	"syscall"
)

// freeze stops the whole process with SIGSTOP; it returns once the process
// is continued (SIGCONT).
//
// The signal is aimed at the calling thread (tgkill), not at the process
// (kill): a process-directed signal is taken by whichever thread the kernel
// picks, usually the main one, and until that thread starts the group stop
// the caller runs on, long enough to send the tool's answer before the
// process stops. A stop signal aimed at the caller is taken on its way out
// of the syscall, so it cannot return before the process is continued; the
// other threads stop with it (a stop signal stops the whole thread group).
func freeze() error {
	runtime.LockOSThread() // the thread named to tgkill must be the one calling it
	defer runtime.UnlockOSThread()
	return syscall.Tgkill(syscall.Getpid(), syscall.Gettid(), syscall.SIGSTOP)
}
