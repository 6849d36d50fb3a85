package gateway_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/app/gateway"
	"github.com/switchboardhq/switchboard/app/internal/testutil"
	"github.com/switchboardhq/switchboard/app/record"
	"github.com/switchboardhq/switchboard/app/tiers"
	"github.com/switchboardhq/switchboard/app/toolsearch"
	"github.com/switchboardhq/switchboard/supervisor"
	"github.com/switchboardhq/switchboard/supervisor/testmcp"
)

// testTierHeader carries a test client's token cap: the cap server wraps
// the gateway's handler and puts it where ClientMaxTier finds it, as the
// daemon puts the token's.
const testTierHeader = "X-Test-Max-Tier"

type testTierKey struct{}

// capFixture is a fixture whose gateway reads each request's token cap
// from testTierHeader, served at capURL; and its clients.
type capFixture struct {
	*fixture
	capURL string
}

// newCapFixture serves the test server as alpha and beta. The test
// server's tools have no annotations (destructive, by the spec's
// defaults); alpha's overrides make echo read and env write.
func newCapFixture(t *testing.T, search bool, profiles ...gateway.ProfileConfig) *capFixture {
	t.Helper()
	servers := []gateway.ServerConfig{
		{Name: "alpha", Tiers: map[string]tiers.Tier{"echo": tiers.Read, "env": tiers.Write}},
		{Name: "beta"},
	}
	var specs []supervisor.Spec
	for _, s := range servers {
		specs = append(specs, supervisor.Spec{Name: s.Name, Command: os.Args[0],
			Env: testEnv(testmcp.Options{Name: s.Name}), Pool: supervisor.PoolSpec{Max: 2}})
	}
	f := newTunedFixture(t, "", func(_ *supervisor.Options, o *gateway.Options) {
		o.ClientMaxTier = func(ctx context.Context) tiers.Tier {
			tier, _ := ctx.Value(testTierKey{}).(tiers.Tier)
			return tier
		}
		if search {
			o.ToolSearch = true
			o.ToolIndex = newTestIndex(t)
		}
	}, specs, servers...)
	f.gw.SetProfiles(profiles)
	h := f.gw.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := context.WithValue(r.Context(), testTierKey{}, tiers.Tier(r.Header.Get(testTierHeader)))
		h.ServeHTTP(w, r.WithContext(ctx))
	}))
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	return &capFixture{fixture: f, capURL: srv.URL}
}

type headerTransport struct{ tier string }

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(testTierHeader, h.tier)
	return http.DefaultTransport.RoundTrip(r)
}

// connectCapped opens a session on path as a client whose token is capped
// at tier ("" for none).
func (f *capFixture) connectCapped(t *testing.T, path, era string, tier tiers.Tier) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "capped-client", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: f.capURL + path,
		HTTPClient: &http.Client{Transport: headerTransport{string(tier)}}}, &mcp.ClientSessionOptions{ProtocolVersion: era})
	if err != nil {
		t.Fatalf("connect %s (%s): %v", path, era, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// waitNames waits for cs to list exactly want (sorted).
func waitNames(t *testing.T, cs *mcp.ClientSession, what string, want ...string) {
	t.Helper()
	slices.Sort(want)
	var got []string
	testutil.Eventually(t, 30*time.Second, what, func() bool {
		got = testutil.ToolNames(t, cs)
		return slices.Equal(got, want)
	})
}

// refused checks that a call of name is refused with an error naming the
// tool, its tier and the cap's words and owner.
func refused(t *testing.T, cs *mcp.ClientSession, name string, tier tiers.Tier, words ...string) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{"text": "x", "name": "HOME"}})
	if err == nil {
		t.Fatalf("%s above the cap was called: %s", name, text(res))
	}
	msg := err.Error()
	for _, w := range append([]string{`"` + name + `"`, "a " + string(tier) + " tool"}, words...) {
		if !strings.Contains(msg, w) {
			t.Errorf("refusal of %s = %q; want it to contain %q", name, msg, w)
		}
	}
}

// toolsOf are the test server's tools under prefix, the ones the
// overrides name (echo, env) and those without (destructive) apart.
func toolsOf(t *testing.T, cs *mcp.ClientSession, prefix string) (all []string) {
	for _, name := range testutil.ToolNames(t, cs) {
		if strings.HasPrefix(name, prefix) {
			all = append(all, name)
		}
	}
	return all
}

