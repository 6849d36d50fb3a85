//go:build unix

package secrets

import (
	"fmt"
	"io/fs"
)

// checkPrivate refuses a secrets file others could read or write: whoever
// widened it may already have read it, and keeping on writing secrets there
// would hide that.
func checkPrivate(path string, fi fs.FileInfo) error {
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("refusing %s: its mode is %#o, wider than 0600; run chmod 600 %s if its contents are still private", path, perm, path)
	}
	return nil
}
