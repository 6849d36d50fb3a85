package gateway_test

import (
	"context"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/app/gateway"
	"github.com/switchboardhq/switchboard/app/internal/testutil"
	"github.com/switchboardhq/switchboard/supervisor"
	"github.com/switchboardhq/switchboard/supervisor/testmcp"
)

// TestPromptsResourcesAndCompletion goes through /mcp (prefixed prompts,
// resources by URI) and /mcp/<server> in both eras.
func TestPromptsResourcesAndCompletion(t *testing.T) {
	f := newFixture(t, gateway.ServerConfig{Name: "alpha"}, gateway.ServerConfig{Name: "beta"})
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			cs := f.connect(t, "/mcp", era, nil)
			f.waitTools(t, cs, "alpha__echo", "beta__echo")

			checkAggregatedFeatures(t, cs, era)

			one := f.connect(t, "/mcp/beta", era, nil)
			got, err := one.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "greet", Arguments: map[string]string{"name": "Bo"}})
			if err != nil || got.Messages[0].Content.(*mcp.TextContent).Text != "Hello, Bo!" {
				t.Errorf("greet on /mcp/beta: %v %+v", err, got)
			}
			read, err := one.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "test://static/hello"})
			if err != nil || read.Contents[0].Text != "hello from beta" {
				t.Errorf("read on /mcp/beta: %v %+v", err, read)
			}
		})
	}
}

// checkAggregatedFeatures checks what an aggregated endpoint over alpha
// and beta offers besides tools: prefixed prompts, resources by URI (and
// through a template), completion, ping.
func checkAggregatedFeatures(t *testing.T, cs *mcp.ClientSession, era string) {
	t.Helper()
	prompts, err := cs.ListPrompts(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range prompts.Prompts {
		names = append(names, p.Name)
	}
	for _, want := range []string{"alpha__greet", "beta__greet", "alpha__summarize"} {
		if !slices.Contains(names, want) {
			t.Errorf("prompts %v lack %s", names, want)
		}
	}
	got, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "beta__greet", Arguments: map[string]string{"name": "Ada"}})
	if err != nil {
		t.Fatal(err)
	}
	if tc, ok := got.Messages[0].Content.(*mcp.TextContent); !ok || tc.Text != "Hello, Ada!" {
		t.Errorf("beta__greet = %+v", got.Messages[0].Content)
	}

	// Both servers offer test://static/hello: the first by name wins.
	read, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "test://static/hello"})
	if err != nil || read.Contents[0].Text != "hello from alpha" {
		t.Errorf("read hello: %v %+v", err, read)
	}
	read, err = cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "test://items/7"})
	if err != nil || read.Contents[0].Text != "item 7" {
		t.Errorf("read through a template: %v %+v", err, read)
	}
	templates, err := cs.ListResourceTemplates(t.Context(), nil)
	if err != nil || len(templates.ResourceTemplates) != 1 {
		t.Errorf("templates: %v %+v", err, templates)
	}

	comp, err := cs.Complete(t.Context(), &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: "ref/prompt", Name: "alpha__greet"},
		Argument: mcp.CompleteParamsArgument{Name: "name", Value: "al"},
	})
	if err != nil || !slices.Equal(comp.Completion.Values, []string{"alice", "albert"}) {
		t.Errorf("complete a prompt argument: %v %+v", err, comp)
	}
	comp, err = cs.Complete(t.Context(), &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: "ref/resource", URI: "test://items/{id}"},
		Argument: mcp.CompleteParamsArgument{Name: "id", Value: "1"},
	})
	if err != nil || !slices.Equal(comp.Completion.Values, []string{"1", "10"}) {
		t.Errorf("complete a template variable: %v %+v", err, comp)
	}
	if err := cs.Ping(t.Context(), nil); err != nil && era != "2026-07-28" {
		t.Errorf("ping: %v", err)
	}
}

// listWatcher is a client session that counts the tools/list_changed
// notifications it hears.
type listWatcher struct {
	*mcp.ClientSession
	changed chan struct{}
}

func (f *fixture) watchLists(t *testing.T, era string) *listWatcher {
	w := &listWatcher{changed: make(chan struct{}, 10)}
	w.ClientSession = f.connect(t, "/mcp", era, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		select {
		case w.changed <- struct{}{}:
		default:
		}
	}})
	f.waitTools(t, w.ClientSession, "alpha__echo")
	return w
}

