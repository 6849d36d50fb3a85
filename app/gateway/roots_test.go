package gateway_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app/gateway"
	"github.com/switchboardhq/switchboard/supervisor"
	"github.com/switchboardhq/switchboard/supervisor/testmcp"
)

// TestRootsAskedOutsideACall: a server that asks for roots when no client
// call is in flight (server-filesystem does at start) gets the roots
// configured for it, or an empty list, never an error.
func TestRootsAskedOutsideACall(t *testing.T) {
	var specs []supervisor.Spec
	for _, name := range []string{"alpha", "beta"} {
		env := testEnv(testmcp.Options{Name: name})
		env[testmcp.EnvRootsAtStart] = "1"
		// min 1: a restart starts a process with no client call in flight
		// (a process started by a call asks that call's client).
		specs = append(specs, supervisor.Spec{Name: name, Command: os.Args[0], Env: env, Pool: supervisor.PoolSpec{Min: 1, Max: 1}})
	}
	f := newSpecFixture(t, "", specs,
		gateway.ServerConfig{Name: "alpha", Roots: []string{"/home/me/project", "file:///srv/data"}},
		gateway.ServerConfig{Name: "beta"})
	cs := f.connect(t, "/mcp", "2025-11-25", nil)
	f.waitTools(t, cs, "alpha__echo", "beta__echo")

	// The processes listed above asked already: start new ones and watch.
	events, stop := f.sup.Subscribe(1024)
	defer stop()
	want := map[string]string{
		"alpha": "testmcp: roots at start: file:///home/me/project,file:///srv/data",
		"beta":  "testmcp: roots at start: ",
	}
	for name := range want {
		if err := f.sup.Restart(t.Context(), name); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.After(20 * time.Second)
	for len(want) > 0 {
		select {
		case ev := <-events:
			if ev.Kind != supervisor.EventLog || !strings.Contains(ev.Message, "roots at start") {
				continue
			}
			if w, ok := want[ev.Server]; ok {
				if strings.TrimSpace(ev.Message) != strings.TrimSpace(w) {
					t.Errorf("%s logged %q, want %q", ev.Server, ev.Message, w)
				}
				delete(want, ev.Server)
			}
		case <-deadline:
			t.Fatalf("no roots answer logged by %v", want)
		}
	}
}
