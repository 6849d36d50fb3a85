//go:build !linux

package history

import (
	"log/slog"
	"os"
)

// journalTail is how far the journal's file may extend past its last
// line: not at all, lines are appended with write(2) (see journalOut).
const journalTail = 0

// openJournalOut opens the journal's file for appending: with a write(2)
// per line, the mapping of journal_out_linux.go being Linux's alone (its
// fallocate keeps a full disk from faulting a store).
func openJournalOut(path string, _ int64, _ *slog.Logger, _ journalOut) (journalOut, error) {
	return openAppendOut(path)
}

// appendOut is a journalOut of one write(2) per line.
type appendOut struct{ f *os.File }

func openAppendOut(path string) (journalOut, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	return appendOut{f}, nil
}

func (o appendOut) write(b []byte) (int, error) { return o.f.Write(b) }
func (o appendOut) empty() error                { return o.f.Truncate(0) }
func (o appendOut) close() error                { return o.f.Close() }
func (o appendOut) release() error              { return o.f.Close() }
func (o appendOut) stamps() bool                { return true }
