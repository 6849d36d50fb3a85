//go:build tray && !linux

package tray

import (
	"errors"
	"os/exec"
	"runtime"
	"strings"
)

// hostProblem: macOS' menu bar and Windows' notification area are always
// there.
func hostProblem() string { return "" }

// copyText puts text on the clipboard with the system's own tool.
func copyText(text string) error {
	if text == "" {
		return errors.New("nothing to copy")
	}
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("pbcopy")
	case "windows":
		cmd = exec.Command("clip")
	default:
		return errors.New("no clipboard on " + runtime.GOOS)
	}
	cmd.Stdin = strings.NewReader(text)
	return cmd.Run()
}
