package cli

import (
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app/api/wire"
)

// TestHistoryNames: the history's columns follow the dashboard's rule: the
// token's label and the client's name both, the server and the tool as
// two fields with what was unknown marked, a date before the clock when
// the call was not today.
func TestHistoryNames(t *testing.T) {
	now := time.Date(2026, 12, 2, 15, 0, 0, 0, time.Local)
	for _, tc := range []struct {
		at   time.Time
		want string
	}{
		{now.Add(-time.Hour), "14:00:00"},
		{time.Date(2026, 12, 1, 23, 59, 58, 0, time.Local), "Dec 1 23:59:58"},
		{time.Date(2025, 12, 2, 9, 5, 0, 0, time.Local), "2025-12-02 09:05:00"},
	} {
		if got := moment(tc.at, now); got != tc.want {
			t.Errorf("moment(%s) = %q, want %q", tc.at, got, tc.want)
		}
	}
	for _, tc := range []struct {
		call                 wire.Call
		client, server, tool string
	}{
		{wire.Call{ClientLabel: "cli", ClientName: "cursor", Server: "alpha", Tool: "echo", Name: "alpha__echo"}, "cli · cursor", "alpha", "echo"},
		{wire.Call{ClientLabel: "cursor", ClientName: "cursor", Server: "alpha", Tool: "echo", Name: "echo"}, "cursor", "alpha", "echo"},
		{wire.Call{ClientLabel: "cli", Server: "nosuch", Tool: "tool", Name: "nosuch__tool", Unknown: wire.UnknownServer}, "cli", "nosuch (unknown)", "tool"},
		{wire.Call{ClientName: "x", Server: "alpha", Tool: "nosuch", Name: "alpha__nosuch", Unknown: wire.UnknownTool}, "x", "alpha", "nosuch (unknown)"},
		{wire.Call{Tool: "echo", Name: "echo", Unknown: wire.UnknownServer}, "", "", "echo (unknown)"},
	} {
		if got := tc.call.Client(); got != tc.client {
			t.Errorf("%+v: client %q, want %q", tc.call, got, tc.client)
		}
		if got := tc.call.ServerShown(); got != tc.server {
			t.Errorf("%+v: server %q, want %q", tc.call, got, tc.server)
		}
		if got := tc.call.ToolShown(); got != tc.tool {
			t.Errorf("%+v: tool %q, want %q", tc.call, got, tc.tool)
		}
	}
}
