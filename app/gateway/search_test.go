package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/app/gateway"
	"github.com/switchboardhq/switchboard/app/internal/testutil"
	"github.com/switchboardhq/switchboard/app/record"
	"github.com/switchboardhq/switchboard/app/toolsearch"
	"github.com/switchboardhq/switchboard/supervisor"
	"github.com/switchboardhq/switchboard/supervisor/testmcp"
)

// testIndex is the gateway's ToolIndex over app/toolsearch, as the daemon
// wires it (app/daemon/toolsearch.go).
type testIndex struct{ ix *toolsearch.Index }

func (t testIndex) Replace(ctx context.Context, server string, tools []gateway.IndexedTool) error {
	var out []toolsearch.Tool
	for _, it := range tools {
		out = append(out, toolsearch.Tool{Key: it.Name, Name: it.Tool.Name, Title: it.Tool.Title,
			Description: it.Tool.Description, InputSchema: it.Tool.InputSchema})
	}
	return t.ix.Replace(ctx, server, out)
}

func (t testIndex) Remove(ctx context.Context, server string) error { return t.ix.Remove(ctx, server) }

func (t testIndex) Search(ctx context.Context, query string, limit int, keep func(string) bool) ([]string, error) {
	var keepHit func(toolsearch.Hit) bool
	if keep != nil {
		keepHit = func(h toolsearch.Hit) bool { return keep(h.Key) }
	}
	hits, err := t.ix.SearchFunc(ctx, query, limit, keepHit)
	var names []string
	for _, h := range hits {
		names = append(names, h.Key)
	}
	return names, err
}

// newSearchFixture is newFixture with a tool index and /mcp in search mode.
func newSearchFixture(t *testing.T, servers ...gateway.ServerConfig) *fixture {
	t.Helper()
	ix, err := toolsearch.New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() }) // after the fixture's cleanup, which closes the gateway
	var specs []supervisor.Spec
	for _, s := range servers {
		specs = append(specs, supervisor.Spec{Name: s.Name, Command: os.Args[0],
			Env: testEnv(testmcp.Options{Name: s.Name}), Pool: supervisor.PoolSpec{Mode: s.Mode, Max: 2}})
	}
	return newTunedFixture(t, "", func(_ *supervisor.Options, o *gateway.Options) {
		o.ToolSearch = true
		o.ToolIndex = testIndex{ix}
	}, specs, servers...)
}

// searched is search_tools' answer.
type searched struct {
	Query string `json:"query"`
	Tools []struct {
		Name        string         `json:"name"`
		Description string         `json:"description"`
		InputSchema map[string]any `json:"inputSchema"`
		Tier        string         `json:"tier"`
	} `json:"tools"`
}

func (s searched) names() []string {
	var out []string
	for _, t := range s.Tools {
		out = append(out, t.Name)
	}
	return out
}

func searchTools(t *testing.T, cs *mcp.ClientSession, query string, limit int) searched {
	t.Helper()
	args := map[string]any{"query": query}
	if limit > 0 {
		args["limit"] = limit
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: gateway.SearchToolsName, Arguments: args})
	if err != nil || res.IsError {
		t.Fatalf("search_tools %q: %v %s", query, err, text(res))
	}
	var out searched
	if err := json.Unmarshal([]byte(text(res)), &out); err != nil {
		t.Fatalf("search_tools %q answered %q: %v", query, text(res), err)
	}
	if data, _ := json.Marshal(res.StructuredContent); !strings.Contains(string(data), `"tools"`) {
		t.Errorf("search_tools %q: structured content %s lacks the tools", query, data)
	}
	return out
}

// waitSearch searches until want is among the hits (the gateway lists
// servers in the background).
func waitSearch(t *testing.T, cs *mcp.ClientSession, query, want string) searched {
	t.Helper()
	var last searched
	testutil.Eventually(t, 30*time.Second, "search_tools "+query+" to find "+want, func() bool {
		last = searchTools(t, cs, query, 0)
		return slices.Contains(last.names(), want)
	})
	return last
}

