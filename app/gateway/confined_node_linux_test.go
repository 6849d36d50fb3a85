package gateway_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app/gateway"
	"github.com/switchboardhq/switchboard/supervisor"
	"github.com/switchboardhq/switchboard/supervisor/confine"
)

// TestTSClientConfinedEverything runs the TypeScript SDK client's every
// request kind (everythingSteps: tools with progress, sampling, elicitation
// and roots relayed, prompts, resources and subscriptions, completion,
// logging) through /mcp/everything against a server-everything confined as
// the daemon confines a server without network: it may read the system's
// libraries, node and the harness's modules, write only its own temporary
// directory, and open no socket. Confinement must cost the client nothing.
func TestTSClientConfinedEverything(t *testing.T) {
	env := nodeHarness(t)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	// Landlock grants what a path names: the harness and its modules
	// resolved (node_modules may be a link to an install elsewhere).
	harness, err := filepath.EvalSymlinks(env.dir)
	if err != nil {
		t.Fatal(err)
	}
	modules, err := filepath.EvalSymlinks(filepath.Join(env.dir, "node_modules"))
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	spec := everythingSpec(env)
	spec.Env = map[string]string{"TMPDIR": tmp}
	spec.Confine = &confine.Policy{Read: append(confine.SystemRead(), env.dir, harness, modules), Write: []string{tmp}}
	f := newTunedFixture(t, "", func(o *supervisor.Options, _ *gateway.Options) { o.Launcher = []string{os.Args[0]} },
		[]supervisor.Spec{spec}, gateway.ServerConfig{Name: "everything", Roots: []string{everythingRoot}})
	f.waitTools(t, connectTo(t, f, "/mcp/everything", nil), "echo", "trigger-sampling-request")

	st, err := f.sup.Status("everything")
	if err != nil || st.Confinement == nil || !st.Confinement.Enforced {
		t.Fatalf("server-everything's confinement = %+v (%v); want it enforced (Landlock)", st.Confinement, err)
	}
	t.Logf("confined by %s", st.Confinement.Mechanism)

	r := runTS(t, ctx, env, tsScenario{Transport: "streamable", URL: f.url + "/mcp/everything", Elicitation: everythingElicitation, Steps: everythingSteps("")})
	checkEverything(t, r, "", env)
}
