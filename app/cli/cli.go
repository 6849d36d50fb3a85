// Package cli is the command line of switchboard: it parses the command
// line, builds what a verb needs, and hands over. Each verb but serve (and
// the tray, which runs the daemon in-process) is a thin client of the
// daemon's local API.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/switchboardhq/switchboard/app/api/client"
	"github.com/switchboardhq/switchboard/app/daemon"
	"github.com/switchboardhq/switchboard/app/tokens"
)

// Exit codes of Run.
const (
	ExitOK    = 0
	ExitError = 1
	ExitUsage = 2
	// ExitConfigProblem: `status` found the daemon running but config.json
	// has a problem (the last good configuration stays in force).
	ExitConfigProblem = 3
)

// The verbs' own names for the exit codes.
const (
	exitOK            = ExitOK
	exitError         = ExitError
	exitUsage         = ExitUsage
	exitConfigProblem = ExitConfigProblem
)

// Run runs the command line args (without the program name) of switchboard
// at version, and returns the exit code.
func Run(version string, args []string, stdout, stderr io.Writer) int {
	return run(version, args, stdout, stderr)
}

// exitCodeError ends a verb with a given exit code after it has said what
// it had to say.
type exitCodeError struct {
	code int
	msg  string
}

func (e exitCodeError) Error() string { return e.msg }

// usageError is a mistake on the command line: it exits with exitUsage.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// env is what every verb gets: where to write, which data directory, its
// arguments (what is left after its flags), and the program's version.
type env struct {
	stdout, stderr io.Writer
	home           string
	args           []string
	version        string
}

// A verb is one subcommand.
type verb struct {
	name    string
	args    string // argument synopsis for usage
	noArgs  bool   // takes no arguments: any is a usage error, before run
	summary string
	flags   func(fs *flag.FlagSet) // declares the verb's own flags
	run     func(ctx context.Context, e *env, fs *flag.FlagSet) error
}

func verbs() []verb {
	return []verb{
		serveVerb(),
		statusVerb(),
		quitVerb(),
		serversVerb(),
		actionVerb("start", "start a server and wait until it is ready", (*client.Client).Start),
		actionVerb("stop", "stop a server's processes and keep it down", (*client.Client).Stop),
		actionVerb("restart", "stop a server's processes and start it again", (*client.Client).Restart),
		logsVerb(),
		topVerb(),
		historyVerb(),
		catalogVerb(),
		installVerb(),
		updateVerb(),
		uninstallVerb(),
		toolsVerb(),
		openVerb(),
		clientsVerb(),
		tokensVerb(),
		profilesVerb(),
		asksVerb(),
		authVerb(),
		connectVerb(),
		windowVerb(),
		trayVerb(),
		{name: "version", summary: "print the version", run: func(_ context.Context, e *env, _ *flag.FlagSet) error {
			fmt.Fprintf(e.stdout, "switchboard %s\n", e.version)
			return nil
		}},
	}
}

// run parses args and runs the verb; it returns the exit code.
func run(version string, args []string, stdout, stderr io.Writer) int {
	all := verbs()
	args = withDefaultVerb(args)
	global := flag.NewFlagSet("switchboard", flag.ContinueOnError)
	global.SetOutput(io.Discard)
	homeFlag := global.String("home", "", "data directory (default $"+daemon.HomeEnv+" or the per-user directory)")
	help := global.Bool("help", false, "show help")
	global.BoolVar(help, "h", false, "show help")
	if err := global.Parse(args); err != nil {
		fmt.Fprintf(stderr, "switchboard: %v\n\n", err)
		printUsage(stderr, all)
		return exitUsage
	}
	rest := global.Args()
	if *help || len(rest) == 0 {
		printUsage(stdout, all)
		if len(rest) == 0 && !*help {
			return exitUsage
		}
		return exitOK
	}
	name, rest := rest[0], rest[1:]
	if name == "help" {
		if len(rest) == 0 {
			printUsage(stdout, all)
			return exitOK
		}
		name, rest = rest[0], []string{"--help"}
	}
	var v *verb
	for i := range all {
		if all[i].name == name {
			v = &all[i]
		}
	}
	if v == nil {
		fmt.Fprintf(stderr, "switchboard: unknown command %q\nRun 'switchboard help' for the list of commands.\n", name)
		return exitUsage
	}

	fs := flag.NewFlagSet("switchboard "+v.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	verbHome := fs.String("home", "", "data directory")
	if v.flags != nil {
		v.flags(fs)
	}
	positional, err := parseInterspersed(fs, rest)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printVerbUsage(stdout, v, fs)
			return exitOK
		}
		fmt.Fprintf(stderr, "switchboard %s: %v\n", v.name, err)
		printVerbUsage(stderr, v, fs)
		return exitUsage
	}
	var dir string
	home := *homeFlag
	if *verbHome != "" {
		home = *verbHome
	}
	dir, err = daemon.ResolveHome(home)
	if err != nil {
		fmt.Fprintf(stderr, "switchboard: %v\n", err)
		return exitError
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	e := &env{stdout: stdout, stderr: stderr, home: dir, args: positional, version: version}
	err = nil
	if v.noArgs {
		err = noArgs(positional)
	}
	if err == nil {
		err = v.run(ctx, e, fs)
	}
	if err != nil {
		fmt.Fprintf(stderr, "switchboard %s: %v\n", v.name, err)
		if _, ok := errors.AsType[usageError](err); ok {
			return exitUsage
		}
		if ce, ok := errors.AsType[exitCodeError](err); ok {
			return ce.code
		}
		return exitError
	}
	return exitOK
}