// addTool has alpha's process add tool, and waits until the watcher hears
// of it and lists it.
func (f *fixture) addTool(t *testing.T, w *listWatcher, tool string) {
	t.Helper()
	for len(w.changed) > 0 {
		<-w.changed
	}
	res, err := w.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__add_tool", Arguments: map[string]any{"name": tool}})
	if err != nil || res.IsError {
		t.Fatalf("add_tool: %v %+v", err, res)
	}
	select {
	case <-w.changed:
	case <-time.After(20 * time.Second):
		t.Fatal("no tools/list_changed reached the client")
	}
	f.waitTools(t, w.ClientSession, "alpha__"+tool)
}

// newOneProcessFixture runs the test server alpha as a pool of one process.
// Tests of what one process holds (a tool it added, a subscription it was
// asked for) need their calls to reach that process: a pool of two sends a
// call to whichever process is least busy, and under load the pool has
// started a second one while the first was busy.
func newOneProcessFixture(t *testing.T) *fixture {
	spec := supervisor.Spec{Name: "alpha", Command: os.Args[0], Env: testEnv(testmcp.Options{Name: "alpha"}),
		Pool: supervisor.PoolSpec{Max: 1}}
	return newSpecFixture(t, "", []supervisor.Spec{spec}, gateway.ServerConfig{Name: "alpha"})
}

// TestListChangesReachClients: a server that adds a tool makes every
// connected client hear of it, and the tool is callable.
func TestListChangesReachClients(t *testing.T) {
	f := newOneProcessFixture(t)
	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(era, func(t *testing.T) {
			watcher := f.watchLists(t, era)
			tool := "fresh" + strings.ReplaceAll(era, "-", "")
			f.addTool(t, watcher, tool)
			res, err := watcher.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__" + tool})
			if err != nil {
				t.Fatalf("calling the new tool: %v", err)
			}
			if text(res) != "added "+tool {
				t.Errorf("calling the new tool: %q", text(res))
			}
		})
	}
}

// TestListChangeFromOneProcessOfAPool: when one process of a pool adds a
// tool, the gateway lists that process, not whichever the pool offers
// (the other does not have the tool), so clients hear of the tool.
func TestListChangeFromOneProcessOfAPool(t *testing.T) {
	spec := supervisor.Spec{Name: "alpha", Command: os.Args[0], Env: testEnv(testmcp.Options{Name: "alpha"}),
		Pool: supervisor.PoolSpec{Min: 2, Max: 2}}
	f := newSpecFixture(t, "", []supervisor.Spec{spec}, gateway.ServerConfig{Name: "alpha"})
	watcher := f.watchLists(t, "2026-07-28")
	testutil.Eventually(t, 30*time.Second, "two processes", func() bool {
		st, err := f.sup.Status("alpha")
		return err == nil && len(st.Processes) == 2
	})
	f.addTool(t, watcher, "only_here")
}

// TestListsKeptUntilTheyChange: the fronts keep the lists they answered
// (listcache.go); a second session gets the same lists as the first, on
// /mcp and on a server's endpoint, and a server's change reaches both
// sessions' next lists.
func TestListsKeptUntilTheyChange(t *testing.T) {
	f := newOneProcessFixture(t)
	watcher := f.watchLists(t, "2025-11-25")
	methods := []string{"tools/list", "prompts/list", "resources/list", "resources/templates/list"}
	list := func(path, session, method string) string {
		t.Helper()
		h := mcpHeaders("2025-11-25")
		h["Mcp-Session-Id"] = session
		r := f.send(t, "POST", path, h, `{"jsonrpc":"2.0","id":2,"method":"`+method+`","params":{}}`)
		if r.status != 200 || r.msg["result"] == nil {
			t.Fatalf("%s %s: %d %s", path, method, r.status, r.body)
		}
		return string(r.msg["result"])
	}
	paths := []string{"/mcp", "/mcp/alpha"}
	sessions := map[string][2]string{}
	for _, path := range paths {
		first, second := f.rawSession(t, path), f.rawSession(t, path)
		sessions[path] = [2]string{first, second}
		for _, method := range methods {
			a, b := list(path, first, method), list(path, second, method)
			if a != b {
				t.Errorf("%s %s: the second session got\n%s\nthe first\n%s", path, method, b, a)
			}
			if method == "tools/list" && !strings.Contains(a, `echo"`) {
				t.Errorf("%s: no echo in %s", path, a)
			}
		}
	}
	f.addTool(t, watcher, "fresh")
	for _, path := range paths {
		for _, session := range sessions[path] {
			if got := list(path, session, "tools/list"); !strings.Contains(got, `fresh"`) {
				t.Errorf("%s: a list after the server added a tool lacks it: %s", path, got)
			}
		}
	}
}

