package testmcp

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxFloodMiB bounds the flood tool: 4 GiB.
const maxFloodMiB = 4 << 10

type (
	floodArgs struct {
		MiB       int  `json:"mib" jsonschema:"how many MiB to write to stderr"`
		LineBytes int  `json:"lineBytes,omitempty" jsonschema:"length of each line, newline included (default 8192)"`
		Wait      bool `json:"wait,omitempty" jsonschema:"reply once the flood is written (default: at once)"`
	}
	floodOut struct {
		Lines int `json:"lines"`
		Bytes int `json:"bytes"`
	}
)

// addFlood registers flood {mib, lineBytes, wait}: it writes mib MiB of
// lines "flood <n> xxxx..." to stderr as fast as the pipe takes them, in
// the background unless wait is set, and replies with the number of lines
// and bytes it writes. The server keeps answering other calls meanwhile.
func (st *state) addFlood() {
	addTool(st, &mcp.Tool{Name: "flood", Description: "Write mib MiB of lines to stderr as fast as possible (a log flood)."},
		func(_ context.Context, _ *mcp.CallToolRequest, in floodArgs) (*mcp.CallToolResult, floodOut, error) {
			if in.MiB < 0 || in.MiB > maxFloodMiB {
				return nil, floodOut{}, fmt.Errorf("mib must be between 0 and %d", maxFloodMiB)
			}
			size := in.LineBytes
			if size == 0 {
				size = 8192
			}
			if size < 32 || size > 1<<20 {
				return nil, floodOut{}, fmt.Errorf("lineBytes must be between 32 and %d", 1<<20)
			}
			total := in.MiB << 20
			lines := (total + size - 1) / size
			out := floodOut{Lines: lines, Bytes: lines * size}
			flood := func() {
				w := bufio.NewWriterSize(os.Stderr, 64<<10)
				pad := strings.Repeat("x", size)
				for i := range lines {
					head := fmt.Sprintf("flood %d ", i)
					w.WriteString(head)
					w.WriteString(pad[:size-len(head)-1])
					w.WriteByte('\n')
				}
				w.Flush()
			}
			if in.Wait {
				flood()
			} else {
				go flood()
			}
			return text(fmt.Sprintf("flooding %d lines, %d bytes", out.Lines, out.Bytes)), out, nil
		})
}