func viaCallTool(cs *mcp.ClientSession, ctx context.Context, name string, args map[string]any, progressToken any) (*mcp.CallToolResult, error) {
	in := map[string]any{"name": name}
	if args != nil {
		in["arguments"] = args
	}
	p := &mcp.CallToolParams{Name: gateway.CallToolName, Arguments: in}
	if progressToken != nil {
		p.SetProgressToken(progressToken)
	}
	return cs.CallTool(ctx, p)
}

func TestSearchModeListsTwoTools(t *testing.T) {
	f := newSearchFixture(t, gateway.ServerConfig{Name: "alpha"}, gateway.ServerConfig{Name: "beta", DisabledTools: []string{"crash"}})
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			cs := f.connect(t, "/mcp", era, &mcp.ClientOptions{
				ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "42"}}, nil
				},
			})
			if names := testutil.ToolNames(t, cs); !slices.Equal(names, []string{gateway.CallToolName, gateway.SearchToolsName}) {
				t.Fatalf("/mcp in search mode lists %v; want exactly call_tool and search_tools", names)
			}
			// The servers' own endpoints are not in search mode.
			one := f.connect(t, "/mcp/alpha", era, nil)
			f.waitTools(t, one, "echo", "sleep")

			got := waitSearch(t, cs, "echo text back", "alpha__echo")
			if got.Query != "echo text back" {
				t.Errorf("the answer names query %q", got.Query)
			}
			for _, tool := range got.Tools {
				if tool.Name == "alpha__echo" && (tool.Description == "" || tool.InputSchema["type"] != "object") {
					t.Errorf("alpha__echo comes without its description or input schema: %+v", tool)
				}
			}
			// Only what a client could call is found: beta's disabled crash
			// is not, alpha's is.
			found := searchTools(t, cs, "crash exit code", 20)
			if slices.Contains(found.names(), "beta__crash") || !slices.Contains(found.names(), "alpha__crash") {
				t.Errorf("crash finds %v; want alpha__crash and not the disabled beta__crash", found.names())
			}
			if n := len(searchTools(t, cs, "echo sleep crash hang pid env cwd log", 2).Tools); n != 2 {
				t.Errorf("limit 2 returned %d tools", n)
			}
			called, err := viaCallTool(cs, t.Context(), "beta__echo", map[string]any{"text": "via " + era}, nil)
			if err != nil || text(called) != "via "+era {
				t.Errorf("call_tool beta__echo: %q %v", text(called), err)
			}
			// A server's request to the client during the call reaches the
			// client that made the call_tool (in the 2026-07-28 era, as an
			// input-required round).
			called, err = viaCallTool(cs, t.Context(), "alpha__elicit", map[string]any{"message": "the answer?"}, nil)
			if err != nil || !strings.Contains(text(called), "42") {
				t.Errorf("call_tool alpha__elicit: %q %v", text(called), err)
			}
		})
	}
}

func TestSearchToolsBadInput(t *testing.T) {
	f := newSearchFixture(t, gateway.ServerConfig{Name: "alpha"})
	cs := f.connect(t, "/mcp", "2025-11-25", nil)
	for _, tc := range []struct {
		tool string
		args any
		want string
	}{
		{gateway.SearchToolsName, map[string]any{}, "needs a query"},
		{gateway.SearchToolsName, map[string]any{"query": "  "}, "needs a query"},
		{gateway.SearchToolsName, map[string]any{"query": 7}, "bad arguments"},
		{gateway.SearchToolsName, map[string]any{"query": "x", "limit": 0}, "limit 0"},
		{gateway.CallToolName, map[string]any{}, "needs the name of a tool"},
		{gateway.CallToolName, map[string]any{"name": "alpha__echo", "arguments": "text"}, "must be an object"},
		{gateway.CallToolName, map[string]any{"name": []int{1}}, "bad arguments"},
	} {
		_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args})
		var rpc *jsonrpc.Error
		if !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInvalidParams || !strings.Contains(rpc.Message, tc.want) {
			t.Errorf("%s %v: %v; want invalid params saying %q", tc.tool, tc.args, err, tc.want)
		}
	}
}

