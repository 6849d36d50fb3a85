package cli

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/switchboardhq/switchboard/app/tiers"

	"github.com/switchboardhq/switchboard/app/api/client"
	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/internal/browser"
)

// clientsUsage is the synopsis of the clients verb's actions.
const clientsUsage = "expected: clients, or clients connect|disconnect CLIENT, " +
	"clients import CLIENT, clients backups CLIENT, or clients restore CLIENT BACKUP"

func clientsVerb() verb {
	var servers stringList
	var dryRun, replace, force, revoke *bool
	var workspace, profile, maxTier *string
	return verb{
		name: "clients",
		args: " [connect|disconnect|import|backups CLIENT | restore CLIENT BACKUP]",
		summary: "list MCP clients and their configs; connect, disconnect, import from or restore one " +
			"(the diff is shown first)",
		flags: func(fs *flag.FlagSet) {
			fs.Var(&servers, "server", "with connect: also give this server an entry of its own; "+
				"with import: import this entry only (repeatable)")
			dryRun = fs.Bool("dry-run", false, "show the change without making it")
			replace = fs.Bool("replace", false, "with connect: replace entries named switchboard or switchboard-<server> that Switchboard did not write; "+
				"with import: also replace the imported entries in the client's file by Switchboard's")
			force = fs.Bool("force", false, "with connect or disconnect: change the client's file even when it, or its folder, is read-only")
			revoke = fs.Bool("revoke", false, "with disconnect: also revoke the client's token, so that nothing holding it can call Switchboard")
			workspace = fs.String("workspace", "", "the folder whose .vscode/mcp.json is the client vscode-workspace")
			profile = fs.String("profile", "", "with connect: point the client at this profile of config.json (/mcp/p/PROFILE) "+
				"and bind its token to it, so that it reaches no other endpoint; without it, connect points the client at /mcp")
			maxTier = fs.String("max-tier", "", "with connect: cap the tools the client's token sees at this tier, read or write "+
				"(tools above it are not listed to it, and its calls of them are refused); without it, connect lifts its cap")
		},
		run: func(ctx context.Context, e *env, fs *flag.FlagSet) error {
			want := map[string]int{"connect": 2, "disconnect": 2, "import": 2, "backups": 2, "restore": 3}
			if len(e.args) > 0 {
				if n, ok := want[e.args[0]]; !ok {
					return usageError{fmt.Sprintf("unknown action %q: connect, disconnect, import, backups or restore", e.args[0])}
				} else if len(e.args) != n {
					return usageError{clientsUsage}
				}
			}
			// Before anything runs: `clients import cursor --profile p` or a
			// bare `clients --profile p` must not look like it bound anything.
			action := ""
			if len(e.args) > 0 {
				action = e.args[0]
			}
			if *revoke && action != "disconnect" {
				return usageError{"--revoke goes with disconnect"}
			}
			if *force && action != "connect" && action != "disconnect" {
				return usageError{"--force goes with connect or disconnect"}
			}
			if *profile != "" && action != "connect" {
				return usageError{"--profile goes with connect"}
			}
			if *maxTier != "" && action != "connect" {
				return usageError{"--max-tier goes with connect"}
			}
			if *maxTier != "" {
				if _, err := tiers.Parse(*maxTier); err != nil {
					return usageError{"--max-tier: " + err.Error()}
				}
			}
			ws := *workspace
			if ws != "" {
				abs, err := filepath.Abs(ws)
				if err != nil {
					return fmt.Errorf("workspace %q: %w", ws, err)
				}
				ws = abs
			}
			c, err := e.client()
			if err != nil {
				return err
			}
			if len(e.args) == 0 {
				return listClients(ctx, e.stdout, c, ws)
			}
			id := e.args[1]
			switch action {
			case "import":
				return importClient(ctx, e.stdout, c, id, ws, wire.ImportRequest{Servers: servers, Replace: *replace}, *dryRun)
			case "backups":
				return listBackups(ctx, e.stdout, c, id, ws)
			case "restore":
				return restoreClient(ctx, e.stdout, c, id, ws, e.args[2], *dryRun)
			}
			change := wire.ClientChange{Action: action, Servers: servers, Replace: *replace, Force: *force, Revoke: *revoke, Profile: *profile, MaxTier: *maxTier}
			return changeClient(ctx, e.stdout, c, id, ws, change, *dryRun)
		},
	}
}

