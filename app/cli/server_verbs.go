package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/switchboardhq/switchboard/app/api/client"
	"github.com/switchboardhq/switchboard/app/api/wire"
)

func statusVerb() verb {
	return verb{
		name:    "status",
		noArgs:  true,
		summary: "show whether the daemon runs, where, and its servers at a glance",
		run: withClient(func(ctx context.Context, e *env, c *client.Client) error {
			st, err := c.Status(ctx)
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "Switchboard %s is running (pid %d) at %s since %s\n",
				st.Version, st.PID, c.BaseURL, st.Started.Local().Format(time.DateTime))
			fmt.Fprintf(e.stdout, "data:    %s\nconfig:  %s\n", st.Home, st.ConfigFile)
			if st.ConfigProblem != "" {
				fmt.Fprintf(e.stdout, "PROBLEM: %s\n         (the last good configuration stays in force until the file is fixed)\n", st.ConfigProblem)
			}
			fmt.Fprintf(e.stdout, "servers: %d configured, %d running\n", st.Servers, st.Running)
			if st.ConfigProblem != "" {
				return exitCodeError{code: exitConfigProblem, msg: "the config file has a problem (see PROBLEM above)"}
			}
			return nil
		}),
	}
}

func serversVerb() verb {
	var asJSON *bool
	return verb{
		name:    "servers",
		args:    " [NAME]",
		summary: "list the configured servers with their state and processes, or show one with its sandbox",
		flags: func(fs *flag.FlagSet) {
			asJSON = fs.Bool("json", false, "print JSON instead of a table")
		},
		run: withClient(func(ctx context.Context, e *env, c *client.Client) error {
			if len(e.args) > 1 {
				return usageError{"servers takes at most one server name"}
			}
			if len(e.args) == 1 {
				v, err := c.Server(ctx, e.args[0])
				if err != nil {
					return err
				}
				if *asJSON {
					return writeJSON(e.stdout, v)
				}
				printServer(e.stdout, v)
				return nil
			}
			list, err := c.Servers(ctx)
			if err != nil {
				return err
			}
			if *asJSON {
				return writeJSON(e.stdout, list)
			}
			if len(list) == 0 {
				fmt.Fprintln(e.stdout, "No servers configured. Add one under \"servers\" in config.json (see the README).")
				return nil
			}
			printServers(e.stdout, list)
			return nil
		}),
	}
}

// printServer shows one server: its state, processes and sandbox.
func printServer(w io.Writer, s wire.ServerView) {
	printServers(w, []wire.ServerView{s})
	fmt.Fprintln(w)
	sb := s.Sandbox
	switch {
	case !sb.Confined:
		fmt.Fprintf(w, "sandbox:  off (%s)\n", strings.TrimPrefix(sb.Reason, "not confined: "))
		return
	case sb.Enforced:
		fmt.Fprintf(w, "sandbox:  confined by %s\n", sb.Mechanism)
		for _, m := range sb.Missing {
			fmt.Fprintf(w, "          not enforced: %s\n", m)
		}
	default:
		fmt.Fprintf(w, "sandbox:  NOT IN FORCE: %s\n", sb.Reason)
	}
	network := "no (TCP connect and bind refused)"
	if sb.Network {
		network = "yes"
		if len(sb.DenyPorts) > 0 {
			network = fmt.Sprintf("yes, but not TCP port %v (Switchboard's)", sb.DenyPorts)
		}
	}
	fmt.Fprintf(w, "network:  %s\n", network)
	for _, l := range []struct {
		label string
		paths []string
	}{{"read:", sb.Read}, {"write:", sb.Write}} {
		for i, p := range l.paths {
			if i > 0 {
				l.label = ""
			}
			fmt.Fprintf(w, "%-9s %s\n", l.label, p)
		}
	}
}

func printServers(w io.Writer, list []wire.ServerView) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSTATE\tMODE\tPIDS\tCPU\tRSS\tRESTARTS\tLAST ERROR")
	for _, s := range list {
		var pids []string
		for _, p := range s.Processes {
			if p.Transport != "" { // a remote server's connection: no pid
				pids = append(pids, p.Transport)
				continue
			}
			pids = append(pids, fmt.Sprint(p.PID))
		}
		cpu, rss := "-", "-"
		if s.Usage != nil {
			cpu, rss = fmt.Sprintf("%.1f%%", s.Usage.CPUPercent), formatBytes(s.Usage.RSSBytes)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", s.Name, s.ShownState(), s.Mode,
			orDash(strings.Join(pids, ",")), cpu, rss, s.Restarts, orDash(truncate(s.LastError, 80)))
	}
	tw.Flush()
}

func actionVerb(name, summary string, act func(*client.Client, context.Context, string) (wire.ServerView, error)) verb {
	return verb{
		name:    name,
		args:    " NAME",
		summary: summary,
		run: withServer(func(ctx context.Context, e *env, c *client.Client, server string) error {
			v, err := act(c, ctx, server)
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "%s: %s\n", v.Name, v.ShownState())
			return nil
		}),
	}
}

func logsVerb() verb {
	var follow *bool
	var lines *int
	return verb{
		name:    "logs",
		args:    " NAME",
		summary: "print a server's recent stderr lines (and follow them with -f)",
		flags: func(fs *flag.FlagSet) {
			follow = fs.Bool("f", false, "keep printing new lines until Ctrl-C")
			lines = fs.Int("n", 100, "how many recent lines to print")
		},
		run: func(ctx context.Context, e *env, fs *flag.FlagSet) error {
			server, err := oneServer(e.args)
			if err != nil {
				return err
			}
			if *lines < 0 {
				return usageError{"-n must not be negative"}
			}
			c, err := e.client()
			if err != nil {
				return err
			}
			print := func(l wire.LogLine) {
				from := fmt.Sprint(l.PID)
				if l.PID == 0 && l.Stream != "" { // a remote server's connection
					from = l.Stream
				}
				fmt.Fprintf(e.stdout, "%s [%s] %s\n", l.Time.Local().Format("15:04:05.000"), from, l.Text)
			}
			if *follow {
				err := c.FollowLogs(ctx, server, *lines, print)
				if ctx.Err() != nil {
					return nil // Ctrl-C ends a follow; that is not an error
				}
				return err
			}
			list, err := c.Logs(ctx, server, *lines)
			if err != nil {
				return err
			}
			for _, l := range list {
				print(l)
			}
			return nil
		},
	}
}
