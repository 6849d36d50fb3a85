package gateway_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
)

// benchEchoEnv makes this test binary the benchmarks' backend: a minimal
// stdio MCP server (runBenchEcho), much cheaper than supervisor/testmcp,
// which is built on the go-sdk's server and whose own cost per call would
// hide the gateway's. It is what the floor (a raw client straight on its
// pipes) and the gateway both talk to.
const benchEchoEnv = "SWITCHBOARD_BENCH_ECHO"

// benchEchoText is the text the benchmarks' echo calls send and check for
// in the reply.
const benchEchoText = "bench-hello"

// runBenchEcho serves newline-delimited JSON-RPC on stdin/stdout until
// stdin closes: initialize (any protocol version the client asks for),
// tools/list, ping, and tools/call of two tools, echo {text} (one text
// content holding text) and big {kb} (a text of kb KiB). server/discover
// and every other method get "method not found" (a go-sdk client then falls
// back to initialize); notifications are ignored. One goroutine, one
// json.Unmarshal of the request and one write per reply.
func runBenchEcho() {
	in := bufio.NewReaderSize(os.Stdin, 64<<10)
	out := bufio.NewWriterSize(os.Stdout, 64<<10)
	var bigs bigTexts
	var line []byte
	for {
		var err error
		line, err = readLine(in, line[:0])
		if err != nil {
			out.Flush()
			if errors.Is(err, io.EOF) {
				os.Exit(0)
			}
			os.Exit(1)
		}
		msg, ok := parseEchoRequest(line)
		if !ok {
			continue // not JSON, a notification or a response: nothing to answer
		}
		writeEchoReply(out, msg, &bigs)
		out.WriteByte('\n')
		if out.Flush() != nil { // one write per reply, as a simple server does
			os.Exit(1)
		}
	}
}

// runBenchHTTPEcho serves the echo server's replies over HTTP, with no
// gateway and no process behind: what the benchmark's raw HTTP client gets
// from the cheapest server there is (the "HTTP echo" column). Every POST
// of a request is answered in JSON (initialize with a session id),
// notifications with 202, DELETE with 200; headers are not checked.
func runBenchHTTPEcho() int {
	var bigs bigTexts
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		msg, ok := parseEchoRequest(body)
		if !ok {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if msg.Method == "initialize" {
			w.Header().Set("Mcp-Session-Id", "bench")
		}
		writeEchoReply(w, msg, &bigs)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println("error: listen:", err)
		return 1
	}
	srv := &http.Server{Handler: withBenchStats(handler, benchStatsSource{})}
	go srv.Serve(ln)
	defer srv.Close()
	fmt.Println("listening", ln.Addr())
	io.Copy(io.Discard, os.Stdin) // until stdin closes
	return 0
}

type echoRequest struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		ProtocolVersion string `json:"protocolVersion"`
		Name            string `json:"name"`
		Arguments       struct {
			Text string `json:"text"`
			KB   int    `json:"kb"`
		} `json:"arguments"`
	} `json:"params"`
}

// parseEchoRequest decodes a request; ok is false for anything else.
func parseEchoRequest(b []byte) (echoRequest, bool) {
	var msg echoRequest
	if err := json.Unmarshal(b, &msg); err != nil || len(msg.ID) == 0 || msg.Method == "" {
		return msg, false
	}
	return msg, true
}

// bigTexts are the JSON-encoded texts of big, by size in KiB, made once.
type bigTexts struct {
	mu    sync.Mutex
	texts map[int][]byte
}

func (b *bigTexts) get(kb int) []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	if v, ok := b.texts[kb]; ok {
		return v
	}
	if b.texts == nil {
		b.texts = map[int][]byte{}
	}
	v, _ := json.Marshal(strings.Repeat(strings.Repeat("x", 63)+"\n", kb*16))
	b.texts[kb] = v
	return v
}

// writeEchoReply writes the reply to msg (without a newline).
func writeEchoReply(out io.Writer, msg echoRequest, bigs *bigTexts) {
	io.WriteString(out, `{"jsonrpc":"2.0","id":`)
	out.Write(msg.ID)
	switch p := msg.Params; {
	case msg.Method == "initialize":
		v, _ := json.Marshal(p.ProtocolVersion)
		io.WriteString(out, `,"result":{"protocolVersion":`)
		out.Write(v)
		io.WriteString(out, `,"capabilities":{"tools":{}},"serverInfo":{"name":"bench-echo","version":"1"}}}`)
	case msg.Method == "tools/list":
		io.WriteString(out, `,"result":{"tools":[`+
			`{"name":"echo","description":"Replies with text.","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}},`+
			`{"name":"big","description":"Replies with kb KiB of text.","inputSchema":{"type":"object","properties":{"kb":{"type":"integer"}}}}]}}`)
	case msg.Method == "ping":
		io.WriteString(out, `,"result":{}}`)
	case msg.Method == "tools/call" && p.Name == "echo":
		v, _ := json.Marshal(p.Arguments.Text)
		io.WriteString(out, `,"result":{"content":[{"type":"text","text":`)
		out.Write(v)
		io.WriteString(out, `}]}}`)
	case msg.Method == "tools/call" && p.Name == "big" && p.Arguments.KB >= 0 && p.Arguments.KB <= 1<<16:
		io.WriteString(out, `,"result":{"content":[{"type":"text","text":`)
		out.Write(bigs.get(p.Arguments.KB))
		io.WriteString(out, `}]}}`)
	default:
		io.WriteString(out, `,"error":{"code":-32601,"message":"method not found"}}`)
	}
}

// readLine appends the next line of r (without its newline) to buf.
func readLine(r *bufio.Reader, buf []byte) ([]byte, error) {
	for {
		chunk, err := r.ReadSlice('\n')
		buf = append(buf, chunk...)
		switch {
		case err == nil:
			return buf[:len(buf)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(buf) > 0:
			return buf, nil
		default:
			return buf, err
		}
	}
}
