package testmcp

import "errors"

// errUnsupported is returned by tools that cannot work on this platform.
var errUnsupported = errors.New("unsupported")

// freeze is not supported on Windows, which has no SIGSTOP.
func freeze() error {
	return errUnsupported
}
