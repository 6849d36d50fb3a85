package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// inotifyMask is what the watcher listens to: a file written and closed,
// created, moved in or out, or deleted. Not every write (IN_MODIFY), as
// fsnotify does: the data directory also holds the call journal and the
// history database, which the daemon writes on every call, and each of
// those writes woke the watcher (a read, an event, a name) for nothing.
// An edit of the config file ends with a close (an editor, echo >) or a
// rename (an atomic write, Update's own), which is what this hears.
const inotifyMask = unix.IN_CLOSE_WRITE | unix.IN_CREATE | unix.IN_MOVED_TO | unix.IN_MOVED_FROM |
	unix.IN_DELETE | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF

// inotifyWatcher is a dirWatcher on an inotify instance of its own.
type inotifyWatcher struct {
	f      *os.File // the inotify descriptor, non-blocking: Close ends a Read
	name   string
	names  chan string
	errs   chan error
	closed chan struct{}
	done   chan struct{} // closed when run has returned
}

func newDirWatcher(dir, name string) (dirWatcher, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("watching the directory %s: inotify: %w", dir, err)
	}
	if _, err := unix.InotifyAddWatch(fd, dir, inotifyMask|unix.IN_ONLYDIR); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("watching the directory %s: %w", dir, err)
	}
	w := &inotifyWatcher{f: os.NewFile(uintptr(fd), "inotify"), name: name, names: make(chan string), errs: make(chan error, 1),
		closed: make(chan struct{}), done: make(chan struct{})}
	go w.run()
	return w, nil
}

func (w *inotifyWatcher) run() {
	defer close(w.done)
	defer close(w.names)
	buf := make([]byte, 64*(unix.SizeofInotifyEvent+unix.NAME_MAX+1))
	for {
		n, err := w.f.Read(buf)
		if err != nil {
			if !errors.Is(err, os.ErrClosed) {
				w.report(fmt.Errorf("reading inotify events: %w", err))
			}
			return
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			nameEnd := min(off+unix.SizeofInotifyEvent+int(ev.Len), n)
			name := buf[off+unix.SizeofInotifyEvent : nameEnd]
			off = nameEnd
			if ev.Mask&unix.IN_Q_OVERFLOW != 0 {
				w.report(errors.New("inotify queue overflow: events were lost"))
				continue
			}
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			if string(name) != w.name {
				continue // another file, or the directory itself (deleted or moved)
			}
			select {
			case w.names <- w.name:
			case <-w.closed:
				return
			}
		}
	}
}

// report passes err on unless one is already waiting.
func (w *inotifyWatcher) report(err error) {
	select {
	case w.errs <- err:
	default:
	}
}

func (w *inotifyWatcher) Names() <-chan string { return w.names }
func (w *inotifyWatcher) Errors() <-chan error { return w.errs }

func (w *inotifyWatcher) Close() error {
	close(w.closed)
	err := w.f.Close()
	<-w.done
	return err
}
