//go:build unix

package tray

import (
	"os"
	"syscall"
)

func terminate(p *os.Process) { p.Signal(syscall.SIGTERM) }
