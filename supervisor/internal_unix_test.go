//go:build unix

package supervisor

import (
	"os"
	"syscall"
)

func syscallZero() os.Signal { return syscall.Signal(0) }
