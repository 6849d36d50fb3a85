package gateway_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/app/gateway"
	"github.com/switchboardhq/switchboard/app/history"
	"github.com/switchboardhq/switchboard/app/toolsearch"
	"github.com/switchboardhq/switchboard/supervisor"
	"github.com/switchboardhq/switchboard/supervisor/testmcp"
)

// claudeCodePrefix is what Claude Code puts before a tool's name for its
// model when its entry is called "switchboard".
const claudeCodePrefix = "mcp__switchboard__"

// claudeCodePrefixOf is Claude Code's prefix for the tools of the entry
// of server's own endpoint, switchboard-<server>, or of the aggregated
// endpoints' for "".
func claudeCodePrefixOf(server string) string {
	if server == "" {
		return claudeCodePrefix
	}
	return "mcp__switchboard-" + server + "__"
}

// longServer is a 27-character server name, as in the probe of issue 26.
const longServer = "everything-long-server-name"

// longTools are server-everything's longest tool names, and two longer.
var longTools = []string{"trigger-long-running-operation", "get-resource-reference", "get-structured-content",
	"trigger-elicitation-request", "a-tool-whose-name-alone-is-forty-one-char", fiftyTool}

// fiftyTool is a tool name of 50 characters.
const fiftyTool = "a-tool-whose-name-alone-is-fifty-characters-long-x"

// extraToolDescription is how the test server describes longTools.
const extraToolDescription = "A tool added by add_tool or Options.ExtraTools."

type clientKey struct{}

// newBudgetFixture serves longServer (the test server with longTools) and
// two servers under one alias (a collision), with a tool index; a request
// whose X-Client header says "claude-code" has Claude Code's name budget.
// order lists the servers in the order Sync is given them.
func newBudgetFixture(t *testing.T, mode gateway.FastPathMode, order []string) *fixture {
	t.Helper()
	return newTunedBudgetFixture(t, mode, order, nil)
}

// newTunedBudgetFixture is newBudgetFixture with tune applied to the
// gateway's options last.
func newTunedBudgetFixture(t *testing.T, mode gateway.FastPathMode, order []string, tune func(*gateway.Options)) *fixture {
	t.Helper()
	ix, err := toolsearch.New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	configs := map[string]gateway.ServerConfig{longServer: {Name: longServer},
		"alpha": {Name: "alpha", Alias: "shared"}, "beta": {Name: "beta", Alias: "shared"}}
	var specs []supervisor.Spec
	var servers []gateway.ServerConfig
	for _, name := range order {
		o := testmcp.Options{Name: name}
		if name == longServer {
			o.ExtraTools = longTools
		}
		specs = append(specs, supervisor.Spec{Name: name, Command: os.Args[0], Env: testEnv(o), Pool: supervisor.PoolSpec{Max: 1}})
		servers = append(servers, configs[name])
	}
	f := newTunedFixture(t, "", func(_ *supervisor.Options, o *gateway.Options) {
		o.FastPath = mode
		o.ToolIndex = testIndex{ix}
		o.NameBudget = func(ctx context.Context, server string) int {
			if ctx.Value(clientKey{}) == "claude-code" {
				return gateway.MaxNameLen - len(claudeCodePrefixOf(server))
			}
			return gateway.MaxNameLen
		}
		if tune != nil {
			tune(o)
		}
	}, specs, servers...)
	h := f.gw.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), clientKey{}, r.Header.Get("X-Client"))))
	}))
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close() })
	f.url = srv.URL
	return f
}

type clientHeader string

func (c clientHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Client", string(c))
	return http.DefaultTransport.RoundTrip(r)
}