// changeClient shows the plan of a connect or disconnect, then applies it
// (unless dryRun) and says what became of the client's token.
func changeClient(ctx context.Context, w io.Writer, c *client.Client, id, ws string, change wire.ClientChange, dryRun bool) error {
	plan, err := c.PlanClientIn(ctx, id, ws, change)
	if err != nil {
		return err
	}
	if plan.Offer {
		return offerClient(ctx, w, c, id, change, plan, dryRun)
	}
	for _, k := range plan.Kept {
		fmt.Fprintf(w, "%s: entry %q was not written by Switchboard; it is left as it is\n", id, k)
	}
	for _, n := range plan.Notes {
		fmt.Fprintf(w, "%s: note: %s\n", id, n)
	}
	if plan.Changed {
		fmt.Fprint(w, plan.Diff)
	}
	if len(plan.Conflicts) > 0 {
		var names []string
		for _, cf := range plan.Conflicts {
			names = append(names, fmt.Sprintf("%q (%s)", cf.Name, cf.Target))
		}
		if !change.Replace {
			return fmt.Errorf("%s already has %s, which Switchboard did not write; nothing was changed "+
				"(rename that entry, or pass --replace to replace it with Switchboard's)", plan.Path, strings.Join(names, " and "))
		}
		fmt.Fprintf(w, "%s: replacing %s, which Switchboard did not write (--replace)\n", id, strings.Join(names, " and "))
	}
	switch {
	case dryRun && plan.Changed:
		fmt.Fprintf(w, "(dry run: %s was not changed)\n", plan.Path)
		return nil
	case dryRun:
		fmt.Fprintf(w, "%s: nothing to change in %s\n", id, plan.Path)
		return nil
	case !plan.Changed && !change.Revoke && change.Action == "connect" && !plan.Rebind:
		fmt.Fprintf(w, "%s: nothing to change in %s\n", id, plan.Path)
		return nil
	}
	change.Hash = plan.Hash
	v, err := c.ApplyClientIn(ctx, id, ws, change)
	if err != nil {
		return err
	}
	state := "disconnected"
	switch {
	case v.Connected:
		state = "connected"
	case v.TokenRevoked:
		state = "not connected: its token is revoked"
	}
	switch {
	case !plan.Changed:
		fmt.Fprintf(w, "%s: nothing to change in %s\n", id, plan.Path)
	case plan.Remove:
		fmt.Fprintf(w, "%s: %s (removed %s, which Switchboard had created)\n", v.ID, state, plan.Path)
	default:
		fmt.Fprintf(w, "%s: %s (wrote %s)\n", v.ID, state, plan.Path)
	}
	if plan.Rebind && v.Profile != "" {
		fmt.Fprintf(w, "%s: its token is bound to profile %s: it reaches /mcp/p/%s only\n", id, v.Profile, v.Profile)
	} else if plan.Rebind {
		fmt.Fprintf(w, "%s: its token is no longer bound to a profile: it reaches /mcp\n", id)
	}
	if v.MaxTier != "" {
		fmt.Fprintf(w, "%s: its token sees %s tools only\n", id, v.MaxTier)
	}
	if v.Warning != "" {
		fmt.Fprintf(w, "%s: warning: %s\n", id, v.Warning)
	}
	if change.Action == "connect" && plan.Caveat != "" {
		fmt.Fprintf(w, "%s: but: %s\n", id, plan.Caveat)
	}
	switch {
	case v.Revoked > 0:
		fmt.Fprintf(w, "%s: revoked its token; connecting it again issues a new one\n", id)
	case v.TokenValid:
		fmt.Fprintf(w, "%s: its token is still valid: anything that holds it can still call Switchboard's servers; "+
			"revoke it with `switchboard tokens revoke %s` (or disconnect with --revoke)\n", id, v.TokenLabel)
	}
	return nil
}

