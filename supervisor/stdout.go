package supervisor

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/internal/mcpscan"
)

// maxJunkLine caps how much of a non-protocol stdout line is kept for the log.
const maxJunkLine = 4096

// DefaultMaxMessageSize bounds one JSON-RPC message a server writes on
// stdout. Real results can be tens of megabytes (a file, a screenshot); a
// line longer than this is cut, logged and dropped, never buffered whole.
const DefaultMaxMessageSize = 128 << 20

// stdioTransport is the connection to a server process over its pipes,
// framed by lines. The MCP stdio transport says a server writes nothing
// but newline-delimited JSON-RPC messages on stdout; real servers print
// banners, console.log objects, pretty-printed JSON and log lines there
// too, and a decoder that ends the session on the first bad byte (the
// go-sdk's IOTransport does) turns each of those into a crash. So every
// line is judged on its own: a complete JSON-RPC 2.0 message (or a batch of
// them) goes to the protocol; anything else is the server's output, handed
// to onJunk like a stderr line. The session ends only when stdout does.
type stdioTransport struct {
	stdout io.ReadCloser
	stdin  io.WriteCloser
	// maxMessage bounds a protocol line; longer lines are cut and logged.
	maxMessage int
	// onJunk receives each non-protocol line, cut to maxJunkLine bytes.
	onJunk func(line string)
}

func (t *stdioTransport) Connect(context.Context) (mcp.Connection, error) {
	c := &stdioConn{
		stdin:    t.stdin,
		stdout:   t.stdout,
		incoming: make(chan readResult),
		closed:   make(chan struct{}),
	}
	// Lines are judged by the read loop and, for those that are valid JSON,
	// by whoever decodes them: one at a time.
	var junkMu sync.Mutex
	onJunk := func(line string) {
		junkMu.Lock()
		defer junkMu.Unlock()
		t.onJunk(line)
	}
	c.lr = &lineReader{br: bufio.NewReaderSize(t.stdout, 64<<10), max: t.maxMessage, onJunk: onJunk}
	go c.readLoop()
	return c, nil
}

// A LineConn is the mcp.Connection the supervisor makes over a process's
// pipes. Besides Read, it hands out each line that may be a message before
// it is decoded, so that a client of the supervisor can take a big response
// without decoding it (the gateway passes a tool's result on as the
// server's own bytes): NextLine, then DecodeLine for what it does not take.
type LineConn interface {
	mcp.Connection
	// NextLine returns the next line that may be a JSON-RPC message, or,
	// in place of a response too long to take, an error response for its
	// call (msg set, line nil). Lines that cannot be a message (a banner)
	// have been kept as the server's output already.
	NextLine(ctx context.Context) (line []byte, msg jsonrpc.Message, err error)
	// DecodeLine decodes a line from NextLine: ok is false when it is not
	// a JSON-RPC 2.0 message (or batch), which is then kept as the server's
	// output (and a response it started fails its call: ok, with msg the
	// error response). A batch's first message is returned, the rest are
	// queued for Read.
	DecodeLine(line []byte) (msg jsonrpc.Message, ok bool)
	// Queued reports whether messages of a batch wait to be Read.
	Queued() bool
}

// A LineTapper is a LineConn that can show each line to a tap as soon as
// it is read, on the goroutine that reads the process's stdout, before the
// line is queued for Read (NextLine). A line the tap takes (it returns
// true) is not queued: the gateway hands the response to one of its own
// calls to the waiting call there, without a second goroutine between.
// The tap sees lines in order, only those NextLine would return (valid
// JSON opening an object or array), and must not keep a line it does not
// take nor block.
type LineTapper interface {
	SetLineTap(tap func(line []byte) bool)
}

type readResult struct {
	line []byte
	msg  jsonrpc.Message
	err  error
}

// stdioConn is an mcp.Connection over a process's stdin and stdout.
type stdioConn struct {
	stdin  io.WriteCloser
	stdout io.ReadCloser

	writeMu sync.Mutex

	incoming  chan readResult
	closed    chan struct{}
	closeOnce sync.Once
	closeErr  error

	lr    *lineReader       // read by readLoop; DecodeLine uses its onJunk
	queue []jsonrpc.Message // rest of a batch; only the reading goroutine touches it

	tap atomic.Pointer[func([]byte) bool] // SetLineTap's; nil: every line goes to Read
}

var (
	_ LineConn   = (*stdioConn)(nil)
	_ LineTapper = (*stdioConn)(nil)
)

// SetLineTap sets the tap that sees each line first (see LineTapper);
// lines read before it is set go to Read.
func (c *stdioConn) SetLineTap(tap func(line []byte) bool) { c.tap.Store(&tap) }

