package atomicfile

import (
	"errors"
	"os"
	"time"

	"golang.org/x/sys/windows"
)

// renameRetryFor bounds how long rename waits for readers to let go.
const renameRetryFor = 2 * time.Second

// rename replaces newpath with oldpath. On Windows a file that another
// handle has open without FILE_SHARE_DELETE (every os.Open and os.ReadFile
// in Go, and most programs) cannot be replaced: MoveFileEx fails with
// access denied or a sharing violation until that handle is closed. Readers
// of Switchboard's files hold them for a moment, so the rename is retried
// with a short backoff for a bounded time, as Go's own cmd/go does.
func rename(oldpath, newpath string) error {
	deadline := time.Now().Add(renameRetryFor)
	wait := time.Millisecond
	for {
		err := os.Rename(oldpath, newpath)
		if err == nil || !transient(err) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(wait)
		wait = min(2*wait, 50*time.Millisecond)
	}
}

// transient reports whether err is Windows saying the file is in use.
func transient(err error) bool {
	return errors.Is(err, windows.ERROR_ACCESS_DENIED) || errors.Is(err, windows.ERROR_SHARING_VIOLATION)
}
