package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/switchboardhq/switchboard/app/tiers"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Search mode: an aggregated endpoint (/mcp, or a profile's /mcp/p/<name>)
// lists two tools instead of every tool it offers, for clients that cope
// badly with many tools (Cursor stops at about 40, and every listed tool
// costs the model context on every turn):
//
//	search_tools {query, limit}  → the best matching tools the endpoint
//	                               offers: their names (as /mcp names them),
//	                               descriptions, schemas
//	call_tool    {name, arguments} → that tool, called
//
// Each aggregate has a second front, its search front, served in place of
// its front while the aggregate is searching (Options.ToolSearch and
// SetToolSearch for /mcp, ProfileConfig.ToolSearch for a profile).
//
// A call_tool is a direct call of the named tool in every way that
// matters: the searchCalls middleware, outside the recorder, turns it into
// a tools/call of that tool, so the history records the real server,
// tool, arguments, duration and result; progress, cancellation, timeouts
// and the raw result path are the direct call's own; a name no client
// could call gets the go-sdk's own "unknown tool" error. Innermost,
// searchDispatch hands the rewritten call to the registered call_tool
// handler, which forwards it like the tool's own handler (toolHandler).
//
// The index (a ToolIndex, app/toolsearch in the daemon) is fed from the
// assignment whenever the aggregates are rebuilt: only what /mcp would list
// (no disabled or held tools, nothing a server has not listed), under
// /mcp's names, which every aggregate shares; a search on a profile keeps
// the hits the profile offers.

// Names of the two tools of search mode.
const (
	SearchToolsName = "search_tools"
	CallToolName    = "call_tool"
)

// DefaultSearchLimit is how many tools search_tools returns when the
// client names no limit; MaxSearchLimit is the most it returns.
const (
	DefaultSearchLimit = 5
	MaxSearchLimit     = 20
)

// A ToolIndex finds tools by what they are for. The daemon gives the
// gateway app/toolsearch's index; the gateway keeps it up to date with
// what it lists and asks it in search mode. Its methods are safe for
// concurrent use.
type ToolIndex interface {
	// Replace makes tools the indexed tools of server (none: removes it).
	Replace(ctx context.Context, server string, tools []IndexedTool) error
	// Remove drops server's tools.
	Remove(ctx context.Context, server string) error
	// Search returns the names (IndexedTool.Name) of at most limit tools
	// matching the free-text query that keep accepts (nil: all), best first.
	Search(ctx context.Context, query string, limit int, keep func(name string) bool) ([]string, error)
}

// An IndexedTool is one tool of a server as the aggregated endpoint serves
// it.
type IndexedTool struct {
	// Name is the tool's name on /mcp (prefix__name), which call_tool takes.
	Name string
	// Tool is the tool as its server lists it (its own name).
	Tool *mcp.Tool
}

// searchIndex is what the search fronts share: the tools the index has,
// under their names on /mcp at the full name budget (the index's names);
// a view of a smaller budget answers with its own names for the same
// tools (see searchTools).
type searchIndex struct {
	mu      sync.Mutex
	tools   map[string]*mcp.Tool // index name → the tool as /mcp lists it
	keys    map[string]itemKey   // index name → its server and own name
	names   map[itemKey]string   // and back
	indexed map[string]bool      // servers given to the index
}

// newAggregate makes an aggregated endpoint with the view of the full name
// budget. endpoint is "" for /mcp, "p/<name>" for a profile.
func (g *Gateway) newAggregate(endpoint string) *aggregate {
	return &aggregate{endpoint: endpoint, views: map[int]*view{MaxNameLen: g.newView(endpoint, MaxNameLen)}}
}

