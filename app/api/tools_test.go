package api_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/app/api"
	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/gateway"
)

type fakeTools map[string][]gateway.ToolInfo

func (f fakeTools) Tools(server string) []gateway.ToolInfo { return f[server] }

// A server's view carries the tools the gateway listed, disabled ones
// marked; a server not listed yet has none (an empty list, not null) and
// says so (listed false).
func TestServerViewTools(t *testing.T) {
	tools := fakeTools{"fs": {{Name: "read_file", Description: "Read a file"}, {Name: "write_file", Disabled: true}}}
	e := newEnv(t, func(o *api.Options) { o.Tools = tools })
	list, err := e.client.Servers(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]wire.ToolInfo{}
	listed := map[string]bool{}
	for _, v := range list {
		got[v.Name] = v.Tools
		listed[v.Name] = v.Listed
	}
	want := map[string][]wire.ToolInfo{"fs": {{Name: "read_file", Description: "Read a file"}, {Name: "write_file", Disabled: true}}, "off": {}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	if !listed["fs"] || listed["off"] {
		t.Errorf("listed: %v, want fs listed and off (never listed) not", listed)
	}
	one, err := e.client.Server(t.Context(), "fs")
	if err != nil || len(one.Tools) != 2 {
		t.Errorf("GET /servers/fs tools: %v %+v", err, one.Tools)
	}
}
