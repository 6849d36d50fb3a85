//go:build !windows

package tray

import "errors"

// newRegistryAutostart exists only on Windows.
func newRegistryAutostart() (Autostart, error) {
	return nil, errors.New("autostart: the Windows Run key is only available on Windows")
}
