package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/switchboardhq/switchboard/app/api"
	"github.com/switchboardhq/switchboard/app/daemon"
	"github.com/switchboardhq/switchboard/app/gateway"
	"github.com/switchboardhq/switchboard/app/tokens"
	"github.com/switchboardhq/switchboard/frontend"
	"github.com/switchboardhq/switchboard/supervisor"
)

func serveVerb() verb {
	var listen, logLevel, registry *string
	var readTimeout *time.Duration
	var maxConns *int
	return verb{
		name:    "serve",
		noArgs:  true,
		summary: "run the daemon in the foreground (until Ctrl-C)",
		flags: func(fs *flag.FlagSet) {
			listen = fs.String("listen", "", `loopback address to listen on (default: "listen" in config.json, 127.0.0.1:7391)`)
			logLevel = fs.String("log-level", "info", "debug, info, warn or error")
			readTimeout = fs.Duration("read-timeout", daemon.DefaultReadTimeout,
				"close a connection that has not sent a whole request (headers and body) within this time")
			maxConns = fs.Int("max-conns", daemon.DefaultMaxConns, "connections open at once; more wait until one closes")
			registry = fs.String("registry", "", "URL of the MCP registry the catalog reads (default: $"+daemon.RegistryEnv+", else the official one)")
		},
		run: func(ctx context.Context, e *env, fs *flag.FlagSet) error {
			logger, err := newLogger(e.stderr, *logLevel)
			if err != nil {
				return err
			}
			exe, err := os.Executable()
			if err != nil {
				return fmt.Errorf("finding this program for the reaper: %w", err)
			}
			return daemon.Run(ctx, daemon.Options{
				Home: e.home, Listen: *listen, RegistryURL: *registry, Version: e.version, Logger: logger, Reaper: []string{exe}, Binary: exe,
				Dashboard: builtDashboard(), AutostartCommand: loginCommand(exe),
				HTTP: daemon.HTTPLimits{ReadTimeout: *readTimeout, MaxConns: *maxConns},
				Ready: func(info daemon.Info) {
					fmt.Fprintf(e.stdout, "Switchboard %s is running (pid %d)\n", e.version, info.PID)
					fmt.Fprintf(e.stdout, "  MCP:     %s/mcp (every server), %s/mcp/<server> (one)\n", info.Address, info.Address)
					fmt.Fprintf(e.stdout, "  API:     %s\n", info.APIURL())
					fmt.Fprintf(e.stdout, "  UI:      %s/ (sign in with `switchboard open`)\n", info.Address)
					fmt.Fprintf(e.stdout, "  data:    %s\n", info.Home)
					fmt.Fprintf(e.stdout, "Press Ctrl-C to stop every server and quit.\n")
				},
			})
		},
	}
}

// loginCommand is what starts Switchboard at login, for the daemon run by
// exe: the tray program beside it if there is one (the app as users know
// it), else this program's daemon.
func loginCommand(exe string) []string {
	tray := filepath.Join(filepath.Dir(exe), "switchboard-tray")
	if runtime.GOOS == "windows" {
		tray += ".exe"
	}
	if st, err := os.Stat(tray); err == nil && !st.IsDir() {
		return []string{tray}
	}
	return []string{exe, "serve"}
}

// builtDashboard is the dashboard embedded in this binary, or nil when it
// was built without running the frontend build.
func builtDashboard() fs.FS {
	if assets, ok := frontend.Assets(); ok {
		return assets
	}
	return nil
}

func statusVerb() verb {
	return verb{
		name:    "status",
		noArgs:  true,
		summary: "show whether the daemon runs, where, and its servers at a glance",
		run: func(ctx context.Context, e *env, fs *flag.FlagSet) error {
			c, err := e.client()
			if err != nil {
				return err
			}
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
		},
	}
}

func serversVerb() verb {
	var asJSON *bool
	return verb{
		name:    "servers",
		noArgs:  true,
		summary: "list the configured servers with their state and processes",
		flags: func(fs *flag.FlagSet) {
			asJSON = fs.Bool("json", false, "print JSON instead of a table")
		},
		run: func(ctx context.Context, e *env, fs *flag.FlagSet) error {
			c, err := e.client()
			if err != nil {
				return err
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
		},
	}
}

func printServers(w io.Writer, list []api.ServerView) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSTATE\tMODE\tPIDS\tCPU\tRSS\tRESTARTS\tLAST ERROR")
	for _, s := range list {
		var pids []string
		for _, p := range s.Processes {
			pids = append(pids, fmt.Sprint(p.PID))
		}
		cpu, rss := "-", "-"
		if s.Usage != nil {
			cpu, rss = fmt.Sprintf("%.1f%%", s.Usage.CPUPercent), formatBytes(s.Usage.RSSBytes)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", s.Name, s.State, s.Mode,
			orDash(strings.Join(pids, ",")), cpu, rss, s.Restarts, orDash(truncate(s.LastError, 80)))
	}
	tw.Flush()
}

