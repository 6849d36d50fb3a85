package gateway_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
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
	bigTexts := map[int][]byte{} // kb → the text, JSON-encoded
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
		var msg struct {
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
		if err := json.Unmarshal(line, &msg); err != nil || len(msg.ID) == 0 {
			continue // not JSON, a notification or a response: nothing to answer
		}
		out.WriteString(`{"jsonrpc":"2.0","id":`)
		out.Write(msg.ID)
		switch {
		case msg.Method == "initialize":
			v, _ := json.Marshal(msg.Params.ProtocolVersion)
			out.WriteString(`,"result":{"protocolVersion":`)
			out.Write(v)
			out.WriteString(`,"capabilities":{"tools":{}},"serverInfo":{"name":"bench-echo","version":"1"}}}`)
		case msg.Method == "tools/list":
			out.WriteString(`,"result":{"tools":[` +
				`{"name":"echo","description":"Replies with text.","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}},` +
				`{"name":"big","description":"Replies with kb KiB of text.","inputSchema":{"type":"object","properties":{"kb":{"type":"integer"}}}}]}}`)
		case msg.Method == "ping":
			out.WriteString(`,"result":{}}`)
		case msg.Method == "tools/call" && msg.Params.Name == "echo":
			v, _ := json.Marshal(msg.Params.Arguments.Text)
			out.WriteString(`,"result":{"content":[{"type":"text","text":`)
			out.Write(v)
			out.WriteString(`}]}}`)
		case msg.Method == "tools/call" && msg.Params.Name == "big" && msg.Params.Arguments.KB >= 0 && msg.Params.Arguments.KB <= 1<<16:
			kb := msg.Params.Arguments.KB
			v, ok := bigTexts[kb]
			if !ok {
				v, _ = json.Marshal(strings.Repeat(strings.Repeat("x", 63)+"\n", kb*16))
				bigTexts[kb] = v
			}
			out.WriteString(`,"result":{"content":[{"type":"text","text":`)
			out.Write(v)
			out.WriteString(`}]}}`)
		default:
			out.WriteString(`,"error":{"code":-32601,"message":"method not found"}}`)
		}
		out.WriteByte('\n')
		if out.Flush() != nil { // one write per reply, as a simple server does
			os.Exit(1)
		}
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
