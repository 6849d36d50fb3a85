//go:build !linux

package tokens

import "errors"

// fileWatch is Linux's inotify (watch_linux.go); elsewhere every check
// stats the file.
type fileWatch struct{}

func newFileWatch(string) (*fileWatch, error) {
	return nil, errors.ErrUnsupported
}

func (*fileWatch) mayHaveChanged() bool { return true }
func (*fileWatch) statFailed()          {}
func (*fileWatch) close() error         { return nil }
