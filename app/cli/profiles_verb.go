package cli

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

func profilesVerb() verb {
	var asJSON *bool
	return verb{
		name:    "profiles",
		summary: "list the profiles of config.json: their endpoint, servers, tool count and the clients bound to them",
		flags: func(fs *flag.FlagSet) {
			asJSON = fs.Bool("json", false, "print JSON instead of a table")
		},
		run: func(ctx context.Context, e *env, fs *flag.FlagSet) error {
			if len(e.args) > 0 {
				return usageError{"expected: profiles"}
			}
			c, err := e.client()
			if err != nil {
				return err
			}
			list, err := c.Profiles(ctx)
			if err != nil {
				return err
			}
			if *asJSON {
				return writeJSON(e.stdout, list)
			}
			if len(list) == 0 {
				fmt.Fprintln(e.stdout, `no profiles: add "profiles" to config.json, e.g. "profiles": {"coding": {"servers": ["filesystem", "git"]}}`)
				return nil
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "PROFILE\tENDPOINT\tSERVERS\tTOOLS\tCLIENTS")
			for _, p := range list {
				servers := strings.Join(p.Servers, ",")
				if len(p.Missing) > 0 {
					// Missing: not in config.json (uninstalled, a typo) or
					// disabled; a server that is configured but down is not.
					servers += " (not installed or disabled: " + strings.Join(p.Missing, ",") + ")"
				}
				// Tools it names that a listed server does not offer (a
				// typo, a tool the server dropped): left out of its endpoint.
				for _, server := range slices.Sorted(maps.Keys(p.MissingTools)) {
					for _, tool := range p.MissingTools[server] {
						servers += fmt.Sprintf(" (server %q offers no tool %q)", server, tool)
					}
				}
				tools := "-"
				if p.ToolCount != nil {
					tools = strconv.Itoa(*p.ToolCount)
				}
				if p.ToolSearch {
					tools += " (search)"
				}
				clients := strings.Join(p.Clients, ",")
				if clients == "" {
					clients = "-"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", p.Name, p.Endpoint, servers, tools, clients)
			}
			return tw.Flush()
		},
	}
}
