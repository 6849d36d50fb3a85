package supervisor

import "os/exec"

// On Windows the Job Objects do the reaper's job; these keep the code shared.
func ignoreHangup()              {}
func clearDeathSignal(*exec.Cmd) {}
