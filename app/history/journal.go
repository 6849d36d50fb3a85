package history

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/app/atomicfile"
	"github.com/switchboardhq/switchboard/app/record"
)

// A Journal notes each call when it starts, so that a call in flight when
// the daemon dies is not lost: the next daemon finds it begun and never
// ended, and records it as interrupted.
//
// It is an append-only file of one line per entry:
//
//	B <id> <start µs> "label" "client" "version" "session" "endpoint" "server" "method" "name" "<arguments in base64>" [<duration µs>]
//	E <id> [<id>...]
//
// An interrupted call ran until the daemon died, which nothing writes
// down; the file's modification time is the last moment the daemon is
// known to have been alive: every line written sets it, and while a call
// is open the journal touches the file every AliveInterval. The next
// daemon records an interrupted call's duration as that time less its
// start (within AliveInterval of the time it really ran, not the time of
// the next start), and writes it after the call's B line when it carries
// the call over, so that a second crash before the call is stored does
// not stretch it to the next start either.
//
// Begin (the gateway, when a call starts) appends a B line; the history's
// writer appends one E line for the calls of each batch once the batch has
// committed, so a call is always in the journal or in the database. The
// lines are in the kernel's hands once written (stored into a mapping of
// the file on Linux, a write(2) each elsewhere: see journalOut) and never
// synced: a killed process loses nothing the kernel already has (only a
// crash of the whole machine could). The file is compacted when it grows:
// emptied when no call is open, else rewritten with the open calls only.
type Journal struct {
	path string
	log  *slog.Logger

	mu   sync.Mutex
	out  journalOut // nil once closed
	buf  []byte     // the line being written, reused
	next uint64     // the next id
	// open holds the calls begun and not ended, and where their B lines
	// are in the file, so that a rewrite reads those lines only.
	open   map[uint64]lineSpan
	size   int64 // bytes in the file
	failed bool  // a write failed; logged once
	// touched is when the file was last written or touched.
	touched     time.Time
	touchFailed bool // a touch failed; logged once

	// opened has a value once a call opens when none was: keepAlive then
	// touches the file until none is open, and waits for it otherwise, so
	// that an idle daemon is not woken twice a second for nothing.
	opened    chan struct{}
	stopAlive chan struct{} // closed by Close: keepAlive returns
	aliveDone chan struct{}
}

// A lineSpan is where a line is in the journal's file.
type lineSpan struct {
	off int64
	n   int
}

// AliveInterval is how often the journal touches its file while a call is
// open: how far an interrupted call's recorded duration can fall short of
// the time it ran.
const AliveInterval = 500 * time.Millisecond

// JournalOutcome is the outcome of a call found begun and never ended.
const JournalOutcome = record.OutcomeInterrupted

// InterruptedError is the error text of an interrupted call.
const InterruptedError = "Switchboard stopped before the call ended (the daemon was killed or crashed); the result is unknown"

// Compaction thresholds: the file is emptied past journalCompact when no
// call is open, and rewritten with the open calls past journalRewrite.
const (
	journalCompact = 1 << 20
	journalRewrite = 8 << 20
	// journalArgsLimit caps the arguments kept per call.
	journalArgsLimit = 16 << 10
)

// OpenJournal opens (creating if needed) the journal at path and returns
// the calls an earlier daemon began and never ended, as interrupted calls.
// They stay begun in the journal, with their ids in Call.Journal, until the
// history has stored them.
func OpenJournal(path string, log *slog.Logger) (*Journal, []record.Call, error) {
	if log == nil {
		log = slog.Default()
	}
	alive, err := lastAlive(path)
	if err != nil {
		return nil, nil, err
	}
	begun, next, err := readJournal(path)
	if err != nil {
		return nil, nil, err
	}
	j := &Journal{path: path, log: log, next: next, open: make(map[uint64]lineSpan, len(begun)),
		opened: make(chan struct{}, 1), stopAlive: make(chan struct{}), aliveDone: make(chan struct{})}
	// Start over with only the calls left open, each with the time it ran.
	var data []byte
	var calls []record.Call
	for _, b := range begun {
		c := b.call
		line := b.line
		if !b.timed {
			c.Duration = max(alive.Sub(c.Start), 0).Truncate(time.Microsecond)
			line = withDuration(line, c.Duration)
		}
		j.open[b.id] = lineSpan{int64(len(data)), len(line)}
		data = append(data, line...)
		c.Outcome, c.Error, c.Journal = JournalOutcome, InterruptedError, b.id
		calls = append(calls, c)
	}
	if err := atomicfile.Write(path, data, 0o600); err != nil {
		return nil, nil, fmt.Errorf("history: rewriting the call journal: %w", err)
	}
	if j.out, err = openJournalOut(path, int64(len(data)), log, nil); err != nil {
		return nil, nil, fmt.Errorf("history: opening the call journal: %w", err)
	}
	j.size, j.touched = int64(len(data)), time.Now()
	if len(j.open) > 0 {
		j.opened <- struct{}{} // the calls carried over
	}
	go j.keepAlive()
	return j, calls, nil
}

