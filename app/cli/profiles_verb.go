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

	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/tiers"
)

// profilesUsage is the synopsis of the profiles verb's actions.
const profilesUsage = "expected: profiles, or profiles create|edit|delete NAME"

func profilesVerb() verb {
	var asJSON, search *bool
	var servers, tools stringList
	var maxTier *string
	return verb{
		name: "profiles",
		args: " [create|edit|delete NAME]",
		summary: "list the profiles of config.json (their endpoint, servers, tool count and the clients bound to them); " +
			"create, edit or delete one",
		flags: func(fs *flag.FlagSet) {
			asJSON = fs.Bool("json", false, "print JSON instead of a table")
			fs.Var(&servers, "server", "with create or edit: a server of the profile (repeatable, or comma-separated); "+
				"with edit it replaces the profile's servers")
			fs.Var(&tools, "tool", "with create or edit: SERVER:TOOL[,TOOL...] limits that server's tools on the profile to these (repeatable); "+
				"with edit it replaces the profile's tool limits")
			fs.Bool("all-tools", false, "with edit: drop the profile's tool limits (each server offers all its tools)")
			search = fs.Bool("search", false, "with create or edit: serve the profile in search mode (it lists search_tools and call_tool, "+
				"which find and call its tools); --search=false turns it off")
			maxTier = fs.String("max-tier", "", "with create or edit: cap the profile's tools at this tier, read or write; "+
				"with edit, none lifts the cap")
		},
		run: func(ctx context.Context, e *env, fs *flag.FlagSet) error {
			set := map[string]bool{}
			fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
			action := ""
			if len(e.args) > 0 {
				action = e.args[0]
			}
			switch {
			case action == "":
				for _, f := range []string{"server", "tool", "all-tools", "search", "max-tier"} {
					if set[f] {
						return usageError{"--" + f + " goes with create or edit"}
					}
				}
				return listProfiles(ctx, e, *asJSON)
			case action != "create" && action != "edit" && action != "delete":
				return usageError{fmt.Sprintf("unknown action %q: create, edit or delete", action)}
			case len(e.args) != 2:
				return usageError{profilesUsage}
			}
			name := e.args[1]
			if action == "delete" {
				for _, f := range []string{"server", "tool", "all-tools", "search", "max-tier"} {
					if set[f] {
						return usageError{"--" + f + " goes with create or edit"}
					}
				}
			}
			if set["all-tools"] && (action != "edit" || set["tool"]) {
				return usageError{"--all-tools goes with edit, without --tool"}
			}
			serverList := splitList(servers)
			limits, err := parseToolLimits(tools)
			if err != nil {
				return err
			}
			tier := *maxTier
			if set["max-tier"] {
				if tier == "none" && action == "edit" {
					tier = ""
				} else if _, err := tiers.Parse(tier); err != nil {
					return usageError{"--max-tier: " + err.Error()}
				}
			}
			if action == "create" && len(serverList) == 0 {
				return usageError{"create needs the profile's servers: --server NAME (repeatable)"}
			}
			if action == "edit" && (len(set) == 0 || (len(set) == 1 && set["json"])) {
				return usageError{"edit needs a change: --server, --tool, --all-tools, --search or --max-tier"}
			}
			c, err := e.client()
			if err != nil {
				return err
			}
			var v wire.ProfileView
			switch action {
			case "delete":
				if err := c.DeleteProfile(ctx, name); err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "deleted profile %s (%s)\n", name, "/mcp/p/"+name)
				return nil
			case "create":
				v, err = c.CreateProfile(ctx, wire.ProfileRequest{Name: name, Servers: serverList, Tools: limits, ToolSearch: *search, MaxTier: tier})
			case "edit":
				var cur wire.ProfileView
				cur, err = findProfile(ctx, e, name)
				if err != nil {
					return err
				}
				req := wire.ProfileRequest{Servers: slices.Concat(cur.Servers, cur.Missing), Tools: cur.Tools, ToolSearch: cur.ToolSearch, MaxTier: cur.MaxTier}
				if set["server"] {
					req.Servers = serverList
					// The tool limits of servers it no longer has go with them.
					if !set["tool"] {
						maps.DeleteFunc(req.Tools, func(server string, _ []string) bool { return !slices.Contains(serverList, server) })
					}
				}
				if set["tool"] {
					req.Tools = limits
				}
				if set["all-tools"] {
					req.Tools = nil
				}
				if set["search"] {
					req.ToolSearch = *search
				}
				if set["max-tier"] {
					req.MaxTier = tier
				}
				v, err = c.UpdateProfile(ctx, name, req)
			}
			if err != nil {
				return err
			}
			if *asJSON {
				return writeJSON(e.stdout, v)
			}
			verbDone := map[string]string{"create": "created", "edit": "changed"}[action]
			fmt.Fprintf(e.stdout, "%s profile %s on %s: %s; servers %s\n", verbDone, v.Name, v.Endpoint, profileFacts(v), strings.Join(v.Servers, ", "))
			if len(v.Clients) > 0 {
				fmt.Fprintf(e.stdout, "clients bound to it (they see the change at once): %s\n", strings.Join(v.Clients, ", "))
			}
			return nil
		},
	}
}

