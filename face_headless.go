//go:build !tray

package main

// defaultVerb: without a command, the window and headless builds print
// the usage.
const defaultVerb = ""
