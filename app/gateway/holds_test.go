package gateway_test

import (
	"os"
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

// fakeReviewer holds the tools in held (server → tool → message) of
// servers whose changes are held, and notes what it was asked.
type fakeReviewer struct {
	mu    sync.Mutex
	held  map[string]map[string]string
	holds map[string]bool // server → the last hold it was told
}

func (r *fakeReviewer) Review(server string, tools []*mcp.Tool, hold bool) map[string]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.holds[server] = hold
	if !hold {
		return nil
	}
	out := map[string]string{}
	for _, t := range tools {
		if msg, ok := r.held[server][t.Name]; ok {
			out[t.Name] = msg
		}
	}
	return out
}

func (r *fakeReviewer) approve(server, tool string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.held[server], tool)
}

func (r *fakeReviewer) told(server string) (hold, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	hold, ok = r.holds[server]
	return hold, ok
}

func toolNames(t *testing.T, cs *mcp.ClientSession) map[string]bool {
	t.Helper()
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, tl := range res.Tools {
		out[tl.Name] = true
	}
	return out
}

// TestHeldToolsAreHiddenAndRefused: a tool the reviewer holds is on no
// front and a call of it is refused with the reviewer's message, in both
// protocol eras, until a Recheck after approval; a trusted server's
// review is told not to hold.
func TestHeldToolsAreHiddenAndRefused(t *testing.T) {
	const msg = `tool "echo" of server "a" is held: its description changed since you approved it; run: switchboard tools approve a echo`
	rev := &fakeReviewer{held: map[string]map[string]string{"a": {"echo": msg}}, holds: map[string]bool{}}
	a, b := gateway.ServerConfig{Name: "a"}, gateway.ServerConfig{Name: "b"}
	var specs []supervisor.Spec
	for _, s := range []string{"a", "b"} {
		specs = append(specs, supervisor.Spec{Name: s, Command: os.Args[0], Env: testEnv(testmcp.Options{Name: s}), Pool: supervisor.PoolSpec{Max: 2}})
	}
	f := newTunedFixture(t, "", func(_ *supervisor.Options, o *gateway.Options) { o.Reviewer = rev }, specs, a, b)
	f.gw.SetProfiles([]gateway.ProfileConfig{{Name: "coding", Servers: []string{"a"}}})

	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(era, func(t *testing.T) {
			agg := f.connect(t, "", era, nil)
			own := f.connect(t, "/a", era, nil)
			prof := f.connect(t, "/p/coding", era, nil)
			f.waitTools(t, agg, "a__sleep", "b__echo")
			f.waitTools(t, prof, "a__sleep")
			if names := toolNames(t, agg); names["a__echo"] {
				t.Errorf("/mcp lists the held a__echo")
			}
			if names := toolNames(t, prof); names["a__echo"] || names["b__echo"] {
				t.Errorf("/mcp/p/coding lists %v, want a's tools but the held a__echo", names)
			}
			if names := toolNames(t, own); names["echo"] || !names["sleep"] {
				t.Errorf("/mcp/a lists %v, want sleep and not the held echo", names)
			}
			for _, c := range []struct {
				cs   *mcp.ClientSession
				name string
			}{{agg, "a__echo"}, {own, "echo"}, {prof, "a__echo"}} {
				res, err := c.cs.CallTool(t.Context(), &mcp.CallToolParams{Name: c.name, Arguments: map[string]any{"text": "x"}})
				if err == nil || !strings.Contains(err.Error(), msg) {
					t.Errorf("call of held %s = %+v, %v; want an error saying %q", c.name, res, err, msg)
				}
			}
			if res, err := agg.CallTool(t.Context(), &mcp.CallToolParams{Name: "b__echo", Arguments: map[string]any{"text": "x"}}); err != nil || res.IsError {
				t.Errorf("call of b__echo = %+v, %v", res, err)
			}
		})
	}
	// The refusals are recorded under the server, with the message.
	var refused int
	for _, c := range f.rec.all() {
		if c.Server == "a" && strings.Contains(c.Name, "echo") && strings.Contains(c.Error, msg) {
			refused++
		}
	}
	if refused != 6 {
		t.Errorf("%d refused calls recorded under a with the message, want 6 (three endpoints, two eras): %+v", refused, f.rec.all())
	}
	if hold, ok := rev.told("a"); !ok || !hold {
		t.Errorf("the reviewer was told hold=%v (asked: %v) for a, want true", hold, ok)
	}
	var heldInfo bool
	for _, ti := range f.gw.Tools("a") {
		heldInfo = heldInfo || (ti.Name == "echo" && ti.Held)
	}
	if !heldInfo {
		t.Errorf("Tools(a) does not mark echo held: %+v", f.gw.Tools("a"))
	}

	// Approved: shown again at once, without a relist.
	agg := f.connect(t, "", "2025-11-25", nil)
	prof := f.connect(t, "/p/coding", "2025-11-25", nil)
	rev.approve("a", "echo")
	f.gw.Recheck("a")
	f.waitTools(t, agg, "a__echo")
	f.waitTools(t, prof, "a__echo")
	if res, err := agg.CallTool(t.Context(), &mcp.CallToolParams{Name: "a__echo", Arguments: map[string]any{"text": "x"}}); err != nil || res.IsError {
		t.Errorf("call of a__echo after approval = %+v, %v", res, err)
	}

	// Trusted: the reviewer is told not to hold.
	a.TrustTools = true
	f.gw.Sync([]gateway.ServerConfig{a, b})
	testutil.Eventually(t, 10*time.Second, "a reviewed as trusted", func() bool { hold, _ := rev.told("a"); return !hold })
}

