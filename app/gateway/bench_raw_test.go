package gateway_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// The benchmarks' load side: raw clients that cost as little as a client
// can, so that what they measure is the server's cost. No SDK: requests are
// pre-built JSON with the id spliced in, replies are scanned only as far as
// needed to find the id and check the result (jsonrpcReply).

// benchProtocol is the protocol version the raw HTTP client negotiates.
const benchProtocol = "2025-11-25"

// A benchCall is one kind of call: its method, its params (JSON) and the
// check of the result it expects.
type benchCall struct {
	method string
	params string
	check  func(result []byte) error
}

func echoCall() benchCall {
	return benchCall{
		method: "tools/call",
		params: `{"name":"echo","arguments":{"text":"` + benchEchoText + `"}}`,
		check: func(result []byte) error {
			if !bytes.Contains(result, []byte(`"text":"`+benchEchoText+`"`)) {
				return fmt.Errorf("echo result without its text: %.200s", result)
			}
			return checkNotToolError(result)
		},
	}
}

func bigCall(kb int) benchCall {
	return benchCall{
		method: "tools/call",
		params: fmt.Sprintf(`{"name":"big","arguments":{"kb":%d}}`, kb),
		check: func(result []byte) error {
			if len(result) < kb<<10 {
				return fmt.Errorf("big result of %d bytes, want at least %d KiB", len(result), kb)
			}
			return checkNotToolError(result)
		},
	}
}

// resourceCall reads the echo server's resource of kb KiB (it lists one,
// bench://big/256).
func resourceCall(kb int) benchCall {
	return benchCall{
		method: "resources/read",
		params: fmt.Sprintf(`{"uri":"bench://big/%d"}`, kb),
		check: func(result []byte) error {
			if len(result) < kb<<10 || !bytes.HasPrefix(result, []byte(`{"contents":[`)) {
				return fmt.Errorf("resource of %d bytes, want at least %d KiB of contents: %.200s", len(result), kb, result)
			}
			return nil
		},
	}
}

func checkNotToolError(result []byte) error {
	if bytes.Contains(result, []byte(`"isError":true`)) {
		return fmt.Errorf("tool error: %.200s", result)
	}
	return nil
}

// request appends a JSON-RPC request for method with params and id to buf.
func request(buf []byte, id int64, method, params string) []byte {
	buf = append(buf, `{"jsonrpc":"2.0","id":`...)
	buf = strconv.AppendInt(buf, id, 10)
	buf = append(buf, `,"method":"`...)
	buf = append(buf, method...)
	buf = append(buf, `","params":`...)
	buf = append(buf, params...)
	return append(buf, '}')
}

// --- the floor: raw newline-delimited JSON-RPC on a server's pipes ---

// A stdioServer is a process of the echo server driven over its pipes:
// several calls may be in flight on it, each waiting on the channel of its
// slot (the id modulo maxSlots), fed by the one goroutine that reads stdout.
type stdioServer struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	mu      sync.Mutex // serialises writes to stdin
	replies [maxSlots]chan error
	check   atomic.Pointer[func([]byte) error]
	done    chan struct{}
}

const maxSlots = 64

func startStdioServer() (*stdioServer, error) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), benchEchoEnv+"=1")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the echo server: %w", err)
	}
	s := &stdioServer{cmd: cmd, stdin: stdin, done: make(chan struct{})}
	for i := range s.replies {
		s.replies[i] = make(chan error, 1)
	}
	go s.read(bufio.NewReaderSize(stdout, 1<<20))
	return s, nil
}

func (s *stdioServer) read(r *bufio.Reader) {
	defer close(s.done)
	var line []byte
	for {
		var err error
		if line, err = readLine(r, line[:0]); err != nil {
			return
		}
		id, result, rpcErr, err := jsonrpcReply(line)
		if err == nil && rpcErr != nil {
			err = fmt.Errorf("error reply: %s", rpcErr)
		}
		if err == nil {
			if check := s.check.Load(); check != nil {
				err = (*check)(result)
			}
		}
		if id < 0 {
			continue // not ours to route (the floor sends requests only)
		}
		s.replies[id%maxSlots] <- err
	}
}