// TestBigResourceRead: a resource read of more than spliceMin reaches a
// client of each era whole, through /mcp and /mcp/<server> (the session
// era's is spliced into the response, eras.go), and a session-era
// response has neither the other era's keys nor a placeholder.
func TestBigResourceRead(t *testing.T) {
	f := newFixture(t, gateway.ServerConfig{Name: "alpha"})
	id := strings.Repeat("x", 100<<10) // the item template answers "item <id>"
	uri := "test://items/" + id
	for _, era := range eras {
		for _, path := range []string{"/mcp", "/mcp/alpha"} {
			cs := f.connect(t, path, era, nil)
			read, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
			if err != nil || len(read.Contents) != 1 || read.Contents[0].Text != "item "+id || read.Contents[0].URI != uri {
				t.Errorf("%s %s: read %d KiB: %v", era, path, len(uri)>>10, err)
			}
			cs.Close()
		}
	}
	session := f.rawSession(t, "/mcp/alpha")
	h := mcpHeaders("2025-11-25")
	h["Mcp-Session-Id"] = session
	r := f.send(t, "POST", "/mcp/alpha", h, `{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"`+uri+`"}}`)
	if r.status != 200 || !strings.Contains(string(r.msg["result"]), `"item `+id+`"`) {
		t.Fatalf("raw read: %d %.200s", r.status, r.body)
	}
	for _, absent := range []string{`"ttlMs"`, `"cacheScope"`, `"sbRaw"`} {
		if strings.Contains(string(r.body), absent) {
			t.Errorf("the session-era response holds %s: %.300s", absent, r.body)
		}
	}
}

// TestListsAServerDoesNotServe: a server that advertises resources but
// answers "method not found" to resources/templates/list (the minimal
// echo server of bench_echo_test.go told to, as many hand-written servers
// do) has its tools and resources served, and no templates; before, the
// listing failed and the server had no tools at all.
func TestListsAServerDoesNotServe(t *testing.T) {
	specs := []supervisor.Spec{{Name: "plain", Command: os.Args[0], Pool: supervisor.PoolSpec{Max: 1},
		Env: map[string]string{benchEchoEnv: "1", benchEchoNoTemplatesEnv: "1"}}}
	f := newSpecFixture(t, "", specs, gateway.ServerConfig{Name: "plain"})
	cs := f.connect(t, "/mcp/plain", "2025-11-25", nil)
	f.waitTools(t, cs, "echo", "big")
	resources, err := cs.ListResources(t.Context(), nil)
	if err != nil || len(resources.Resources) != 1 || resources.Resources[0].URI != "bench://big/256" {
		t.Fatalf("resources: %v %+v", err, resources)
	}
	if templates, err := cs.ListResourceTemplates(t.Context(), nil); err != nil || len(templates.ResourceTemplates) != 0 {
		t.Errorf("templates: %v %+v, want none", err, templates)
	}
	read, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "bench://big/256"})
	if err != nil || len(read.Contents) != 1 || len(read.Contents[0].Text) != 256<<10 || read.Contents[0].MIMEType != "text/plain" {
		t.Errorf("read: %v", err)
	}
}

// TestServerToClientRequestsReachTheCaller: sampling, elicitation and roots
// asked by a server during a call reach the client that made the call, in
// the session era; a client without the capability makes the server get an
// error.
func TestServerToClientRequestsReachTheCaller(t *testing.T) {
	f := newFixture(t, gateway.ServerConfig{Name: "alpha"})
	client := mcp.NewClient(&mcp.Implementation{Name: "capable", Version: "1"}, &mcp.ClientOptions{
		//lint:ignore SA1019 the test exercises sampling, which the gateway still relays (deprecated by SEP-2577, functional in its deprecation window)
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			//lint:ignore SA1019 the test exercises sampling, which the gateway still relays (deprecated by SEP-2577, functional in its deprecation window)
			return &mcp.CreateMessageResult{Model: "test", Role: "assistant",
				Content: &mcp.TextContent{Text: "sampled: " + req.Params.Messages[0].Content.(*mcp.TextContent).Text}}, nil
		},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "42"}}, nil
		},
	})
	//lint:ignore SA1019 the test exercises roots, which the gateway still relays (deprecated by SEP-2577, functional in its deprecation window)
	client.AddRoots(&mcp.Root{URI: "file:///tmp/root", Name: "root"})
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: f.url + "/mcp"},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	f.waitTools(t, cs, "alpha__sample")

	for _, tt := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"alpha__sample", map[string]any{"prompt": "what is 6x7?"}, "sampled: what is 6x7?"},
		{"alpha__elicit", map[string]any{"message": "answer?"}, `{"action":"accept","content":{"answer":"42"}}`},
		{"alpha__roots", map[string]any{}, "file:///tmp/root"},
	} {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tt.tool, Arguments: tt.args})
		if err != nil || res.IsError || text(res) != tt.want {
			t.Errorf("%s: %v %q, want %q", tt.tool, err, text(res), tt.want)
		}
	}

	plain := f.connect(t, "/mcp", "2025-11-25", &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	res, err := plain.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__sample", Arguments: map[string]any{"prompt": "x"}})
	if err == nil && !res.IsError {
		t.Errorf("sampling through a client without the capability succeeded: %q", text(res))
	}
}

