package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/app/internal/testutil"
)

// TestToolSearchSettingThroughTheAPI: the dashboard's switch. Turning
// toolSearch on through PUT /api/v1/settings writes it into config.json
// and a client that connects after it, in either era, sees search_tools
// and call_tool only. A session opened before keeps every tool until its
// client connects again; a client of the sessionless 2026-07-28 era has no
// session to keep and sees the change at its next request. Turning it off
// gives new connections every tool again.
func TestToolSearchSettingThroughTheAPI(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	writeConfig(t, home, "alpha")
	d := startDaemon(t, home)
	d.waitRunning(t, "alpha")
	ctx := t.Context()
	const sessionEra, statelessEra = "2025-11-25", "2026-07-28"
	connect := func(era string) *mcp.ClientSession { return mcpSessionAs(t, d, "/mcp", "settings-test", era) }

	st, err := d.client.Settings(ctx)
	if err != nil || st.ToolSearch == nil || *st.ToolSearch {
		t.Fatalf("settings: %+v %v (want toolSearch false)", st, err)
	}
	var every []string
	testutil.Eventually(t, 20*time.Second, "alpha's tools on /mcp", func() bool {
		every = testutil.ToolNames(t, connect(sessionEra))
		return slices.Contains(every, "alpha__echo")
	})
	openSession, openStateless := connect(sessionEra), connect(statelessEra)

	on := true
	st.ToolSearch = &on
	if st, err = d.client.UpdateSettings(ctx, st); err != nil || st.ToolSearch == nil || !*st.ToolSearch {
		t.Fatalf("turning toolSearch on: %+v %v", st, err)
	}
	if data, err := os.ReadFile(filepath.Join(home, "config.json")); err != nil || !strings.Contains(string(data), `"toolSearch": true`) ||
		!strings.Contains(string(data), `"alpha"`) {
		t.Errorf("config.json after the PUT (%v):\n%s", err, data)
	}
	search := []string{"call_tool", "search_tools"}
	for _, era := range []string{sessionEra, statelessEra} {
		if names := testutil.ToolNames(t, connect(era)); !slices.Equal(names, search) {
			t.Errorf("a client connecting after the change (%s) lists %v; want %v", era, names, search)
		}
	}
	if names := testutil.ToolNames(t, openSession); !slices.Equal(names, every) {
		t.Errorf("the session opened before the change lists %v; want what it had, %v", names, every)
	}
	if names := testutil.ToolNames(t, openStateless); !slices.Equal(names, search) {
		t.Errorf("the sessionless client connected before the change lists %v; want %v", names, search)
	}

	off := false
	st.ToolSearch = &off
	if st, err = d.client.UpdateSettings(ctx, st); err != nil || *st.ToolSearch {
		t.Fatalf("turning toolSearch off: %+v %v", st, err)
	}
	if names := testutil.ToolNames(t, connect(sessionEra)); !slices.Equal(names, every) {
		t.Errorf("a new session after turning it off lists %v; want %v", names, every)
	}
}

// TestProfileMissingToolsEndToEnd: a profile that limits a server to a
// tool the server does not offer says so through the API and the CLI once
// the server is listed. The daemon logs it, and a server the profile names
// that is not installed, when the finding is new: not again at a settings
// change (every PUT /api/v1/settings applies the config), again once a
// profile edit changes it.
func TestProfileMissingToolsEndToEnd(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	writeConfig(t, home, "alpha")
	setProfiles(t, home, map[string]any{
		"coding": map[string]any{"servers": []string{"alpha", "not-installed"}, "tools": map[string]any{"alpha": []string{"echo", "typo_tool"}}},
	})
	d := startDaemon(t, home)
	d.waitRunning(t, "alpha")
	ctx := t.Context()

	const warning = "a profile names tools its server does not offer"
	testutil.Eventually(t, 20*time.Second, "typo_tool in the profile's missingTools", func() bool {
		list, err := d.client.Profiles(ctx)
		return err == nil && len(list) == 1 && slices.Equal(list[0].MissingTools["alpha"], []string{"typo_tool"}) && len(list[0].MissingTools) == 1
	})
	code, out, errOut := cli(t, home, "profiles")
	if code != exitOK || !strings.Contains(out, `alpha (not installed or disabled: not-installed) (server "alpha" offers no tool "typo_tool")`) {
		t.Errorf("profiles: %d\n%s%s", code, out, errOut)
	}
	testutil.Eventually(t, 10*time.Second, "the daemon's warning", func() bool {
		return strings.Contains(d.out.String(), warning)
	})
	const serversWarning = "a profile names servers that are not installed or not enabled"
	counts := func(step string, tools int) {
		t.Helper()
		logged := d.out.String()
		if n, m := strings.Count(logged, warning), strings.Count(logged, serversWarning); n != tools || m != 1 {
			t.Errorf("%s: %d tools and %d servers warnings, want %d and 1:\n%s", step, n, m, tools, logged)
		}
	}
	counts("alpha listed", 1)
	if logged := d.out.String(); !strings.Contains(logged, "tools=[typo_tool]") || !strings.Contains(logged, "servers=[not-installed]") {
		t.Errorf("the warnings name neither typo_tool nor not-installed:\n%s", logged)
	}
	// Settings changes apply the config before the PUT answers: nothing
	// the profile names changed, nothing is logged again.
	for _, on := range []bool{true, false} {
		st, err := d.client.Settings(ctx)
		if err != nil {
			t.Fatal(err)
		}
		st.ToolSearch = &on
		if _, err := d.client.UpdateSettings(ctx, st); err != nil {
			t.Fatalf("setting toolSearch %v: %v", on, err)
		}
	}
	counts("two settings changes", 1)

	// The typo fixed, another made: a new finding, logged; the missing
	// server is not news.
	setProfiles(t, home, map[string]any{
		"coding": map[string]any{"servers": []string{"alpha", "not-installed"}, "tools": map[string]any{"alpha": []string{"echo", "sleeep"}}},
	})
	testutil.Eventually(t, 20*time.Second, "sleeep in the profile's missingTools", func() bool {
		list, err := d.client.Profiles(ctx)
		return err == nil && len(list) == 1 && slices.Equal(list[0].MissingTools["alpha"], []string{"sleeep"})
	})
	testutil.Eventually(t, 10*time.Second, "the daemon's warning for the new config", func() bool {
		return strings.Contains(d.out.String(), "tools=[sleeep]")
	})
	counts("a profile edit", 2)
	code, out, _ = cli(t, home, "profiles")
	if code != exitOK || strings.Contains(out, "typo_tool") || !strings.Contains(out, `(server "alpha" offers no tool "sleeep")`) {
		t.Errorf("profiles after the fix:\n%s", out)
	}
}