// itemReviewer holds server a's resource template (and nothing else).
type itemReviewer struct{ fakeReviewer }

func (r *itemReviewer) ReviewItems(server string, _ []*mcp.Prompt, templates []*mcp.ResourceTemplate, hold bool) (map[string]string, map[string]string) {
	if server != "a" || !hold {
		return nil, nil
	}
	out := map[string]string{}
	for _, t := range templates {
		out[t.URITemplate] = `resource template "` + t.URITemplate + `" of server "a" is held: it is new; run: switchboard tools approve a`
	}
	return nil, out
}

// TestHeldTemplateReadIsRefusedWithTheHold: a read of a URI only a held
// resource template matches is answered with the reviewer's message (not
// "not found", and not forwarded to the server), on /mcp, the server's
// own endpoint and a profile of it alone; a URI nothing matches is still
// not found.
func TestHeldTemplateReadIsRefusedWithTheHold(t *testing.T) {
	rev := &itemReviewer{fakeReviewer{held: map[string]map[string]string{}, holds: map[string]bool{}}}
	specs := []supervisor.Spec{{Name: "a", Command: os.Args[0], Env: testEnv(testmcp.Options{Name: "a"}), Pool: supervisor.PoolSpec{Max: 2}}}
	f := newTunedFixture(t, "", func(_ *supervisor.Options, o *gateway.Options) { o.Reviewer = rev }, specs, gateway.ServerConfig{Name: "a"})
	f.gw.SetProfiles([]gateway.ProfileConfig{{Name: "only-a", Servers: []string{"a"}}})
	for _, path := range []string{"", "/a", "/p/only-a"} {
		cs := f.connect(t, path, "2025-11-25", nil)
		f.waitTools(t, cs)
		if res, err := cs.ListResourceTemplates(t.Context(), nil); err != nil || len(res.ResourceTemplates) != 0 {
			t.Errorf("%q lists templates %+v (%v) while a's is held", path, res, err)
		}
		_, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "test://items/7"})
		if err == nil || !strings.Contains(err.Error(), `resource template "test://items/{id}" of server "a" is held`) {
			t.Errorf("%q: read of a held template's URI: %v; want the hold's message", path, err)
		}
		_, err = cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "nothing://here"})
		if err == nil || strings.Contains(err.Error(), "held") {
			t.Errorf("%q: read of a URI nothing matches: %v; want an error that is not the hold's", path, err)
		}
	}
}
