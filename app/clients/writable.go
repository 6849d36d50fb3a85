package clients

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrReadOnly is returned (wrapped, in a *ReadOnlyError) by Plan for a file
// or folder that is read-only, unless the change is forced.
var ErrReadOnly = errors.New("read-only")

// A ReadOnlyError is a client file, or its folder, that is read-only. Its
// message says so and ends in "make it writable"; the other way past it, a
// forced change (Connect.Force, Disconnect.Force), is the caller's to word
// (the API names the command line's --force).
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
		"make it writable", e.Path, what, e.Mode.Perm())
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

// A MakeWritableError is a forced change's failure to give a read-only
// folder the owner's write permission (see makeWritable): Apply wrote
// nothing.
type MakeWritableError struct {
	Dir string // the folder
	Err error  // chmod's error
}

func (e *MakeWritableError) Error() string {
	return fmt.Sprintf("making %s writable: %v", e.Dir, e.Err)
}

func (e *MakeWritableError) Unwrap() error { return e.Err }

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
		return nil, &MakeWritableError{Dir: dir, Err: err}
	}
	return func() { _ = os.Chmod(dir, fi.Mode().Perm()) }, nil
}
