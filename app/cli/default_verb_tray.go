//go:build tray

package cli

// defaultVerb is what the tray build runs without a command: the app as
// users start it (from a launcher, or at login).
const defaultVerb = "tray"
