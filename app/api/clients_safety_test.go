package api_test

import (
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/tokens"
)

// A Cursor file with a user's own "switchboard" entry (pointing elsewhere)
// and a server whose hyphenated headers hold keys.
const cursorWithConflict = `{
  "mcpServers": {
    "switchboard": {"url": "https://elsewhere.example.com/mcp"},
    "tool": {"command": "npx", "args": ["-y", "tool", "--api-key", "plain-key-value-1", "--token=plain-token-2", "sk-proj-abcdefghijklmnop1234"]},
    "remote": {
      "url": "https://api.example.com/mcp",
      "headers": {"X-Api-Key": "xak-1234567890", "x-goog-api-key": "goog-1234567890",
        "Ocp-Apim-Subscription-Key": "ocp-1234567890", "Accept": "text/event-stream"}
    }
  }
}
`

var headerSecrets = []string{"xak-1234567890", "goog-1234567890", "ocp-1234567890"}

var argSecrets = []string{"plain-key-value-1", "plain-token-2", "sk-proj-abcdefghijklmnop1234"}

// The API masks hyphenated secret headers, refuses to replace an entry
// Switchboard did not write unless asked, and on disconnect says the
// client's token still works, or revokes it.
func TestClientConflictsSecretsAndRevoke(t *testing.T) {
	e := newClientsEnv(t)
	ctx := t.Context()
	path := e.write(t, "cursor", cursorWithConflict)

	list, err := e.client.Clients(ctx)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(list, func(v wire.ClientView) bool { return v.ID == "cursor" })
	if i < 0 || list[i].Connected {
		t.Fatalf("cursor: %+v (a user's switchboard entry pointing elsewhere is not Switchboard's)", list)
	}
	for _, s := range list[i].Servers {
		for k, v := range s.Headers {
			if slices.Contains(headerSecrets, v) {
				t.Errorf("GET /api/v1/clients shows header %s of %s in clear", k, s.Name)
			}
		}
		if s.Name == "remote" && s.Headers["Accept"] != "text/event-stream" {
			t.Errorf("a plain header was masked: %v", s.Headers)
		}
		for _, a := range s.Args {
			for _, secret := range argSecrets {
				if strings.Contains(a, secret) {
					t.Errorf("GET /api/v1/clients shows argument %q of %s", a, s.Name)
				}
			}
		}
		if s.Name == "tool" && (len(s.Args) != 6 || s.Args[2] != "--api-key" || s.Args[1] != "tool") {
			t.Errorf("arguments of tool: %q", s.Args)
		}
	}

	change := wire.ClientChange{Action: "connect"}
	plan, err := e.client.PlanClient(ctx, "cursor", change)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Conflicts) != 1 || plan.Conflicts[0].Name != "switchboard" {
		t.Errorf("conflicts %+v", plan.Conflicts)
	}
	for _, s := range append(headerSecrets, argSecrets...) {
		if strings.Contains(plan.Diff, s) {
			t.Errorf("the diff shows %q", s)
		}
	}
	change.Hash = plan.Hash
	_, err = e.client.ApplyClient(ctx, "cursor", change)
	// The clients package says what stopped the change; the flag that gets
	// past it is the API's wording, shown as it is by the command line.
	wantConflict := path + ` already has "switchboard" (https://elsewhere.example.com/mcp), which Switchboard did not write; ` +
		"it was left as it is (rename it, or replace it: --replace on the command line)"
	if statusOf(err) != 409 || err.Error() != wantConflict {
		t.Fatalf("apply over a conflict = %v, want 409 %q", err, wantConflict)
	}
	if got, _ := os.ReadFile(path); string(got) != cursorWithConflict {
		t.Fatal("a refused apply changed the file")
	}
	change.Replace = true
	v, err := e.client.ApplyClient(ctx, "cursor", change)
	if err != nil || !v.Connected {
		t.Fatalf("apply with replace: %+v %v", v, err)
	}

	disconnect := func(revoke bool) wire.ClientApplied {
		t.Helper()
		ch := wire.ClientChange{Action: "disconnect", Revoke: revoke}
		p, err := e.client.PlanClient(ctx, "cursor", ch)
		if err != nil {
			t.Fatal(err)
		}
		ch.Hash = p.Hash
		v, err := e.client.ApplyClient(ctx, "cursor", ch)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	hasToken := func() bool {
		return slices.ContainsFunc(e.tokens.List(), func(t tokens.Token) bool { return t.Label == "cursor" })
	}
	v = disconnect(false)
	if v.Connected || !v.TokenValid || v.TokenLabel != "cursor" || v.Revoked != 0 || !hasToken() {
		t.Errorf("disconnect without revoke: %+v (token kept: %v)", v, hasToken())
	}
	if got, _ := os.ReadFile(path); string(got) != cursorWithConflict {
		t.Errorf("connect then disconnect is not the exact inverse:\n%s", got)
	}
	if _, err := e.client.ApplyClient(ctx, "cursor", wire.ClientChange{Action: "disconnect", Revoke: true, Hash: "x"}); err == nil {
		t.Error("disconnect with a made-up hash: no error")
	}
	if _, err := e.client.PlanClient(ctx, "cursor", wire.ClientChange{Action: "connect", Revoke: true}); statusOf(err) != 400 {
		t.Errorf("connect with revoke = %v, want 400", err)
	}
	v = disconnect(true)
	if v.Revoked != 1 || v.TokenValid || hasToken() {
		t.Errorf("disconnect with revoke: %+v (token kept: %v)", v, hasToken())
	}
}

