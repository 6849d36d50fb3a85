package wire_test

import (
	"testing"

	"github.com/switchboardhq/switchboard/app/api/wire"
)

// A server down after a failure shows as failed in every client (the
// dashboard has the same rule in lib/state.ts); one the user stopped (no
// last error) as stopped.
func TestShownState(t *testing.T) {
	tests := []struct {
		view wire.ServerView
		want string
	}{
		{wire.ServerView{State: wire.StateFailing, LastError: "exit status 1"}, wire.StateFailed},
		{wire.ServerView{State: wire.StateStopped, LastError: `server "x" failed to start: command not found: nope`}, wire.StateFailed},
		{wire.ServerView{State: wire.StateStopped}, wire.StateStopped},
		{wire.ServerView{State: wire.StateRunning, LastError: "crashed once", Processes: []wire.ProcessStatus{{PID: 1}}}, wire.StateRunning},
		{wire.ServerView{State: wire.StateBackoff, LastError: "crashed"}, wire.StateBackoff},
	}
	for _, tt := range tests {
		if got := tt.view.ShownState(); got != tt.want {
			t.Errorf("ShownState of %s with last error %q = %q, want %q", tt.view.State, tt.view.LastError, got, tt.want)
		}
	}
}
