package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A lineConn is the connection to a backend process over its stdio pipes
// (what the go-sdk's IOTransport would make), written for big results: the
// go-sdk's decoder holds a line in a buffer that grows by doubling and is
// kept for the life of the connection, copies it out, and copies a
// response's result again when it decodes the message; for a 20 MB result
// that is over 70 MB. A lineConn reads each line once into a slice of its
// exact size, and a response whose result the gateway captures is not
// decoded at all (see readResponse): the result is a sub-slice of the line.
type lineConn struct {
	r io.ReadCloser
	w io.WriteCloser

	incoming chan lineOrErr
	closed   chan struct{}
	queue    []jsonrpc.Message // the rest of a batch; Read is called by one goroutine

	wmu       sync.Mutex
	closeOnce sync.Once
	closeErr  error
}

type lineOrErr struct {
	line []byte
	err  error
}

// lineReadBuffer is the read buffer: lines up to its size are copied once
// from it; longer ones are read in pieces of its size.
const lineReadBuffer = 64 << 10

func newLineConn(r io.ReadCloser, w io.WriteCloser) *lineConn {
	c := &lineConn{r: r, w: w, incoming: make(chan lineOrErr), closed: make(chan struct{})}
	// A goroutine reads, so that Read can select on ctx and Close; it ends
	// when the reader does (Close closes it).
	go c.readLoop()
	return c
}

func (c *lineConn) readLoop() {
	br := bufio.NewReaderSize(c.r, lineReadBuffer)
	for {
		line, err := readLine(br)
		if len(bytes.TrimSpace(line)) == 0 && err == nil {
			continue
		}
		select {
		case c.incoming <- lineOrErr{line, err}:
		case <-c.closed:
			return
		}
		if err != nil {
			return
		}
	}
}

// readLine reads one line, without its end, into a slice of its own of the
// line's exact size. A line longer than the buffer is kept in pieces until
// its end is found, then copied once.
func readLine(br *bufio.Reader) ([]byte, error) {
	var pieces [][]byte
	total := 0
	for {
		frag, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			pieces = append(pieces, bytes.Clone(frag))
			total += len(frag)
			continue
		}
		frag = bytes.TrimRight(frag, "\r\n")
		line := make([]byte, 0, total+len(frag))
		for _, p := range pieces {
			line = append(line, p...)
		}
		line = append(line, frag...)
		if err == io.EOF && len(line) > 0 {
			err = nil // the last line; EOF comes with the next read
		}
		return line, err
	}
}

// next returns the next line, or an error when ctx ends or the connection
// closes.
func (c *lineConn) next(ctx context.Context) ([]byte, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	default:
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case v := <-c.incoming:
		return v.line, v.err
	case <-c.closed:
		return nil, io.EOF
	}
}

// decode turns a line into messages: one, or a batch.
func (c *lineConn) decode(line []byte) (jsonrpc.Message, error) {
	if line[0] != '[' {
		return jsonrpc.DecodeMessage(line)
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(line, &raws); err != nil {
		return nil, fmt.Errorf("decoding a batch: %w", err)
	}
	if len(raws) == 0 {
		return nil, errors.New("empty batch")
	}
	msgs := make([]jsonrpc.Message, 0, len(raws))
	for _, raw := range raws {
		m, err := jsonrpc.DecodeMessage(raw)
		if err != nil {
			return nil, err
		}
		msgs = append(msgs, m)
	}
	c.queue = msgs[1:]
	return msgs[0], nil
}

func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if len(c.queue) > 0 {
		m := c.queue[0]
		c.queue = c.queue[1:]
		return m, nil
	}
	line, err := c.next(ctx)
	if err != nil {
		return nil, err
	}
	return c.decode(bytes.TrimLeft(line, " \t"))
}

func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	select {
	case <-c.closed:
		return io.EOF
	default:
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("marshaling message: %w", err)
	}
	data = append(data, '\n')
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err = c.w.Write(data)
	return err
}

func (c *lineConn) Close() error {
	c.closeOnce.Do(func() {
		c.closeErr = errors.Join(c.r.Close(), c.w.Close())
		close(c.closed)
	})
	return c.closeErr
}

func (c *lineConn) SessionID() string { return "" }

var _ mcp.Connection = (*lineConn)(nil)

// responseEnvelope finds, in a JSON-RPC message, the id and the result of a
// response without decoding the result: ok is false for anything else (a
// request, a notification, an error response, bad JSON), which is then
// decoded the usual way.
func responseEnvelope(line []byte) (id jsonrpc.ID, result json.RawMessage, ok bool) {
	s := scanner{b: line}
	s.space()
	if !s.eat('{') {
		return id, nil, false
	}
	var idRaw []byte
	version := false
	for first := true; ; first = false {
		s.space()
		if s.eat('}') {
			break
		}
		if !first && !(s.eat(',') && s.spaceThen()) {
			return id, nil, false
		}
		key, okKey := s.str()
		s.space()
		if !okKey || !s.eat(':') {
			return id, nil, false
		}
		s.space()
		start := s.i
		if !s.value() {
			return id, nil, false
		}
		v := line[start:s.i]
		switch string(key) {
		case `"id"`:
			idRaw = v
		case `"result"`:
			result = v
		case `"jsonrpc"`:
			version = string(v) == `"2.0"`
		case `"method"`, `"error"`:
			return id, nil, false
		}
	}
	if !version || idRaw == nil || result == nil {
		return id, nil, false
	}
	var raw any
	if err := json.Unmarshal(idRaw, &raw); err != nil {
		return id, nil, false
	}
	id, err := jsonrpc.MakeID(raw) // float64 or string, as MakeID wants
	if err != nil {
		return id, nil, false
	}
	return id, result, true
}

// scanner skips JSON values, checking only their structure: a result is
// checked in full by the client that decodes it.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) space() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\n' || s.b[s.i] == '\r') {
		s.i++
	}
}

// spaceThen skips space and reports true (for use in conditions).
func (s *scanner) spaceThen() bool { s.space(); return true }

func (s *scanner) eat(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// str skips a string and returns it with its quotes.
func (s *scanner) str() ([]byte, bool) {
	start := s.i
	if !s.eat('"') {
		return nil, false
	}
	for s.i < len(s.b) {
		j := bytes.IndexAny(s.b[s.i:], "\"\\")
		if j < 0 {
			return nil, false
		}
		s.i += j
		if s.b[s.i] == '\\' {
			s.i += 2
			continue
		}
		s.i++
		return s.b[start:s.i], true
	}
	return nil, false
}

// value skips one value.
func (s *scanner) value() bool {
	if s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; c {
	case '"':
		_, ok := s.str()
		return ok
	case '{', '[':
		depth := 0
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case '"':
				if _, ok := s.str(); !ok {
					return false
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					s.i++
					return true
				}
			}
			s.i++
		}
		return false
	default: // number, true, false, null
		start := s.i
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return s.i > start
			}
			s.i++
		}
		return s.i > start
	}
}