// offerClient connects a client that keeps no file Switchboard may edit
// (Cherry Studio): it prints the entry and the install link, and opens
// the link for the app to ask the user. The client is then offered, not
// connected.
func offerClient(ctx context.Context, w io.Writer, c *client.Client, id string, change wire.ClientChange, plan wire.ClientPlan, dryRun bool) error {
	for _, n := range plan.Notes {
		fmt.Fprintf(w, "%s: note: %s\n", id, n)
	}
	if dryRun {
		fmt.Fprintf(w, "(dry run: no link was made or opened)\n")
		return nil
	}
	o, err := c.OfferClient(ctx, id, wire.ClientOfferRequest{Profile: change.Profile})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%s: the link installs this entry:\n%s\n", id, o.Entry)
	fmt.Fprintf(w, "%s: install link (it holds the client's token):\n%s\n", id, o.Link)
	scheme, _, _ := strings.Cut(o.Link, ":")
	if err := browser.OpenApp(ctx, o.Link, scheme); err != nil {
		fmt.Fprintf(w, "%s: could not open the link (%v): open it yourself, on this machine\n", id, err)
	} else {
		fmt.Fprintf(w, "%s: opened the link\n", id)
	}
	fmt.Fprintf(w, "%s: %s\n", id, o.Note)
	return nil
}