// readLoop reads stdout until it ends or the connection closes. Reading in
// its own goroutine lets Read honour its context and Close.
func (c *stdioConn) readLoop() {
	for {
		line, msg, err := c.lr.next()
		if line != nil && err == nil {
			if tap := c.tap.Load(); tap != nil && (*tap)(line) {
				continue
			}
		}
		select {
		case c.incoming <- readResult{line: line, msg: msg, err: err}:
		case <-c.closed:
			return
		}
		if err != nil {
			return
		}
	}
}

func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if len(c.queue) > 0 {
		m := c.queue[0]
		c.queue = c.queue[1:]
		return m, nil
	}
	for {
		line, msg, err := c.NextLine(ctx)
		if err != nil {
			return nil, err
		}
		if msg != nil {
			return msg, nil
		}
		if msg, ok := c.DecodeLine(line); ok {
			return msg, nil
		}
	}
}

func (c *stdioConn) NextLine(ctx context.Context) ([]byte, jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	case <-c.closed:
		return nil, nil, io.EOF
	case r := <-c.incoming:
		return r.line, r.msg, r.err
	}
}

func (c *stdioConn) DecodeLine(line []byte) (jsonrpc.Message, bool) {
	if msgs := decodeLine(line); msgs != nil {
		c.queue = append(c.queue, msgs[1:]...)
		return msgs[0], true
	}
	c.lr.onJunk(junkText(line))
	// A broken response (cut short, then a newline) still names the call
	// it answers: fail that call now, not at its timeout.
	if broken := failedResponse(line, brokenResponse); broken != nil {
		return broken, true
	}
	return nil, false
}

// brokenResponse is the error of a call whose response was not a message.
const brokenResponse = "the server's response was not a valid JSON-RPC message (it is in the server's log)"

func (c *stdioConn) Queued() bool { return len(c.queue) > 0 }

func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("encoding a message for the server: %w", err)
	}
	data = append(data, '\n')
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err = c.stdin.Write(data) // one write: a line never interleaves
	return err
}

// WriteLine writes data, one JSON-RPC message already encoded and ending
// in a newline, as it is: serialized with Write, so lines never interleave.
// The gateway writes the calls it forwards this way, without the go-sdk
// encoding them again.
func (c *stdioConn) WriteLine(ctx context.Context, data []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err := c.stdin.Write(data)
	return err
}

// Close closes stdin first, as the stdio transport's shutdown does: the
// server, seeing its input end, exits and so ends its stdout. Closing
// stdout first waits, on Windows, for the read in progress on it (Close
// of a pipe cancels it with CancelIoEx, which Wine does not honour for a
// synchronous read): a process stopped during initialize then kept its
// stop waiting until the Close timed out, the process still running.
func (c *stdioConn) Close() error {
	c.closeOnce.Do(func() {
		c.closeErr = errors.Join(c.stdin.Close(), c.stdout.Close())
		close(c.closed)
	})
	return c.closeErr
}

func (c *stdioConn) SessionID() string { return "" }

// lineReader splits a server's stdout into lines and sorts them into
// protocol messages and output.
type lineReader struct {
	br     *bufio.Reader
	max    int
	onJunk func(string)
}

// next returns the next line that may be a message (it opens a JSON
// object or array), passing every other line before it to onJunk; or, for
// a line over the size limit, an error response for the call it answers
// when it shows one. Its error is the end of stdout.
func (lr *lineReader) next() ([]byte, jsonrpc.Message, error) {
	for {
		b, err := lr.br.Peek(1)
		if err != nil {
			return nil, nil, err
		}
		switch b[0] {
		case ' ', '\t', '\r', '\n':
			_, _ = lr.br.Discard(1)
			continue
		case '{', '[':
		default:
			// Not JSON at all: stream past it, keeping the start for the log.
			line, err := lr.skipLine(nil)
			lr.onJunk(line)
			if err != nil {
				return nil, nil, err
			}
			continue
		}
		line, complete, err := lr.readLine()
		if !complete {
			// A response too large to take fails its call now rather than
			// at its timeout, when its id comes before its result.
			tooLong := failedResponse(line,
				fmt.Sprintf("the server's response is longer than the %d-byte message limit; it was dropped", lr.max))
			kept := string(line[:min(len(line), maxJunkLine)])
			if err == bufio.ErrBufferFull { // the line goes on
				kept, err = lr.skipLine([]byte(kept))
			}
			lr.onJunk(fmt.Sprintf("%s… (line cut: longer than the %d-byte message limit)", kept, lr.max))
			if err != nil && err != bufio.ErrBufferFull {
				return nil, nil, err
			}
			if tooLong != nil {
				return nil, tooLong, nil
			}
			continue
		}
		if len(bytes.TrimSpace(line)) == 0 {
			if err != nil {
				return nil, nil, err
			}
			continue
		}
		// Not JSON at all (pretty-printed fragments, console.log objects,
		// a message cut short): output, judged here, in order. JSON that is
		// no JSON-RPC message is judged when it is decoded.
		if !mcpscan.ValidJSON(line) {
			lr.onJunk(junkText(line))
			if broken := failedResponse(line, brokenResponse); broken != nil {
				return nil, broken, nil
			}
			if err != nil {
				return nil, nil, err
			}
			continue
		}
		// A last line without a newline: its EOF comes with the next read.
		return line, nil, nil
	}
}

