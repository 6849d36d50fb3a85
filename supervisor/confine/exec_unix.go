//go:build linux || darwin

package confine

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// execServer replaces this process with the server (on macOS with
// sandbox-exec, which does the same with the server): same PID, process
// group and stdio.
func execServer(path string, argv []string) error {
	if err := syscall.Exec(path, argv, os.Environ()); err != nil {
		return fmt.Errorf("exec %s: %w", path, &exec.Error{Name: path, Err: err})
	}
	return nil
}
