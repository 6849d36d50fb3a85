// Package atomicfile replaces files so that a reader, or a crash, sees the
// old content or the new one, never a part: the new content goes to a
// temporary file in the same directory, is synced, and is renamed over the
// old, and the directory is synced where the system allows it.
//
// Switchboard writes its own files (config.json, tokens.json, daemon.json)
// and other applications' config files this way.
package atomicfile

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
)

// Write replaces the file at path with data. An existing file keeps its
// mode; a new one gets perm. When path is a symbolic link, the file it
// points to is replaced and the link is kept. The directory must exist.
func Write(path string, data []byte, perm fs.FileMode) error {
	return write(path, data, perm, nil)
}

func write(path string, data []byte, perm fs.FileMode, check func() error) (err error) {
	target := path
	if resolved, err := filepath.EvalSymlinks(path); err == nil {
		target = resolved
	}
	mode := perm
	if fi, err := os.Stat(target); err == nil {
		mode = fi.Mode().Perm()
	}
	dir, base := filepath.Split(target)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("writing %s: %w", tmp, err)
	}
	if err := f.Chmod(mode); err != nil && runtime.GOOS != "windows" {
		return fmt.Errorf("setting mode of %s: %w", tmp, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("closing %s: %w", tmp, err)
	}
	if check != nil {
		if err := check(); err != nil {
			return err
		}
	}
	if err := rename(tmp, target); err != nil {
		return fmt.Errorf("replacing %s: %w", target, err)
	}
	syncDir(dir)
	return nil
}

// syncDir makes a rename in dir durable where the system supports syncing a
// directory. It is best effort: the rename has happened either way, and
// Windows cannot open a directory for syncing.
func syncDir(dir string) {
	if runtime.GOOS == "windows" {
		return
	}
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	_ = d.Sync()
	_ = d.Close()
}

// WriteChecked is Write with a last check: the new content is written to
// the temporary file and synced first, then check runs, and only when it
// returns nil is the temporary file renamed over path. A caller that
// compares the target with what it last read in check closes the window
// in which another program's edit would be overwritten to the time of one
// read and one rename. The temporary file is removed when check fails, and
// its error is returned as is.
func WriteChecked(path string, data []byte, perm fs.FileMode, check func() error) error {
	return write(path, data, perm, check)
}