// Two connects of one client at once through the API, both from the plan
// the user saw: both succeed (the second is planned again), 20 times.
func TestConcurrentConnectsThroughAPI(t *testing.T) {
	e := newClientsEnv(t)
	ctx := t.Context()
	e.write(t, "claude-code", `{"numStartups": 1, "mcpServers": {}}`)
	for round := range 20 {
		change := wire.ClientChange{Action: "connect"}
		plan, err := e.client.PlanClient(ctx, "claude-code", change)
		if err != nil {
			t.Fatal(err)
		}
		change.Hash = plan.Hash
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i := range errs {
			wg.Go(func() { _, errs[i] = e.client.ApplyClient(ctx, "claude-code", change) })
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d, connect %d: %v", round, i, err)
			}
		}
		ch := wire.ClientChange{Action: "disconnect"}
		p, err := e.client.PlanClient(ctx, "claude-code", ch)
		if err != nil {
			t.Fatal(err)
		}
		ch.Hash = p.Hash
		if _, err := e.client.ApplyClient(ctx, "claude-code", ch); err != nil {
			t.Fatal(err)
		}
	}
}

// A server given an entry of its own must be one of config.json's: an
// entry for a misspelt name would be written and reported "connected"
// while the client only ever gets 404 from /mcp/<name>.
func TestConnectUnknownServer(t *testing.T) {
	e := newClientsEnv(t)
	ctx := t.Context()
	path := e.write(t, "cursor", "{}\n")
	for _, apply := range []bool{false, true} {
		change := wire.ClientChange{Action: "connect", Servers: []string{"fs", "nope"}, Hash: "x"}
		var err error
		if apply {
			_, err = e.client.ApplyClient(ctx, "cursor", change)
		} else {
			_, err = e.client.PlanClient(ctx, "cursor", change)
		}
		if err == nil || !strings.Contains(err.Error(), `"nope"`) {
			t.Errorf("connect with a server that is not configured (apply %v): %v", apply, err)
		}
	}
	if data, _ := os.ReadFile(path); string(data) != "{}\n" {
		t.Errorf("the file was changed: %s", data)
	}
	// Configured ones, disabled included, are fine.
	if _, err := e.client.PlanClient(ctx, "cursor", wire.ClientChange{Action: "connect", Servers: []string{"fs", "off"}}); err != nil {
		t.Error(err)
	}
}