// connectAs opens a session of client on path, in the session era.
func (f *fixture) connectAs(t *testing.T, client, path string) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: client, Version: "1"}, nil).Connect(t.Context(),
		&mcp.StreamableClientTransport{Endpoint: f.url + path, HTTPClient: &http.Client{Transport: clientHeader(client)}},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect %s as %s: %v", path, client, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// listedNames waits until cs lists every server's tools, and returns
// their names, sorted.
func (f *fixture) listedNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	var names []string
	for _, tool := range f.waitTools(t, cs, "shared__echo", "shared__echo_2", longServer+"__echo") {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

// TestNameBudgetOfClaudeCode: a Claude Code session gets tool names that
// stay within 64 characters once Claude Code prefixes them, on /mcp, a
// profile and in search mode, and calls them on both paths; another
// client gets the full names; both are the same on a second gateway whose
// servers came in another order, collisions included.
func TestNameBudgetOfClaudeCode(t *testing.T) {
	for _, mode := range []gateway.FastPathMode{gateway.FastPathOn, gateway.FastPathOff} {
		name := map[gateway.FastPathMode]string{gateway.FastPathOn: "fast", gateway.FastPathOff: "sdk"}[mode]
		t.Run(name, func(t *testing.T) { testNameBudget(t, mode) })
	}
}

func testNameBudget(t *testing.T, mode gateway.FastPathMode) {
	f := newBudgetFixture(t, mode, []string{longServer, "alpha", "beta"})
	short := f.listedNames(t, f.connectAs(t, "claude-code", "/mcp"))
	full := f.listedNames(t, f.connectAs(t, "cursor", "/mcp"))
	if len(short) != len(full) {
		t.Fatalf("claude-code lists %d tools, cursor %d", len(short), len(full))
	}
	over := 0
	for _, n := range short {
		if sent := claudeCodePrefix + n; len(sent) > gateway.MaxNameLen {
			t.Errorf("Claude Code would send %s (%d characters)", sent, len(sent))
		}
	}
	for _, n := range full {
		if len(n) > gateway.MaxNameLen {
			t.Errorf("%s has %d characters", n, len(n))
		}
		if len(claudeCodePrefix+n) > gateway.MaxNameLen {
			over++
		}
	}
	// What the budget is for: without it, these would be too long.
	if over < len(longTools) {
		t.Errorf("only %d full names would be too long for Claude Code, want at least %d: %v", over, len(longTools), full)
	}
	t.Logf("%d tools; %d full names would be over 64 with %s; longest short name %d characters",
		len(full), over, claudeCodePrefix, slices.Max(lengths(short)))

	// A shortened name calls its tool.
	cs := f.connectAs(t, "claude-code", "/mcp")
	f.listedNames(t, cs)
	var target string
	before := gateway.FastCalls(f.gw)
	// Only the extra tools are called (no built-in one: hang and freeze
	// would not answer); theirs are the names short and full do not share.
	var candidates []string
	for _, n := range namesStarting(short, longServer+"__") {
		if !slices.Contains(full, n) {
			candidates = append(candidates, n)
		}
	}
	for _, n := range candidates {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: n})
		if err != nil || res.IsError {
			t.Fatalf("calling %s: %v %q", n, err, text(res))
		}
		if text(res) == "added trigger-long-running-operation" {
			target = n
		}
	}
	if target == "" || target == longServer+"__trigger-long-running-operation" {
		t.Fatalf("no shortened name of Claude Code's calls trigger-long-running-operation: %v", candidates)
	}
	if fast := gateway.FastCalls(f.gw) - before; (mode == gateway.FastPathOn) != (fast > 0) {
		t.Errorf("fast path answered %d calls in mode %v", fast, mode)
	}
	// The full name is not Claude Code's.
	if res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: longServer + "__trigger-long-running-operation"}); err == nil && !res.IsError {
		t.Errorf("a Claude Code session called a tool by a name it was not given")
	}

	// A profile names tools as /mcp does, for each client.
	f.gw.SetProfiles([]gateway.ProfileConfig{{Name: "work", Servers: []string{longServer, "alpha", "beta"}}})
	if got := f.listedNames(t, f.connectAs(t, "claude-code", "/mcp/p/work")); !cmp.Equal(got, short) {
		t.Errorf("the profile's Claude Code names differ from /mcp's (-mcp +profile):\n%s", cmp.Diff(short, got))
	}
	if got := f.listedNames(t, f.connectAs(t, "cursor", "/mcp/p/work")); !cmp.Equal(got, full) {
		t.Errorf("the profile's full names differ from /mcp's (-mcp +profile):\n%s", cmp.Diff(full, got))
	}

	// Search mode finds tools under the session's names, and calls them.
	f.gw.SetToolSearch(true)
	searching := f.connectAs(t, "claude-code", "/mcp")
	found := waitSearch(t, searching, "trigger a long running operation", target)
	for _, n := range found.names() {
		if !slices.Contains(short, n) {
			t.Errorf("search_tools answered %s, not one of the session's names", n)
		}
	}
	res, err := searching.CallTool(t.Context(), &mcp.CallToolParams{Name: gateway.CallToolName,
		Arguments: map[string]any{"name": target}})
	if err != nil || res.IsError || text(res) != "added trigger-long-running-operation" {
		t.Fatalf("call_tool %s: %v %q", target, err, text(res))
	}
	plain := f.connectAs(t, "cursor", "/mcp")
	fullTarget := longServer + "__trigger-long-running-operation"
	waitSearch(t, plain, "trigger a long running operation", fullTarget)
	f.gw.SetToolSearch(false)

	// Another gateway, its servers given in another order: the same names.
	g := newBudgetFixture(t, mode, []string{"beta", "alpha", longServer})
	if got := g.listedNames(t, g.connectAs(t, "claude-code", "/mcp")); !cmp.Equal(got, short) {
		t.Errorf("Claude Code's names changed with a restart (-before +after):\n%s", cmp.Diff(short, got))
	}
	if got := g.listedNames(t, g.connectAs(t, "cursor", "/mcp")); !cmp.Equal(got, full) {
		t.Errorf("the full names changed with a restart (-before +after):\n%s", cmp.Diff(full, got))
	}
	// beta's items are the ones renamed, whichever server came first.
	collisions := g.gw.Collisions()
	if !slices.ContainsFunc(collisions, func(c gateway.Collision) bool { return c.Got == "shared__echo_2" && c.Server == "beta" }) ||
		slices.ContainsFunc(collisions, func(c gateway.Collision) bool { return c.Server != "beta" }) {
		t.Errorf("collisions after the restart = %+v, want beta's items renamed (shared__echo_2)", collisions)
	}
	if diff := cmp.Diff(f.gw.Collisions(), collisions); diff != "" {
		t.Errorf("collisions changed with a restart (-before +after):\n%s", diff)
	}
}

