package install

import "os/exec"

// execLookPath checks one candidate file (and, on Windows, its PATHEXT
// variants).
func execLookPath(file string) (string, error) { return exec.LookPath(file) }