// lastAlive is the modification time of the journal at path: the last
// moment its daemon is known to have been alive (zero if there is no file).
func lastAlive(path string) (time.Time, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("history: reading the call journal: %w", err)
	}
	return fi.ModTime(), nil
}

// withDuration returns a B line (ending in a newline) with the duration of
// its call after it.
func withDuration(line []byte, d time.Duration) []byte {
	out := append([]byte(nil), bytes.TrimSuffix(line, []byte("\n"))...)
	out = append(out, ' ')
	out = strconv.AppendInt(out, d.Microseconds(), 10)
	return append(out, '\n')
}

// keepAlive touches the file every AliveInterval while a call is open and
// nothing else wrote it meanwhile, until Close.
func (j *Journal) keepAlive() {
	defer close(j.aliveDone)
	for {
		select {
		case <-j.stopAlive:
			return
		case <-j.opened:
		}
		if !j.touchWhileOpen() {
			return
		}
	}
}

// touchWhileOpen touches the file every AliveInterval until no call is
// open (true) or Close (false).
func (j *Journal) touchWhileOpen() bool {
	tick := time.NewTicker(AliveInterval)
	defer tick.Stop()
	for {
		select {
		case <-j.stopAlive:
			return false
		case now := <-tick.C:
			j.mu.Lock()
			open := j.out != nil && len(j.open) > 0
			if open && now.Sub(j.touched) >= AliveInterval/2 {
				j.touch(now)
			}
			j.mu.Unlock()
			if !open {
				return true
			}
		}
	}
}

// touch sets the file's modification time to now; j.mu is held.
func (j *Journal) touch(now time.Time) {
	if err := os.Chtimes(j.path, time.Time{}, now); err != nil {
		if !j.touchFailed {
			j.touchFailed = true
			j.log.Warn("history: cannot touch the call journal; calls in flight at a crash will be recorded shorter than they ran", "path", j.path, "err", err)
		}
		return
	}
	j.touched = now
}

// Begin notes that c has started and returns its journal id (0 if the
// journal could not be written). The caller puts the id in c.Journal, so
// that the history ends it once c is stored.
func (j *Journal) Begin(c *record.Call) uint64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.out == nil {
		return 0
	}
	j.next++
	id := j.next
	b := append(j.buf[:0], "B "...)
	b = strconv.AppendUint(b, id, 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, c.Start.UnixMicro(), 10)
	for _, s := range [...]string{c.ClientLabel, c.ClientName, c.ClientVersion, c.Session, c.Endpoint, c.Server, c.Method, c.Name} {
		b = append(b, ' ')
		b = appendQuoted(b, s)
	}
	b = append(b, ' ')
	args := c.Arguments
	if len(args) > journalArgsLimit {
		args = nil // too big to note; the call is still known
	}
	b = append(b, '"') // base64 needs no escaping, and takes no allocation
	b = base64.StdEncoding.AppendEncode(b, args)
	b = append(b, '"', '\n')
	j.buf = b
	off := j.size
	if !j.write(b) {
		return 0
	}
	j.open[id] = lineSpan{off, len(b)}
	if len(j.open) == 1 {
		select {
		case j.opened <- struct{}{}:
		default: // keepAlive has one to take already
		}
	}
	return id
}

// appendQuoted appends s quoted as strconv.AppendQuote quotes it, which
// parseBegin's strconv.Unquote reads. A call's strings (its client,
// session, server, tool) are nearly always printable ASCII without a quote
// or a backslash, which AppendQuote copies as they are, but only after
// decoding and checking each rune: half of what Begin cost.
func appendQuoted(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' || c > '~' || c == '"' || c == '\\' {
			return strconv.AppendQuote(b, s)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// End notes that the calls ids are stored; 0s are skipped.
func (j *Journal) End(ids ...uint64) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.out == nil {
		return
	}
	b := append(j.buf[:0], 'E')
	n := 0
	for _, id := range ids {
		if id != 0 {
			b = append(b, ' ')
			b = strconv.AppendUint(b, id, 10)
			n++
		}
	}
	if n == 0 {
		return
	}
	b = append(b, '\n')
	j.buf = b
	if j.write(b) {
		for _, id := range ids {
			delete(j.open, id)
		}
	}
	j.compact()
}