// call makes one call from slot (< maxSlots, one call in flight per slot)
// with seq making its id unique, and waits for its reply.
func (s *stdioServer) call(buf []byte, slot int, seq int64, method, params string) ([]byte, error) {
	buf = append(request(buf[:0], seq*maxSlots+int64(slot), method, params), '\n')
	s.mu.Lock()
	_, err := s.stdin.Write(buf)
	s.mu.Unlock()
	if err != nil {
		return buf, err
	}
	select {
	case err := <-s.replies[slot]:
		return buf, err
	case <-s.done:
		return buf, errors.New("the echo server closed its stdout")
	}
}

func (s *stdioServer) close() {
	s.stdin.Close()
	<-s.done
	s.cmd.Wait()
}

// --- the gateway: raw streamable HTTP ---

// newBenchHTTPClient is tuned for many calls to one loopback host: kept-
// alive connections, enough of them idle for every worker, no compression.
func newBenchHTTPClient() *http.Client {
	return &http.Client{Transport: &http.Transport{
		MaxIdleConns: 256, MaxIdleConnsPerHost: 256, IdleConnTimeout: time.Minute,
		DisableCompression: true, ForceAttemptHTTP2: false,
	}}
}

// An httpSession is one MCP session at an endpoint, opened by
// openHTTPSession. Its header (session id, protocol version, content type)
// is shared, read-only, by every request on it.
type httpSession struct {
	client *http.Client
	url    string
	header http.Header
}

// post sends body and reads the whole reply into buf; it returns buf and
// the reply's HTTP status and content type, and the session id it names.
func post(client *http.Client, url string, header http.Header, body []byte, buf *bytes.Buffer) (int, string, string, error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, "", "", err
	}
	req.Header = header
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", "", err
	}
	defer resp.Body.Close()
	buf.Reset()
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		return 0, "", "", fmt.Errorf("reading the reply: %w", err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Mcp-Session-Id"), nil
}

// jsonHeader is the header of a request on session ("": none yet), with
// auth as its bearer token ("": none).
func jsonHeader(session, auth string) http.Header {
	h := http.Header{
		"Content-Type":         {"application/json"},
		"Accept":               {"application/json, text/event-stream"},
		"Mcp-Protocol-Version": {benchProtocol},
	}
	if session != "" {
		h["Mcp-Session-Id"] = []string{session}
	}
	if auth != "" {
		h["Authorization"] = []string{"Bearer " + auth}
	}
	return h
}

// openHTTPSession opens a session the way a client does: initialize,
// notifications/initialized; auth is the bearer token sent ("": none);
// scratch holds the replies.
func openHTTPSession(client *http.Client, url, auth string, scratch *bytes.Buffer) (*httpSession, error) {
	initReq := request(nil, 1, "initialize", `{"protocolVersion":"`+benchProtocol+`","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}`)
	status, ctype, session, err := post(client, url, jsonHeader("", auth), initReq, scratch)
	if err != nil {
		return nil, fmt.Errorf("initialize: %w", err)
	}
	// A server may give no session id (a stateless one: the peer, TBXark's
	// mcp-proxy); the gateway always gives one, which its tests check.
	if status != http.StatusOK {
		return nil, fmt.Errorf("initialize: status %d, session %q: %.300s", status, session, scratch.Bytes())
	}
	if _, err := findReply(scratch.Bytes(), ctype, 1); err != nil {
		return nil, fmt.Errorf("initialize: %w", err)
	}
	s := &httpSession{client: client, url: url, header: jsonHeader(session, auth)}
	status, _, _, err = post(client, url, s.header, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), scratch)
	if err != nil {
		return nil, fmt.Errorf("notifications/initialized: %w", err)
	}
	if status != http.StatusAccepted {
		return nil, fmt.Errorf("notifications/initialized: status %d: %.300s", status, scratch.Bytes())
	}
	return s, nil
}

// request sends a request of method with params and returns its result,
// which is valid until scratch is next used.
func (s *httpSession) request(buf []byte, scratch *bytes.Buffer, id int64, method, params string) ([]byte, []byte, error) {
	buf = request(buf[:0], id, method, params)
	status, ctype, _, err := post(s.client, s.url, s.header, buf, scratch)
	if err != nil {
		return buf, nil, fmt.Errorf("%s: %w", method, err)
	}
	if status != http.StatusOK {
		return buf, nil, fmt.Errorf("%s: status %d: %.300s", method, status, scratch.Bytes())
	}
	result, err := findReply(scratch.Bytes(), ctype, id)
	if err != nil {
		return buf, nil, fmt.Errorf("%s: %w", method, err)
	}
	return buf, result, nil
}

