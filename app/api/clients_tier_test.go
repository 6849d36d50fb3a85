package api_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/tiers"
	"github.com/switchboardhq/switchboard/app/tokens"
)

// Connecting a client with a maxTier caps its token, which the client's
// view shows; connecting it again without one lifts the cap. An unknown
// tier, and a maxTier on disconnect, are refused before anything is
// written.
func TestConnectCapsTheClientsToken(t *testing.T) {
	e := newClientsEnv(t)
	ctx := t.Context()
	e.write(t, "cursor", "{}\n")
	tokenCap := func() tiers.Tier {
		toks := e.tokens.List()
		i := slices.IndexFunc(toks, func(t tokens.Token) bool { return t.Label == "cursor" })
		if i < 0 {
			t.Fatalf("no cursor token among %v", toks)
		}
		return toks[i].MaxTier
	}

	change := wire.ClientChange{Action: "connect", MaxTier: "read"}
	plan, err := e.client.PlanClient(ctx, "cursor", change)
	if err != nil {
		t.Fatal(err)
	}
	change.Hash = plan.Hash
	v, err := e.client.ApplyClient(ctx, "cursor", change)
	if err != nil {
		t.Fatal(err)
	}
	if !v.Connected || v.MaxTier != "read" || tokenCap() != tiers.Read {
		t.Fatalf("after connect with maxTier read: connected %v, view maxTier %q, token cap %q", v.Connected, v.MaxTier, tokenCap())
	}
	if got := e.view(t, "cursor").MaxTier; got != "read" {
		t.Errorf("the client list shows maxTier %q, want read", got)
	}

	if v := e.connect(t, "cursor", ""); v.MaxTier != "" || tokenCap() != "" {
		t.Errorf("after connecting without a maxTier: view %q, token cap %q; want none", v.MaxTier, tokenCap())
	}

	for _, tc := range []struct {
		change wire.ClientChange
		msg    string
	}{
		{wire.ClientChange{Action: "connect", MaxTier: "admin"}, `unknown tier "admin"`},
		{wire.ClientChange{Action: "disconnect", MaxTier: "read"}, "maxTier goes with connect"},
	} {
		if _, err := e.client.PlanClient(ctx, "cursor", tc.change); err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("plan %+v: %v; want an error containing %q", tc.change, err, tc.msg)
		}
	}
}