func listClients(ctx context.Context, w io.Writer, c *client.Client, workspace string) error {
	list, err := c.ClientsIn(ctx, workspace)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CLIENT\tNAME\tSTATUS\tSERVERS\tPROFILE\tTOOLS\tCONFIG")
	var warnings []string
	for _, v := range list {
		status := "not found"
		switch {
		case v.NeedsWorkspace:
			status = "give --workspace DIR"
		case v.Error != "":
			status = "unreadable: " + truncate(v.Error, 50)
		case v.Connected && v.Caveat != "":
			status = "connected (but see below)"
			warnings = append(warnings, v.ID+": "+v.Caveat)
		case v.Connected:
			status = "connected"
		case v.Offered:
			status = "offered, confirm in " + v.Name
		case v.Offer && v.Installed:
			status = "installed: connect offers a link"
		case v.TokenRevoked:
			status = "token revoked: reconnect"
		case v.Installed:
			status = "installed"
		}
		profile, tools := "-", "-"
		if v.Profile != "" {
			profile = v.Profile
		}
		if v.Tools != nil {
			tools = strconv.Itoa(*v.Tools)
			if v.ToolLimit > 0 {
				tools += "/" + strconv.Itoa(v.ToolLimit)
			}
		}
		if v.Warning != "" {
			tools += " (!)"
			warnings = append(warnings, v.ID+": "+v.Warning)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\n", v.ID, v.Name, status, len(v.Servers), profile, tools, v.Path)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, wn := range warnings {
		fmt.Fprintf(w, "warning: %s\n", wn)
	}
	return nil
}

// importClient shows what importing would do, then does it (unless
// dryRun): the servers first, then the client file's diff.
func importClient(ctx context.Context, w io.Writer, c *client.Client, id, workspace string, req wire.ImportRequest, dryRun bool) error {
	plan, err := c.PlanImport(ctx, id, workspace, req)
	if err != nil {
		return err
	}
	adds := 0
	for _, s := range plan.Servers {
		switch {
		case s.Action == wire.ImportExists:
			fmt.Fprintf(w, "= %s: Switchboard already has it as %q\n", s.Entry, s.Name)
		default:
			adds++
			line := fmt.Sprintf("+ %s: added as %q", s.Entry, s.Name)
			if s.Renamed {
				line += " (renamed: the name is taken or not a valid server name)"
			}
			if s.Server.URL != "" {
				line += fmt.Sprintf(" (remote, %s, %s)", cmp.Or(s.Server.Transport, "auto"), s.Server.URL)
			}
			if len(s.Server.SecretEnv) > 0 {
				line += "; secrets to the secret store: " + strings.Join(s.Server.SecretEnv, ", ")
			}
			if len(s.Server.SecretHeaders) > 0 {
				line += "; secret headers to the secret store: " + strings.Join(slices.Sorted(maps.Keys(s.Server.SecretHeaders)), ", ")
			}
			fmt.Fprintln(w, line)
		}
	}
	for _, s := range plan.Skipped {
		fmt.Fprintf(w, "  %s: left alone (%s)\n", s.Entry, s.Reason)
	}
	if len(plan.Servers) == 0 {
		fmt.Fprintf(w, "%s: no servers to import from %s\n", id, plan.Path)
	}
	if plan.Changed {
		fmt.Fprint(w, plan.Diff)
	}
	if dryRun {
		fmt.Fprintf(w, "(dry run: nothing was imported and %s was not changed)\n", plan.Path)
		return nil
	}
	if adds == 0 && !plan.Changed {
		fmt.Fprintf(w, "%s: nothing to change\n", id)
		return nil
	}
	req.Hash = plan.Hash
	res, err := c.ApplyImport(ctx, id, workspace, req)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%s: %d server(s) added to Switchboard, %d already there", id, adds, len(res.Servers)-adds)
	if plan.Changed {
		fmt.Fprintf(w, "; wrote %s", plan.Path)
	}
	fmt.Fprintln(w)
	return nil
}

func listBackups(ctx context.Context, w io.Writer, c *client.Client, id, workspace string) error {
	list, err := c.Backups(ctx, id, workspace)
	if err != nil {
		return err
	}
	if len(list) == 0 {
		fmt.Fprintf(w, "%s: no backups (Switchboard has not changed its file)\n", id)
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "BACKUP\tTIME\tSIZE\tOF")
	for _, b := range list {
		size := fmt.Sprintf("%d B", b.Size)
		if b.Absent {
			size = "(no file)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", b.Name, b.Time.Local().Format(time.DateTime), size, b.Path)
	}
	return tw.Flush()
}

func restoreClient(ctx context.Context, w io.Writer, c *client.Client, id, workspace, backup string, dryRun bool) error {
	req := wire.RestoreRequest{Backup: backup}
	plan, err := c.PlanRestore(ctx, id, workspace, req)
	if err != nil {
		return err
	}
	if !plan.Changed {
		fmt.Fprintf(w, "%s: %s is already as in %s\n", id, plan.Path, backup)
		return nil
	}
	fmt.Fprint(w, plan.Diff)
	if dryRun {
		fmt.Fprintf(w, "(dry run: %s was not changed)\n", plan.Path)
		return nil
	}
	req.Hash = plan.Hash
	if _, err := c.ApplyRestore(ctx, id, workspace, req); err != nil {
		return err
	}
	fmt.Fprintf(w, "%s: restored %s from %s\n", id, plan.Path, backup)
	return nil
}

func tokensVerb() verb {
	var asJSON *bool
	return verb{
		name:    "tokens",
		args:    " [revoke LABEL]",
		summary: "list the tokens that may call Switchboard (never their secrets), or revoke a client's",
		flags: func(fs *flag.FlagSet) {
			asJSON = fs.Bool("json", false, "print JSON instead of a table")
		},
		run: func(ctx context.Context, e *env, fs *flag.FlagSet) error {
			switch {
			case len(e.args) == 0:
			case e.args[0] != "revoke":
				return usageError{fmt.Sprintf("unknown action %q: expected tokens, or tokens revoke LABEL", e.args[0])}
			case len(e.args) != 2:
				return usageError{"expected: tokens revoke LABEL"}
			}
			c, err := e.client()
			if err != nil {
				return err
			}
			if len(e.args) == 2 {
				gone, err := c.RevokeTokens(ctx, e.args[1])
				if err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "revoked %d token(s) labelled %q; that client gets 401 until it is connected again\n",
					len(gone), e.args[1])
				return nil
			}
			list, err := c.Tokens(ctx)
			if err != nil {
				return err
			}
			if *asJSON {
				return writeJSON(e.stdout, list)
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "LABEL\tSCOPE\tPROFILE\tMAX TIER\tID\tCREATED\tLAST USED")
			for _, t := range list {
				used := "-"
				if t.LastUsed != nil {
					used = t.LastUsed.Local().Format(time.DateTime)
				}
				profile := "-"
				if t.Profile != "" {
					profile = t.Profile
				}
				maxTier := "-"
				if t.MaxTier != "" {
					maxTier = t.MaxTier
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.Label, t.Scope, profile, maxTier, t.ID, t.Created.Local().Format(time.DateTime), used)
			}
			return tw.Flush()
		},
	}
}