// TestSessionsAreIsolatedAndEndCleanly: two sessions see their own
// progress; DELETE ends a session and the next request with its id gets 404.
func TestSessionsAreIsolatedAndEndCleanly(t *testing.T) {
	f := newFixture(t, gateway.ServerConfig{Name: "alpha"})
	var mu sync.Mutex
	seen := map[string][]any{}
	session := func(name string) *mcp.ClientSession {
		return f.connect(t, "/mcp", "2025-11-25", &mcp.ClientOptions{
			ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
				mu.Lock()
				defer mu.Unlock()
				seen[name] = append(seen[name], req.Params.ProgressToken)
			},
		})
	}
	a, b := session("a"), session("b")
	f.waitTools(t, a, "alpha__sleep")
	var wg sync.WaitGroup
	for name, cs := range map[string]*mcp.ClientSession{"a": a, "b": b} {
		wg.Go(func() {
			p := &mcp.CallToolParams{Name: "alpha__sleep", Arguments: map[string]any{"ms": 350}}
			p.SetProgressToken("token-" + name)
			if _, err := cs.CallTool(t.Context(), p); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		})
	}
	wg.Wait()
	// The client SDK hands notifications to their handler on a queue of
	// its own, and a call's result straight to the caller: the progress
	// a session was sent may reach its handler after its call returned.
	testutil.Eventually(t, 10*time.Second, "progress in both sessions", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(seen["a"]) > 0 && len(seen["b"]) > 0
	})
	mu.Lock()
	for name, tokens := range seen {
		for _, tok := range tokens {
			if tok != "token-"+name {
				t.Errorf("session %s received progress for %v", name, tok)
			}
		}
	}
	mu.Unlock()

	id := a.ID()
	if err := a.Close(); err != nil { // sends DELETE
		t.Fatal(err)
	}
	body := `{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{}}`
	req, _ := http.NewRequest(http.MethodPost, f.url+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", id)
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("request on a deleted session: %d, want 404", resp.StatusCode)
	}
}

// TestLoggingReachesEachSessionAtItsLevel: a server's log messages reach
// every client session whose level lets them through, named after the server.
func TestLoggingReachesEachSessionAtItsLevel(t *testing.T) {
	f := newFixture(t, gateway.ServerConfig{Name: "alpha"})
	type logged struct{ level, logger string }
	//lint:ignore SA1019 the test exercises logging, which the gateway still relays (deprecated by SEP-2577, functional in its deprecation window)
	listen := func(level mcp.LoggingLevel) (*mcp.ClientSession, chan logged) {
		ch := make(chan logged, 10)
		cs := f.connect(t, "/mcp", "2025-11-25", &mcp.ClientOptions{
			//lint:ignore SA1019 the test exercises logging, which the gateway still relays (deprecated by SEP-2577, functional in its deprecation window)
			LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
				ch <- logged{string(req.Params.Level), req.Params.Logger}
			},
		})
		//lint:ignore SA1019 the test exercises logging, which the gateway still relays (deprecated by SEP-2577, functional in its deprecation window)
		if err := cs.SetLoggingLevel(t.Context(), &mcp.SetLoggingLevelParams{Level: level}); err != nil {
			t.Fatal(err)
		}
		return cs, ch
	}
	quiet, quietLog := listen("error")
	chatty, chattyLog := listen("debug")
	f.waitTools(t, quiet, "alpha__log")

	for _, level := range []string{"info", "error"} {
		if _, err := chatty.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__log",
			Arguments: map[string]any{"level": level, "message": "a " + level + " message"}}); err != nil {
			t.Fatal(err)
		}
	}
	expect := func(ch chan logged, want ...string) {
		t.Helper()
		for _, w := range want {
			select {
			case got := <-ch:
				if got.level != w || got.logger != "alpha/testmcp" {
					t.Errorf("got %+v, want level %s from logger alpha/testmcp", got, w)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("no %s message arrived", w)
			}
		}
	}
	expect(chattyLog, "info", "error")
	expect(quietLog, "error")
	select {
	case extra := <-quietLog:
		t.Errorf("a session at level error received %+v", extra)
	default:
	}
}

