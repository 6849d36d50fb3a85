package cli

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/switchboardhq/switchboard/app/api/client"
)

func historyVerb() verb {
	var server, tool, caller, outcome, since, text *string
	var limit *int
	var asJSON, lifecycle *bool
	return verb{
		name:    "history",
		noArgs:  true,
		summary: "list recorded calls, newest first, with filters (--lifecycle: the servers' starts, exits, config changes, installs, tools held and approved)",
		flags: func(fs *flag.FlagSet) {
			server = fs.String("server", "", "only calls to this server")
			tool = fs.String("tool", "", "only calls of this tool, prompt or resource: as its server names it (echo, through every endpoint) or as the client called it (alpha__echo)")
			caller = fs.String("client", "", "only calls from this client (token label or client name)")
			outcome = fs.String("outcome", "", "ok, tool_error, protocol_error, timeout, cancelled, server_unavailable, interrupted, or error (all but ok)")
			since = fs.String("since", "", "only calls since this time: RFC 3339 or a duration back from now (1h)")
			text = fs.String("q", "", "free text to find in arguments and errors")
			limit = fs.Int("n", 50, "how many calls (at most 1000)")
			asJSON = fs.Bool("json", false, "print JSON instead of a table")
			lifecycle = fs.Bool("lifecycle", false, "list the servers' lifecycle events instead of calls (with --server, --since and -n)")
		},
		run: withClient(func(ctx context.Context, e *env, c *client.Client) error {
			if *lifecycle {
				if *tool != "" || *caller != "" || *outcome != "" || *text != "" {
					return usageError{"--lifecycle takes --server, --since and -n only"}
				}
				return lifecycleEvents(ctx, e, c, *server, *since, *limit, *asJSON)
			}
			q := url.Values{}
			for k, v := range map[string]string{"server": *server, "tool": *tool, "client": *caller,
				"outcome": *outcome, "since": *since, "q": *text, "limit": strconv.Itoa(*limit)} {
				if v != "" {
					q.Set(k, v)
				}
			}
			page, err := c.History(ctx, q)
			if err != nil {
				return err
			}
			if *asJSON {
				return writeJSON(e.stdout, page.Calls)
			}
			if len(page.Calls) == 0 {
				fmt.Fprintln(e.stdout, "No calls recorded that match.")
				return nil
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "TIME\tCLIENT\tSERVER\tMETHOD\tTOOL\tOUTCOME\tDURATION\tERROR")
			now := time.Now()
			for _, call := range page.Calls {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", moment(call.Start, now), orDash(call.Client()),
					orDash(call.ServerShown()), call.Method, orDash(call.ToolShown()), call.Outcome, call.Duration.Round(time.Microsecond),
					orDash(truncate(call.Error, 60)))
			}
			return tw.Flush()
		}),
	}
}

// lifecycleEvents prints the servers' lifecycle events, newest first.
func lifecycleEvents(ctx context.Context, e *env, c *client.Client, server, since string, limit int, asJSON bool) error {
	q := url.Values{"limit": {strconv.Itoa(limit)}}
	if server != "" {
		q.Set("server", server)
	}
	if since != "" {
		q.Set("since", since)
	}
	list, err := c.Lifecycle(ctx, q)
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(e.stdout, list)
	}
	if len(list) == 0 {
		fmt.Fprintln(e.stdout, "No lifecycle events recorded that match.")
		return nil
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tSERVER\tEVENT\tPID\tDETAIL")
	for _, ev := range list {
		pid := "-"
		if ev.PID != 0 {
			pid = strconv.Itoa(ev.PID)
		}
		detail := ev.Message
		if ev.Exit != "" {
			detail = strings.TrimSpace("exit " + ev.Exit + " " + detail)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", moment(ev.Time, time.Now()), orDash(ev.Server), ev.Kind, pid,
			orDash(truncate(detail, 80)))
	}
	return tw.Flush()
}

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string { return strings.Join(*s, ",") }

func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }
