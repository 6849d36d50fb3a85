package api_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/app/api/wire"
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
	view := func(t *testing.T, id string) wire.ClientView {
		t.Helper()
		list, err := e.client.Clients(ctx)
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(list, func(v wire.ClientView) bool { return v.ID == id })
		if i < 0 {
			t.Fatalf("%s is not in the list", id)
		}
		return list[i]
	}
	connect := func(t *testing.T, id string) wire.ClientApplied {
		t.Helper()
		change := wire.ClientChange{Action: "connect"}
		plan, err := e.client.PlanClient(ctx, id, change)
		if err != nil {
			t.Fatal(err)
		}
		change.Hash = plan.Hash
		v, err := e.client.ApplyClient(ctx, id, change)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, id := range []string{"cursor", "claude-desktop"} {
		t.Run(id, func(t *testing.T) {
			path := e.write(t, id, "{}\n")
			if v := connect(t, id); !v.Connected || v.TokenRevoked {
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
			v := view(t, id)
			if v.Connected || !v.TokenRevoked || !strings.Contains(v.Warning, "revoked") ||
				!strings.Contains(v.Warning, "clients connect "+id) {
				t.Errorf("after its token was revoked: connected %v, tokenRevoked %v, warning %q; want not connected, tokenRevoked, a warning that says to connect it again",
					v.Connected, v.TokenRevoked, v.Warning)
			}

			if v := connect(t, id); !v.Connected || v.TokenRevoked || v.Warning != "" {
				t.Errorf("after connecting again: %+v", v)
			}
			data, _ = os.ReadFile(path)
			second := secretIn.FindString(string(data))
			if _, ok := e.tokens.Known(second); second == "" || second == first || !ok {
				t.Errorf("connecting again did not write a new token in force:\n%s", data)
			}
			if v := view(t, id); !v.Connected || v.TokenRevoked {
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
			if v := view(t, "cursor"); v.Connected != tt.connected || v.TokenRevoked == tt.connected {
				t.Errorf("connected %v, tokenRevoked %v (%q), want connected %v", v.Connected, v.TokenRevoked, v.Warning, tt.connected)
			}
		})
	}
}