// write appends b; j.mu is held.
func (j *Journal) write(b []byte) bool {
	n, err := j.out.write(b)
	j.size += int64(n)
	if j.out.stamps() {
		j.touched = time.Now()
	}
	if err != nil {
		if !j.failed {
			j.failed = true
			j.log.Warn("history: cannot write the call journal; calls in flight at a crash will be missing", "path", j.path, "err", err)
		}
		return false
	}
	return true
}

// compact keeps the file small; j.mu is held.
func (j *Journal) compact() {
	switch {
	case j.size > journalCompact && len(j.open) == 0:
		if err := j.out.empty(); err != nil {
			j.log.Warn("history: cannot empty the call journal", "err", err)
			return
		}
		j.size = 0
	case j.size > journalRewrite:
		data, open, err := j.openLines()
		if err != nil {
			j.log.Warn("history: reading the call journal whole to compact it", "err", err)
			data, open, err = j.openLinesOfFile()
		}
		if err != nil {
			j.log.Warn("history: cannot compact the call journal", "err", err)
			return
		}
		// Windows refuses to replace a file that is open, by this process
		// too: the file is let go of for the rename and opened again.
		j.out.release()
		rewritten := atomicfile.Write(j.path, data, 0o600)
		if rewritten != nil {
			j.log.Warn("history: cannot compact the call journal", "err", rewritten)
		} else {
			j.open, j.size = open, int64(len(data))
		}
		out, err := openJournalOut(j.path, j.size, j.log, j.out)
		if err != nil {
			// Each write fails from now on, and write reports it.
			j.log.Warn("history: cannot reopen the call journal", "err", err)
			out = failedOut{err}
		}
		j.out = out
	}
}

// openLines reads the B lines of the open calls, in the order they began,
// and returns them with where each will be once they are the whole file;
// j.mu is held. It reads those lines only: under a steady load a call is
// always open, and the file is rewritten every journalRewrite bytes.
func (j *Journal) openLines() ([]byte, map[uint64]lineSpan, error) {
	f, err := os.Open(j.path)
	if err != nil {
		return nil, nil, fmt.Errorf("history: reading the call journal: %w", err)
	}
	defer f.Close()
	ids := slices.Sorted(maps.Keys(j.open))
	var data []byte
	open := make(map[uint64]lineSpan, len(ids))
	prefix := make([]byte, 0, 24)
	for _, id := range ids {
		at := j.open[id]
		start := len(data)
		data = slices.Grow(data, at.n)[:start+at.n]
		if _, err := f.ReadAt(data[start:], at.off); err != nil {
			return nil, nil, fmt.Errorf("history: reading the call journal: %w", err)
		}
		// A line that is not where it was written means the file changed
		// under the journal: the caller reads it whole instead.
		prefix = append(strconv.AppendUint(append(prefix[:0], "B "...), id, 10), ' ')
		if !bytes.HasPrefix(data[start:], prefix) || data[len(data)-1] != '\n' {
			return nil, nil, fmt.Errorf("history: the call journal %s changed under it: call %d is not where it was written", j.path, id)
		}
		open[id] = lineSpan{int64(start), at.n}
	}
	return data, open, nil
}

// openLinesOfFile is openLines from the calls the file says are open,
// read whole (as the next daemon would read it).
func (j *Journal) openLinesOfFile() ([]byte, map[uint64]lineSpan, error) {
	begun, _, err := readJournal(j.path)
	if err != nil {
		return nil, nil, err
	}
	var data []byte
	open := make(map[uint64]lineSpan, len(begun))
	for _, b := range begun {
		open[b.id] = lineSpan{int64(len(data)), len(b.line)}
		data = append(data, b.line...)
	}
	return data, open, nil
}

// Close closes the journal file; calls still open stay in it, for the
// next daemon to record as interrupted, as having run until now.
func (j *Journal) Close() error {
	j.mu.Lock()
	if j.out == nil {
		j.mu.Unlock()
		return nil
	}
	err := j.out.close()
	if len(j.open) > 0 {
		j.touch(time.Now()) // after the trim of close, which sets the time too
	}
	j.out = nil
	j.mu.Unlock()
	close(j.stopAlive)
	<-j.aliveDone
	return err
}