// TestCallToolIsADirectCall compares a call_tool with a direct call of the
// same tool on /mcp: the same result and the same history record (server,
// tool as /mcp names it, arguments, outcome, response); and a search is
// recorded as a call of search_tools with its query.
func TestCallToolIsADirectCall(t *testing.T) {
	f := newSearchFixture(t, gateway.ServerConfig{Name: "alpha"})
	args := map[string]any{"text": "same either way"}

	f.gw.SetToolSearch(false)
	direct := f.connect(t, "/mcp", "2025-11-25", nil)
	f.waitTools(t, direct, "alpha__echo")
	want, err := direct.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__echo", Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	f.gw.SetToolSearch(true)
	if !f.gw.ToolSearch() {
		t.Fatal("SetToolSearch(true) did not turn search mode on")
	}
	cs := f.connect(t, "/mcp", "2025-11-25", nil)
	waitSearch(t, cs, "echo", "alpha__echo")
	got, err := viaCallTool(cs, t.Context(), "alpha__echo", args, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantJSON, _ := json.Marshal(want)
	gotJSON, _ := json.Marshal(got)
	if string(wantJSON) != string(gotJSON) {
		t.Errorf("call_tool answered %s; the direct call %s", gotJSON, wantJSON)
	}

	var echoes []record.Call
	var searches []record.Call
	testutil.Eventually(t, 5*time.Second, "the calls to be recorded", func() bool {
		echoes, searches = nil, nil
		for _, c := range f.rec.all() {
			switch c.Name {
			case "alpha__echo":
				echoes = append(echoes, c)
			case gateway.SearchToolsName:
				searches = append(searches, c)
			}
		}
		return len(echoes) == 2 && len(searches) > 0
	})
	same := func(c record.Call) record.Call {
		c.Start, c.Duration, c.Session, c.PID, c.Journal = time.Time{}, 0, "", 0, 0
		return c
	}
	if a, b := same(echoes[0]), same(echoes[1]); !equalCalls(a, b) {
		t.Errorf("records differ:\ndirect    %+v\ncall_tool %+v", a, b)
	}
	if c := echoes[1]; c.Server != "alpha" || c.Method != "tools/call" || c.Outcome != record.OutcomeOK ||
		!strings.Contains(string(c.Arguments), "same either way") || c.Duration <= 0 || c.PID == 0 {
		t.Errorf("call_tool's record lacks the real call: %+v", c)
	}
	s := searches[0]
	if s.Method != "tools/call" || s.Outcome != record.OutcomeOK || !strings.Contains(string(s.Arguments), `"echo"`) ||
		!strings.Contains(string(s.Response), "alpha__echo") {
		t.Errorf("search record = %+v (response %s); want a search_tools call with its query and answer", s, s.Response)
	}
	// A call_tool of a tool the server fails is the direct call's failure.
	res, err := viaCallTool(cs, t.Context(), "alpha__crash", map[string]any{"code": 3}, nil)
	if err != nil || !res.IsError || !strings.Contains(text(res), "exit status 3") {
		t.Errorf("call_tool alpha__crash: %v %q; want the tool error naming the exit", err, text(res))
	}
	testutil.Eventually(t, 5*time.Second, "the crash to be recorded", func() bool {
		for _, c := range f.rec.all() {
			if c.Name == "alpha__crash" && c.Server == "alpha" && c.Outcome == record.OutcomeUnavailable {
				return true
			}
		}
		return false
	})
}

func equalCalls(a, b record.Call) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb) && string(a.Response) == string(b.Response)
}