// newView makes the fronts of one name budget of an aggregated endpoint:
// the plain one and the search one.
func (g *Gateway) newView(endpoint string, budget int) *view {
	v := &view{budget: budget, front: g.newFront(endpoint, budget, false), state: newAggregateState()}
	s := g.newFront(endpoint, budget, true)
	s.AddTool(&mcp.Tool{
		Name:  SearchToolsName,
		Title: "Search tools",
		Description: "Find the tools for a task among every tool this endpoint offers (only a few are listed here). " +
			"Describe what you want to do in plain words; the answer lists the best matching tools, best first, " +
			"each with its name, description and input schema. Then call one with call_tool.",
		InputSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"query": map[string]any{"type": "string",
					"description": "What the tool should do, in plain words, e.g. \"read a file\" or \"post a message to a Slack channel\"."},
				"limit": map[string]any{"type": "integer", "minimum": 1, "maximum": MaxSearchLimit,
					"description": fmt.Sprintf("How many tools to return at most (default %d).", DefaultSearchLimit)},
			},
			"required": []any{"query"},
		},
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: new(bool)},
	}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return g.searchTools(ctx, req, endpoint, v)
	})
	s.AddTool(&mcp.Tool{
		Name:  CallToolName,
		Title: "Call a tool",
		Description: "Call a tool that search_tools found: name is the tool's name exactly as search_tools returned it, " +
			"arguments the tool's arguments as its input schema describes them. The answer is the tool's own.",
		InputSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"name":      map[string]any{"type": "string", "description": "The tool's name, as search_tools returned it."},
				"arguments": map[string]any{"type": "object", "description": "The tool's arguments, as its input schema describes them."},
			},
			"required": []any{"name"},
		},
	}, g.callToolHandler)
	v.search = s
	return v
}

// served is the front v serves now: its search front while its aggregate
// is searching.
func (v *view) served(searching bool) *mcp.Server {
	if searching {
		return v.search
	}
	return v.front
}

// fronts returns the fronts of every view of a, both of each: its client
// sessions may be on any. g.mu is held.
func (a *aggregate) fronts() []*mcp.Server {
	var out []*mcp.Server
	for _, budget := range a.budgets() {
		out = append(out, a.views[budget].front, a.views[budget].search)
	}
	return out
}

// SetToolSearch turns search mode of /mcp on or off. Client sessions
// opened from then on get the new mode; an open session keeps what it has
// until its client connects again.
func (g *Gateway) SetToolSearch(on bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.all.searching = on
}

// ToolSearch reports whether /mcp is in search mode.
func (g *Gateway) ToolSearch() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.all.searching
}

// callable reports whether the aggregated endpoint registers t (see
// addTool): its input schema, if any, is an object.
func callable(t *mcp.Tool) bool {
	if t.InputSchema == nil {
		return true
	}
	m, ok := t.InputSchema.(map[string]any)
	return ok && m["type"] == "object"
}

// indexTools gives the index what /mcp now lists, server by server, and
// keeps the tools for search_tools' answers. It runs within
// rebuildAggregates (under aggMu), so one list at a time.
func (g *Gateway) indexTools(exposedTools []exposed, tools map[string]map[string]*mcp.Tool) {
	byServer := map[string][]IndexedTool{}
	listed := make(map[string]*mcp.Tool, len(exposedTools))
	keys := make(map[string]itemKey, len(exposedTools))
	names := make(map[itemKey]string, len(exposedTools))
	for _, e := range exposedTools {
		t := tools[e.Server][e.Original]
		if t == nil || !callable(t) {
			continue
		}
		cp := *t
		cp.Name = e.Name
		if cp.InputSchema == nil {
			cp.InputSchema = map[string]any{"type": "object"}
		}
		listed[e.Name] = &cp
		keys[e.Name], names[e.key()] = e.key(), e.Name
		byServer[e.Server] = append(byServer[e.Server], IndexedTool{Name: e.Name, Tool: t})
	}
	g.search.mu.Lock()
	g.search.tools, g.search.keys, g.search.names = listed, keys, names
	before := g.search.indexed
	g.search.indexed = make(map[string]bool, len(byServer))
	for server := range byServer {
		g.search.indexed[server] = true
	}
	g.search.mu.Unlock()
	ix := g.opts.ToolIndex
	if ix == nil {
		return
	}
	for server, list := range byServer {
		if err := ix.Replace(g.ctx, server, list); err != nil {
			g.log.Warn("cannot index the server's tools for tool search", "server", server, "err", err)
		}
	}
	for server := range before {
		if _, still := byServer[server]; !still {
			if err := ix.Remove(g.ctx, server); err != nil {
				g.log.Warn("cannot remove the server's tools from the tool search index", "server", server, "err", err)
			}
		}
	}
}