// findProfile returns profile name as the daemon lists it.
func findProfile(ctx context.Context, e *env, name string) (wire.ProfileView, error) {
	c, err := e.client()
	if err != nil {
		return wire.ProfileView{}, err
	}
	list, err := c.Profiles(ctx)
	if err != nil {
		return wire.ProfileView{}, err
	}
	names := make([]string, 0, len(list))
	for _, p := range list {
		if p.Name == name {
			return p, nil
		}
		names = append(names, p.Name)
	}
	if len(names) == 0 {
		return wire.ProfileView{}, fmt.Errorf("unknown profile %q: config.json has no profiles (create one with profiles create NAME --server SERVER)", name)
	}
	return wire.ProfileView{}, fmt.Errorf("unknown profile %q: the profiles are %s", name, strings.Join(names, ", "))
}

// splitList returns the values of a repeatable flag, each split at commas,
// without empty ones.
func splitList(vals []string) []string {
	var out []string
	for _, v := range vals {
		for s := range strings.SplitSeq(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// parseToolLimits parses --tool values, SERVER:TOOL[,TOOL...], into a
// profile's tool limits (nil for none).
func parseToolLimits(vals []string) (map[string][]string, error) {
	if len(vals) == 0 {
		return nil, nil
	}
	out := map[string][]string{}
	for _, v := range vals {
		server, list, ok := strings.Cut(v, ":")
		server = strings.TrimSpace(server)
		if !ok || server == "" {
			return nil, usageError{fmt.Sprintf("--tool %q: expected SERVER:TOOL[,TOOL...], like filesystem:read_file", v)}
		}
		tools := splitList([]string{list})
		if len(tools) == 0 {
			return nil, usageError{fmt.Sprintf("--tool %q: no tool after %q", v, server+":")}
		}
		out[server] = append(out[server], tools...)
	}
	return out, nil
}

// profileFacts says what a profile is in a few words, as the dashboard
// does (frontend/src/lib/profiles.ts): "search · 23 tools behind 2",
// "read-only · 12 tools".
func profileFacts(p wire.ProfileView) string {
	var parts []string
	if p.ToolSearch {
		parts = append(parts, "search")
	}
	switch p.MaxTier {
	case string(tiers.Read):
		parts = append(parts, "read-only")
	case string(tiers.Write):
		parts = append(parts, "no destructive tools")
	}
	switch {
	case p.ToolSearch && p.ReachableTools != nil:
		parts = append(parts, fmt.Sprintf("%s behind %d", plural(*p.ReachableTools, "tool"), 2))
	case p.ToolCount != nil:
		parts = append(parts, plural(*p.ToolCount, "tool"))
	}
	return strings.Join(parts, " · ")
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

func listProfiles(ctx context.Context, e *env, asJSON bool) error {
	c, err := e.client()
	if err != nil {
		return err
	}
	list, err := c.Profiles(ctx)
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(e.stdout, list)
	}
	if len(list) == 0 {
		fmt.Fprintln(e.stdout, "no profiles: create one with `switchboard profiles create NAME --server SERVER`, or on the dashboard's Clients page")
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
			if p.ReachableTools != nil {
				tools = fmt.Sprintf("2 (search, %d behind)", *p.ReachableTools)
			}
		}
		clients := strings.Join(p.Clients, ",")
		if clients == "" {
			clients = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", p.Name, p.Endpoint, servers, tools, clients)
	}
	return tw.Flush()
}