func TestAliasShortensThePrefix(t *testing.T) {
	f := newFixture(t, gateway.ServerConfig{Name: "a-server-with-a-long-name", Alias: "short"})
	cs := f.connect(t, "/mcp", "2025-11-25", nil)
	f.waitTools(t, cs, "short__echo")
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "short__echo", Arguments: map[string]any{"text": "aliased"}})
	if err != nil || text(res) != "aliased" {
		t.Errorf("short__echo: %v %q", err, text(res))
	}
	one := f.connect(t, "/mcp/a-server-with-a-long-name", "2025-11-25", nil)
	f.waitTools(t, one, "echo")
}

// TestSubscriptionsAreCountedPerServer: two clients subscribe to a
// resource; when one unsubscribes, the other still hears of updates.
func TestSubscriptionsAreCountedPerServer(t *testing.T) {
	f := newOneProcessFixture(t)
	const uri = "test://static/hello"
	subscriber := func() (*mcp.ClientSession, chan string) {
		ch := make(chan string, 10)
		cs := f.connect(t, "/mcp", "2025-11-25", &mcp.ClientOptions{
			ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) { ch <- req.Params.URI },
		})
		if err := cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: uri}); err != nil {
			t.Fatal(err)
		}
		return cs, ch
	}
	a, _ := subscriber()
	b, updates := subscriber()
	f.waitTools(t, b, "alpha__touch")
	if err := a.Unsubscribe(t.Context(), &mcp.UnsubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__touch", Arguments: map[string]any{"uri": uri}}); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-updates:
		if got != uri {
			t.Errorf("update for %q", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the remaining subscriber heard of no update after the other unsubscribed")
	}
}

// TestStatelessClientAnswersThroughInputRequired: a client of the stateless
// 2026-07-28 era cannot be sent requests; the server's sampling, elicitation
// and roots requests reach it as input-required results, and its retry
// resumes the server's call (the go-sdk client does the rounds itself).
func TestStatelessClientAnswersThroughInputRequired(t *testing.T) {
	f := newFixture(t, gateway.ServerConfig{Name: "alpha"})
	var rounds sync.Map
	client := mcp.NewClient(&mcp.Implementation{Name: "modern", Version: "1"}, &mcp.ClientOptions{
		//lint:ignore SA1019 the test exercises sampling, which the gateway still relays (deprecated by SEP-2577, functional in its deprecation window)
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			rounds.Store("sampling", true)
			//lint:ignore SA1019 the test exercises sampling, which the gateway still relays (deprecated by SEP-2577, functional in its deprecation window)
			return &mcp.CreateMessageResult{Model: "test", Role: "assistant",
				Content: &mcp.TextContent{Text: "sampled: " + req.Params.Messages[0].Content.(*mcp.TextContent).Text}}, nil
		},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			rounds.Store("elicitation", true)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "42"}}, nil
		},
	})
	//lint:ignore SA1019 the test exercises roots, which the gateway still relays (deprecated by SEP-2577, functional in its deprecation window)
	client.AddRoots(&mcp.Root{URI: "file:///tmp/modern", Name: "root"})
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: f.url + "/mcp"},
		&mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated %s", v)
	}
	f.waitTools(t, cs, "alpha__sample")
	for _, tt := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"alpha__sample", map[string]any{"prompt": "modern?"}, "sampled: modern?"},
		{"alpha__elicit", map[string]any{"message": "answer?"}, `{"action":"accept","content":{"answer":"42"}}`},
		{"alpha__roots", map[string]any{}, "file:///tmp/modern"},
	} {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tt.tool, Arguments: tt.args})
		if err != nil || res.IsError || text(res) != tt.want {
			t.Errorf("%s: %v %q, want %q", tt.tool, err, text(res), tt.want)
		}
	}
	for _, k := range []string{"sampling", "elicitation"} {
		if _, ok := rounds.Load(k); !ok {
			t.Errorf("the client's %s handler was never asked", k)
		}
	}
}