// searchResult is what search_tools answers, as JSON text and as
// structured content.
type searchResult struct {
	Query string         `json:"query"`
	Tools []searchedTool `json:"tools"`
}

type searchedTool struct {
	Name        string               `json:"name"`
	Title       string               `json:"title,omitempty"`
	Description string               `json:"description,omitempty"`
	InputSchema any                  `json:"inputSchema"`
	Annotations *mcp.ToolAnnotations `json:"annotations,omitempty"`
	// Tier is what the tool may do: read, write or destructive (tiers.go).
	Tier tiers.Tier `json:"tier"`
}

// searchTools is the search_tools handler of v's search front (one of
// endpoint's): it finds what v offers, under v's names, and within the
// request's tier cap (tiers.go). The recorder records it as a call of
// search_tools (no server) with the query as its arguments.
func (g *Gateway) searchTools(ctx context.Context, req *mcp.CallToolRequest, endpoint string, v *view) (*mcp.CallToolResult, error) {
	if rec := recordFrom(ctx); rec != nil {
		rec.call.Tool = SearchToolsName // Switchboard's own: no server
	}
	var in struct {
		Query *string `json:"query"`
		Limit *int    `json:"limit"`
	}
	if err := decodeArguments(req.Params.Arguments, &in); err != nil {
		return nil, invalidParams("%s: %v; want {\"query\": \"what the tool should do\", \"limit\": 5}", SearchToolsName, err)
	}
	if in.Query == nil || strings.TrimSpace(*in.Query) == "" {
		return nil, invalidParams("%s needs a query: what the tool should do, in plain words", SearchToolsName)
	}
	limit := DefaultSearchLimit
	if in.Limit != nil {
		if *in.Limit < 1 {
			return nil, invalidParams("%s: limit %d is not a positive number", SearchToolsName, *in.Limit)
		}
		limit = min(*in.Limit, MaxSearchLimit)
	}
	ix := g.opts.ToolIndex
	if ix == nil {
		return toolError("tool search is not available: this Switchboard has no tool index"), nil
	}
	// The index names a tool as the full budget does; v's name for it
	// is the one of the same server's same tool.
	nameIn := func(name string) (string, bool) {
		g.search.mu.Lock()
		key, ok := g.search.keys[name]
		g.search.mu.Unlock()
		if !ok {
			return "", false
		}
		g.mu.Lock()
		defer g.mu.Unlock()
		own, ok := v.state.names[key]
		return own, ok
	}
	max, _ := g.capFor(ctx, endpoint)
	tierOf := func(name string) tiers.Tier {
		g.search.mu.Lock()
		key := g.search.keys[name]
		g.search.mu.Unlock()
		tier, _ := g.tierOf(key.server, key.original)
		return tier
	}
	offered := func(name string) bool {
		_, ok := nameIn(name)
		return ok && (max == "" || !tierOf(name).Above(max))
	}
	names, err := ix.Search(ctx, *in.Query, limit, offered)
	if err != nil {
		return toolError(fmt.Sprintf("searching the tools failed: %v", err)), nil
	}
	out := searchResult{Query: *in.Query, Tools: []searchedTool{}}
	for _, name := range names {
		// The index may be a list behind: what /mcp no longer lists is
		// not offered.
		g.search.mu.Lock()
		t, ok := g.search.tools[name]
		g.search.mu.Unlock()
		own, found := nameIn(name)
		if ok && found && offered(name) {
			out.Tools = append(out.Tools, searchedTool{Name: own, Title: toolTitle(t), Description: t.Description,
				InputSchema: t.InputSchema, Annotations: t.Annotations, Tier: tierOf(name)})
		}
	}
	data, err := json.Marshal(out)
	if err != nil {
		return toolError(fmt.Sprintf("encoding the search result: %v", err)), nil
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(data)}},
		StructuredContent: json.RawMessage(data)}, nil
}

