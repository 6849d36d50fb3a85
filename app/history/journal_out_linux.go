package history

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"syscall"
)

// mapWindow is how much of the file mappedOut maps at a time, past the
// last line. The window's pages count in the daemon's RSS once written,
// so it is kept small; moving it costs three system calls, once per about
// 250 calls of a few hundred bytes.
const mapWindow = 64 << 10

// journalTail is how far the journal's file may extend past its last line:
// the rest of mappedOut's window, zeros that readJournal skips.
const journalTail = mapWindow

// mappedOut appends lines by copying them into a shared mapping of the
// file, the window of mapWindow bytes (or the line's length, if more) from
// the page of the next line on. Stores into a shared mapping are the
// page cache's at once: a killed process loses none of them, and a reader
// of the file sees them, as after a write(2).
//
// The window's blocks are allocated (fallocate) before it is mapped, so
// that a full disk is an error then rather than a SIGBUS when a line is
// stored. A fault all the same (the file truncated by another program
// under the mapping) is caught: from then on the lines are written with
// pwrite(2), as they would have been without the mapping. Nothing on this
// path takes a system call but the window's move.
type mappedOut struct {
	f      *os.File
	log    *slog.Logger
	end    int64  // the file's length in lines: where the next line goes
	win    []byte // the mapping: the file from winOff on
	winOff int64
	failed bool // the mapping failed: lines are written with pwrite
}

// openJournalOut opens the journal's file, of size bytes of lines, for
// appending; replaced is the out of the file it replaces (nil at first). A
// mapping that failed on the file before fails on its rewrite too (the
// file system has no fallocate, or the disk is full): it is not tried,
// and said, again at every rewrite.
func openJournalOut(path string, size int64, log *slog.Logger, replaced journalOut) (journalOut, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	o := &mappedOut{f: f, log: log, end: size}
	if r, ok := replaced.(*mappedOut); ok {
		o.failed = r.failed
	}
	return o, nil
}

func (o *mappedOut) write(b []byte) (int, error) {
	if !o.failed && o.store(b) {
		o.end += int64(len(b))
		return len(b), nil
	}
	n, err := o.f.WriteAt(b, o.end)
	o.end += int64(n)
	return n, err
}

// store copies b into the window at the end of the lines, moving the
// window first if b does not fit; false if the mapping failed, which it
// does once.
func (o *mappedOut) store(b []byte) (stored bool) {
	if o.end+int64(len(b)) > o.winOff+int64(len(o.win)) {
		if err := o.move(len(b)); err != nil {
			// A file system without fallocate (NFS, older ZFS) or a full
			// disk, which the write that follows reports.
			o.fail(slog.LevelInfo, err)
			return false
		}
	}
	defer func() {
		if r := recover(); r != nil {
			o.fail(slog.LevelWarn, fmt.Errorf("storing a line in the mapped file: %v", r))
			stored = false
		}
	}()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	copy(o.win[o.end-o.winOff:], b)
	return true
}

// move maps the window from the page of the next line on, large enough
// for n bytes, its blocks allocated and within the file.
func (o *mappedOut) move(n int) error {
	if err := o.unmap(); err != nil {
		return err
	}
	page := int64(os.Getpagesize())
	off := o.end &^ (page - 1)
	length := max(int64(mapWindow), (o.end+int64(n)-off+page-1)&^(page-1))
	fd := int(o.f.Fd())
	// Mode 0 also extends the file to the window's end: a mapping's pages
	// past the end of its file fault when touched.
	if err := syscall.Fallocate(fd, 0, off, length); err != nil {
		return fmt.Errorf("allocating %d bytes of the journal at %d: %w", length, off, err)
	}
	win, err := syscall.Mmap(fd, off, int(length), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return fmt.Errorf("mapping the journal: %w", err)
	}
	o.win, o.winOff = win, off
	return nil
}

func (o *mappedOut) unmap() error {
	if o.win == nil {
		return nil
	}
	err := syscall.Munmap(o.win)
	o.win, o.winOff = nil, 0
	return err
}

// fail gives the mapping up for pwrite, and says so once: at level, a
// warning when something cut the file under the mapping.
func (o *mappedOut) fail(level slog.Level, err error) {
	o.failed = true
	_ = o.unmap()
	o.log.Log(context.Background(), level, "history: writing the call journal with a system call per line from now on", "path", o.f.Name(), "err", err)
}

func (o *mappedOut) empty() error {
	if err := o.unmap(); err != nil {
		return err
	}
	if err := o.f.Truncate(0); err != nil {
		return err
	}
	o.end = 0
	return nil
}

// close trims the window's unused bytes off the file.
func (o *mappedOut) close() error {
	return errors.Join(o.unmap(), o.f.Truncate(o.end), o.f.Close())
}

func (o *mappedOut) release() error { return errors.Join(o.unmap(), o.f.Close()) }

// stamps is false: stores into a mapping need not set the file's time.
func (o *mappedOut) stamps() bool { return false }
