package history

// A journalOut is how the journal's lines reach its file. Either way a
// line is in the kernel's hands once write returns, so a killed daemon
// loses none of them; neither syncs.
//
//   - appendOut writes each line with one write(2) on a file opened to
//     append;
//   - mappedOut (Linux, journal_out_linux.go) copies each line into a
//     mapping of the file's next bytes: a call's B line then costs no
//     system call, where the write(2) was most of what journaling cost a
//     call (and the journal's lock was held through it).
type journalOut interface {
	// write appends b and returns how many of its bytes it wrote.
	write(b []byte) (int, error)
	// empty truncates the file to nothing.
	empty() error
	// close lets go of the file, leaving it as long as its lines.
	close() error
	// release lets go of the file as a killed process would: a mapping's
	// unused bytes stay at its end. The journal releases the file it is
	// about to replace.
	release() error
	// stamps says whether a write sets the file's modification time, so
	// that the journal need not touch the file while it writes.
	stamps() bool
}

// failedOut is the journal's file once it could not be opened again after
// a rewrite: every write fails, and the journal says so once.
type failedOut struct{ err error }

func (o failedOut) write([]byte) (int, error) { return 0, o.err }
func (o failedOut) empty() error              { return o.err }
func (o failedOut) close() error              { return nil }
func (o failedOut) release() error            { return nil }
func (o failedOut) stamps() bool              { return true }
