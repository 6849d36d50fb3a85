package cli

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/switchboardhq/switchboard/app/api/client"
	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/installable"
)

func catalogVerb() verb {
	var limit *int
	var asJSON *bool
	return verb{
		name:    "catalog",
		args:    " [QUERY | show NAME]",
		summary: "search the server catalog (curated and the MCP registry), or show one entry and its inputs",
		flags: func(fs *flag.FlagSet) {
			limit = fs.Int("n", 30, "how many results to show")
			asJSON = fs.Bool("json", false, "print JSON")
		},
		run: withClient(func(ctx context.Context, e *env, c *client.Client) error {
			if len(e.args) > 0 && e.args[0] == "show" {
				name, err := oneServer(e.args[1:])
				if err != nil {
					return usageError{"usage: switchboard catalog show NAME"}
				}
				entry, err := c.CatalogEntry(ctx, name)
				if err != nil {
					return err
				}
				if *asJSON {
					return writeJSON(e.stdout, entry)
				}
				printEntry(e.stdout, entry)
				return nil
			}
			res, err := c.SearchCatalog(ctx, strings.Join(e.args, " "), *limit)
			if err != nil {
				return err
			}
			if *asJSON {
				return writeJSON(e.stdout, res)
			}
			warn(e.stderr, res.Warning)
			if len(res.Entries) == 0 {
				fmt.Fprintln(e.stdout, "Nothing found. Try a shorter word, or `switchboard catalog` to list everything.")
				return nil
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tVERSION\tTYPE\tDESCRIPTION")
			for _, en := range res.Entries {
				typ := "-"
				if p, _, err := runnablePackage(en); err == nil {
					typ = p.RegistryType
				}
				switch en.Kind {
				case installable.KindRemote:
					typ = "remote"
				case installable.KindBoth:
					typ += "+remote"
				}
				name := en.ShortName
				if name == "" {
					name = en.Name
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", name, en.Version, typ, truncate(en.Description, 70))
			}
			tw.Flush()
			if res.More {
				fmt.Fprintf(e.stdout, "(more results: narrow the search or raise -n)\n")
			}
			return nil
		}),
	}
}

func warn(w io.Writer, msg string) {
	if msg != "" {
		fmt.Fprintf(w, "note: %s\n", msg)
	}
}

// runnablePackage is the package of en that installing it would use, with
// the exact version it pins, or why none can be: the catalog's own rules
// (app/installable), asked of the entry the API sent.
func runnablePackage(en wire.CatalogEntry) (wire.Package, string, error) {
	packages := make([]installable.Package, len(en.Packages))
	for i, p := range en.Packages {
		packages[i] = installable.Package{RegistryType: p.RegistryType, Identifier: p.Identifier, Version: p.Version,
			FileSHA256: p.FileSHA256, Transport: p.Transport.Type}
	}
	name := en.Name
	if name == "" {
		name = en.ShortName
	}
	i, err := installable.RunnablePackage(name, packages, ruleRemotes(en))
	if err != nil {
		return wire.Package{}, "", err
	}
	return en.Packages[i], installable.ExactVersion(packages[i]), nil
}

// ruleRemotes are en's remotes as the rules read them.
func ruleRemotes(en wire.CatalogEntry) []installable.Remote {
	remotes := make([]installable.Remote, len(en.Remotes))
	for i, r := range en.Remotes {
		remotes[i] = installable.Remote{Type: r.Type, URL: r.URL}
	}
	return remotes
}

// printEntry shows an entry with what installing it asks for.
func printEntry(w io.Writer, en wire.CatalogEntry) {
	title := en.Title
	if title == "" {
		title = en.Name
	}
	fmt.Fprintf(w, "%s %s\n%s\n", title, en.Version, en.Description)
	fmt.Fprintf(w, "name:    %s\n", en.Name)
	if en.ShortName != "" {
		fmt.Fprintf(w, "install: switchboard install %s\n", en.ShortName)
	}
	if en.LatestVersion != "" && en.LatestVersion != en.Version {
		fmt.Fprintf(w, "newer:   %s in the registry\n", en.LatestVersion)
	}
	if en.Kind == installable.KindRemote {
		printRemote(w, en, "")
		return
	}
	p, version, err := runnablePackage(en)
	if err != nil {
		fmt.Fprintf(w, "cannot be installed: %v\n", err)
		return
	}
	fmt.Fprintf(w, "package: %s %s@%s\n", p.RegistryType, p.Identifier, version)
	var inputs []input
	for _, kv := range p.EnvironmentVars {
		inputs = append(inputs, input{kv.Name, kv.Input})
	}
	for _, a := range append(append([]wire.Argument{}, p.RuntimeArguments...), p.PackageArguments...) {
		if a.Value != "" {
			continue // fixed
		}
		name := a.ValueHint
		if a.Type == "named" {
			name = a.Name
		}
		inputs = append(inputs, input{name, a.Input})
	}
	printInputs(w, inputs)
	if en.Kind == installable.KindBoth {
		printRemote(w, en, " (install it instead of the package with --remote)")
	}
}

// An input is one value an install asks for, by the name --set gives it.
type input struct {
	name string
	in   wire.Input
}

// printRemote shows the remote that installing en configures, and its
// inputs (URL variables, headers).
func printRemote(w io.Writer, en wire.CatalogEntry, how string) {
	i, err := installable.InstallableRemote(en.Name, ruleRemotes(en))
	if err != nil {
		fmt.Fprintf(w, "cannot be installed: %v\n", err)
		return
	}
	r := en.Remotes[i]
	fmt.Fprintf(w, "remote:  %s %s%s\n", r.Type, r.URL, how)
	var inputs []input
	for _, name := range slices.Sorted(maps.Keys(r.Variables)) {
		inputs = append(inputs, input{name, r.Variables[name]})
	}
	for _, h := range r.Headers {
		if h.Value == "" {
			inputs = append(inputs, input{h.Name, h.Input})
		}
	}
	printInputs(w, inputs)
}

func printInputs(w io.Writer, inputs []input) {
	if len(inputs) == 0 {
		fmt.Fprintln(w, "inputs:  none")
		return
	}
	fmt.Fprintln(w, "inputs (pass with --set NAME=VALUE, or --set-from-env NAME for secrets):")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, i := range inputs {
		var tags []string
		if i.in.IsRequired {
			tags = append(tags, "required")
		}
		if i.in.IsSecret {
			tags = append(tags, "secret")
		}
		if f := i.in.Format; f != "" && f != "string" {
			tags = append(tags, f)
		}
		if i.in.Default != "" {
			tags = append(tags, "default "+i.in.Default)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", i.name, strings.Join(tags, ", "), i.in.Description)
	}
	tw.Flush()
}

// keyValues is a repeatable NAME=VALUE flag.
type keyValues map[string]string

func (kv keyValues) String() string { return "" }
func (kv keyValues) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("expected NAME=VALUE, got %q", s)
	}
	kv[k] = v
	return nil
}

// fromEnv is a repeatable NAME flag whose value is read from the
// environment, so secrets stay out of the shell's history.
type fromEnv map[string]string

func (fe fromEnv) String() string { return "" }
func (fe fromEnv) Set(name string) error {
	v, ok := os.LookupEnv(name)
	if !ok {
		return fmt.Errorf("environment variable %s is not set", name)
	}
	fe[name] = v
	return nil
}

func installVerb() verb {
	var name, remoteURL, transport, clientID, clientSecretEnv, clientMetadataURL *string
	scopes := &stringList{}
	var verbose, remote *bool
	values, secretsFromEnv := keyValues{}, fromEnv{}
	headers, secretHeaders, secretHeadersFromEnv := keyValues{}, keyValues{}, headersFromEnv{}
	return verb{
		name:    "install",
		args:    " ENTRY | --url URL --name NAME",
		summary: "install a server from the catalog, verify it answers, and start it; or add a remote server by its URL",
		flags: func(fs *flag.FlagSet) {
			name = fs.String("name", "", "the server's name in Switchboard (default: the catalog's short name; required with --url)")
			fs.Var(values, "set", "an input, NAME=VALUE (repeatable)")
			fs.Var(secretsFromEnv, "set-from-env", "an input whose value is this environment variable's (repeatable)")
			verbose = fs.Bool("verbose", false, "print the package manager's output too")
			remote = fs.Bool("remote", false, "install the entry's remote (hosted) server instead of its package; an entry with only remotes installs its remote without it")
			remoteURL = fs.String("url", "", "add a remote server: its MCP endpoint (https://, or http:// to this machine)")
			fs.Var(headers, "header", "with --url: a header sent with every request, NAME=VALUE, kept in config.json (repeatable)")
			fs.Var(secretHeaders, "secret-header", "with --url: a header whose value goes to the secret store, NAME=VALUE (repeatable)")
			fs.Var(secretHeadersFromEnv, "secret-header-from-env",
				"with --url: a secret header whose value is an environment variable's, NAME=VARIABLE (repeatable; keeps it out of the shell's history)")
			transport = fs.String("transport", "", "with --url: auto (the default: streamable HTTP, falling back to SSE), streamable-http or sse")
			clientID = fs.String("client-id", "", "with --url: an OAuth client registered with the server's authorization server beforehand (default: dynamic registration)")
			clientSecretEnv = fs.String("client-secret-from-env", "", "with --client-id: the environment variable holding that client's secret, which goes to the secret store")
			fs.Var(scopes, "scope", "with --url: an OAuth scope to ask for at sign-in (repeatable)")
			clientMetadataURL = fs.String("client-metadata-url", "", "with --url: the https URL of a Client ID Metadata Document to sign in as, where the server supports them")
		},
		run: func(ctx context.Context, e *env, fs *flag.FlagSet) error {
			if *remoteURL != "" {
				if len(e.args) > 0 || len(values) > 0 || len(secretsFromEnv) > 0 || *remote {
					return usageError{"usage: switchboard install --url URL --name NAME [--header K=V] [--secret-header K=V] [--transport T]: " +
						"no catalog ENTRY, --set or --set-from-env with --url"}
				}
				if *name == "" {
					return usageError{"usage: switchboard install --url URL --name NAME: a remote server needs --name"}
				}
				all := keyValues{}
				maps.Copy(all, secretHeaders)
				maps.Copy(all, secretHeadersFromEnv)
				req := wire.AddRemoteRequest{Name: *name, URL: *remoteURL, Headers: headers, SecretHeaders: all, Transport: *transport}
				if *clientID != "" || *clientSecretEnv != "" || len(*scopes) > 0 || *clientMetadataURL != "" {
					o := &wire.AddRemoteOAuth{ClientID: *clientID, Scopes: *scopes, ClientMetadataURL: *clientMetadataURL}
					if *clientSecretEnv != "" {
						if *clientID == "" {
							return usageError{"--client-secret-from-env is the secret of a --client-id"}
						}
						v, ok := os.LookupEnv(*clientSecretEnv)
						if !ok || v == "" {
							return fmt.Errorf("environment variable %s (the OAuth client's secret) is not set", *clientSecretEnv)
						}
						o.ClientSecret = v
					}
					req.OAuth = o
				}
				return addRemote(ctx, e, req)
			}
			if len(headers) > 0 || len(secretHeaders) > 0 || len(secretHeadersFromEnv) > 0 || *transport != "" ||
				*clientID != "" || *clientSecretEnv != "" || len(*scopes) > 0 || *clientMetadataURL != "" {
				return usageError{"--header, --secret-header, --secret-header-from-env, --transport, --client-id, --client-secret-from-env, --scope and --client-metadata-url go with --url"}
			}
			entry, err := oneServer(e.args)
			if err != nil {
				return usageError{"usage: switchboard install ENTRY (see `switchboard catalog`), or switchboard install --url URL --name NAME"}
			}
			c, err := e.client()
			if err != nil {
				return err
			}
			all := keyValues{}
			for k, v := range values {
				all[k] = v
			}
			for k, v := range secretsFromEnv {
				all[k] = v
			}
			v, err := c.Install(ctx, wire.InstallRequest{Entry: entry, Server: *name, Values: all, Remote: *remote})
			if err != nil {
				return withInputHint(err)
			}
			return withInputHint(followInstall(ctx, e, c, v, "install", *verbose))
		},
	}
}

// headersFromEnv is a repeatable NAME=VARIABLE flag: the header NAME gets
// the environment variable's value.
type headersFromEnv map[string]string

func (he headersFromEnv) String() string { return "" }
func (he headersFromEnv) Set(s string) error {
	h, name, ok := strings.Cut(s, "=")
	if !ok || h == "" || name == "" {
		return fmt.Errorf("expected HEADER=VARIABLE, got %q", s)
	}
	v, ok := os.LookupEnv(name)
	if !ok {
		return fmt.Errorf("environment variable %s (for header %s) is not set", name, h)
	}
	he[h] = v
	return nil
}

// addRemote adds a remote server and says what was stored where; the
// secret values are never printed.
func addRemote(ctx context.Context, e *env, req wire.AddRemoteRequest) error {
	c, err := e.client()
	if err != nil {
		return err
	}
	v, err := c.AddRemote(ctx, req)
	if err != nil {
		return err
	}
	line := fmt.Sprintf("%s: added remote server %s (%s)", v.Name, v.Config.URL, cmp.Or(v.Config.Transport, "auto"))
	if len(req.SecretHeaders) > 0 {
		line += "; secret headers in the secret store: " + strings.Join(slices.Sorted(maps.Keys(req.SecretHeaders)), ", ")
	}
	if req.OAuth != nil && req.OAuth.ClientSecret != "" {
		line += "; the OAuth client's secret in the secret store"
	}
	fmt.Fprintln(e.stdout, line)
	return nil
}

func updateVerb() verb {
	var check, verbose *bool
	return verb{
		name:    "update",
		args:    " NAME",
		summary: "update an installed server to the catalog's newest version (the old one runs until the new one is verified)",
		flags: func(fs *flag.FlagSet) {
			check = fs.Bool("check", false, "only say whether a newer version exists")
			verbose = fs.Bool("verbose", false, "print the package manager's output too")
		},
		run: withServer(func(ctx context.Context, e *env, c *client.Client, server string) error {
			if *check {
				u, err := c.CheckUpdate(ctx, server)
				if err != nil {
					return err
				}
				warn(e.stderr, u.Warning)
				if u.Available {
					fmt.Fprintf(e.stdout, "%s: %s → %s available (switchboard update %s)\n", server, u.Installed, u.Latest, server)
				} else {
					fmt.Fprintf(e.stdout, "%s: %s is the newest\n", server, u.Installed)
				}
				return nil
			}
			v, err := c.Update(ctx, server)
			if err != nil {
				return err
			}
			return followInstall(ctx, e, c, v, "update", *verbose)
		}),
	}
}

func uninstallVerb() verb {
	var purge *bool
	return verb{
		name:    "uninstall",
		args:    " NAME",
		summary: "stop a server and remove it: its config entry, files and secrets (its data stays unless --purge)",
		flags: func(fs *flag.FlagSet) {
			purge = fs.Bool("purge", false, "also delete the server's data folder (servers/NAME/data: a memory graph, a database)")
		},
		run: withServer(func(ctx context.Context, e *env, c *client.Client, server string) error {
			res, err := c.UninstallServer(ctx, server, wire.UninstallRequest{Purge: *purge})
			if err != nil {
				return err
			}
			switch {
			case res.Data != "":
				fmt.Fprintf(e.stdout, "%s: uninstalled; its data stays in %s "+
					"(installing it again uses it; `switchboard uninstall --purge %s` deletes it)\n", server, res.Data, server)
			case res.Purged:
				fmt.Fprintf(e.stdout, "%s: uninstalled, and its data deleted\n", server)
			default:
				fmt.Fprintf(e.stdout, "%s: uninstalled\n", server)
			}
			return nil
		}),
	}
}

// installSettleWait bounds how long an install waits for the daemon to
// start the server it installed.
const installSettleWait = 30 * time.Second

// settled waits until the daemon's server name has left "starting" (or
// installSettleWait passed) and returns its view.
func settled(ctx context.Context, c *client.Client, name string) (wire.ServerView, error) {
	wait, cancel := context.WithTimeout(ctx, installSettleWait)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		sv, err := c.Server(ctx, name)
		if err != nil || sv.State != wire.StateStarting {
			return sv, err
		}
		select {
		case <-wait.Done():
			return sv, nil
		case <-tick.C:
		}
	}
}