// close ends the session (DELETE).
func (s *httpSession) close() {
	req, _ := http.NewRequest(http.MethodDelete, s.url, nil)
	req.Header = s.header
	if resp, err := s.client.Do(req); err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

// findReply returns the result of the reply to id in a response body:
// JSON, or an event stream whose data lines carry messages (notifications
// before the reply are passed over).
func findReply(body []byte, contentType string, id int64) ([]byte, error) {
	if !bytes.HasPrefix([]byte(contentType), []byte("text/event-stream")) {
		return replyResult(body, id)
	}
	for len(body) > 0 {
		var line []byte
		line, body, _ = bytes.Cut(body, []byte("\n"))
		data, ok := bytes.CutPrefix(line, []byte("data:"))
		if !ok {
			continue
		}
		// A message on one data line (as the go-sdk and the gateway write
		// them); a reply split over several lines would fail the scan below.
		data = bytes.TrimSpace(data)
		if got, _, _, err := jsonrpcReply(data); err == nil && got == id {
			return replyResult(data, id)
		}
	}
	return nil, fmt.Errorf("no reply to id %d in the event stream", id)
}

func replyResult(msg []byte, id int64) ([]byte, error) {
	got, result, rpcErr, err := jsonrpcReply(msg)
	switch {
	case err != nil:
		return nil, err
	case got != id:
		return nil, fmt.Errorf("reply to id %d, want %d: %.200s", got, id, msg)
	case rpcErr != nil:
		return nil, fmt.Errorf("error reply: %s", rpcErr)
	case result == nil:
		return nil, fmt.Errorf("reply without a result: %.200s", msg)
	}
	return result, nil
}

// --- the reply scanner ---

// jsonrpcReply scans the top level of a JSON-RPC message without decoding
// it: its numeric id (-1 if none), and the raw result or error value.
func jsonrpcReply(msg []byte) (id int64, result, rpcErr []byte, err error) {
	id = -1
	i := skipSpace(msg, 0)
	if i >= len(msg) || msg[i] != '{' {
		return id, nil, nil, fmt.Errorf("not a JSON object: %.100s", msg)
	}
	i++
	for {
		i = skipSpace(msg, i)
		if i < len(msg) && msg[i] == '}' {
			return id, result, rpcErr, nil
		}
		if i >= len(msg) || msg[i] != '"' {
			return id, nil, nil, fmt.Errorf("bad JSON at %d: %.100s", i, msg)
		}
		end := skipString(msg, i)
		if end < 0 {
			return id, nil, nil, fmt.Errorf("unterminated string: %.100s", msg)
		}
		key := msg[i+1 : end-1]
		i = skipSpace(msg, end)
		if i >= len(msg) || msg[i] != ':' {
			return id, nil, nil, fmt.Errorf("bad JSON at %d: %.100s", i, msg)
		}
		start := skipSpace(msg, i+1)
		i = skipValue(msg, start)
		if i < 0 {
			return id, nil, nil, fmt.Errorf("bad JSON value: %.100s", msg)
		}
		switch string(key) {
		case "id":
			id = parseID(msg[start:i])
		case "result":
			result = msg[start:i]
		case "error":
			rpcErr = msg[start:i]
		}
		i = skipSpace(msg, i)
		if i < len(msg) && msg[i] == ',' {
			i++
		}
	}
}

// parseID returns a non-negative integer id, or -1.
func parseID(b []byte) int64 {
	if len(b) == 0 {
		return -1
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return -1
		}
		n = n*10 + int64(c-'0')
	}
	return n
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] ('"'),
// or -1.
func skipString(b []byte, i int) int {
	i++
	for {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return -1
		}
		i += j
		backslashes := 0
		for k := i - 1; k >= 0 && b[k] == '\\'; k-- {
			backslashes++
		}
		i++
		if backslashes%2 == 0 {
			return i
		}
	}
}

// skipValue returns the index after the value starting at b[i], or -1.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				if i = skipString(b, i); i < 0 {
					return -1
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	default: // number, true, false, null
		for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' && b[i] != '\n' {
			i++
		}
		return i
	}
}