// callTarget is the tool a call_tool names, resolved by searchCalls.
type callTarget struct {
	name             string
	server, original string // "" when no client could call name
}

type callTargetKey struct{}

// searchCalls turns a call_tool on the search front of endpoint's view of
// budget into a tools/call of the tool it names, before the recorder sees
// it (see the top of this file).
func (g *Gateway) searchCalls(endpoint string, budget int) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			cr, ok := req.(*mcp.CallToolRequest)
			if method != "tools/call" || !ok || cr.Params == nil || cr.Params.Name != CallToolName {
				return next(ctx, method, req)
			}
			var in struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			}
			if err := decodeArguments(cr.Params.Arguments, &in); err != nil {
				return nil, invalidParams("%s: %v; want {\"name\": \"a tool's name\", \"arguments\": {...}}", CallToolName, err)
			}
			if in.Name == "" {
				return nil, invalidParams("%s needs the name of a tool, as %s returned it", CallToolName, SearchToolsName)
			}
			args := bytes.TrimSpace(in.Arguments)
			switch {
			case len(args) == 0 || string(args) == "null":
				args = nil
			case args[0] != '{':
				return nil, invalidParams("%s: the arguments of %q must be an object, not %s", CallToolName, in.Name, snippet(args))
			}
			target := &callTarget{name: in.Name}
			target.server, target.original = g.aggregatedTool(endpoint, budget, in.Name)
			params := *cr.Params
			params.Name, params.Arguments = in.Name, args
			direct := *cr
			direct.Params = &params
			return next(context.WithValue(ctx, callTargetKey{}, target), method, &direct)
		}
	}
}

// aggregatedTool returns the server and own name of the tool the
// aggregated endpoint's view of budget calls name, if a client of it
// could call it.
func (g *Gateway) aggregatedTool(endpoint string, budget int, name string) (server, original string) {
	if name == SearchToolsName || name == CallToolName {
		return "", ""
	}
	g.mu.Lock()
	var e exposed
	ok := false
	if a := g.aggregateFor(endpoint); a != nil {
		e, ok = a.view(budget).state.tools[name]
	}
	g.mu.Unlock()
	if ok {
		g.search.mu.Lock()
		_, ok = g.search.names[e.key()] // registered: its schema is an object
		g.search.mu.Unlock()
		if ok {
			return e.Server, e.Original
		}
		return "", ""
	}
	if server, original, ok := g.unlistedTool(endpoint, budget, name); ok {
		return server, original
	}
	return "", ""
}

// searchDispatch runs innermost: a call that came as a call_tool goes to
// the call_tool handler with its target, or, for a tool no client could
// call, gets the go-sdk's own answer to a call of an unknown tool.
func (g *Gateway) searchDispatch() mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			target, _ := ctx.Value(callTargetKey{}).(*callTarget)
			cr, ok := req.(*mcp.CallToolRequest)
			if method != "tools/call" || target == nil || !ok || cr.Params == nil {
				return next(ctx, method, req)
			}
			if target.server == "" {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", target.name)}
			}
			params := *cr.Params
			params.Name = CallToolName
			call := *cr
			call.Params = &params
			return next(ctx, method, &call)
		}
	}
}

// callToolHandler is the call_tool handler, reached through searchCalls
// and searchDispatch only: it forwards the call as the tool's own handler
// would.
func (g *Gateway) callToolHandler(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	target, _ := ctx.Value(callTargetKey{}).(*callTarget)
	if target == nil || target.server == "" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: CallToolName + " was not routed to a tool"}
	}
	return g.toolHandler(target.server, target.original)(ctx, req)
}

// decodeArguments decodes a tool call's arguments object into v; no
// arguments decode as {}.
func decodeArguments(raw json.RawMessage, v any) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if raw[0] != '{' {
		return fmt.Errorf("the arguments are %s, not an object", snippet(raw))
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("bad arguments: %w", err)
	}
	return nil
}

func invalidParams(format string, args ...any) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

func toolError(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// snippet is the start of a JSON value, for an error message.
func snippet(raw []byte) string {
	const max = 40
	if len(raw) > max {
		return string(raw[:max]) + "…"
	}
	return string(raw)
}
