// Package testmcp is a small, real stdio MCP server built from the project's
// own code, for tests that need a child process to supervise.
//
// A test binary re-executes itself as the server (the fork-and-exec trick):
//
//	func TestMain(m *testing.M) {
//		testmcp.RunIfRequested() // runs the server and exits when asked to
//		os.Exit(m.Run())
//	}
//
//	cmd := exec.Command(os.Args[0])
//	cmd.Env = append(os.Environ(), testmcp.Env(testmcp.Options{})...)
//
// The server speaks newline-delimited JSON-RPC on stdin/stdout (go-sdk
// [mcp.StdioTransport]), logs to stderr, and exits 0 when stdin reaches EOF.
// Its tools (echo, sleep, crash, hang, freeze, junk, spawn, pid, stderr, env,
// cwd) let a test provoke the situations a supervisor must handle: crashes,
// hangs, stopped processes, non-JSON output, grandchildren and so on.
package testmcp

import (
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// EnvRole is the environment variable that makes a test binary act as the test server:
// "server" runs the MCP server on stdin/stdout; "sleeper" is the grandchild spawned by the spawn tool (sleeps until killed).
const EnvRole = "SWITCHBOARD_TESTMCP"

// Roles (values of EnvRole).
const (
	roleServer  = "server"
	roleSleeper = "sleeper"
)

// Environment variables carrying Options (and the sleeper's settings) to the child.
const (
	envStartupJunk    = "SWITCHBOARD_TESTMCP_STARTUP_JUNK"
	envIgnoreTerm     = "SWITCHBOARD_TESTMCP_IGNORE_TERM"
	envIgnoreStdinEOF = "SWITCHBOARD_TESTMCP_IGNORE_STDIN_EOF"
	envStartDelay     = "SWITCHBOARD_TESTMCP_START_DELAY"
	envFailStart      = "SWITCHBOARD_TESTMCP_FAIL_START"
	envName           = "SWITCHBOARD_TESTMCP_NAME"
)

// envPrefix is the prefix shared by every variable this package reads.
const envPrefix = "SWITCHBOARD_TESTMCP"

// defaultName is the server name reported in initialize when Options.Name is empty.
const defaultName = "testmcp"

// startupJunkLines is how many non-JSON lines StartupJunk prints.
const startupJunkLines = 3

// failStartCode is the exit status used by Options.FailStart.
const failStartCode = 3

// Options configure the test server. They travel to the child process as
// SWITCHBOARD_TESTMCP_* environment variables; see Env.
type Options struct {
	// StartupJunk prints non-JSON lines ("this is not json (startup N)") to
	// stdout before serving (env SWITCHBOARD_TESTMCP_STARTUP_JUNK=1).
	StartupJunk bool
	// IgnoreSIGTERM ignores SIGTERM, forcing a supervisor to escalate to
	// SIGKILL (env SWITCHBOARD_TESTMCP_IGNORE_TERM=1).
	IgnoreSIGTERM bool
	// IgnoreStdinEOF keeps the process running after stdin closes, until it
	// is signalled (env SWITCHBOARD_TESTMCP_IGNORE_STDIN_EOF=1).
	IgnoreStdinEOF bool
	// StartDelay is slept before serving, for a slow-starting server
	// (env SWITCHBOARD_TESTMCP_START_DELAY, a time.ParseDuration string).
	StartDelay time.Duration
	// FailStart exits with status 3 at once, with a message on stderr, before
	// any protocol (env SWITCHBOARD_TESTMCP_FAIL_START=1).
	FailStart bool
	// Name is the server name reported in initialize; "testmcp" when empty
	// (env SWITCHBOARD_TESTMCP_NAME).
	Name string
}

// Env returns the environment entries ("K=V") that make a re-executed binary run the server, with opts.
//
// Every option variable is always present (empty when the option is off), so
// appending the result to os.Environ() overrides anything inherited.
func Env(opts Options) []string {
	delay := ""
	if opts.StartDelay > 0 {
		delay = opts.StartDelay.String()
	}
	return []string{
		EnvRole + "=" + roleServer,
		envStartupJunk + "=" + flag(opts.StartupJunk),
		envIgnoreTerm + "=" + flag(opts.IgnoreSIGTERM),
		envIgnoreStdinEOF + "=" + flag(opts.IgnoreStdinEOF),
		envStartDelay + "=" + delay,
		envFailStart + "=" + flag(opts.FailStart),
		envName + "=" + opts.Name,
	}
}

func flag(b bool) string {
	if b {
		return "1"
	}
	return ""
}

func envBool(name string) bool {
	v, err := strconv.ParseBool(os.Getenv(name))
	return err == nil && v
}

// optionsFromEnv is the inverse of Env.
func optionsFromEnv() (Options, error) {
	o := Options{
		StartupJunk:    envBool(envStartupJunk),
		IgnoreSIGTERM:  envBool(envIgnoreTerm),
		IgnoreStdinEOF: envBool(envIgnoreStdinEOF),
		FailStart:      envBool(envFailStart),
		Name:           os.Getenv(envName),
	}
	if s := os.Getenv(envStartDelay); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			return o, fmt.Errorf("%s: %v", envStartDelay, err)
		}
		o.StartDelay = d
	}
	if o.Name == "" {
		o.Name = defaultName
	}
	return o, nil
}

// RunIfRequested runs the role named by EnvRole and exits the process; it returns at once when EnvRole is unset.
// Call it first thing in TestMain (or main).
//
// An unknown role or a malformed option variable exits with status 2.
func RunIfRequested() {
	role := os.Getenv(EnvRole)
	switch role {
	case "":
		return
	case roleServer:
		opts, err := optionsFromEnv()
		if err != nil {
			fmt.Fprintf(os.Stderr, "testmcp: %v\n", err)
			os.Exit(2)
		}
		os.Exit(runServer(opts))
	case roleSleeper:
		os.Exit(runSleeper())
	default:
		fmt.Fprintf(os.Stderr, "testmcp: unknown %s role %q\n", EnvRole, role)
		os.Exit(2)
	}
}

// runSleeper is the grandchild started by the spawn tool: it reports its pid
// on stderr (the spawn tool waits for that line), then blocks until killed.
func runSleeper() int {
	if envBool(envIgnoreTerm) {
		signal.Ignore(syscall.SIGTERM)
	}
	fmt.Fprintf(os.Stderr, "testmcp: sleeper pid %d\n", os.Getpid())
	// Only SIGINT is waited for: SIGTERM keeps its default action (death),
	// unless ignored above.
	c := make(chan os.Signal, 1)
	signal.Notify(c, os.Interrupt)
	<-c
	return 0
}

// waitForSignal blocks until SIGINT, or SIGTERM unless ignoreTerm.
func waitForSignal(ignoreTerm bool) os.Signal {
	c := make(chan os.Signal, 1)
	if ignoreTerm {
		signal.Notify(c, os.Interrupt)
	} else {
		signal.Notify(c, os.Interrupt, syscall.SIGTERM)
	}
	return <-c
}

// childEnv returns os.Environ() without this package's variables, followed by extra.
func childEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == envPrefix || strings.HasPrefix(k, envPrefix+"_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, extra...)
}
