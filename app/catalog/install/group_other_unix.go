//go:build unix && !linux

package install

import "syscall"

func setDeathSignal(*syscall.SysProcAttr) {}

func groupAlive(pgid int) bool { return syscall.Kill(-pgid, 0) == nil }
