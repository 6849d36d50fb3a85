package gateway_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/app/gateway"
	"github.com/switchboardhq/switchboard/app/internal/testutil"
	"github.com/switchboardhq/switchboard/app/record"
)

// TestCallsAreNamedByServerAndTool: every call is recorded with its server
// and its tool as the server calls it, whichever endpoint it came through
// (/mcp and a profile's, whose names are prefixed, an alias too, and
// /mcp/<server>), on the fast path and the go-sdk's, with the name the
// client used kept; a name whose prefix is no server's is an unknown
// server (named by the prefix), a name a known server does not offer is
// an unknown tool of that server.
func TestCallsAreNamedByServerAndTool(t *testing.T) {
	f := newFixture(t, gateway.ServerConfig{Name: "alpha"}, gateway.ServerConfig{Name: "gamma", Alias: "g"})
	f.gw.SetProfiles([]gateway.ProfileConfig{{Name: "coding", Servers: []string{"alpha"}}})
	for _, era := range []string{"2025-11-25", "2026-07-28"} { // the fast path, and the go-sdk's (stateless)
		t.Run(era, func(t *testing.T) {
			agg := f.connect(t, "/mcp", era, nil)
			f.waitTools(t, agg, "alpha__echo", "g__echo")
			one := f.connect(t, "/mcp/alpha", era, nil)
			f.waitTools(t, one, "echo")
			prof := f.connect(t, "/mcp/p/coding", era, nil)
			f.waitTools(t, prof, "alpha__echo")
			before := len(f.rec.all())
			for _, c := range []struct {
				cs   *mcp.ClientSession
				name string
			}{{agg, "alpha__echo"}, {agg, "g__echo"}, {one, "echo"}, {prof, "alpha__echo"},
				{agg, "nosuch__tool"}, {agg, "alpha__nosuch"}, {agg, "echo"}, {one, "nosuch"}, {prof, "g__echo"}} {
				_, _ = c.cs.CallTool(t.Context(), &mcp.CallToolParams{Name: c.name, Arguments: map[string]any{"text": "x"}})
			}
			var got []string
			testutil.Eventually(t, 10*time.Second, "nine calls recorded", func() bool {
				got = got[:0]
				for _, c := range f.rec.all()[before:] {
					if c.Method == "tools/call" {
						got = append(got, strings.Join([]string{c.Endpoint, c.Name, c.Server, c.Tool, c.Unknown, c.Outcome}, "|"))
					}
				}
				return len(got) == 9
			})
			want := []string{
				"|alpha__echo|alpha|echo||ok",
				"|g__echo|gamma|echo||ok",
				"alpha|echo|alpha|echo||ok",
				"p/coding|alpha__echo|alpha|echo||ok",
				"|nosuch__tool|nosuch|tool|" + record.UnknownServer + "|protocol_error",
				"|alpha__nosuch|alpha|nosuch|" + record.UnknownTool + "|protocol_error",
				"|echo||echo|" + record.UnknownServer + "|protocol_error",
				"alpha|nosuch|alpha|nosuch|" + record.UnknownTool + "|protocol_error",
				// gamma is known, but the profile does not offer it.
				"p/coding|g__echo|gamma|echo|" + record.UnknownTool + "|protocol_error",
			}
			if !slices.Equal(got, want) {
				t.Errorf("recorded (endpoint|name|server|tool|unknown|outcome):\n got  %q\n want %q", got, want)
			}
		})
	}
}