func TestCallToolUnknownTool(t *testing.T) {
	f := newSearchFixture(t, gateway.ServerConfig{Name: "alpha", DisabledTools: []string{"crash"}})
	f.gw.SetToolSearch(false)
	direct := f.connect(t, "/mcp", "2025-11-25", nil)
	f.gw.SetToolSearch(true)
	cs := f.connect(t, "/mcp", "2025-11-25", nil)
	waitSearch(t, cs, "echo", "alpha__echo")
	for _, name := range []string{"alpha__nosuch", "alpha__crash", "echo", gateway.SearchToolsName, gateway.CallToolName} {
		_, want := direct.CallTool(t.Context(), &mcp.CallToolParams{Name: name})
		_, got := viaCallTool(cs, t.Context(), name, nil, nil)
		if want == nil || got == nil || got.Error() != want.Error() {
			t.Errorf("call_tool %s: %v; a direct call on /mcp: %v; want the same error", name, got, want)
		}
	}
	// A tool of the aggregate is not callable directly in search mode.
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__echo"}); err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Errorf("a direct call of alpha__echo in search mode: %v; want unknown tool", err)
	}
}

func TestCallToolProgressAndCancellation(t *testing.T) {
	f := newSearchFixture(t, gateway.ServerConfig{Name: "alpha"})
	opts, progress := countProgress("via-call-tool")
	cs := f.connect(t, "/mcp", "2025-11-25", opts)
	waitSearch(t, cs, "sleep", "alpha__sleep")
	if _, err := viaCallTool(cs, t.Context(), "alpha__sleep", map[string]any{"ms": 450}, "via-call-tool"); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 5*time.Second, "progress with the caller's token", func() bool {
		return progress.Load() >= 2
	})

	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := viaCallTool(cs, ctx, "alpha__hang", nil, nil); err == nil {
		t.Fatal("hang returned")
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("cancelled call_tool returned after %s", took)
	}
	testutil.Eventually(t, 10*time.Second, "the cancelled call to be recorded as alpha__hang", func() bool {
		for _, c := range f.rec.all() {
			if c.Name == "alpha__hang" && c.Server == "alpha" && c.Outcome == record.OutcomeCancelled {
				return true
			}
		}
		return false
	})
	// The server's process is free again: a call after the cancelled one
	// goes through.
	res, err := viaCallTool(cs, t.Context(), "alpha__echo", map[string]any{"text": "after"}, nil)
	if err != nil || text(res) != "after" {
		t.Errorf("after the cancelled call: %q %v", text(res), err)
	}
}

// TestSearchFollowsTheLists adds a tool at run time (testmcp's add_tool
// announces it with tools/list_changed) and removes a server: the index
// follows what /mcp lists.
func TestSearchFollowsTheLists(t *testing.T) {
	alpha, beta := gateway.ServerConfig{Name: "alpha"}, gateway.ServerConfig{Name: "beta"}
	f := newSearchFixture(t, alpha, beta)
	cs := f.connect(t, "/mcp", "2025-11-25", nil)
	waitSearch(t, cs, "echo", "beta__echo")
	if _, err := viaCallTool(cs, t.Context(), "alpha__add_tool", map[string]any{"name": "zebra_stripes"}, nil); err != nil {
		t.Fatal(err)
	}
	waitSearch(t, cs, "zebra stripes", "alpha__zebra_stripes")
	res, err := viaCallTool(cs, t.Context(), "alpha__zebra_stripes", nil, nil)
	if err != nil || text(res) != "added zebra_stripes" {
		t.Errorf("call_tool of the added tool: %q %v", text(res), err)
	}
	f.gw.Sync([]gateway.ServerConfig{alpha})
	testutil.Eventually(t, 10*time.Second, "beta's tools to leave the index", func() bool {
		return !slices.Contains(searchTools(t, cs, "echo", 20).names(), "beta__echo")
	})
}

