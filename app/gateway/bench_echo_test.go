package gateway_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
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
// content holding text) and big {kb} (a text of kb KiB), which tools/list
// lists with the tools of benchEchoToolsEnv's corpus, if any;
// resources/list, resources/templates/list (none; "method not found"
// with benchEchoNoTemplatesEnv set) and resources/read of
// bench://big/<kb> (kb KiB of text, 256 listed). server/discover
// and every other method get "method not found" (a go-sdk client then falls
// back to initialize); notifications are ignored. One goroutine, one
// json.Unmarshal of the request and one write per reply.
func runBenchEcho() {
	in := bufio.NewReaderSize(os.Stdin, 64<<10)
	out := bufio.NewWriterSize(os.Stdout, 64<<10)
	var bigs bigTexts
	extra := extraTools()
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
		writeEchoReply(out, msg, &bigs, extra)
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
	extra := extraTools()
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
		writeEchoReply(w, msg, &bigs, extra)
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
		URI             string `json:"uri"`
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

// writeEchoReply writes the reply to msg (without a newline); extra are
// the tools tools/list lists after echo and big (extraTools).
func writeEchoReply(out io.Writer, msg echoRequest, bigs *bigTexts, extra []byte) {
	io.WriteString(out, `{"jsonrpc":"2.0","id":`)
	out.Write(msg.ID)
	switch p := msg.Params; {
	case msg.Method == "initialize":
		v, _ := json.Marshal(p.ProtocolVersion)
		io.WriteString(out, `,"result":{"protocolVersion":`)
		out.Write(v)
		io.WriteString(out, `,"capabilities":{"tools":{},"resources":{}},"serverInfo":{"name":"bench-echo","version":"1"}}}`)
	case msg.Method == "tools/list":
		io.WriteString(out, `,"result":{"tools":[`+
			`{"name":"echo","description":"Replies with text.","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}},`+
			`{"name":"big","description":"Replies with kb KiB of text.","inputSchema":{"type":"object","properties":{"kb":{"type":"integer"}}}}`)
		out.Write(extra)
		io.WriteString(out, `]}}`)
	case msg.Method == "resources/list":
		io.WriteString(out, `,"result":{"resources":[{"uri":"bench://big/256","name":"big256","description":"256 KiB of text.","mimeType":"text/plain"}]}}`)
	case msg.Method == "resources/templates/list" && os.Getenv(benchEchoNoTemplatesEnv) == "":
		io.WriteString(out, `,"result":{"resourceTemplates":[]}}`)
	case msg.Method == "resources/read" && strings.HasPrefix(p.URI, "bench://big/"):
		kb, err := strconv.Atoi(strings.TrimPrefix(p.URI, "bench://big/"))
		if err != nil || kb < 0 || kb > 1<<16 {
			io.WriteString(out, `,"error":{"code":-32602,"message":"no such resource"}}`)
			return
		}
		uri, _ := json.Marshal(p.URI)
		io.WriteString(out, `,"result":{"contents":[{"uri":`)
		out.Write(uri)
		io.WriteString(out, `,"mimeType":"text/plain","text":`)
		out.Write(bigs.get(kb))
		io.WriteString(out, `}]}}`)
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

// benchEchoNoTemplatesEnv makes the echo server answer "method not
// found" to resources/templates/list while it announces resources, as
// many hand-written servers do (TestListsAServerDoesNotServe).
const benchEchoNoTemplatesEnv = "SWITCHBOARD_BENCH_ECHO_NO_TEMPLATES"

// benchEchoToolsEnv, set to the path of a tools corpus (the format of
// app/toolsearch/testdata/catalog-tools.json: servers, each with the
// tools/list of a real server), makes the echo server list those tools
// after its own two: what a session's setup costs with real tools.
const benchEchoToolsEnv = "SWITCHBOARD_BENCH_ECHO_TOOLS"

// catalogTools is the corpus of the catalog's offline npm servers (128
// tools), as an absolute path for the servers the benchmarks start.
func catalogTools(tb testing.TB) string {
	path, err := filepath.Abs(filepath.Join("..", "toolsearch", "testdata", "catalog-tools.json"))
	if err != nil {
		tb.Fatal(err)
	}
	return path
}

// extraTools returns the tools of the corpus benchEchoToolsEnv names, each
// compacted and preceded by a comma; nothing when it is unset. A corpus
// that cannot be read ends the server: a benchmark would otherwise measure
// lists without the tools it asked for.
func extraTools() []byte {
	path := os.Getenv(benchEchoToolsEnv)
	if path == "" {
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench echo:", err)
		os.Exit(1)
	}
	var corpus struct {
		Servers []struct {
			Tools []json.RawMessage `json:"tools"`
		} `json:"servers"`
	}
	if err := json.Unmarshal(data, &corpus); err != nil {
		fmt.Fprintf(os.Stderr, "bench echo: %s: %v\n", path, err)
		os.Exit(1)
	}
	var out bytes.Buffer
	for _, s := range corpus.Servers {
		for _, t := range s.Tools {
			out.WriteByte(',')
			json.Compact(&out, t)
		}
	}
	return out.Bytes()
}
