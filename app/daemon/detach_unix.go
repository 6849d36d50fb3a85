//go:build unix

package daemon

import (
	"os/exec"
	"syscall"
)

// detach starts the daemon in a session of its own, so it outlives the
// client that launched the bridge and the signals sent to that client's group.
func detach(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} }
