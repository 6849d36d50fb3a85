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
// Its tools (echo, sleep, crash, hang, freeze, junk, print, truncated,
// spawn, pid, stderr, env, cwd) let a test provoke the situations a
// supervisor must handle: crashes, hangs, stopped processes, non-JSON output
// (print writes any text to stdout: JSON that is not JSON-RPC, console.log
// output, a truncated message), a response cut short (truncated),
// grandchildren and so on; Options add a banner before initialize and a
// refused initialize.
//
// # Other MCP features
//
// For a gateway in front of it, the server also exercises every other MCP
// feature:
//
//   - Instructions: "Test server <name>: echo, sleep, crash, ..." (one line).
//   - Prompts: greet (argument name, required) returns one user message
//     "Hello, <name>!"; summarize (text required, style optional) returns one
//     user message "Summarize the following text:\n\n<text>", or "... text in
//     a <style> style:\n\n<text>". A missing required argument is an
//     invalid-params error.
//   - Resources: test://static/hello (text/plain, "hello from <name>") and
//     test://static/data.json (application/json,
//     {"server":"<name>","items":["1","2","10"]}); the template
//     test://items/{id} (text/plain) reads as "item <id>".
//   - Subscriptions: resources/subscribe and unsubscribe are recorded; the
//     tool touch {uri} calls Server.ResourceUpdated, so a subscribed client
//     gets notifications/resources/updated. It replies "touched <uri>" with
//     structured content {uri, subscribed}, subscribed telling whether a
//     subscription to uri was recorded. A subscribe to URIHangSubscribe
//     is never answered (until cancelled).
//   - Completion: the greet prompt's name argument completes from alice,
//     albert, bob and the template's id variable from 1, 2, 10, by prefix;
//     anything else completes to nothing.
//   - Logging: the tool log {level, message} sends notifications/message
//     (logger "testmcp", data message) through ServerSession.Log; an unknown
//     level is a tool error.
//   - List changes: add_tool {name} adds a tool of that name (refused if one
//     exists or the name is invalid) that replies "added <name>", and itself
//     replies "added <name>"; remove_tool {name} removes any tool, built-in
//     or added, and replies "removed <name>". Both make the server send
//     notifications/tools/list_changed.
//   - Server→client requests: sample {prompt} asks the client to sample (one
//     user message, maxTokens 100) and replies with the text of its answer;
//     elicit {message, schema, url} asks for a string property "answer" (or
//     for what schema requests, or in url mode to open url) and replies with
//     JSON such as {"action":"accept","content":{"answer":"42"}}; roots {}
//     replies with the client's root URIs joined by ",".
//   - big {kb} replies with a text of kb KiB (0 to 65536), for benchmarks.
//   - flood {mib, lineBytes, wait} writes mib MiB of lines (8 KiB each by
//     default) to stderr as fast as the pipe takes them, in the background
//     unless wait is set; it replies with the lines and bytes it writes.
//
// # Protocol eras
//
// The go-sdk client connects to a stdio server with server/discover first
// and so, against this server, negotiates protocol 2026-07-28 (SEP-2575);
// with ClientSessionOptions.ProtocolVersion set to an older version it uses
// the initialize handshake. The eras differ:
//
//   - Server→client requests. Before 2026-07-28, sample, elicit and roots
//     send sampling/createMessage, elicitation/create and roots/list to the
//     client themselves (ServerSession.CreateMessage, Elicit, ListRoots); a
//     client's refusal becomes a tool error carrying its error text. From
//     2026-07-28 on, the SDK forbids server-initiated requests (those methods
//     fail with "cannot be sent while serving a request on protocol version
//     2026-07-28: return an InputRequests map instead"), so the tools use
//     multi round-trip requests (SEP-2322, mcp/mrtr.go): the first call
//     returns an input-required result, {"resultType":"input_required",
//     "inputRequests":{"<tool>":{"method":..., "params":...}},
//     "requestState":"<tool>"}, with the key and state both the tool's name;
//     the client fulfils the request and calls the tool again with the
//     answer in inputResponses (and the requestState), and the tool replies
//     as above. The go-sdk client does this transparently with its handlers
//     (ClientOptions.MultiRoundTrip), so the same client code works in both
//     eras; but a handler's error then fails the whole tools/call on the
//     client side, where the older era returns a tool error. In this era
//     the tools check the capabilities the request declares and reply with a
//     tool error ("client does not support sampling", "... elicitation",
//     "... roots") instead of asking a client that cannot answer; before it,
//     only elicitation is checked (by the SDK) and a client without roots
//     answers with an empty list.
//   - Logging. From 2026-07-28 on, the level comes from each request's
//     _meta["io.modelcontextprotocol/logLevel"] (mcp.MetaKeyLogLevel), and
//     log sends nothing when the tools/call carries none; logging/setLevel is
//     still accepted but has no effect. Before, logging/setLevel sets the
//     session's level and nothing is sent until it is called.
//   - Notifications. From 2026-07-28 on, list changes and resource updates
//     reach only a client with an open subscriptions/listen stream: the go-sdk
//     client opens one at Connect when it has a list-changed handler, and
//     Subscribe opens one per resource. Both are asynchronous: the server has
//     registered the stream once the client receives
//     notifications/subscriptions/acknowledged.
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
	envBanner         = "SWITCHBOARD_TESTMCP_BANNER"
	envInitError      = "SWITCHBOARD_TESTMCP_INIT_ERROR"
	envEchoDesc       = "SWITCHBOARD_TESTMCP_ECHO_DESCRIPTION"
	envGreetDesc      = "SWITCHBOARD_TESTMCP_GREET_DESCRIPTION"
	envAssumeURL      = "SWITCHBOARD_TESTMCP_ASSUME_URL_ELICITATION"
	envExtraTools     = "SWITCHBOARD_TESTMCP_EXTRA_TOOLS"
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
	// Banner is written to stdout verbatim before serving, as servers that
	// print a banner or log lines there do (env SWITCHBOARD_TESTMCP_BANNER).
	Banner string
	// InitError, when set, answers the first request (initialize) with a
	// JSON-RPC error carrying this message, then exits with status 3
	// (env SWITCHBOARD_TESTMCP_INIT_ERROR).
	InitError string
	// EchoDescription, when set, replaces the echo tool's description, for
	// a server whose tool changes between runs (tool approval tests; env
	// SWITCHBOARD_TESTMCP_ECHO_DESCRIPTION).
	EchoDescription string
	// GreetDescription, when set, replaces the greet prompt's description,
	// for a server whose prompt changes between runs (env
	// SWITCHBOARD_TESTMCP_GREET_DESCRIPTION).
	GreetDescription string
	// AssumeURLElicitation takes the client to support url-mode elicitation
	// whatever it declared, as a server that does not check does, so that
	// the elicit tool's url mode reaches a client that cannot answer it
	// (env SWITCHBOARD_TESTMCP_ASSUME_URL_ELICITATION=1).
	AssumeURLElicitation bool
	// ExtraTools are more tools the server offers from the start, each
	// replying "added <name>" as add_tool's do: for a server whose tool
	// names are longer than the built-in ones (env
	// SWITCHBOARD_TESTMCP_EXTRA_TOOLS, comma-separated).
	ExtraTools []string
	// Hostile adds the tools a compromised server would use: read_file,
	// write_file, connect and udp_send (confinement tests; env
	// SWITCHBOARD_TESTMCP_HOSTILE=1).
	Hostile bool
	// Content adds tools whose results carry every kind of content:
	// image, fail (a tool error), link (a resource link and structured
	// content) and form (an input of every JSON Schema kind, echoed back);
	// see addContentTools (env SWITCHBOARD_TESTMCP_CONTENT=1).
	Content bool
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
		envBanner + "=" + opts.Banner,
		envInitError + "=" + opts.InitError,
		envEchoDesc + "=" + opts.EchoDescription,
		envGreetDesc + "=" + opts.GreetDescription,
		envAssumeURL + "=" + flag(opts.AssumeURLElicitation),
		envExtraTools + "=" + strings.Join(opts.ExtraTools, ","),
		envHostile + "=" + flag(opts.Hostile),
		envContent + "=" + flag(opts.Content),
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
		StartupJunk:          envBool(envStartupJunk),
		IgnoreSIGTERM:        envBool(envIgnoreTerm),
		IgnoreStdinEOF:       envBool(envIgnoreStdinEOF),
		FailStart:            envBool(envFailStart),
		Name:                 os.Getenv(envName),
		Banner:               os.Getenv(envBanner),
		InitError:            os.Getenv(envInitError),
		EchoDescription:      os.Getenv(envEchoDesc),
		GreetDescription:     os.Getenv(envGreetDesc),
		AssumeURLElicitation: envBool(envAssumeURL),
		Hostile:              envBool(envHostile),
		Content:              envBool(envContent),
	}
	if s := os.Getenv(envExtraTools); s != "" {
		o.ExtraTools = strings.Split(s, ",")
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

// exitSignals delivers SIGINT, and SIGTERM unless ignoreTerm, from now on:
// subscribe before saying that the server waits for them, or a signal sent
// on hearing it may find SIGTERM's default action (death) still in place.
func exitSignals(ignoreTerm bool) <-chan os.Signal {
	c := make(chan os.Signal, 1)
	if ignoreTerm {
		signal.Notify(c, os.Interrupt)
	} else {
		signal.Notify(c, os.Interrupt, syscall.SIGTERM)
	}
	return c
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