func lengths(names []string) []int {
	var out []int
	for _, n := range names {
		out = append(out, len(n))
	}
	return out
}

// namesStarting returns the names that start with prefix.
func namesStarting(names []string, prefix string) []string {
	var out []string
	for _, n := range names {
		if strings.HasPrefix(n, prefix) {
			out = append(out, n)
		}
	}
	return out
}

// TestNameBudgetHistory: a call of a long-named tool by a Claude Code
// session, under its short name, is recorded under the tool's full name,
// as another client's call of it is, so that the history's tool filter
// finds both under that one name; on both paths.
func TestNameBudgetHistory(t *testing.T) {
	for _, mode := range []gateway.FastPathMode{gateway.FastPathOn, gateway.FastPathOff} {
		name := map[gateway.FastPathMode]string{gateway.FastPathOn: "fast", gateway.FastPathOff: "sdk"}[mode]
		t.Run(name, func(t *testing.T) { testNameBudgetHistory(t, mode) })
	}
}

func testNameBudgetHistory(t *testing.T, mode gateway.FastPathMode) {
	hist, err := history.Open(t.Context(), filepath.Join(t.TempDir(), "history.db"), history.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := hist.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	f := newTunedBudgetFixture(t, mode, []string{longServer, "alpha", "beta"}, func(o *gateway.Options) {
		o.Recorder = hist
		o.ClientLabel = func(ctx context.Context) string { s, _ := ctx.Value(clientKey{}).(string); return s }
	})
	fullName := longServer + "__trigger-long-running-operation"
	callsByClient := map[string]string{} // client → the name it called
	for _, client := range []string{"claude-code", "cursor"} {
		cs := f.connectAs(t, client, "/mcp")
		// A shortened name does not say which tool it is: the one that
		// answers as trigger-long-running-operation is.
		before := gateway.FastCalls(f.gw)
		var name string
		for _, n := range namesStarting(f.listedNames(t, cs), longServer+"__trigger-") {
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: n})
			if err != nil || res.IsError {
				t.Fatalf("%s calling %s: %v %q", client, n, err, text(res))
			}
			if text(res) == "added trigger-long-running-operation" {
				name = n
			}
		}
		if fast := gateway.FastCalls(f.gw) - before; (mode == gateway.FastPathOn) != (fast > 0) {
			t.Errorf("fast path answered %d calls in mode %v", fast, mode)
		}
		callsByClient[client] = name
	}
	if callsByClient["claude-code"] == fullName || callsByClient["cursor"] != fullName {
		t.Fatalf("the clients called %v; want a short name for claude-code and %s for cursor", callsByClient, fullName)
	}

	var page history.CallPage
	deadline := time.Now().Add(10 * time.Second)
	for {
		if err := hist.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
		if page, err = hist.Calls(t.Context(), history.CallQuery{Tool: fullName}); err != nil {
			t.Fatal(err)
		}
		if len(page.Calls) >= 2 || time.Now().After(deadline) {
			break
		}
	}
	var clients []string
	for _, c := range page.Calls {
		clients = append(clients, c.ClientLabel)
		if c.Name != fullName || c.Server != longServer || c.Outcome != "ok" {
			t.Errorf("recorded %s call = %s on %s (%s), want %s on %s (ok)", c.ClientLabel, c.Name, c.Server, c.Outcome, fullName, longServer)
		}
	}
	slices.Sort(clients)
	if want := []string{"claude-code", "cursor"}; !cmp.Equal(clients, want) {
		t.Errorf("the history's calls of %s are by %v, want %v", fullName, clients, want)
	}
	if short, err := hist.Calls(t.Context(), history.CallQuery{Tool: callsByClient["claude-code"]}); err != nil || len(short.Calls) != 0 {
		t.Errorf("the history has %d calls under Claude Code's short name %s (err %v), want none", len(short.Calls), callsByClient["claude-code"], err)
	}
}

