package tokens

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The masks of fileWatch's two watches. The directory's: the entry
// tokens.json created, renamed in or out (an atomic write, Issue's and
// Revoke's own) or deleted, and the directory itself gone. Not writes to
// the directory's other files: the daemon writes the journal and the
// history database beside tokens.json on every call. The file's: every
// change of its content or attributes (a hand edit in place, a
// truncation, a touch).
const (
	dirWatchMask = unix.IN_CREATE | unix.IN_MOVED_TO | unix.IN_MOVED_FROM | unix.IN_DELETE |
		unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR
	fileWatchMask = unix.IN_MODIFY | unix.IN_ATTRIB | unix.IN_CLOSE_WRITE | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF
)

// fileWatch tells a Store whether its file may have changed since it was
// last looked at, so that a check costs one non-blocking read of an
// inotify descriptor instead of a stat of the path. It is as prompt as the
// stat: the kernel queues an event within the system call that changes
// the file (the rename, write, truncate or unlink), before that call
// returns to the process making the change, so a check that starts after
// another process's Revoke returned sees it. Guarded by the Store's mu.
type fileWatch struct {
	fd     int
	path   string
	name   string // the file's base name, as directory events name it
	dirWD  int
	fileWD int // -1 while the file does not exist
	buf    []byte
	// stale: something happened to the file since the last check, or the
	// last stat failed; the next check stats.
	stale bool
	// broken: events may have been lost (queue overflow, the directory
	// itself moved or removed); every check stats, as without a watch.
	broken bool
}

func newFileWatch(path string) (*fileWatch, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("watching token file %s: inotify: %w", path, err)
	}
	dirWD, err := unix.InotifyAddWatch(fd, filepath.Dir(path), dirWatchMask)
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("watching token file %s: %w", path, err)
	}
	return &fileWatch{fd: fd, path: path, name: filepath.Base(path), dirWD: dirWD, fileWD: -1,
		buf: make([]byte, 16*(unix.SizeofInotifyEvent+unix.NAME_MAX+1)), stale: true}, nil
}

// mayHaveChanged reads the events queued since the last call and reports
// whether the file may have changed since then (the caller then stats
// it). When it did, the watch on the file is moved to the file now at
// the path, before the caller's stat: a change after that stat is then
// an event for the next check.
func (w *fileWatch) mayHaveChanged() bool {
	for {
		n, err := unix.Read(w.fd, w.buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || n <= 0 { // EAGAIN: nothing more queued
			break
		}
		w.scan(w.buf[:n])
	}
	if w.broken {
		return true
	}
	if !w.stale {
		return false
	}
	w.stale = false
	wd, err := unix.InotifyAddWatch(w.fd, w.path, fileWatchMask)
	switch {
	case errors.Is(err, unix.ENOENT):
		w.fileWD = -1 // its creation is a directory event
	case err != nil:
		w.broken = true
	default:
		w.fileWD = wd
	}
	return true
}

// scan marks the watch stale for each event about the file in buf.
func (w *fileWatch) scan(buf []byte) {
	for off := 0; off+unix.SizeofInotifyEvent <= len(buf); {
		ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
		nameEnd := min(off+unix.SizeofInotifyEvent+int(ev.Len), len(buf))
		name := buf[off+unix.SizeofInotifyEvent : nameEnd]
		off = nameEnd
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		switch {
		case ev.Mask&unix.IN_Q_OVERFLOW != 0:
			w.broken = true
		case int(ev.Wd) == w.dirWD && len(name) == 0:
			// The directory itself moved or went: the path may now lead
			// elsewhere, unwatched.
			w.broken = true
		case int(ev.Wd) == w.dirWD:
			if string(name) == w.name {
				w.stale = true
			}
		default:
			// The file (or one it replaced, whose watch ends with
			// IN_IGNORED).
			w.stale = true
		}
	}
}

// statFailed makes the next check stat again.
func (w *fileWatch) statFailed() { w.stale = true }

func (w *fileWatch) close() error { return unix.Close(w.fd) }
