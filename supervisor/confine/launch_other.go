//go:build !linux && !darwin

package confine

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
)

func enforce(*Policy, int) (Status, []string, error) {
	return Status{Reason: "confinement is not built for " + runtime.GOOS + " yet"}, nil, nil
}

// execServer runs the server as a child where exec-in-place does not
// exist; the supervisor does not use the launcher there.
func execServer(path string, argv []string) error {
	cmd := exec.Command(path, argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("running %s: %w", path, err)
	}
	os.Exit(0)
	return nil
}
