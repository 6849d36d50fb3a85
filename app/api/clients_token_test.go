package api_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/config"
	"github.com/switchboardhq/switchboard/app/tokens"
)

// A client whose Switchboard entry carries a revoked token (or one this
// Switchboard does not know) is not connected but needs connecting again:
// every request it makes gets 401. Connecting it again writes a new token
// and it is connected. For a URL entry (its Authorization header) and the
// bridge's (SWITCHBOARD_TOKEN), in real client files.
func TestRevokedTokenClientNeedsReconnect(t *testing.T) {
	e := newClientsEnv(t)
	ctx := t.Context()
	secretIn := regexp.MustCompile(`sb_[A-Za-z0-9_-]{43}`)
	for _, id := range []string{"cursor", "claude-desktop"} {
		t.Run(id, func(t *testing.T) {
			path := e.write(t, id, "{}\n")
			if v := e.connect(t, id, ""); !v.Connected || v.TokenRevoked {
				t.Fatalf("after connect: %+v", v)
			}
			data, _ := os.ReadFile(path)
			first := secretIn.FindString(string(data))
			if _, ok := e.tokens.Known(first); first == "" || !ok {
				t.Fatalf("connect wrote no token in force:\n%s", data)
			}

			if _, err := e.client.RevokeTokens(ctx, id); err != nil {
				t.Fatal(err)
			}
			v := e.view(t, id)
			if v.Connected || !v.TokenRevoked || !strings.Contains(v.Warning, "revoked") ||
				!strings.Contains(v.Warning, "clients connect "+id) {
				t.Errorf("after its token was revoked: connected %v, tokenRevoked %v, warning %q; want not connected, tokenRevoked, a warning that says to connect it again",
					v.Connected, v.TokenRevoked, v.Warning)
			}

			if v := e.connect(t, id, ""); !v.Connected || v.TokenRevoked || v.Warning != "" {
				t.Errorf("after connecting again: %+v", v)
			}
			data, _ = os.ReadFile(path)
			second := secretIn.FindString(string(data))
			if _, ok := e.tokens.Known(second); second == "" || second == first || !ok {
				t.Errorf("connecting again did not write a new token in force:\n%s", data)
			}
			if v := e.view(t, id); !v.Connected || v.TokenRevoked {
				t.Errorf("listed after connecting again: %+v", v)
			}
		})
	}

	// Entries written by hand: a token this Switchboard never issued is
	// not connected either; a value the client expands (${VAR}) cannot be
	// checked and is left as connected.
	for _, tt := range []struct {
		name, header string
		connected    bool
	}{
		{"unknown token", "Bearer sb_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", false},
		{"placeholder", "Bearer ${SWITCHBOARD_TOKEN}", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e.write(t, "cursor", `{"mcpServers": {"switchboard": {"url": "`+testGateway+`", "headers": {"Authorization": "`+tt.header+`"}}}}`)
			if v := e.view(t, "cursor"); v.Connected != tt.connected || v.TokenRevoked == tt.connected {
				t.Errorf("connected %v, tokenRevoked %v (%q), want connected %v", v.Connected, v.TokenRevoked, v.Warning, tt.connected)
			}
		})
	}
}

// A client connected to a profile whose token is revoked still reaches for
// that profile's endpoint (its entry's /mcp/p/<profile>, or the bridge's
// --profile): the view keeps the profile and the warning says to connect it
// again to it, so that following it (or the dashboard's Reconnect, which
// offers the client's profile) does not point the client at /mcp, every
// server's tools, instead. Connecting it so binds the new token again.
func TestRevokedTokenClientKeepsItsProfile(t *testing.T) {
	e := newClientsEnv(t)
	ctx := t.Context()
	if _, err := e.cfg.Update(ctx, func(c *config.Config) error {
		c.Profiles = map[string]config.Profile{"coding": {Servers: []string{"fs"}}}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"cursor", "claude-desktop"} {
		t.Run(id, func(t *testing.T) {
			e.write(t, id, "{}\n")
			if v := e.connect(t, id, "coding"); !v.Connected || v.Profile != "coding" {
				t.Fatalf("after connect to coding: %+v", v.ClientView)
			}
			if _, err := e.client.RevokeTokens(ctx, id); err != nil {
				t.Fatal(err)
			}
			v := e.view(t, id)
			if !v.TokenRevoked || v.Profile != "coding" || !strings.Contains(v.Warning, "clients connect "+id+" --profile coding") {
				t.Errorf("after its token was revoked: tokenRevoked %v, profile %q, warning %q; want profile coding and a warning that says to connect it again to it",
					v.TokenRevoked, v.Profile, v.Warning)
			}
			if v := e.connect(t, id, v.Profile); !v.Connected || v.TokenRevoked || v.Profile != "coding" {
				t.Errorf("after connecting again to its profile: %+v", v.ClientView)
			}
			toks := e.tokens.List()
			if i := slices.IndexFunc(toks, func(t tokens.Token) bool { return t.Label == id }); i < 0 || toks[i].Profile != "coding" {
				t.Errorf("tokens after connecting again: %+v", toks)
			}
		})
	}
}

// view is client id as GET /api/v1/clients shows it.
func (e *clientsEnv) view(t *testing.T, id string) wire.ClientView {
	t.Helper()
	list, err := e.client.Clients(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(list, func(v wire.ClientView) bool { return v.ID == id })
	if i < 0 {
		t.Fatalf("%s is not in the list", id)
	}
	return list[i]
}

// connect connects client id (to profile, if not empty) as the dashboard
// does: the plan, then the change with the plan's hash.
func (e *clientsEnv) connect(t *testing.T, id, profile string) wire.ClientApplied {
	t.Helper()
	change := wire.ClientChange{Action: "connect", Profile: profile}
	plan, err := e.client.PlanClient(t.Context(), id, change)
	if err != nil {
		t.Fatal(err)
	}
	change.Hash = plan.Hash
	v, err := e.client.ApplyClient(t.Context(), id, change)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
