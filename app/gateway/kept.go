package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/app/atomicfile"
)

// A server's lists are kept on disk (Options.ListsDir, one JSON file per
// server) each time they are fetched, and read back when the server joins
// the gateway. So a lazy server is not started at every daemon start just
// to learn its tools, and clients see the tools of a server that is down
// (crashed, failing, not started yet): a call to one starts the server, or
// answers why it cannot.

// keptVersion is the format of a kept-lists file.
const keptVersion = 1

// keptLists is the file's content.
type keptLists struct {
	Version      int                     `json:"version"`
	Server       string                  `json:"server"`
	Tools        []*mcp.Tool             `json:"tools,omitempty"`
	Prompts      []*mcp.Prompt           `json:"prompts,omitempty"`
	Resources    []*mcp.Resource         `json:"resources,omitempty"`
	Templates    []*mcp.ResourceTemplate `json:"templates,omitempty"`
	Instructions string                  `json:"instructions,omitempty"`
}

// keptPath is where server's lists are kept, "" when they are not.
func (g *Gateway) keptPath(server string) string {
	if g.opts.ListsDir == "" {
		return ""
	}
	return filepath.Join(g.opts.ListsDir, url.PathEscape(server)+".json")
}

// loadKept reads server's kept lists; ok is false when there are none.
// A file that cannot be read is logged and ignored: the server is then
// listed as if it were new.
func (g *Gateway) loadKept(server string) (f features, data []byte, ok bool) {
	path := g.keptPath(server)
	if path == "" {
		return f, nil, false
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil, false
	}
	var k keptLists
	if err == nil {
		err = json.Unmarshal(data, &k)
		if err == nil && (k.Version != keptVersion || k.Server != server) {
			err = fmt.Errorf("version %d of server %q, want version %d of %q", k.Version, k.Server, keptVersion, server)
		}
	}
	if err != nil {
		g.log.Warn("ignoring the kept tool list of a server; it is listed again when it starts",
			"server", server, "file", path, "err", err)
		return f, nil, false
	}
	return features{tools: k.Tools, prompts: k.Prompts, resources: k.Resources, templates: k.Templates,
		instructions: k.Instructions}, data, true
}

// saveKept writes f as server's kept lists when they differ from last, and
// returns what the file holds now.
func (g *Gateway) saveKept(server string, f features, last []byte) []byte {
	path := g.keptPath(server)
	if path == "" {
		return nil
	}
	data, err := json.MarshalIndent(keptLists{Version: keptVersion, Server: server, Tools: f.tools,
		Prompts: f.prompts, Resources: f.resources, Templates: f.templates, Instructions: f.instructions}, "", "  ")
	if err != nil {
		g.log.Warn("cannot encode a server's tool list to keep it", "server", server, "err", err)
		return last
	}
	if bytes.Equal(data, last) {
		return last
	}
	if err := os.MkdirAll(g.opts.ListsDir, 0o700); err != nil {
		g.log.Warn("cannot keep a server's tool list", "server", server, "err", err)
		return last
	}
	if err := atomicfile.Write(path, data, 0o600); err != nil {
		g.log.Warn("cannot keep a server's tool list", "server", server, "file", path, "err", err)
		return last
	}
	return data
}

// unlistedTools passes a tools/call for a tool the endpoint does not know,
// of a server whose lists are not known yet (its first start failed, or is
// under way), on to that server instead of letting the go-sdk answer a bare
// "unknown tool": the call starts the server or waits for it, and when it
// cannot be served it answers why, naming the server, and is recorded
// under it.
func (g *Gateway) unlistedTools(endpoint string, budget int) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "tools/call" {
				return next(ctx, method, req)
			}
			cr, ok := req.(*mcp.CallToolRequest)
			if !ok || cr.Params == nil {
				return next(ctx, method, req)
			}
			server, original, ok := g.unlistedTool(endpoint, budget, cr.Params.Name)
			if !ok {
				return next(ctx, method, req)
			}
			return g.toolHandler(server, original)(ctx, cr)
		}
	}
}

// unlistedTool finds the server behind name, a tool that endpoint (its
// view of budget) does not list, when that server's lists are not on the
// fronts yet: never listed, or listed and not yet installed (a call then
// would otherwise be answered "unknown tool").
func (g *Gateway) unlistedTool(endpoint string, budget int, name string) (server, original string, ok bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	owner := func(b *backend, tool string) bool {
		return b != nil && !b.served.Load() && tool != "" && !slices.Contains(b.cfg.DisabledTools, tool)
	}
	a := g.aggregateFor(endpoint)
	if a == nil {
		if b := g.backends[endpoint]; owner(b, name) {
			return endpoint, name, true
		}
		return "", "", false
	}
	if _, known := a.view(budget).state.tools[name]; known {
		return "", "", false
	}
	for n, b := range g.backends {
		if tool, found := strings.CutPrefix(name, b.cfg.prefix()+separator); found && owner(b, tool) && a.set.showsTool(n, tool) {
			return n, tool, true
		}
	}
	return "", "", false
}

// forgetKept removes server's kept lists.
func (g *Gateway) forgetKept(server string) {
	path := g.keptPath(server)
	if path == "" {
		return
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		g.log.Warn("cannot remove a server's kept tool list", "server", server, "file", path, "err", err)
	}
}