// A "switchboard" entry an earlier Switchboard wrote (a reinstall: another
// port, a Switchboard token this data directory never issued) is replaced
// without --replace: the plan says whose it is, apply backs the file up
// and connects; a look-alike on another host is still refused.
func TestEarlierSwitchboardEntryThroughAPI(t *testing.T) {
	e := newClientsEnv(t)
	ctx := t.Context()
	stale := `{"mcpServers": {"switchboard": {"url": "http://127.0.0.1:52117/mcp",
  "headers": {"Authorization": "Bearer sb_q8HnT3vYwZb1Lx0cR9mKp2sDfGhJkL4nQ7uVxYzA5eE"}}}}
`
	e.write(t, "cursor", stale)
	change := wire.ClientChange{Action: "connect"}
	plan, err := e.client.PlanClient(ctx, "cursor", change)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Conflicts) != 0 || len(plan.Notes) != 1 ||
		!strings.Contains(plan.Notes[0], `"switchboard" (http://127.0.0.1:52117/mcp) is an earlier Switchboard's`) ||
		!strings.Contains(plan.Notes[0], "backed up") {
		t.Fatalf("plan: conflicts %+v, notes %q; want a note naming the earlier Switchboard's entry", plan.Conflicts, plan.Notes)
	}
	if strings.Contains(plan.Diff, "sb_q8HnT3") {
		t.Errorf("the diff shows the earlier token:\n%s", plan.Diff)
	}
	change.Hash = plan.Hash
	v, err := e.client.ApplyClient(ctx, "cursor", change)
	if err != nil || !v.Connected {
		t.Fatalf("apply without replace: %+v %v", v, err)
	}
	backups, err := e.client.Backups(ctx, "cursor", "")
	if err != nil || len(backups) != 1 {
		t.Errorf("backups %+v %v, want the file as it was", backups, err)
	}

	lookalike := strings.Replace(stale, "127.0.0.1:52117", "192.168.1.20:7391", 1)
	path := e.write(t, "cursor", lookalike)
	plan, err = e.client.PlanClient(ctx, "cursor", wire.ClientChange{Action: "connect"})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Conflicts) != 1 || len(plan.Notes) != 0 {
		t.Fatalf("look-alike on another host: conflicts %+v, notes %q; want a conflict", plan.Conflicts, plan.Notes)
	}
	_, err = e.client.ApplyClient(ctx, "cursor", wire.ClientChange{Action: "connect", Hash: plan.Hash})
	if statusOf(err) != 409 {
		t.Fatalf("apply over the look-alike = %v, want 409", err)
	}
	if got, _ := os.ReadFile(path); string(got) != lookalike {
		t.Error("a refused apply changed the file")
	}
}

// A read-only client file is refused with the flag that gets past it: the
// clients package's error says it is read-only, the API adds --force (to
// connect's and disconnect's answers; import has no --force).
func TestReadOnlyClientFileThroughAPI(t *testing.T) {
	e := newClientsEnv(t)
	ctx := t.Context()
	const original = `{"mcpServers": {"a": {"command": "x"}}}` + "\n"
	path := e.write(t, "cursor", original)
	if err := os.Chmod(path, 0o444); err != nil {
		t.Fatal(err)
	}
	want := path + " is read-only (the file has mode 0444): Switchboard does not change a file someone made read-only; " +
		"make it writable, or pass --force to change it anyway"
	change := wire.ClientChange{Action: "connect"}
	if _, err := e.client.PlanClient(ctx, "cursor", change); statusOf(err) != 409 || err.Error() != want {
		t.Errorf("plan of a read-only file = %v, want 409 %q", err, want)
	}
	change.Hash = "x"
	if _, err := e.client.ApplyClient(ctx, "cursor", change); statusOf(err) != 409 || err.Error() != want {
		t.Errorf("apply to a read-only file = %v, want 409 %q", err, want)
	}
	// An import has no --force: make the file writable and import again.
	wantImport := path + " is read-only (the file has mode 0444): Switchboard does not change a file someone made read-only; " +
		"make it writable and import again"
	if _, err := e.client.PlanImport(ctx, "cursor", "", wire.ImportRequest{Replace: true}); statusOf(err) != 422 || err.Error() != wantImport {
		t.Errorf("import replacing in a read-only file = %v, want 422 %q", err, wantImport)
	}
	if data, _ := os.ReadFile(path); string(data) != original {
		t.Errorf("the file was changed: %s", data)
	}
}