// TestProfileInSearchMode: a profile with ToolSearch lists the two tools
// on /mcp/p/<name>, its searches find only what the profile offers (its
// servers, its tools of them), and its call_tool calls only those, a tool
// outside it getting the error a direct call on the profile gets; /mcp
// stays as it is, and the profile's tool count is the two it lists.
func TestProfileInSearchMode(t *testing.T) {
	f := newSearchFixture(t, gateway.ServerConfig{Name: "alpha"}, gateway.ServerConfig{Name: "beta"})
	f.gw.SetToolSearch(false)
	profiles := []gateway.ProfileConfig{{Name: "small", Servers: []string{"alpha"}, Tools: map[string][]string{"alpha": {"echo", "sleep"}}}}
	f.gw.SetProfiles(profiles)
	plain := f.connect(t, "/mcp/p/small", "2025-11-25", nil)
	f.waitTools(t, plain, "alpha__echo")
	profiles[0].ToolSearch = true
	f.gw.SetProfiles(profiles)

	cs := f.connect(t, "/mcp/p/small", "2025-11-25", nil)
	if names := testutil.ToolNames(t, cs); !slices.Equal(names, []string{gateway.CallToolName, gateway.SearchToolsName}) {
		t.Fatalf("/mcp/p/small in search mode lists %v", names)
	}
	if n, ok := f.gw.ToolCount("small"); !ok || n != 2 {
		t.Errorf("ToolCount(small) = %d, %v; want the 2 it lists", n, ok)
	}
	if n, ok := f.gw.ReachableToolCount("small"); !ok || n != 2 {
		t.Errorf("ReachableToolCount(small) = %d, %v; want echo and sleep, behind the two", n, ok)
	}
	got := waitSearch(t, cs, "echo text back", "alpha__echo")
	for _, name := range append(got.names(), searchTools(t, cs, "echo crash hang env", 20).names()...) {
		if name != "alpha__echo" && name != "alpha__sleep" {
			t.Errorf("a search on the profile found %s, which it does not offer", name)
		}
	}
	res, err := viaCallTool(cs, t.Context(), "alpha__echo", map[string]any{"text": "in profile"}, nil)
	if err != nil || text(res) != "in profile" {
		t.Errorf("call_tool alpha__echo on the profile: %q %v", text(res), err)
	}
	for _, name := range []string{"alpha__crash", "beta__echo"} {
		_, want := plain.CallTool(t.Context(), &mcp.CallToolParams{Name: name})
		_, got := viaCallTool(cs, t.Context(), name, nil, nil)
		if want == nil || got == nil || got.Error() != want.Error() {
			t.Errorf("call_tool %s on the profile: %v; a direct call on it: %v; want the same error", name, got, want)
		}
	}
	testutil.Eventually(t, 5*time.Second, "the profile's call to be recorded", func() bool {
		for _, c := range f.rec.all() {
			if c.Name == "alpha__echo" && c.Server == "alpha" && c.Endpoint == "p/small" && c.Outcome == record.OutcomeOK {
				return true
			}
		}
		return false
	})
	all := f.connect(t, "/mcp", "2025-11-25", nil)
	f.waitTools(t, all, "alpha__echo", "beta__echo")
}

// TestSearchModeHeldTool: a tool the reviewer holds is not found, and a
// call_tool of it is refused with the reviewer's message, as a direct call
// is, and recorded under its server.
func TestSearchModeHeldTool(t *testing.T) {
	const msg = `tool "echo" of server "alpha" is held: its description changed since you approved it`
	rev := &fakeReviewer{held: map[string]map[string]string{"alpha": {"echo": msg}}, holds: map[string]bool{}}
	ix, err := toolsearch.New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	spec := supervisor.Spec{Name: "alpha", Command: os.Args[0], Env: testEnv(testmcp.Options{Name: "alpha"}), Pool: supervisor.PoolSpec{Max: 2}}
	f := newTunedFixture(t, "", func(_ *supervisor.Options, o *gateway.Options) {
		o.Reviewer, o.ToolIndex = rev, testIndex{ix}
	}, []supervisor.Spec{spec}, gateway.ServerConfig{Name: "alpha"})
	direct := f.connect(t, "/mcp", "2025-11-25", nil)
	f.waitTools(t, direct, "alpha__sleep")
	f.gw.SetToolSearch(true)
	cs := f.connect(t, "/mcp", "2025-11-25", nil)
	if found := waitSearch(t, cs, "echo text back sleep", "alpha__sleep"); slices.Contains(found.names(), "alpha__echo") {
		t.Errorf("search found the held alpha__echo: %v", found.names())
	}
	_, want := direct.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": "x"}})
	_, got := viaCallTool(cs, t.Context(), "alpha__echo", map[string]any{"text": "x"}, nil)
	if want == nil || got == nil || got.Error() != want.Error() || !strings.Contains(got.Error(), msg) {
		t.Errorf("call_tool of the held tool: %v; a direct call: %v; want the same error, naming the change", got, want)
	}
	refused := 0
	for _, c := range f.rec.all() {
		if c.Server == "alpha" && c.Name == "alpha__echo" && strings.Contains(c.Error, msg) {
			refused++
		}
	}
	if refused != 2 {
		t.Errorf("%d refusals of alpha__echo recorded under alpha, want 2 (direct and call_tool)", refused)
	}
}

