package supervisor

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// setDeathSignal asks the kernel to SIGKILL the direct child if the daemon
// dies. It is only a backup: the signal is tied to the OS thread that spawned
// the child, and it does not reach grandchildren (the reaper does).
func setDeathSignal(attr *syscall.SysProcAttr) { attr.Pdeathsig = syscall.SIGKILL }

// groupAlive reports whether any live (non-zombie) process is in group pgid.
// kill(-pgid, 0) would count zombies, which pile up where PID 1 does not reap
// (containers), so /proc is read instead.
func groupAlive(pgid int) bool {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return syscall.Kill(-pgid, 0) == nil
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		state, pg, ok := procStat(pid)
		if ok && pg == pgid && state != 'Z' && state != 'X' {
			return true
		}
	}
	return false
}

// procStat reads a process's state letter and process group from
// /proc/PID/stat ("pid (comm) S ppid pgrp ...": comm may hold spaces and
// parentheses, so parsing starts after the last ')').
func procStat(pid int) (state byte, pgid int, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return 0, 0, false
	}
	f := bytes.Fields(b[i+2:])
	if len(f) < 3 {
		return 0, 0, false
	}
	pg, err := strconv.Atoi(string(f[2]))
	if err != nil {
		return 0, 0, false
	}
	return f[0][0], pg, true
}

// clearDeathSignal: the reaper must outlive the daemon, that is its job.
func clearDeathSignal(cmd *exec.Cmd) { cmd.SysProcAttr.Pdeathsig = 0 }

// ProcessAlive reports whether process pid runs. A zombie (exited, not yet
// reaped by its parent) counts as gone: it serves nothing.
func ProcessAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	state, _, ok := procStat(pid)
	return ok && state != 'Z' && state != 'X'
}
