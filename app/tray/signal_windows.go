//go:build windows

package tray

import "os"

// terminate ends the window; Windows has no SIGTERM to send to a GUI
// process from outside, and the window keeps no state of its own.
func terminate(p *os.Process) { p.Kill() }
