package api_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/app/api"
	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/config"
	"github.com/switchboardhq/switchboard/app/tokens"
)

// A token bound to a profile reaches that profile's endpoint only: /mcp,
// /mcp/<server>, /sse and another profile's endpoint answer 403 with a
// JSON-RPC error naming the profile. A token without a profile reaches
// every MCP endpoint, profiles' included.
func TestProfileBoundToken(t *testing.T) {
	e := newEnv(t)
	cursor, err := e.tokens.EnsureClient("cursor")
	if err != nil {
		t.Fatal(err)
	}
	free, err := e.tokens.EnsureClient("vscode")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.tokens.Bind("cursor", "coding"); err != nil {
		t.Fatal(err)
	}
	mcp := httptest.NewServer(e.api.Protect(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "served "+r.URL.Path)
	})))
	defer mcp.Close()
	post := func(secret, path string) (int, string) {
		t.Helper()
		return postWithToken(t, mcp, path, secret, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	}
	for _, path := range []string{"/mcp/p/coding", "/mcp/p/coding/", "/sse/p/coding"} {
		if code, body := post(cursor.Secret, path); code != 200 || body != "served "+path {
			t.Errorf("bound token on %s: %d %s", path, code, body)
		}
	}
	for _, path := range []string{"/mcp", "/mcp/", "/mcp/fs", "/sse", "/sse/fs", "/sse/p/other", "/mcp/p/other", "/mcp/p/coding2", "/mcp/p/coding/x"} {
		code, body := post(cursor.Secret, path)
		var rpc struct {
			JSONRPC string `json:"jsonrpc"`
			Error   struct {
				Code    int               `json:"code"`
				Message string            `json:"message"`
				Data    map[string]string `json:"data"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(body), &rpc); err != nil {
			t.Errorf("%s: body is not JSON: %s", path, body)
		}
		if code != http.StatusForbidden || rpc.JSONRPC != "2.0" || rpc.Error.Code != -32600 ||
			!strings.Contains(rpc.Error.Message, `bound to profile "coding"`) || !strings.Contains(rpc.Error.Message, "/mcp/p/coding only") ||
			rpc.Error.Data["profile"] != "coding" {
			t.Errorf("bound token on %s: %d %s", path, code, body)
		}
	}
	for _, path := range []string{"/mcp", "/mcp/fs", "/mcp/p/coding", "/mcp/p/other"} {
		if code, body := post(free.Secret, path); code != 200 || body != "served "+path {
			t.Errorf("token without a profile on %s: %d %s", path, code, body)
		}
	}

	// On the API, both client tokens are refused; the bound one is told
	// the one endpoint it does reach, not /mcp.
	for _, c := range []struct{ secret, want string }{
		{cursor.Secret, `the token \"cursor\" is an MCP client's: it reaches /mcp/p/coding (profile \"coding\"), not the API`},
		{free.Secret, `the token \"vscode\" is an MCP client's: it reaches /mcp, /mcp/\u003cserver\u003e and /sse, not the API`},
	} {
		for _, path := range []string{"/api/v1/held-tools", "/api/v1/profiles"} {
			resp := e.request(t, http.MethodGet, path, "", map[string]string{"Authorization": "Bearer " + c.secret})
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), c.want) {
				t.Errorf("client token on %s: %d %s, want 403 saying %s", path, resp.StatusCode, body, c.want)
			}
		}
	}

	// Unbinding gives the token /mcp back at its next request.
	if _, err := e.tokens.Bind("cursor", ""); err != nil {
		t.Fatal(err)
	}
	if code, body := post(cursor.Secret, "/mcp"); code != 200 {
		t.Errorf("unbound token on /mcp: %d %s", code, body)
	}
	if api.ProfilePath("coding") != "/mcp/p/coding" {
		t.Error(api.ProfilePath("coding"))
	}
}

// countingTools is a gateway that lists fixed tool counts per endpoint.
type countingTools struct {
	fakeTools
	counts map[string]int // profile ("" for /mcp) → tools
}

func (c countingTools) ToolCount(profile string) (int, bool) {
	n, ok := c.counts[profile]
	return n, ok
}

