package supervisor

import (
	"bufio"
	"bytes"
	"io"
	"sync"
)

// logRing keeps the most recent lines of a pool's processes, oldest first.
// It is safe for concurrent use.
type logRing struct {
	mu    sync.Mutex
	lines []LogLine
	next  int // where the next line goes once the ring is full
	size  int
}

func newLogRing(size int) *logRing { return &logRing{size: size} }

func (r *logRing) add(l LogLine) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.lines) < r.size {
		r.lines = append(r.lines, l)
		return
	}
	r.lines[r.next] = l
	r.next = (r.next + 1) % r.size
}

// snapshot returns the lines oldest first; with pid > 0, only that process's
// last n lines (n <= 0 means all).
func (r *logRing) snapshot(pid, n int) []LogLine {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]LogLine, 0, len(r.lines))
	for i := range r.lines {
		l := r.lines[(r.next+i)%len(r.lines)]
		if pid == 0 || l.PID == pid {
			out = append(out, l)
		}
	}
	if n > 0 && len(out) > n {
		out = out[len(out)-n:]
	}
	return out
}

// maxLogLine caps one stderr line; the rest of an overlong line is dropped.
const maxLogLine = 8192

// readLines calls fn for each line of r (without its line ending), capping
// overlong lines, until r ends.
func readLines(r io.Reader, fn func(string)) {
	br := bufio.NewReaderSize(r, 16<<10)
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if room := maxLogLine - len(line); room > 0 {
			line = append(line, chunk[:min(room, len(chunk))]...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if len(line) > 0 {
			fn(string(bytes.TrimRight(line, "\r\n")))
		}
		line = line[:0]
		if err != nil {
			return
		}
	}
}