// begunCall is a B line without its E.
type begunCall struct {
	id   uint64
	line []byte
	call record.Call
	// timed: the line holds the call's duration (an earlier daemon
	// carried the call over and worked it out).
	timed bool
}

// readJournal returns the calls of the journal at path begun and never
// ended, in order, and the id after the largest seen. A line cut short by
// a crash, or otherwise unreadable, is skipped.
//
// Only the B lines of calls still open are parsed in full: the journal is
// read again each time it is compacted with calls open (as it is under a
// steady load, every journalRewrite bytes), and parsing every call's line
// then cost more than writing it had.
func readJournal(path string) ([]begunCall, uint64, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 1, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("history: reading the call journal: %w", err)
	}
	// Past the last line, a file mapped for more (journal_out_linux.go) is
	// zeros, which no line holds (its texts are quoted, its arguments
	// base64).
	data = bytes.TrimRight(data, "\x00")
	type begin struct {
		id   uint64
		line []byte
	}
	var begins []begin
	ended := map[uint64]bool{}
	var maxID uint64
	for line := range bytes.Lines(data) {
		// The lines stay in data, which begins points into.
		line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
		// Zeros before a line are a hole: the file was cut short under a
		// mapping, and the next line written where it would have gone.
		line = bytes.TrimLeft(line, "\x00")
		if len(line) > maxJournalLine {
			continue // not a line Begin writes
		}
		switch {
		case bytes.HasPrefix(line, []byte("B ")):
			idText, _, ok := bytes.Cut(line[2:], []byte(" "))
			id, err := strconv.ParseUint(string(idText), 10, 64)
			if !ok || err != nil {
				continue
			}
			begins = append(begins, begin{id, line})
		case bytes.HasPrefix(line, []byte("E ")):
			for _, f := range bytes.Fields(line[2:]) {
				if id, err := strconv.ParseUint(string(f), 10, 64); err == nil {
					ended[id] = true
					maxID = max(maxID, id)
				}
			}
		}
	}
	var open []begunCall
	for _, bl := range begins {
		if ended[bl.id] {
			maxID = max(maxID, bl.id)
			continue
		}
		b, ok := parseBegin(bl.line)
		if !ok {
			continue
		}
		maxID = max(maxID, b.id)
		b.line = append(append([]byte(nil), bl.line...), '\n')
		open = append(open, b)
	}
	return open, maxID + 1, nil
}

// maxJournalLine bounds the lines readJournal reads: a B line holds at
// most journalArgsLimit bytes of arguments, in base64, beside its fields.
const maxJournalLine = 4*journalArgsLimit + 1<<10

func parseBegin(line []byte) (begunCall, bool) {
	fields := string(line[2:])
	var b begunCall
	idText, rest, ok := cut(fields)
	if !ok {
		return b, false
	}
	startText, rest, ok := cut(rest)
	if !ok {
		return b, false
	}
	var err error
	if b.id, err = strconv.ParseUint(idText, 10, 64); err != nil {
		return b, false
	}
	start, err := strconv.ParseInt(startText, 10, 64)
	if err != nil {
		return b, false
	}
	var strs [9]string
	for i := range strs {
		q, err := strconv.QuotedPrefix(rest)
		if err != nil {
			return b, false
		}
		if strs[i], err = strconv.Unquote(q); err != nil {
			return b, false
		}
		rest = rest[len(q):]
		if len(rest) > 0 && rest[0] == ' ' {
			rest = rest[1:]
		}
	}
	if rest != "" {
		us, err := strconv.ParseInt(rest, 10, 64)
		if err != nil || us < 0 {
			return b, false
		}
		b.call.Duration, b.timed = time.Duration(us)*time.Microsecond, true
	}
	c := &b.call
	c.Start = time.UnixMicro(start)
	c.ClientLabel, c.ClientName, c.ClientVersion, c.Session = strs[0], strs[1], strs[2], strs[3]
	c.Endpoint, c.Server, c.Method, c.Name = strs[4], strs[5], strs[6], strs[7]
	if strs[8] != "" {
		args, err := base64.StdEncoding.DecodeString(strs[8])
		if err != nil {
			return b, false
		}
		c.Arguments = args
	}
	return b, true
}

// cut splits off the first space-separated field.
func cut(s string) (field, rest string, ok bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' {
			return s[:i], s[i+1:], true
		}
	}
	return "", "", false
}
