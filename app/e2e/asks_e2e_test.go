package e2e

import (
	"encoding/json"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/app/api/client"
	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/daemon"
	"github.com/switchboardhq/switchboard/app/internal/testutil"
	"github.com/switchboardhq/switchboard/app/tokens"
)

// TestAskBeforeDestructiveEndToEnd: through a real `switchboard serve`,
// `switchboard asks on alpha` makes a call of alpha's destructive echo
// (the test server's tools have no annotations) from a client that cannot
// answer an elicitation wait on the board: `switchboard asks` lists it
// with the secret in its arguments masked, `asks allow ID` lets it run,
// `asks deny ID` refuses the next, and one nobody answers is denied at the
// ask timeout (`asks timeout 2s`; `asks timeout 2h` is refused). The history has each call's decision;
// the events stream told of each ask; beta, which does not ask, is not
// held up.
func TestAskBeforeDestructiveEndToEnd(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	writeConfig(t, home, "alpha", "beta")
	d := startDaemon(t, home)
	d.waitRunning(t, "alpha", "beta")
	ctx := t.Context()

	for _, args := range [][]string{{"asks", "on", "alpha"}, {"asks", "timeout", "30s"}} {
		if code, out, errOut := cli(t, home, args...); code != exitOK {
			t.Fatalf("%v: %d %s%s", args, code, out, errOut)
		}
	}
	if code, _, errOut := cli(t, home, "asks", "timeout", "2h"); code == exitOK || !strings.Contains(errOut, "askTimeout") {
		t.Errorf("asks timeout 2h: exit %d, %s; want it refused naming askTimeout", code, errOut)
	}
	if v, err := d.client.Server(ctx, "alpha"); err != nil || !v.Config.AskBeforeDestructive {
		t.Fatalf("alpha's config after asks on: %+v %v", v.Config, err)
	}
	st, err := d.client.Settings(ctx)
	if err != nil || st.AskTimeout == nil || st.AskTimeout.Duration != 30*time.Second {
		t.Fatalf("settings after asks timeout 30s: %+v %v", st.AskTimeout, err)
	}

	askEvents := make(chan wire.AskEvent, 16)
	go d.client.Events(ctx, 0, []string{wire.TypeAsk}, func(ev wire.Event) error {
		var a wire.AskEvent
		if json.Unmarshal(ev.Data, &a) == nil {
			askEvents <- a
		}
		return nil
	})

	cs := mcpSession(t, d, "/mcp") // no elicitation handler: the client cannot be asked
	testutil.ToolNames(t, cs)
	const secret = "ghp_16C7e42F292c6912E7710c838347Ae178B4a"
	type outcome struct {
		res *mcp.CallToolResult
		err error
	}
	call := func(text string) chan outcome {
		done := make(chan outcome, 1)
		go func() {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": text}})
			done <- outcome{res, err}
		}()
		return done
	}
	pending := func(marker string) wire.Ask {
		t.Helper()
		var found wire.Ask
		testutil.Eventually(t, 10*time.Second, "the pending ask of "+marker, func() bool {
			list, err := d.client.Asks(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range list {
				if strings.Contains(string(a.Arguments), marker) {
					found = a
					return true
				}
			}
			return false
		})
		return found
	}

	// Allowed from the CLI; the pending ask masks the secret.
	allowed := call("allow-me " + secret)
	a := pending("allow-me")
	if a.Server != "alpha" || a.Tool != "echo" || a.Tier != "destructive" || strings.Contains(string(a.Arguments), secret) ||
		!strings.Contains(string(a.Arguments), "[redacted]") || a.Deadline.Sub(a.Asked) > 30*time.Second || a.Deadline.Sub(a.Asked) < 25*time.Second {
		t.Errorf("pending ask %+v (arguments %s): want alpha's echo, destructive, the secret masked, 30s to answer", a, a.Arguments)
	}
	code, out, errOut := cli(t, home, "asks")
	if code != exitOK || !strings.Contains(out, a.ID) || !strings.Contains(out, "echo") || strings.Contains(out, secret) {
		t.Errorf("switchboard asks: %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := cli(t, home, "asks", "allow", a.ID); code != exitOK || !strings.Contains(out, "allowed") {
		t.Errorf("asks allow: %d %s%s", code, out, errOut)
	}
	if o := <-allowed; o.err != nil || o.res.IsError || !strings.Contains(toolText(o.res), "allow-me") {
		t.Errorf("the allowed call: %v %+v", o.err, o.res)
	}
	if code, _, errOut := cli(t, home, "asks", "allow", a.ID); code == exitOK || !strings.Contains(errOut, "no pending ask") {
		t.Errorf("allowing it again: exit %d %s", code, errOut)
	}

	// Denied from the CLI.
	denied := call("deny-me")
	if code, out, errOut := cli(t, home, "asks", "deny", pending("deny-me").ID); code != exitOK || !strings.Contains(out, "denied") {
		t.Errorf("asks deny: %d %s%s", code, out, errOut)
	}
	if o := <-denied; o.err != nil || !o.res.IsError || !strings.Contains(toolText(o.res), "denied") {
		t.Errorf("the denied call: %v %+v", o.err, o.res)
	}

	// Nobody answers: denied at the timeout.
	if code, out, errOut := cli(t, home, "asks", "timeout", "2s"); code != exitOK {
		t.Fatalf("asks timeout 2s: %d %s%s", code, out, errOut)
	}
	start := time.Now()
	late := call("nobody " + secret)
	pending("nobody")
	o := <-late
	if took := time.Since(start); o.err != nil || !o.res.IsError || !strings.Contains(toolText(o.res), "in time") || took < 2*time.Second {
		t.Errorf("the unanswered call after %v: %v %+v", took, o.err, o.res)
	}
	t.Logf("the unanswered call was denied after %v (ask timeout 2s)", time.Since(start))

	// beta does not ask.
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "beta__echo", Arguments: map[string]any{"text": "free"}}); err != nil || res.IsError {
		t.Errorf("beta__echo: %v %+v", err, res)
	}

	want := map[string]struct {
		by      string
		allowed bool
	}{"allow-me": {"cli", true}, "deny-me": {"cli", false}, "nobody": {"timeout", false}}
	testutil.Eventually(t, 10*time.Second, "the decisions in the history", func() bool {
		page, err := d.client.History(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		found := 0
		for _, c := range page.Calls {
			if c.Name == "beta__echo" && c.DecidedBy != "" {
				t.Errorf("beta's call has a decision: %+v", c)
			}
			if c.Name != "alpha__echo" {
				continue
			}
			full, err := d.client.Call(ctx, c.ID)
			if err != nil {
				t.Fatal(err)
			}
			for marker, w := range want {
				if !strings.Contains(string(full.Arguments), marker) {
					continue
				}
				if full.DecidedBy != w.by || full.DecisionAllowed != w.allowed || full.DecidedAt == nil || full.DecidedAt.Before(full.Start) {
					t.Errorf("%s: decision %q allowed=%v at %v; want %s allowed=%v", marker, full.DecidedBy, full.DecisionAllowed, full.DecidedAt, w.by, w.allowed)
				}
				if strings.Contains(string(full.Arguments), secret) {
					t.Errorf("%s: the secret is in the history: %s", marker, full.Arguments)
				}
				found++
			}
		}
		return found == len(want)
	})

	// The events stream told of each ask, pending and decided.
	seen := map[string][]string{}
	testutil.Eventually(t, 10*time.Second, "ask events", func() bool {
		for {
			select {
			case ev := <-askEvents:
				by := ""
				if ev.Decision != nil {
					by = ev.Decision.By
				}
				seen[ev.State] = append(seen[ev.State], by)
			default:
				return len(seen[wire.AskPending]) == 3 && len(seen[wire.AskDecided]) == 3
			}
		}
	})
	slices.Sort(seen[wire.AskDecided])
	if !slices.Equal(seen[wire.AskDecided], []string{"cli", "cli", "timeout"}) {
		t.Errorf("decided events by %v, want cli, cli, timeout", seen[wire.AskDecided])
	}
}

func toolText(res *mcp.CallToolResult) string {
	if res == nil {
		return ""
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestAskThroughDashboard: a client that cannot answer (a stateless-era
// client that declares no elicitation) waits until the dashboard answers
// through the API (the window's token: decided by "dashboard"), and with a
// short ask timeout (1s, set through PUT /api/v1/settings) a call nobody
// answers is denied by the timeout; the history has both decisions.
func TestAskThroughDashboard(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	writeConfig(t, home, "alpha")
	d := startDaemon(t, home)
	d.waitRunning(t, "alpha")
	ctx := t.Context()
	if _, err := d.client.SetServerAsks(ctx, "alpha", true); err != nil {
		t.Fatal(err)
	}
	store, err := tokens.Open(filepath.Join(home, daemon.TokensFile))
	if err != nil {
		t.Fatal(err)
	}
	win, err := store.Ensure(tokens.LabelWindow)
	if err != nil {
		t.Fatal(err)
	}
	dashboard := &client.Client{BaseURL: d.info.Address, Token: win.Secret}

	cs := mcpSessionAs(t, d, "/mcp", "stateless-no-elicitation", "2026-07-28")
	testutil.ToolNames(t, cs)
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": "dash-yes"}})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	var pending []wire.Ask
	testutil.Eventually(t, 10*time.Second, "the pending ask on the dashboard", func() bool {
		pending, err = dashboard.Asks(ctx)
		return err == nil && len(pending) == 1
	})
	dec, err := dashboard.AnswerAsk(ctx, pending[0].ID, true)
	if err != nil || !dec.Allowed || dec.By != wire.DecidedByDashboard {
		t.Fatalf("answering from the dashboard: %+v %v", dec, err)
	}
	if res := <-done; res == nil || res.IsError || toolText(res) != "dash-yes" {
		t.Fatalf("the allowed call: %+v", res)
	}

	one := wire.Duration{Duration: time.Second}
	if _, err := dashboard.UpdateSettings(ctx, wire.Settings{AskTimeout: &one}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": "dash-late"}})
	if err != nil || !res.IsError || !strings.Contains(toolText(res), "in time") {
		t.Fatalf("the unanswered call: %v %+v", err, res)
	}
	t.Logf("denied by the 1s ask timeout after %v", time.Since(start))
	if list, err := dashboard.Asks(ctx); err != nil || len(list) != 0 {
		t.Errorf("pending after the timeout: %+v %v", list, err)
	}

	testutil.Eventually(t, 10*time.Second, "both decisions in the history", func() bool {
		page, err := d.client.History(ctx, url.Values{"q": {"dash"}})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, c := range page.Calls {
			full, err := d.client.Call(ctx, c.ID)
			if err != nil || full.DecidedBy == "" {
				continue
			}
			var args struct{ Text string }
			_ = json.Unmarshal(full.Arguments, &args)
			got[args.Text] = full.DecidedBy + "/" + strconv.FormatBool(full.DecisionAllowed)
		}
		return got["dash-yes"] == "dashboard/true" && got["dash-late"] == "timeout/false"
	})
}