func printUsage(w io.Writer, all []verb) {
	fmt.Fprintln(w, `Switchboard runs your local MCP servers once, for every MCP client.

Usage: switchboard [--home DIR] <command> [flags] [args]

Commands:`)
	for _, v := range all {
		fmt.Fprintf(w, "  %-9s %s\n", v.name, v.summary)
	}
	fmt.Fprintf(w, `  %-9s show help for a command

The data directory is --home, else $%s, else the per-user default.
Run 'switchboard help <command>' for a command's flags.
`, "help", daemon.HomeEnv)
}

func printVerbUsage(w io.Writer, v *verb, fs *flag.FlagSet) {
	fmt.Fprintf(w, "Usage: switchboard %s [flags]%s\n\n%s.\n\nFlags:\n", v.name, v.args, capitalize(v.summary))
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// client connects to the daemon running for e.home.
func (e *env) client() (*client.Client, error) {
	info, err := daemon.ReadInfo(e.home)
	if err != nil {
		return nil, err
	}
	store, err := tokens.Open(filepath.Join(e.home, daemon.TokensFile))
	if err != nil {
		return nil, err
	}
	tok, err := store.Ensure("cli")
	if err != nil {
		return nil, err
	}
	return &client.Client{BaseURL: info.Address, Token: tok.Secret}, nil
}

// parseInterspersed parses fs's flags wherever they stand among the
// arguments ("clients connect cursor --dry-run"), and returns the others.
// After "--" everything is an argument.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(positional, rest...), nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

// oneServer reads the single NAME argument of a verb.
// loggerAndSelf is what a verb that runs part of switchboard in this
// process needs: a logger to stderr at level, and the path of this program,
// which it starts again (the reaper, the daemon, the window); why ends the
// message of a failure to find it ("finding this program" why).
func loggerAndSelf(e *env, level, why string) (*slog.Logger, string, error) {
	logger, err := newLogger(e.stderr, level)
	if err != nil {
		return nil, "", err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, "", fmt.Errorf("finding this program%s: %w", why, err)
	}
	return logger, exe, nil
}

// withClient is the run of a verb whose work is calls to the daemon: run
// gets the client of the daemon of e.home.
func withClient(run func(ctx context.Context, e *env, c *client.Client) error) func(context.Context, *env, *flag.FlagSet) error {
	return func(ctx context.Context, e *env, _ *flag.FlagSet) error {
		c, err := e.client()
		if err != nil {
			return err
		}
		return run(ctx, e, c)
	}
}

// withServer is withClient for a verb about one server, named by its one
// argument, which is checked first.
func withServer(run func(ctx context.Context, e *env, c *client.Client, server string) error) func(context.Context, *env, *flag.FlagSet) error {
	return func(ctx context.Context, e *env, fs *flag.FlagSet) error {
		server, err := oneServer(e.args)
		if err != nil {
			return err
		}
		return withClient(func(ctx context.Context, e *env, c *client.Client) error {
			return run(ctx, e, c, server)
		})(ctx, e, fs)
	}
}

func oneServer(args []string) (string, error) {
	switch len(args) {
	case 1:
		return args[0], nil
	case 0:
		return "", usageError{"missing server name"}
	default:
		return "", usageError{fmt.Sprintf("expected one server name, got %d arguments", len(args))}
	}
}

func noArgs(args []string) error {
	if len(args) > 0 {
		return usageError{fmt.Sprintf("unexpected argument %q", args[0])}
	}
	return nil
}

func newLogger(w io.Writer, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, usageError{fmt.Sprintf("invalid log level %q (debug, info, warn, error)", level)}
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l})), nil
}
