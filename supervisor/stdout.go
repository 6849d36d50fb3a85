package supervisor

import (
	"bufio"
	"bytes"
	"io"
)

// maxJunkLine caps how much of a non-protocol stdout line is kept for the log.
const maxJunkLine = 4096

// stdoutFilter passes a server's stdout to the MCP client line by line,
// dropping lines that cannot be JSON-RPC. The spec forbids non-protocol bytes
// on stdout, but many servers print a banner there anyway; the go-sdk's decoder
// would end the session on the first such line. A line counts as protocol when
// its first non-blank byte opens a JSON object or array; protocol lines are
// streamed through without being buffered whole, so large results cost one
// extra copy and no allocation.
type stdoutFilter struct {
	br      *bufio.Reader
	rc      io.ReadCloser
	inFrame bool // inside a protocol line, until its '\n'
	onJunk  func(line string)
}

func newStdoutFilter(rc io.ReadCloser, onJunk func(string)) *stdoutFilter {
	return &stdoutFilter{br: bufio.NewReaderSize(rc, 64<<10), rc: rc, onJunk: onJunk}
}

func (f *stdoutFilter) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		if f.inFrame {
			if _, err := f.br.Peek(1); err != nil {
				return 0, err
			}
			chunk, _ := f.br.Peek(min(f.br.Buffered(), len(p)))
			if i := bytes.IndexByte(chunk, '\n'); i >= 0 {
				chunk = chunk[:i+1]
				f.inFrame = false
			}
			n := copy(p, chunk)
			_, _ = f.br.Discard(n)
			return n, nil
		}
		b, err := f.br.Peek(1)
		if err != nil {
			return 0, err
		}
		switch b[0] {
		case '{', '[':
			f.inFrame = true
		case ' ', '\t', '\r', '\n':
			_, _ = f.br.Discard(1)
		default:
			line, err := f.skipLine()
			f.onJunk(line)
			if err != nil {
				return 0, err
			}
		}
	}
}

// skipLine consumes the rest of a line, returning at most maxJunkLine bytes
// of it without its line ending.
func (f *stdoutFilter) skipLine() (string, error) {
	var kept []byte
	for {
		chunk, err := f.br.ReadSlice('\n')
		if room := maxJunkLine - len(kept); room > 0 {
			kept = append(kept, chunk[:min(room, len(chunk))]...)
		}
		if err != bufio.ErrBufferFull {
			return string(bytes.TrimRight(kept, "\r\n")), err
		}
	}
}

func (f *stdoutFilter) Close() error { return f.rc.Close() }