// installPhases are the steps an install goes through, in order.
var installPhases = []string{"resolve", "download", "install", "verify"}

// remoteInstallPhases are the steps of a remote's install: no download.
var remoteInstallPhases = []string{"resolve", "configure", "verify"}

// followInstall prints an install's progress until it ends: its steps
// (resolve, download, install, verify) as a progress bar on a terminal, a
// line per step elsewhere; the package manager's lines only with verbose.
// Ctrl-C cancels the install (it rolls back).
func followInstall(ctx context.Context, e *env, c *client.Client, v wire.InstallView, what string, verbose bool) error {
	fmt.Fprintf(e.stdout, "%sing %s as %q (%s)\n", strings.TrimSuffix(what, "e"), v.Entry, v.Server, v.Version)
	terminal := isTerminal(e.stdout)
	phases := installPhases
	if v.Remote {
		phases = remoteInstallPhases
	}
	step := func(phase string) string {
		if i := slices.Index(phases, phase); i >= 0 {
			return fmt.Sprintf("[%d/%d] %s", i+1, len(phases), phase)
		}
		return phase
	}
	bar := func(ie wire.InstallEvent) {
		const width = 30
		n := ie.Percent * width / 100
		fmt.Fprintf(e.stdout, "\r\x1b[K[%s%s] %3d%% %s", strings.Repeat("=", n), strings.Repeat(" ", width-n), ie.Percent, step(ie.Phase))
	}
	lastPhase := ""
	final, err := c.FollowInstall(ctx, v, func(ie wire.InstallEvent) {
		if ie.Done {
			return
		}
		switch {
		case verbose && ie.Line != "":
			if terminal {
				fmt.Fprint(e.stdout, "\r\x1b[K")
			}
			fmt.Fprintf(e.stdout, "%-8s %s\n", ie.Phase, ie.Line)
			if terminal {
				bar(ie)
			}
		case terminal:
			bar(ie)
		case ie.Phase != lastPhase:
			fmt.Fprintln(e.stdout, step(ie.Phase)+"…")
		}
		lastPhase = ie.Phase
	})
	if terminal {
		fmt.Fprint(e.stdout, "\r\x1b[K")
	}
	if ctx.Err() != nil {
		// Ctrl-C: cancel on the daemon, which rolls back.
		cctx, cancel := context.WithTimeout(context.Background(), wire.DefaultActionTimeout)
		defer cancel()
		if _, err := c.CancelInstall(cctx, v.ID); err != nil {
			return fmt.Errorf("cancelling the %s: %w", what, err)
		}
		if _, err := c.FollowInstall(cctx, v, func(wire.InstallEvent) {}); err != nil {
			return fmt.Errorf("waiting for the cancelled %s to roll back: %w", what, err)
		}
		return fmt.Errorf("%s of %s cancelled; everything it made was removed", what, v.Server)
	}
	if err != nil {
		return err
	}
	if final.Error != "" {
		return errors.New(final.Error)
	}
	if final.Notice != "" {
		fmt.Fprintf(e.stdout, "%s is installed; %s\n", final.Server, final.Notice)
		return nil
	}
	// The install verified the server in a process of its own; the
	// daemon starts the server's own once config.json has it. Say what
	// the daemon says of it, not what the install hoped.
	sv, err := settled(ctx, c, final.Server)
	if err != nil {
		return err
	}
	running := "running"
	if final.Remote {
		running = "connected"
	}
	switch sv.State {
	case wire.StateRunning:
		fmt.Fprintf(e.stdout, "%s is installed and %s, with %d tools:\n", final.Server, running, len(final.Tools))
	case wire.StateStarting:
		fmt.Fprintf(e.stdout, "%s is installed (verified, %d tools) and still starting; `switchboard servers` shows when it is %s:\n",
			final.Server, len(final.Tools), running)
	case wire.StateBackoff, wire.StateFailing:
		return fmt.Errorf("%s is installed (verified, %d tools), but it does not start in the daemon now (%s): %s; see `switchboard logs %s`",
			final.Server, len(final.Tools), sv.State, orDash(sv.LastError), final.Server)
	default:
		fmt.Fprintf(e.stdout, "%s is installed (%s), with %d tools:\n", final.Server, sv.State, len(final.Tools))
	}
	names := make([]string, len(final.Tools))
	for i, t := range final.Tools {
		names[i] = t.Name
	}
	for _, line := range wrapList(names, 76, 4) {
		fmt.Fprintln(e.stdout, "  "+line)
	}
	return nil
}

// wrapList joins names with ", " into lines of at most width characters,
// at most most lines, the last saying how many did not fit.
func wrapList(names []string, width, most int) []string {
	var lines []string
	cur := ""
	for i, n := range names {
		item := n
		if i < len(names)-1 {
			item += ","
		}
		if cur != "" && len(cur)+1+len(item) > width {
			if len(lines) == most-1 {
				return append(lines, fmt.Sprintf("%s … and %d more", cur, len(names)-i))
			}
			lines, cur = append(lines, cur), ""
		}
		if cur != "" {
			cur += " "
		}
		cur += item
	}
	if cur != "" {
		lines = append(lines, cur)
	}
	return lines
}

// inputHint finds an install input left without a value in an error.
var inputHint = regexp.MustCompile(`input ([A-Za-z_][A-Za-z0-9_.-]*): required, but no value was given`)

// withInputHint adds to an install's "required, but no value was given"
// how to give that value on the command line.
func withInputHint(err error) error {
	if err == nil {
		return nil
	}
	m := inputHint.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	return fmt.Errorf("%w\ngive it with --set %s=VALUE, or, for a secret, export it and pass --set-from-env %s", err, m[1], m[1])
}
