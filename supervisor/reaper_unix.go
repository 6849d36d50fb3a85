//go:build unix

package supervisor

import (
	"os/signal"
	"syscall"
)

func ignoreHangup() { signal.Ignore(syscall.SIGHUP, syscall.SIGINT) }
