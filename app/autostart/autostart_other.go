//go:build !windows

package autostart

import "errors"

// newRegistryAutostart exists only on Windows.
func newRegistryAutostart() (Entry, error) {
	return nil, errors.New("autostart: the Windows Run key is only available on Windows")
}