// TestSearchModeKeepsPromptsAndResources: search mode changes the tool
// list only. /mcp and a profile in search mode offer the prompts,
// resources, templates, completion and subscriptions they offer out of
// it, in every era, and tell their clients when the prompts change.
func TestSearchModeKeepsPromptsAndResources(t *testing.T) {
	alpha, beta := gateway.ServerConfig{Name: "alpha"}, gateway.ServerConfig{Name: "beta"}
	f := newSearchFixture(t, alpha, beta)
	f.gw.SetProfiles([]gateway.ProfileConfig{{Name: "both", Servers: []string{"alpha", "beta"}, ToolSearch: true}})
	type watcher struct {
		cs      *mcp.ClientSession
		prompts chan struct{}
	}
	var watchers []watcher
	for _, path := range []string{"/mcp", "/mcp/p/both"} {
		for _, era := range eras {
			t.Run(strings.TrimPrefix(path, "/")+"/"+era, func(t *testing.T) {
				updates := make(chan string, 10)
				cs := f.connect(t, path, era, &mcp.ClientOptions{
					ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) { updates <- req.Params.URI },
				})
				if names := testutil.ToolNames(t, cs); !slices.Equal(names, []string{gateway.CallToolName, gateway.SearchToolsName}) {
					t.Fatalf("%s in search mode lists %v; want exactly call_tool and search_tools", path, names)
				}
				checkAggregatedFeatures(t, cs, era)
				resources, err := cs.ListResources(t.Context(), nil)
				if err != nil || !slices.ContainsFunc(resources.Resources, func(r *mcp.Resource) bool { return r.URI == "test://static/hello" }) {
					t.Errorf("resources/list: %v %+v; want test://static/hello", err, resources)
				}

				const uri = "test://static/hello"
				checkSubscription(t, cs, updates, uri, func(args map[string]any) (*mcp.CallToolResult, error) {
					return viaCallTool(cs, t.Context(), "alpha__touch", args, nil)
				})
			})
			if era == "2025-03-26" {
				continue // the features test watches list changes in the other two
			}
			w := watcher{prompts: make(chan struct{}, 10)}
			w.cs = f.connect(t, path, era, &mcp.ClientOptions{
				PromptListChangedHandler: func(context.Context, *mcp.PromptListChangedRequest) { w.prompts <- struct{}{} },
			})
			if _, err := w.cs.ListPrompts(t.Context(), nil); err != nil {
				t.Fatal(err)
			}
			watchers = append(watchers, w)
		}
	}

	// beta leaves: its prompts go, and every search-mode client is told.
	f.gw.Sync([]gateway.ServerConfig{alpha})
	for _, w := range watchers {
		select {
		case <-w.prompts:
		case <-time.After(10 * time.Second):
			t.Fatal("no prompts/list_changed reached a client in search mode when beta left")
		}
		prompts, err := w.cs.ListPrompts(t.Context(), nil)
		if err != nil || slices.ContainsFunc(prompts.Prompts, func(p *mcp.Prompt) bool { return p.Name == "beta__greet" }) ||
			!slices.ContainsFunc(prompts.Prompts, func(p *mcp.Prompt) bool { return p.Name == "alpha__greet" }) {
			t.Errorf("prompts after beta left: %v %+v; want alpha__greet and not beta__greet", err, prompts)
		}
	}
}