// A profile's maxTier and a token's cap leave the tools above them out of
// tools/list on every endpoint (/mcp, /mcp/<server>, /mcp/p/<profile>),
// and refuse their calls by name with an error naming the tool, its tier
// and the cap; the lower cap of the two applies. Calls within the cap are
// served, and recorded with their tier, as refusals are.
func TestTierCaps(t *testing.T) {
	f := newCapFixture(t, false,
		gateway.ProfileConfig{Name: "safe", Servers: []string{"alpha", "beta"}, MaxTier: tiers.Read},
		gateway.ProfileConfig{Name: "edit", Servers: []string{"alpha", "beta"}, MaxTier: tiers.Write},
		gateway.ProfileConfig{Name: "open", Servers: []string{"alpha", "beta"}})
	uncapped := f.connectCapped(t, "/mcp", "2025-11-25", "")
	f.waitTools(t, uncapped, "alpha__echo", "alpha__env", "beta__echo")
	everything := testutil.ToolNames(t, uncapped)
	if len(everything) < 10 {
		t.Fatalf("/mcp lists only %v", everything)
	}

	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			// The profile's cap.
			safe := f.connectCapped(t, "/mcp/p/safe", era, "")
			waitNames(t, safe, "the read tools only on /mcp/p/safe", "alpha__echo")
			refused(t, safe, "alpha__env", tiers.Write, "profile safe", "capped at read tools")
			refused(t, safe, "beta__echo", tiers.Destructive, "profile safe")
			if res, err := safe.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": "fine"}}); err != nil || text(res) != "fine" {
				t.Errorf("alpha__echo within the cap: %q %v", text(res), err)
			}
			edit := f.connectCapped(t, "/mcp/p/edit", era, "")
			waitNames(t, edit, "read and write tools on /mcp/p/edit", "alpha__echo", "alpha__env")
			refused(t, edit, "alpha__crash", tiers.Destructive, "profile edit", "capped at read and write tools")

			// The token's cap, on /mcp and a server's own endpoint.
			capped := f.connectCapped(t, "/mcp", era, tiers.Read)
			waitNames(t, capped, "the read tools only on /mcp for a read-capped token", "alpha__echo")
			refused(t, capped, "alpha__env", tiers.Write, "this client's token", "capped at read tools")
			refused(t, capped, "beta__pid", tiers.Destructive, "this client's token")
			own := f.connectCapped(t, "/mcp/alpha", era, tiers.Write)
			waitNames(t, own, "read and write tools on /mcp/alpha for a write-capped token", "echo", "env")
			refused(t, own, "crash", tiers.Destructive, "this client's token", "capped at read and write tools")
			if res, err := own.CallTool(t.Context(), &mcp.CallToolParams{Name: "env", Arguments: map[string]any{"name": "SWITCHBOARD_TESTMCP_NAME"}}); err != nil || text(res) != "alpha" {
				t.Errorf("env within the cap: %q %v", text(res), err)
			}
			destructiveCap := f.connectCapped(t, "/mcp/beta", era, tiers.Destructive)
			if got := toolsOf(t, destructiveCap, ""); len(got) != len(toolsOf(t, uncapped, "beta__")) {
				t.Errorf("a destructive cap lists %d of beta's tools, want all %d", len(got), len(toolsOf(t, uncapped, "beta__")))
			}

			// Both: the lower cap applies, and says whose it is.
			both := f.connectCapped(t, "/mcp/p/edit", era, tiers.Read)
			waitNames(t, both, "a read token on a write profile: read tools", "alpha__echo")
			refused(t, both, "alpha__env", tiers.Write, "this client's token")
			looser := f.connectCapped(t, "/mcp/p/safe", era, tiers.Destructive)
			waitNames(t, looser, "a destructive token on a read profile: read tools", "alpha__echo")
			refused(t, looser, "alpha__env", tiers.Write, "profile safe")

			if n, ok := f.gw.ToolCount("safe"); !ok || n != 1 {
				t.Errorf("ToolCount(safe) = %d, %v; want the 1 read tool", n, ok)
			}
			if n, ok := f.gw.ToolCount("edit"); !ok || n != 2 {
				t.Errorf("ToolCount(edit) = %d, %v; want the 2 read and write tools", n, ok)
			}

			// No cap: every tool.
			open := f.connectCapped(t, "/mcp/p/open", era, "")
			waitNames(t, open, "every tool on an uncapped profile", everything...)
		})
	}

	testutil.Eventually(t, 10*time.Second, "a served call and a refusal recorded with their tiers", func() bool {
		calls := f.rec.all()
		served := slices.ContainsFunc(calls, func(c record.Call) bool {
			return c.Endpoint == "alpha" && c.Name == "env" && c.Tier == "write" && c.Outcome == record.OutcomeOK
		})
		refusal := slices.ContainsFunc(calls, func(c record.Call) bool {
			return c.Endpoint == "" && c.Server == "beta" && c.Name == "beta__pid" && c.Tier == "destructive" && c.Outcome == record.OutcomeProtocol
		})
		return served && refusal
	})
	if tools := f.gw.Tools("alpha"); !slices.ContainsFunc(tools, func(ti gateway.ToolInfo) bool { return ti.Name == "env" && ti.Tier == tiers.Write }) ||
		!slices.ContainsFunc(tools, func(ti gateway.ToolInfo) bool { return ti.Name == "crash" && ti.Tier == tiers.Destructive }) {
		t.Errorf("Tools(alpha) = %+v; want env write (overridden), crash destructive (no annotations)", tools)
	}
}