func actionVerb(name, summary string, act func(*api.Client, context.Context, string) (api.ServerView, error)) verb {
	return verb{
		name:    name,
		args:    " NAME",
		summary: summary,
		run: func(ctx context.Context, e *env, fs *flag.FlagSet) error {
			server, err := oneServer(e.args)
			if err != nil {
				return err
			}
			c, err := e.client()
			if err != nil {
				return err
			}
			v, err := act(c, ctx, server)
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "%s: %s\n", v.Name, v.State)
			return nil
		},
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
			print := func(l supervisor.LogLine) {
				fmt.Fprintf(e.stdout, "%s [%d] %s\n", l.Time.Local().Format("15:04:05.000"), l.PID, l.Text)
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

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func formatBytes(n uint64) string {
	const mib = 1 << 20
	if n >= 1<<30 {
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/mib)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "…"
}

func connectVerb() verb {
	var client, logLevel *string
	return verb{
		name:    "connect",
		args:    " [SERVER]",
		summary: "bridge stdin/stdout to the daemon's MCP endpoint, for clients that launch a command (starts the daemon if needed)",
		flags: func(fs *flag.FlagSet) {
			client = fs.String("client", "bridge", "name of the client, as history shows it; its token is issued on first use")
			logLevel = fs.String("log-level", "warn", "debug, info, warn or error (logs go to stderr)")
		},
		run: func(ctx context.Context, e *env, fs *flag.FlagSet) error {
			if len(e.args) > 1 {
				return usageError{fmt.Sprintf("expected at most one server name, got %d arguments", len(e.args))}
			}
			path := "/mcp"
			if len(e.args) == 1 {
				path += "/" + e.args[0]
			}
			logger, err := newLogger(e.stderr, *logLevel)
			if err != nil {
				return err
			}
			exe, err := os.Executable()
			if err != nil {
				return fmt.Errorf("finding this program to start the daemon: %w", err)
			}
			token := os.Getenv(tokenEnv)
			locate := func(ctx context.Context) (string, string, func() bool, error) {
				info, err := daemon.Ensure(ctx, e.home, exe)
				if err != nil {
					return "", "", nil, err
				}
				if token == "" {
					store, err := tokens.Open(filepath.Join(e.home, daemon.TokensFile))
					if err != nil {
						return "", "", nil, err
					}
					tok, err := store.EnsureClient(*client)
					if errors.Is(err, tokens.ErrAdminLabel) {
						// No retry gives this label a token: the bridge says so.
						return "", "", nil, fmt.Errorf("%w: --client: %w", gateway.ErrRefused, err)
					}
					if err != nil {
						return "", "", nil, err
					}
					token = tok.Secret
				}
				return info.Address + path, token, info.Alive, nil
			}
			return gateway.RunBridge(ctx, gateway.BridgeOptions{Locate: locate, In: os.Stdin, Out: os.Stdout,
				Logger: logger, Version: e.version})
		},
	}
}

// tokenEnv gives the bridge a token instead of reading the token file, as
// client configs written by Switchboard do.
const tokenEnv = "SWITCHBOARD_TOKEN"

func historyVerb() verb {
	var server, tool, client, outcome, since, text *string
	var limit *int
	var asJSON *bool
	return verb{
		name:    "history",
		noArgs:  true,
		summary: "list recorded calls, newest first, with filters",
		flags: func(fs *flag.FlagSet) {
			server = fs.String("server", "", "only calls to this server")
			tool = fs.String("tool", "", "only calls of this tool, prompt or resource")
			client = fs.String("client", "", "only calls from this client (token label or client name)")
			outcome = fs.String("outcome", "", "ok, tool_error, protocol_error, timeout, cancelled, server_unavailable, interrupted, or error (all but ok)")
			since = fs.String("since", "", "only calls since this time: RFC 3339 or a duration back from now (1h)")
			text = fs.String("q", "", "free text to find in arguments and errors")
			limit = fs.Int("n", 50, "how many calls (at most 1000)")
			asJSON = fs.Bool("json", false, "print JSON instead of a table")
		},
		run: func(ctx context.Context, e *env, fs *flag.FlagSet) error {
			c, err := e.client()
			if err != nil {
				return err
			}
			q := url.Values{}
			for k, v := range map[string]string{"server": *server, "tool": *tool, "client": *client,
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
			fmt.Fprintln(tw, "TIME\tCLIENT\tSERVER\tMETHOD\tNAME\tOUTCOME\tDURATION\tERROR")
			for _, call := range page.Calls {
				who := call.ClientName
				if who == "" {
					who = call.ClientLabel
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", call.Start.Local().Format(time.DateTime), orDash(who),
					orDash(call.Server), call.Method, orDash(call.Name), call.Outcome, call.Duration.Round(time.Microsecond),
					orDash(truncate(call.Error, 60)))
			}
			return tw.Flush()
		},
	}
}

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }
