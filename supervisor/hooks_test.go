package supervisor_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/supervisor"
	"github.com/switchboardhq/switchboard/supervisor/testmcp"
)

// A supervisor built before what provides its hooks gets them with
// SetHooks, before the first Apply; every process then runs through them.
// Later, or a second time, SetHooks changes nothing.
func TestSetHooksBeforeApply(t *testing.T) {
	s := newSupervisor(t, fastOptions(t))
	var clients, wraps, prepares atomic.Int32
	hooks := supervisor.Hooks{
		NewClient: func(server string) *mcp.Client {
			clients.Add(1)
			return supervisor.DefaultClient(server)
		},
		WrapTransport: func(server string, tr mcp.Transport) mcp.Transport {
			wraps.Add(1)
			return tr
		},
		Prepare: func(ctx context.Context, server string, cs *mcp.ClientSession) error {
			prepares.Add(1)
			return nil
		},
	}
	if err := s.SetHooks(hooks); err != nil {
		t.Fatalf("SetHooks before Apply: %v", err)
	}
	if err := s.SetHooks(hooks); !errors.Is(err, supervisor.ErrHooksLate) {
		t.Errorf("SetHooks a second time = %v, want ErrHooksLate", err)
	}
	apply(t, s, testSpec("echo", testmcp.Options{}, supervisor.PoolSpec{}))
	if _, _, err := call(t.Context(), s, "echo", "echo", map[string]any{"text": "hi"}); err != nil {
		t.Fatal(err)
	}
	if clients.Load() != 1 || wraps.Load() != 1 || prepares.Load() != 1 {
		t.Errorf("hooks ran %d/%d/%d times (client/wrap/prepare), want once each", clients.Load(), wraps.Load(), prepares.Load())
	}

	late := newSupervisor(t, fastOptions(t))
	apply(t, late)
	if err := late.SetHooks(hooks); !errors.Is(err, supervisor.ErrHooksLate) {
		t.Errorf("SetHooks after Apply = %v, want ErrHooksLate", err)
	}
}