// readLine reads one line of at most max bytes. complete is false when the
// line is longer; line then holds its first max bytes, and err is
// bufio.ErrBufferFull when the rest of the line is still unread. A last
// line without a newline counts as a line.
//
// A long line is kept in pieces until its end is found, then copied once
// into a slice of its exact size: the line is what a big result stays in
// on its way through (see LineConn), so it must not carry spare capacity.
func (lr *lineReader) readLine() (line []byte, complete bool, err error) {
	var pieces [][]byte
	total := 0
	for {
		chunk, err := lr.br.ReadSlice('\n')
		if total+len(chunk) > lr.max {
			line = make([]byte, 0, min(total, maxJunkLine)+len(chunk))
			for _, p := range pieces {
				line = append(line, p[:min(len(p), maxJunkLine-len(line))]...)
			}
			return append(line, chunk[:lr.max-total]...), false, err
		}
		if err == bufio.ErrBufferFull {
			pieces = append(pieces, bytes.Clone(chunk))
			total += len(chunk)
			continue
		}
		line = make([]byte, 0, total+len(chunk))
		for _, p := range pieces {
			line = append(line, p...)
		}
		return append(line, chunk...), true, err
	}
}

// skipLine consumes the rest of a line, returning kept plus as much of it
// as fits maxJunkLine, without its line ending.
func (lr *lineReader) skipLine(kept []byte) (string, error) {
	for {
		chunk, err := lr.br.ReadSlice('\n')
		if room := maxJunkLine - len(kept); room > 0 {
			kept = append(kept, chunk[:min(room, len(chunk))]...)
		}
		if err != bufio.ErrBufferFull {
			return string(bytes.TrimRight(kept, "\r\n")), err
		}
	}
}

func junkText(line []byte) string {
	line = bytes.TrimRight(line, "\r\n")
	if len(line) > maxJunkLine {
		return string(line[:maxJunkLine]) + "…"
	}
	return string(line)
}

// failedResponse returns an error response saying why for the request
// whose response starts with prefix (cut at the size limit, or broken),
// when prefix shows a JSON-RPC 2.0 response whose "id" comes before its
// "result" or "error" (as the SDKs write them); nil otherwise.
func failedResponse(prefix []byte, why string) *jsonrpc.Response {
	dec := json.NewDecoder(bytes.NewReader(prefix))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	var version string
	var id jsonrpc.ID
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil
		}
		switch key {
		case "jsonrpc":
			if dec.Decode(&version) != nil {
				return nil
			}
		case "id":
			var raw any
			if dec.Decode(&raw) != nil {
				return nil
			}
			if id, err = jsonrpc.MakeID(raw); err != nil {
				return nil
			}
		default:
			if version != "2.0" || !id.IsValid() || (key != "result" && key != "error") {
				return nil
			}
			return &jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: why}}
		}
	}
	return nil
}

// decodeLine returns the JSON-RPC 2.0 messages of line, or nil when line is
// not exactly one message or a non-empty batch of them.
func decodeLine(line []byte) []jsonrpc.Message {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil
	}
	if line[0] == '[' {
		var raws []json.RawMessage
		if json.Unmarshal(line, &raws) != nil || len(raws) == 0 {
			return nil
		}
		msgs := make([]jsonrpc.Message, 0, len(raws))
		for _, raw := range raws {
			m := decodeMessage(raw)
			if m == nil {
				return nil
			}
			msgs = append(msgs, m)
		}
		return msgs
	}
	if m := decodeMessage(line); m != nil {
		return []jsonrpc.Message{m}
	}
	return nil
}

// decodeMessage decodes one JSON-RPC 2.0 message: an object with
// "jsonrpc":"2.0" and either a method (a request or notification) or an id
// with a result or an error (a response).
func decodeMessage(data []byte) jsonrpc.Message {
	data = bytes.TrimSpace(data)
	// The decoder stops at the end of the first value; text after it (a
	// message with a remark appended) makes the line output, not protocol.
	if len(data) == 0 || data[0] != '{' || data[len(data)-1] != '}' {
		return nil
	}
	msg, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		return nil
	}
	if r, ok := msg.(*jsonrpc.Response); ok && r.Result == nil && r.Error == nil {
		return nil
	}
	return msg
}
