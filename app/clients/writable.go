package clients

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrReadOnly is returned (wrapped) by Plan for a file or folder that is
// read-only, unless the change is forced.
var ErrReadOnly = errors.New("read-only")

// A ReadOnlyError is a client file, or its folder, that is read-only.
type ReadOnlyError struct {
	Path   string // the file or folder
	Folder bool
	Mode   fs.FileMode
}

func (e *ReadOnlyError) Error() string {
	what := "the file"
	if e.Folder {
		what = "its folder"
	}
	return fmt.Sprintf("%s is read-only (%s has mode %04o): Switchboard does not change a file someone made read-only; "+
		"make it writable, or pass --force to change it anyway", e.Path, what, e.Mode.Perm())
}

func (e *ReadOnlyError) Unwrap() error { return ErrReadOnly }

// checkWritable refuses a read-only file, or a file in a read-only folder
// (the atomic replace renames into the folder, which would otherwise
// replace a read-only file regardless of its mode).
func checkWritable(path string, exists bool) error {
	target := path
	if resolved, err := filepath.EvalSymlinks(path); err == nil {
		target = resolved
	}
	if exists {
		if fi, err := os.Stat(target); err == nil && fi.Mode().Perm()&0o222 == 0 {
			return &ReadOnlyError{Path: path, Mode: fi.Mode()}
		}
	}
	for dir := filepath.Dir(target); ; dir = filepath.Dir(dir) {
		fi, err := os.Stat(dir)
		if err == nil {
			if fi.Mode().Perm()&0o222 == 0 {
				return &ReadOnlyError{Path: path, Folder: true, Mode: fi.Mode()}
			}
			return nil
		}
		if filepath.Dir(dir) == dir {
			return nil
		}
	}
}

// makeWritable gives the folder of path (a forced change) the owner's
// write permission, and returns what puts its mode back. The file's own
// mode is kept by the atomic replace.
func makeWritable(path string) (func(), error) {
	target := path
	if resolved, err := filepath.EvalSymlinks(path); err == nil {
		target = resolved
	}
	dir := filepath.Dir(target)
	fi, err := os.Stat(dir)
	if err != nil || fi.Mode().Perm()&0o200 != 0 {
		return func() {}, nil
	}
	if err := os.Chmod(dir, fi.Mode().Perm()|0o200); err != nil {
		return nil, fmt.Errorf("making %s writable (--force): %w", dir, err)
	}
	return func() { _ = os.Chmod(dir, fi.Mode().Perm()) }, nil
}
