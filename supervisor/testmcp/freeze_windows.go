package testmcp

import "golang.org/x/sys/windows"

// ntSuspendProcess suspends every thread of a process, the calling one
// included: Windows' nearest thing to SIGSTOP.
var ntSuspendProcess = windows.NewLazySystemDLL("ntdll.dll").NewProc("NtSuspendProcess")

// freeze suspends the whole process; it returns once something resumes it
// (NtResumeProcess), as the Unix SIGSTOP version returns on SIGCONT.
func freeze() error {
	if st, _, _ := ntSuspendProcess.Call(uintptr(windows.CurrentProcess())); st != 0 {
		return windows.NTStatus(st)
	}
	return nil
}
