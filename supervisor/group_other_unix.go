//go:build unix && !linux

package supervisor

import (
	"os/exec"
	"syscall"
)

// setDeathSignal: only Linux has a parent-death signal; elsewhere the reaper
// and the registry sweep cover a daemon that dies.
func setDeathSignal(*syscall.SysProcAttr) {}

// groupAlive reports whether any process is in group pgid (zombies included:
// on macOS launchd reaps orphans promptly).
func groupAlive(pgid int) bool { return syscall.Kill(-pgid, 0) == nil }

func clearDeathSignal(*exec.Cmd) {}
