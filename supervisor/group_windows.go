package supervisor

import (
	"fmt"
	"os/exec"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// prepareGroup starts the child in a new process group so console control
// events aimed at the daemon do not reach it, and without a console window:
// the tray is a GUI program with no console, so Windows would otherwise open
// one window per stdio server (node, npx, uvx, python), on the user's
// desktop, for as long as the server runs. The child still gets a console
// (hidden), so console programs run as they would in a terminal.
func prepareGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: windows.CREATE_NEW_PROCESS_GROUP | windows.CREATE_NO_WINDOW}
}

// A group is the Job Object holding a server's process and every process it
// starts. The job is created with KILL_ON_JOB_CLOSE: when the daemon exits,
// however it exits, Windows closes the handle and kills the whole tree.
type group struct {
	pid int
	job windows.Handle
}

func newGroup(cmd *exec.Cmd) (*group, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return nil, fmt.Errorf("creating job object: %w", err)
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{
		BasicLimitInformation: windows.JOBOBJECT_BASIC_LIMIT_INFORMATION{
			LimitFlags: windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
		},
	}
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(job)
		return nil, fmt.Errorf("configuring job object: %w", err)
	}
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(cmd.Process.Pid))
	if err != nil {
		windows.CloseHandle(job)
		return nil, fmt.Errorf("opening process %d: %w", cmd.Process.Pid, err)
	}
	defer windows.CloseHandle(h)
	if err := windows.AssignProcessToJobObject(job, h); err != nil {
		windows.CloseHandle(job)
		return nil, fmt.Errorf("assigning process %d to its job: %w", cmd.Process.Pid, err)
	}
	return &group{pid: cmd.Process.Pid, job: job}, nil
}

func (g *group) id() int { return g.pid }

// terminate: Windows has no SIGTERM for console programs; closing stdin was
// the polite request, so this goes straight to ending the job.
func (g *group) terminate() error { return g.kill() }
func (g *group) kill() error      { return windows.TerminateJobObject(g.job, 1) }

func (g *group) alive() bool {
	var info jobAccounting
	err := windows.QueryInformationJobObject(g.job, windows.JobObjectBasicAccountingInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)), nil)
	return err == nil && info.ActiveProcesses > 0
}

func (g *group) release() { windows.CloseHandle(g.job) }

// signalGroup is used by the registry sweep; on Windows the Job Object already
// killed the survivors, so a recorded pid is only terminated on its own.
func signalGroup(pid int, _ syscall.Signal) error {
	h, err := windows.OpenProcess(windows.PROCESS_TERMINATE, false, uint32(pid))
	if err != nil {
		return nil // gone
	}
	defer windows.CloseHandle(h)
	return windows.TerminateProcess(h, 1)
}

// jobAccounting is JOBOBJECT_BASIC_ACCOUNTING_INFORMATION, which x/sys/windows
// does not define.
type jobAccounting struct {
	TotalUserTime             int64
	TotalKernelTime           int64
	ThisPeriodTotalUserTime   int64
	ThisPeriodTotalKernelTime int64
	TotalPageFaultCount       uint32
	TotalProcesses            uint32
	ActiveProcesses           uint32
	TotalTerminatedProcesses  uint32
}

// groupAlive reports whether process pid is still running: on Windows the
// Job Object holds the group, so a recorded pid stands for itself.
func groupAlive(pid int) bool { return ProcessAlive(pid) }

// ProcessAlive reports whether process pid is running.
func ProcessAlive(pid int) bool {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return false
	}
	defer windows.CloseHandle(h)
	var code uint32
	return windows.GetExitCodeProcess(h, &code) == nil && code == 259 // STILL_ACTIVE
}

// stopOrphanGroup terminates a process left by an earlier daemon (its Job
// Object normally did so already).
func stopOrphanGroup(pid int, _ time.Duration) { _ = signalGroup(pid, 0) }
