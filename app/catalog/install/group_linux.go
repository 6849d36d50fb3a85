package install

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// setDeathSignal kills the direct child if the daemon dies mid-install.
func setDeathSignal(attr *syscall.SysProcAttr) { attr.Pdeathsig = syscall.SIGKILL }

// groupAlive reports whether a live (non-zombie) process is in group pgid.
// kill(-pgid, 0) counts zombies, which pile up where PID 1 does not reap.
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
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(b, ')')
		if i < 0 || i+2 >= len(b) {
			continue
		}
		f := bytes.Fields(b[i+2:])
		if len(f) < 3 {
			continue
		}
		if pg, err := strconv.Atoi(string(f[2])); err == nil && pg == pgid && pid > 0 && f[0][0] != 'Z' && f[0][0] != 'X' {
			return true
		}
	}
	return false
}
