//go:build !windows

package atomicfile

import "os"

// rename replaces newpath with oldpath; POSIX rename replaces a file that
// others have open.
func rename(oldpath, newpath string) error { return os.Rename(oldpath, newpath) }
