package cli

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/switchboardhq/switchboard/app/api/wire"
)

// asksVerb is `switchboard asks`: the calls of destructive tools waiting
// for the user's yes, answering them, and the settings that make calls
// wait (per server, per profile, and the timeout).
func asksVerb() verb {
	var asJSON *bool
	var profile *string
	return verb{
		name: "asks",
		args: "[on|off SERVER | on|off --profile NAME | timeout DURATION | allow|deny ID]",
		summary: "list the calls of destructive tools waiting for your yes, allow or deny one, " +
			"turn asking before destructive calls on or off for a server or a profile, or set how long a call waits",
		flags: func(fs *flag.FlagSet) {
			asJSON = fs.Bool("json", false, "print JSON instead of a table")
			profile = fs.String("profile", "", "with on|off: the profile to change instead of a server")
		},
		run: func(ctx context.Context, e *env, fs *flag.FlagSet) error {
			c, err := e.client()
			if err != nil {
				return err
			}
			args := e.args
			if len(args) == 0 {
				list, err := c.Asks(ctx)
				if err != nil {
					return err
				}
				if *asJSON {
					return writeJSON(e.stdout, list)
				}
				return printAsks(e, list)
			}
			switch verb := args[0]; verb {
			case "on", "off":
				on := verb == "on"
				switch {
				case *profile != "" && len(args) == 1:
					if _, err := c.SetProfileAsks(ctx, *profile, on); err != nil {
						return err
					}
					fmt.Fprintf(e.stdout, "profile %s: asking before destructive calls is %s\n", *profile, verb)
					return nil
				case *profile == "" && len(args) == 2:
					if _, err := c.SetServerAsks(ctx, args[1], on); err != nil {
						return err
					}
					fmt.Fprintf(e.stdout, "server %s: asking before destructive calls is %s\n", args[1], verb)
					return nil
				}
				return usageError{"expected: asks on|off SERVER, or asks on|off --profile NAME"}
			case "timeout":
				if len(args) != 2 {
					return usageError{"expected: asks timeout DURATION (1s to 1h, e.g. 2m; 0 for the default)"}
				}
				d, err := time.ParseDuration(args[1])
				if err != nil || d < 0 {
					return usageError{fmt.Sprintf("invalid timeout %q: a duration from 1s to 1h, e.g. 2m (0 for the default, 2m)", args[1])}
				}
				// The daemon checks the bounds (config.json's rule).
				st, err := c.UpdateSettings(ctx, wire.Settings{AskTimeout: &wire.Duration{Duration: d}})
				if err != nil {
					return err
				}
				if st.AskTimeout != nil {
					d = st.AskTimeout.Duration
				}
				fmt.Fprintf(e.stdout, "a call that waits for your yes is denied after %s\n", d)
				return nil
			case "allow", "deny":
				if len(args) != 2 {
					return usageError{"expected: asks " + verb + " ID (see switchboard asks)"}
				}
				d, err := c.AnswerAsk(ctx, args[1], verb == "allow")
				if err != nil {
					return err
				}
				word := "denied"
				if d.Allowed {
					word = "allowed"
				}
				fmt.Fprintf(e.stdout, "%s %s\n", word, d.ID)
				return nil
			}
			return usageError{fmt.Sprintf("unknown asks command %q: expected on, off, timeout, allow or deny", args[0])}
		},
	}
}

func printAsks(e *env, list []wire.Ask) error {
	if len(list) == 0 {
		fmt.Fprintln(e.stdout, "no call is waiting for your yes")
		return nil
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSERVER\tTOOL\tCLIENT\tLEFT\tARGUMENTS")
	now := time.Now()
	for _, a := range list {
		left := "-"
		if !a.Deadline.IsZero() {
			left = max(a.Deadline.Sub(now), 0).Round(time.Second).String()
		}
		client := a.Client
		if client == "" {
			client = "-"
		}
		args := strings.TrimSpace(string(a.Arguments))
		if len(args) > 80 {
			args = args[:77] + "..."
		}
		if args == "" {
			args = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", a.ID, a.Server, a.Tool, client, left, args)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, "answer with: switchboard asks allow ID, or switchboard asks deny ID")
	return nil
}
