//go:build !tray

package cli

// defaultVerb: without a command, the window and headless builds print
// the usage.
const defaultVerb = ""