// In search mode, search_tools finds only the tools within the token's
// cap, says each one's tier, and call_tool refuses a tool above it.
func TestTierCapsInSearchMode(t *testing.T) {
	f := newCapFixture(t, true)
	uncapped := f.connectCapped(t, "/mcp", "2025-11-25", "")
	all := waitSearch(t, uncapped, "echo text environment variable", "alpha__env")
	tiersOf := map[string]string{}
	for _, tool := range all.Tools {
		tiersOf[tool.Name] = tool.Tier
	}
	if tiersOf["alpha__env"] != "write" || (tiersOf["beta__echo"] != "" && tiersOf["beta__echo"] != "destructive") {
		t.Errorf("search_tools tiers = %v; want alpha__env write, beta__echo destructive", tiersOf)
	}
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			capped := f.connectCapped(t, "/mcp", era, tiers.Read)
			got := searchTools(t, capped, "echo text environment variable", 20)
			if len(got.Tools) == 0 {
				t.Fatal("search_tools found nothing for a read-capped token")
			}
			for _, tool := range got.Tools {
				if tool.Tier != "read" {
					t.Errorf("search_tools for a read-capped token found %s (%s)", tool.Name, tool.Tier)
				}
			}
			if _, err := viaCallTool(capped, t.Context(), "alpha__env", map[string]any{"name": "HOME"}, nil); err == nil ||
				!strings.Contains(err.Error(), `"alpha__env"`) || !strings.Contains(err.Error(), "a write tool") {
				t.Errorf("call_tool alpha__env for a read-capped token: %v; want it refused", err)
			}
			if res, err := viaCallTool(capped, t.Context(), "alpha__echo", map[string]any{"text": "found"}, nil); err != nil || text(res) != "found" {
				t.Errorf("call_tool alpha__echo within the cap: %q %v", text(res), err)
			}
		})
	}
}

// newTestIndex is a tool index for a search-mode gateway, closed after
// the fixture's cleanup (registered before it) has closed the gateway.
func newTestIndex(t *testing.T) gateway.ToolIndex {
	ix, err := toolsearch.New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return testIndex{ix}
}

// TestCapChangesNotifySessions: open sessions are told their tool lists
// changed (notifications/tools/list_changed) when a tier override changes
// (on /mcp, the server's own endpoint and a profile's), when a profile's
// maxTier changes (that profile's sessions), and when a token's cap
// changes (CapsChanged: every session); a capped client that lists again
// sees what the change lets through.
func TestCapChangesNotifySessions(t *testing.T) {
	f := newCapFixture(t, false, gateway.ProfileConfig{Name: "coding", Servers: []string{"beta"}})
	type watched struct {
		cs      *mcp.ClientSession
		changes chan struct{}
	}
	connect := func(path string, tier tiers.Tier) watched {
		w := watched{changes: make(chan struct{}, 64)}
		c := mcp.NewClient(&mcp.Implementation{Name: "capped-client", Version: "1"}, &mcp.ClientOptions{
			ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { w.changes <- struct{}{} }})
		cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: f.capURL + path,
			HTTPClient: &http.Client{Transport: headerTransport{string(tier)}}}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		w.cs = cs
		return w
	}
	all, own, coding := connect("/mcp", tiers.Read), connect("/mcp/beta", tiers.Read), connect("/mcp/p/coding", "")
	waitNames(t, all.cs, "read tools on /mcp", "alpha__echo")
	waitNames(t, own.cs, "read tools on /mcp/beta")
	f.waitTools(t, coding.cs, "beta__echo")
	drain := func(ws ...watched) {
		for _, w := range ws {
			for len(w.changes) > 0 {
				<-w.changes
			}
		}
	}
	told := func(what string, w watched) {
		t.Helper()
		select {
		case <-w.changes:
		case <-time.After(10 * time.Second):
			t.Errorf("%s: the session was not told its tool list changed", what)
		}
	}

	drain(all, own, coding)

	// A tier override of beta's pid: read now.
	start := time.Now()
	f.gw.Sync([]gateway.ServerConfig{
		{Name: "alpha", Tiers: map[string]tiers.Tier{"echo": tiers.Read, "env": tiers.Write}},
		{Name: "beta", Tiers: map[string]tiers.Tier{"pid": tiers.Read}},
	})
	told("override on /mcp", all)
	told("override on /mcp/beta", own)
	told("override on the profile", coding)
	t.Logf("override: sessions told within %v", time.Since(start))
	waitNames(t, all.cs, "read tools on /mcp after the override", "alpha__echo", "beta__pid")
	waitNames(t, own.cs, "read tools on /mcp/beta after the override", "pid")

	// The profile's maxTier: read.
	drain(all, own, coding)
	f.gw.SetProfiles([]gateway.ProfileConfig{{Name: "coding", Servers: []string{"beta"}, MaxTier: tiers.Read}})
	told("the profile's maxTier", coding)
	waitNames(t, coding.cs, "the profile's tools under its maxTier", "beta__pid")

	// A token's cap (the daemon calls CapsChanged after the API changed it).
	drain(all, own, coding)
	start = time.Now()
	f.gw.CapsChanged()
	told("a token's cap on /mcp", all)
	told("a token's cap on /mcp/beta", own)
	told("a token's cap on the profile", coding)
	t.Logf("token cap: sessions told within %v", time.Since(start))
}