// TestNameBudgetOwnEndpoint: on a server's own endpoint, whose Claude Code
// entry switchboard-<server> makes the prefix mcp__switchboard-<server>__
// (46 characters for a 27-character server), a Claude Code session gets
// names that fit what is left, each calling its own tool (recorded under
// the tool's own name), on both paths; a Cursor session gets the server's
// own names.
func TestNameBudgetOwnEndpoint(t *testing.T) {
	for _, mode := range []gateway.FastPathMode{gateway.FastPathOn, gateway.FastPathOff} {
		name := map[gateway.FastPathMode]string{gateway.FastPathOn: "fast", gateway.FastPathOff: "sdk"}[mode]
		t.Run(name, func(t *testing.T) { testNameBudgetOwn(t, mode) })
	}
}

func testNameBudgetOwn(t *testing.T, mode gateway.FastPathMode) {
	f := newBudgetFixture(t, mode, []string{longServer, "alpha", "beta"})
	path := "/mcp/" + longServer
	budget := gateway.MaxNameLen - len(claudeCodePrefixOf(longServer))
	if len(longServer) != 27 || len(fiftyTool) != 50 || budget != 18 {
		t.Fatalf("server %d, tool %d characters, budget %d: the case is a 27-character server and a 50-character tool",
			len(longServer), len(fiftyTool), budget)
	}
	claude := f.connectAs(t, "claude-code", path)
	cursor := f.connectAs(t, "cursor", path)
	short := f.waitTools(t, claude, "echo")
	var full []string
	for _, tool := range f.waitTools(t, cursor, append([]string{"echo"}, longTools...)...) {
		full = append(full, tool.Name)
	}
	if len(short) != len(full) {
		t.Fatalf("claude-code lists %d tools on %s, cursor %d", len(short), path, len(full))
	}

	var shortNames []string
	for _, tool := range short {
		shortNames = append(shortNames, tool.Name)
	}
	for _, own := range full {
		if len(own) <= budget && !slices.Contains(shortNames, own) {
			t.Errorf("Claude Code is not given %s, which fits, under its own name", own)
		}
	}

	before := gateway.FastCalls(f.gw)
	called := map[string]string{} // the server's name → Claude Code's
	for _, tool := range short {
		if sent := claudeCodePrefixOf(longServer) + tool.Name; len(sent) > gateway.MaxNameLen {
			t.Errorf("Claude Code would send %s (%d characters)", sent, len(sent))
		}
		if tool.Description != extraToolDescription {
			continue // a built-in tool (hang and freeze would not answer)
		}
		res, err := claude.CallTool(t.Context(), &mcp.CallToolParams{Name: tool.Name})
		if err != nil || res.IsError {
			t.Fatalf("calling %s: %v %q", tool.Name, err, text(res))
		}
		own, _ := strings.CutPrefix(text(res), "added ")
		called[own] = tool.Name
	}
	for _, own := range longTools {
		if _, ok := called[own]; !ok {
			t.Errorf("no name Claude Code was given on %s calls %s: %v", path, own, called)
		}
	}
	if called[fiftyTool] == fiftyTool {
		t.Errorf("Claude Code is given %s as it is", fiftyTool)
	}
	// Cursor's session calls the tool by its own name.
	res, err := cursor.CallTool(t.Context(), &mcp.CallToolParams{Name: fiftyTool})
	if err != nil || res.IsError || text(res) != "added "+fiftyTool {
		t.Fatalf("cursor calling %s: %v %q", fiftyTool, err, text(res))
	}
	if fast := gateway.FastCalls(f.gw) - before; (mode == gateway.FastPathOn) != (fast > 0) {
		t.Errorf("fast path answered %d calls in mode %v", fast, mode)
	}
	// Both calls of fiftyTool are recorded under its own name.
	n := 0
	for _, c := range f.rec.all() {
		if c.Method == "tools/call" && c.Endpoint == longServer && c.Name == fiftyTool && c.Server == longServer {
			n++
		}
		if c.Name == called[fiftyTool] {
			t.Errorf("a call is recorded under Claude Code's name %s", c.Name)
		}
	}
	if n != 2 {
		t.Errorf("%d calls of %s recorded under its own name, want 2", n, fiftyTool)
	}

	// The names are the list's alone: a second session, and a second
	// gateway whose servers came in another order, get the same.
	g := newBudgetFixture(t, mode, []string{"beta", "alpha", longServer})
	var again []string
	for _, tool := range g.waitTools(t, g.connectAs(t, "claude-code", path), "echo") {
		again = append(again, tool.Name)
	}
	slices.Sort(shortNames)
	slices.Sort(again)
	if !cmp.Equal(shortNames, again) {
		t.Errorf("Claude Code's names on %s changed with a restart (-before +after):\n%s", path, cmp.Diff(shortNames, again))
	}
}
