package testutil

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// An OversizedAnswer is what a server answered to PostOversizedCall.
type OversizedAnswer struct {
	Status int
	Header http.Header
	Body   []byte
	// Sent is how many bytes of the body the connection took before the
	// server answered and hung up: what the server read, plus what the
	// kernel's socket buffers held.
	Sent int64
}

// PostOversizedCall POSTs to url a tools/call of tool of bodySize bytes
// (its "text" argument makes up the size), with header (Content-Type and Accept are set),
// on a connection of its own: with a Content-Length, or chunked (no
// length) when chunked is true. The body is made as it is sent, so the
// test holds none of it, and the request is written in the background
// while the answer is read: a server that answers before it has read the
// whole body (as it should to a body over its limit) is seen doing so.
// It returns once the answer is read, whatever was sent by then.
func PostOversizedCall(ctx context.Context, url, tool string, bodySize int64, chunked bool, header http.Header) (OversizedAnswer, error) {
	prefix := `{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"` + tool + `","arguments":{"text":"`
	const suffix = `"}}}`
	text := bodySize - int64(len(prefix)+len(suffix))
	if text < 0 {
		return OversizedAnswer{}, fmt.Errorf("a call of %q takes more than %d bytes", tool, bodySize)
	}
	body := &countingReader{r: io.MultiReader(strings.NewReader(prefix),
		io.LimitReader(repeatByte('x'), text), strings.NewReader(suffix))}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, body)
	if err != nil {
		return OversizedAnswer{}, fmt.Errorf("the oversized call's request: %w", err)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.ContentLength = bodySize
	if chunked {
		req.ContentLength, req.TransferEncoding = -1, []string{"chunked"}
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", req.URL.Host)
	if err != nil {
		return OversizedAnswer{}, fmt.Errorf("dialing %s: %w", req.URL.Host, err)
	}
	deadline := time.Now().Add(60 * time.Second)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	_ = conn.SetDeadline(deadline)
	var wg sync.WaitGroup
	wg.Go(func() { _ = req.Write(conn) }) // fails once the server hangs up
	resp, err := http.ReadResponse(bufio.NewReader(conn), req)
	var answer OversizedAnswer
	if err == nil {
		answer.Status, answer.Header = resp.StatusCode, resp.Header
		answer.Body, err = io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
	}
	conn.Close()
	wg.Wait()
	answer.Sent = body.n.Load()
	if err != nil {
		return answer, fmt.Errorf("reading the answer to a %d-byte call: %w", bodySize, err)
	}
	return answer, nil
}

// repeatByte is an endless reader of one byte.
type repeatByte byte

func (b repeatByte) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}