// Connecting a client to a profile writes the profile's endpoint and binds
// its token; the clients view shows the profile, the tools its endpoint
// lists and a warning over the client's limit; connecting again without a
// profile unbinds it.
func TestConnectClientToProfile(t *testing.T) {
	ce := newClientsEnvWith(t, func(o *api.Options) {
		o.Tools = countingTools{counts: map[string]int{"": 48, "coding": 12}}
	})
	ctx := t.Context()
	if _, err := ce.cfg.Update(ctx, func(c *config.Config) error {
		c.Profiles = map[string]config.Profile{"coding": {Servers: []string{"fs", "gone"}}}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	ce.write(t, "cursor", `{"mcpServers": {}}`)

	// Refusals: unknown profile, profile with per-server entries, profile
	// with disconnect.
	for _, tt := range []struct {
		change wire.ClientChange
		msg    string
	}{
		{wire.ClientChange{Action: "connect", Profile: "nope"}, `unknown profile "nope": the profiles are coding`},
		{wire.ClientChange{Action: "connect", Profile: "coding", Servers: []string{"fs"}}, "cannot have entries of its own servers"},
		{wire.ClientChange{Action: "disconnect", Profile: "coding"}, "profile goes with connect"},
	} {
		if _, err := ce.client.PlanClient(ctx, "cursor", tt.change); err == nil || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%+v: %v, want %q", tt.change, err, tt.msg)
		}
	}

	change := wire.ClientChange{Action: "connect", Profile: "coding"}
	plan, err := ce.client.PlanClient(ctx, "cursor", change)
	if err != nil {
		t.Fatal(err)
	}
	if !plan.Changed || !plan.Rebind || !strings.Contains(plan.Diff, testGateway+"/p/coding") {
		t.Fatalf("plan: %+v", plan)
	}
	// The plan says what the client would see, before the write: 12 on
	// the profile is under Cursor's 40; 48 on /mcp is over it.
	if plan.Tools == nil || *plan.Tools != 12 || plan.ToolLimit != 40 || plan.ToolWarning != "" {
		t.Errorf("plan's tools for the profile: %v, limit %d, warning %q", plan.Tools, plan.ToolLimit, plan.ToolWarning)
	}
	if all, err := ce.client.PlanClient(ctx, "cursor", wire.ClientChange{Action: "connect"}); err != nil || all.Tools == nil || *all.Tools != 48 ||
		all.ToolWarning != "Cursor would see 48 tools on /mcp, more than the 40 it takes" {
		t.Errorf("plan for /mcp: %+v %v", all, err)
	}
	change.Hash = plan.Hash
	applied, err := ce.client.ApplyClient(ctx, "cursor", change)
	if err != nil {
		t.Fatal(err)
	}
	if applied.Profile != "coding" || applied.Tools == nil || *applied.Tools != 12 || applied.ToolLimit != 40 || applied.Warning != "" {
		t.Errorf("applied view: %+v", applied.ClientView)
	}
	toks := ce.tokens.List()
	if i := slices.IndexFunc(toks, func(t tokens.Token) bool { return t.Label == "cursor" }); i < 0 || toks[i].Profile != "coding" {
		t.Errorf("tokens after connect: %v", toks)
	}
	data, err := os.ReadFile(filepath.Join(ce.home, ".cursor", "mcp.json"))
	if err != nil || !strings.Contains(string(data), `"url": "`+testGateway+`/p/coding"`) {
		t.Errorf("cursor's file: %s %v", data, err)
	}

	// The same connect again: nothing to write, nothing to rebind.
	if plan, err := ce.client.PlanClient(ctx, "cursor", wire.ClientChange{Action: "connect", Profile: "coding"}); err != nil || plan.Changed || plan.Rebind {
		t.Errorf("second plan: %+v %v", plan, err)
	}

	profiles, err := ce.client.Profiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(profiles) != 1 || profiles[0].Name != "coding" || profiles[0].Endpoint != "/mcp/p/coding" ||
		!slices.Equal(profiles[0].Servers, []string{"fs"}) || !slices.Equal(profiles[0].Missing, []string{"gone"}) ||
		profiles[0].ToolCount == nil || *profiles[0].ToolCount != 12 || !slices.Equal(profiles[0].Clients, []string{"cursor"}) {
		t.Errorf("profiles: %+v", profiles)
	}

	// Back to /mcp: 48 tools, over Cursor's 40.
	plan, err = ce.client.PlanClient(ctx, "cursor", wire.ClientChange{Action: "connect"})
	if err != nil || !plan.Rebind {
		t.Fatalf("plan back to /mcp: %+v %v", plan, err)
	}
	if _, err := ce.client.ApplyClient(ctx, "cursor", wire.ClientChange{Action: "connect", Hash: plan.Hash}); err != nil {
		t.Fatal(err)
	}
	list, err := ce.client.Clients(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range list {
		switch v.ID {
		case "cursor":
			if v.Profile != "" || v.Tools == nil || *v.Tools != 48 || !strings.Contains(v.Warning, "48 tools on /mcp, more than the 40") {
				t.Errorf("cursor on /mcp: %+v", v)
			}
		case "claude-desktop": // not connected: no count, no warning
			if v.Tools != nil || v.Warning != "" {
				t.Errorf("%s: %+v", v.ID, v)
			}
		}
	}
}

// TestProfileMissingTools: a profile that limits a server to tools the
// server does not offer says which, once the server's tools are known
// (listed); a server not listed yet is not judged.
func TestProfileMissingTools(t *testing.T) {
	tools := fakeTools{"fs": {{Name: "read_file"}, {Name: "write_file", Disabled: true}}}
	e := newEnv(t, func(o *api.Options) { o.Tools = tools })
	if _, err := e.cfg.Update(t.Context(), func(c *config.Config) error {
		c.Servers["git"] = config.Server{Command: "uvx", Args: []string{"mcp-server-git"}}
		c.Profiles = map[string]config.Profile{
			"coding": {Servers: []string{"fs", "git"}, Tools: map[string][]string{"fs": {"read_file", "write_file", "typo_tool"}, "git": {"git_lg"}}},
			"plain":  {Servers: []string{"fs"}},
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	profiles, err := e.client.Profiles(t.Context())
	if err != nil || len(profiles) != 2 {
		t.Fatalf("profiles: %+v %v", profiles, err)
	}
	// write_file is disabled in fs's config, but fs offers it: not missing.
	if got := profiles[0].MissingTools; len(got) != 1 || !slices.Equal(got["fs"], []string{"typo_tool"}) {
		t.Errorf("coding's missing tools: %v, want fs: [typo_tool] (git is not listed yet)", got)
	}
	if profiles[1].MissingTools != nil {
		t.Errorf("plain's missing tools: %v", profiles[1].MissingTools)
	}
	resp := e.request(t, http.MethodGet, "/api/v1/profiles", "", nil)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `"missingTools":{"fs":["typo_tool"]}`) || strings.Count(string(body), "missingTools") != 1 {
		t.Errorf("GET /api/v1/profiles: %s", body)
	}
}
