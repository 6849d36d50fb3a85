package testmcp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// runServer serves MCP on stdin/stdout until stdin reaches EOF and returns
// the process exit status.
func runServer(o Options) int {
	pid := os.Getpid()
	if o.FailStart {
		fmt.Fprintf(os.Stderr, "testmcp: failing to start on purpose (pid %d)\n", pid)
		return failStartCode
	}
	if o.InitError != "" {
		return refuseInitialize(o.InitError)
	}
	if o.IgnoreSIGTERM {
		signal.Ignore(syscall.SIGTERM)
	}
	fmt.Fprintf(os.Stderr, "testmcp: serving pid %d\n", pid)
	if o.Banner != "" {
		_, _ = os.Stdout.WriteString(o.Banner)
	}
	if o.StartDelay > 0 {
		time.Sleep(o.StartDelay)
	}
	if o.StartupJunk {
		for i := 1; i <= startupJunkLines; i++ {
			writeLine(os.Stdout, fmt.Sprintf("this is not json (startup %d)", i))
		}
	}

	ids := &callIDs{ids: make(map[string]jsonrpc.ID)}
	server, err := newServer(o.Name, o.EchoDescription, o.ExtraTools, ids)
	if err != nil {
		fmt.Fprintf(os.Stderr, "testmcp: %v\n", err)
		return 2
	}
	if o.GreetDescription != "" {
		addGreet(server, o.GreetDescription)
	}
	if o.AssumeURLElicitation {
		server.AddReceivingMiddleware(assumeURLElicitation)
	}
	if o.Hostile {
		addHostileTools(server)
	}
	if o.Content {
		addContentTools(server)
	}
	err = server.Run(context.Background(), &idTransport{Transport: &mcp.StdioTransport{}, ids: ids})
	status := 0
	switch {
	case err == nil || errors.Is(err, io.EOF):
		fmt.Fprintf(os.Stderr, "testmcp: stdin closed (pid %d)\n", pid)
	default:
		fmt.Fprintf(os.Stderr, "testmcp: session ended: %v\n", err)
		status = 1
	}
	if o.IgnoreStdinEOF {
		signals := exitSignals(o.IgnoreSIGTERM)
		fmt.Fprintf(os.Stderr, "testmcp: ignoring stdin EOF; waiting for a signal (pid %d)\n", pid)
		sig := <-signals
		fmt.Fprintf(os.Stderr, "testmcp: got %v; exiting\n", sig)
	}
	return status
}

// refuseInitialize answers the first request on stdin with a JSON-RPC
// error carrying msg, as a server that cannot start (bad credentials, a
// missing setting) does, and returns failStartCode.
func refuseInitialize(msg string) int {
	line, err := bufio.NewReader(os.Stdin).ReadBytes('\n')
	if err != nil {
		fmt.Fprintf(os.Stderr, "testmcp: no request before refusing: %v\n", err)
		return failStartCode
	}
	var req struct {
		ID json.RawMessage `json:"id"`
	}
	if err := json.Unmarshal(line, &req); err != nil || len(req.ID) == 0 {
		fmt.Fprintf(os.Stderr, "testmcp: cannot read the request id: %v\n", err)
		return failStartCode
	}
	resp, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": req.ID,
		"error": map[string]any{"code": -32603, "message": msg}})
	writeLine(os.Stdout, string(resp))
	fmt.Fprintf(os.Stderr, "testmcp: refused initialize: %s\n", msg)
	return failStartCode
}

// writeLine writes s and a newline with a single Write call, so the line
// cannot interleave with protocol frames written to the same file.
func writeLine(f *os.File, s string) {
	_, _ = f.Write([]byte(s + "\n"))
}

// Tool inputs and outputs. Fields tagged omitempty are optional arguments.
type (
	echoArgs struct {
		Text string `json:"text" jsonschema:"text to echo back"`
	}
	echoOut struct {
		Text string `json:"text" jsonschema:"the echoed text"`
	}
	sleepArgs struct {
		Ms int `json:"ms" jsonschema:"milliseconds to sleep"`
	}
	crashArgs struct {
		Code   int    `json:"code,omitempty" jsonschema:"exit status (0 means 1)"`
		Stderr string `json:"stderr,omitempty" jsonschema:"text written to stderr before exiting"`
	}
	noArgs    struct{}
	printArgs struct {
		Text string `json:"text" jsonschema:"text written to stdout as is (add newlines yourself)"`
	}
	junkArgs struct {
		Lines int `json:"lines,omitempty" jsonschema:"number of non-JSON lines to write to stdout (default 1)"`
	}
	spawnArgs struct {
		IgnoreTerm bool `json:"ignoreTerm,omitempty" jsonschema:"the grandchild ignores SIGTERM"`
		HoldStdout bool `json:"holdStdout,omitempty" jsonschema:"the grandchild inherits the server's stdout"`
	}
	pidOut struct {
		Pid int `json:"pid" jsonschema:"process id"`
	}
	stderrArgs struct {
		Lines int    `json:"lines,omitempty" jsonschema:"number of lines (default 1)"`
		Text  string `json:"text,omitempty" jsonschema:"line prefix (default \"testmcp: stderr line\")"`
	}
	envArgs struct {
		Name string `json:"name" jsonschema:"environment variable name"`
	}
	envOut struct {
		Name  string `json:"name"`
		Value string `json:"value"`
		Set   bool   `json:"set"`
	}
	cwdOut struct {
		Cwd string `json:"cwd"`
	}
)

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// EchoDescription is the echo tool's description unless Options say otherwise.
const EchoDescription = "Echo text back, as text and structured content."

// newServer builds the MCP server with all the test tools, prompts and
// resources, and the extra tools; echoDesc, when not empty, is the echo
// tool's description.
func newServer(name, echoDesc string, extra []string, ids *callIDs) (*mcp.Server, error) {
	if echoDesc == "" {
		echoDesc = EchoDescription
	}
	st := newState(name)
	s := mcp.NewServer(&mcp.Implementation{Name: name, Version: "1.0.0"}, st.serverOptions())
	st.server = s

	addTool(st, &mcp.Tool{Name: "echo", Description: echoDesc},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoArgs) (*mcp.CallToolResult, echoOut, error) {
			return text(in.Text), echoOut(in), nil
		})

	addTool(st, &mcp.Tool{Name: "sleep", Description: "Sleep ms milliseconds (or until cancelled), reporting progress every 100ms."},
		func(ctx context.Context, req *mcp.CallToolRequest, in sleepArgs) (*mcp.CallToolResult, any, error) {
			return sleepTool(ctx, req, in)
		})

	addTool(st, &mcp.Tool{Name: "crash", Description: "Write to stderr and exit at once with the given code, without replying."},
		func(_ context.Context, _ *mcp.CallToolRequest, in crashArgs) (*mcp.CallToolResult, any, error) {
			msg := in.Stderr
			if msg == "" {
				msg = "testmcp: crashing on purpose"
			}
			code := in.Code
			if code == 0 {
				code = 1
			}
			writeLine(os.Stderr, msg)
			os.Exit(code)
			return nil, nil, nil
		})

	addTool(st, &mcp.Tool{Name: "hang", Description: "Block until the request is cancelled."},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, any, error) {
			<-ctx.Done()
			return nil, nil, ctx.Err()
		})

	addTool(st, &mcp.Tool{Name: "freeze", Description: "Stop the whole server process (SIGSTOP on Unix, NtSuspendProcess on Windows)."},
		func(_ context.Context, _ *mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, any, error) {
			if err := freeze(); err != nil {
				return nil, nil, fmt.Errorf("freeze: %w", err)
			}
			return text("resumed"), nil, nil
		})

	addTool(st, &mcp.Tool{Name: "junk", Description: "Write non-JSON lines straight to stdout."},
		func(_ context.Context, _ *mcp.CallToolRequest, in junkArgs) (*mcp.CallToolResult, any, error) {
			n := in.Lines
			if n <= 0 {
				n = 1
			}
			for i := 1; i <= n; i++ {
				writeLine(os.Stdout, fmt.Sprintf("this is not json %d", i))
			}
			return text("ok"), nil, nil
		})

	addTool(st, &mcp.Tool{Name: "print", Description: "Write text to stdout as is, in one write, before replying."},
		func(_ context.Context, _ *mcp.CallToolRequest, in printArgs) (*mcp.CallToolResult, any, error) {
			if _, err := os.Stdout.WriteString(in.Text); err != nil {
				return nil, nil, fmt.Errorf("print: %w", err)
			}
			return text("printed"), nil, nil
		})

	addTool(st, &mcp.Tool{Name: "truncated", Description: "Answer with a response cut short (its id, then half a result, then a newline), then block until cancelled."},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, any, error) {
			id, ok := ids.take("truncated")
			if !ok {
				return nil, nil, errors.New("truncated: the request id was not seen")
			}
			head, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id.Raw()})
			// {"id":..,"jsonrpc":"2.0"} → {"id":..,"jsonrpc":"2.0","result":{"content":[
			writeLine(os.Stdout, string(head[:len(head)-1])+`,"result":{"content":[`)
			<-ctx.Done()
			return nil, nil, ctx.Err()
		})

	addTool(st, &mcp.Tool{Name: "spawn", Description: "Start a sleeping grandchild process in the server's process group."},
		func(_ context.Context, _ *mcp.CallToolRequest, in spawnArgs) (*mcp.CallToolResult, pidOut, error) {
			pid, err := spawnSleeper(in.IgnoreTerm, in.HoldStdout)
			if err != nil {
				return nil, pidOut{}, err
			}
			return text(strconv.Itoa(pid)), pidOut{Pid: pid}, nil
		})

	addTool(st, &mcp.Tool{Name: "pid", Description: "Report the server's process id."},
		func(_ context.Context, _ *mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, pidOut, error) {
			pid := os.Getpid()
			return text(strconv.Itoa(pid)), pidOut{Pid: pid}, nil
		})

	addTool(st, &mcp.Tool{Name: "stderr", Description: "Write numbered lines to stderr."},
		func(_ context.Context, _ *mcp.CallToolRequest, in stderrArgs) (*mcp.CallToolResult, any, error) {
			n := in.Lines
			if n <= 0 {
				n = 1
			}
			prefix := in.Text
			if prefix == "" {
				prefix = "testmcp: stderr line"
			}
			for i := 1; i <= n; i++ {
				writeLine(os.Stderr, fmt.Sprintf("%s %d", prefix, i))
			}
			return text("ok"), nil, nil
		})

	addTool(st, &mcp.Tool{Name: "env", Description: "Report the value of an environment variable."},
		func(_ context.Context, _ *mcp.CallToolRequest, in envArgs) (*mcp.CallToolResult, envOut, error) {
			v, ok := os.LookupEnv(in.Name)
			return text(v), envOut{Name: in.Name, Value: v, Set: ok}, nil
		})

	addTool(st, &mcp.Tool{Name: "cwd", Description: "Report the server's working directory."},
		func(_ context.Context, _ *mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, cwdOut, error) {
			wd, err := os.Getwd()
			if err != nil {
				return nil, cwdOut{}, err
			}
			return text(wd), cwdOut{Cwd: wd}, nil
		})

	st.addFeatures()
	for _, n := range extra {
		if err := st.addNamedTool(n); err != nil {
			return nil, fmt.Errorf("extra tool: %w", err)
		}
	}
	return s, nil
}

// callIDs hands a tool the JSON-RPC id of the tools/call that runs it
// (the go-sdk does not expose it), by tool name.
type callIDs struct {
	mu  sync.Mutex
	ids map[string]jsonrpc.ID
}

func (c *callIDs) take(tool string) (jsonrpc.ID, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	id, ok := c.ids[tool]
	delete(c.ids, tool)
	return id, ok
}

// idTransport notes the id of each tools/call it reads, for callIDs.
type idTransport struct {
	mcp.Transport
	ids *callIDs
}

func (t *idTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &idConn{Connection: c, ids: t.ids}, nil
}

type idConn struct {
	mcp.Connection
	ids *callIDs
}

func (c *idConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "tools/call" && req.IsCall() {
		var p struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(req.Params, &p) == nil {
			c.ids.mu.Lock()
			c.ids.ids[p.Name] = req.ID
			c.ids.mu.Unlock()
		}
	}
	return msg, err
}

// progressInterval is how often the sleep tool reports progress.
const progressInterval = 100 * time.Millisecond

func sleepTool(ctx context.Context, req *mcp.CallToolRequest, in sleepArgs) (*mcp.CallToolResult, any, error) {
	total := time.Duration(in.Ms) * time.Millisecond
	start := time.Now()
	done := time.NewTimer(total)
	defer done.Stop()
	tick := time.NewTicker(progressInterval)
	defer tick.Stop()
	token := req.Params.GetProgressToken()
	for {
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-done.C:
			return text(fmt.Sprintf("slept %d ms", in.Ms)), nil, nil
		case <-tick.C:
			if token == nil {
				continue
			}
			elapsed := time.Since(start).Milliseconds()
			if elapsed > int64(in.Ms) {
				elapsed = int64(in.Ms)
			}
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
				ProgressToken: token,
				Progress:      float64(elapsed),
				Total:         float64(in.Ms),
				Message:       fmt.Sprintf("slept %d of %d ms", elapsed, in.Ms),
			})
		}
	}
}

// spawnReadyTimeout bounds how long spawn waits for the sleeper to report in.
const spawnReadyTimeout = 30 * time.Second

// spawnSleeper starts this executable as a sleeper in the server's own
// process group, waits until it has set up its signal handling (it reports
// its pid on a private stderr pipe), and reaps it in the background.
func spawnSleeper(ignoreTerm, holdStdout bool) (int, error) {
	exe, err := os.Executable()
	if err != nil {
		return 0, err
	}
	extra := []string{EnvRole + "=" + roleSleeper}
	if ignoreTerm {
		extra = append(extra, envIgnoreTerm+"=1")
	}
	cmd := exec.Command(exe)
	cmd.Env = childEnv(extra...)
	if holdStdout {
		cmd.Stdout = os.Stdout
	}
	// A private pipe, not our stderr: the sleeper must not hold the
	// supervisor's pipes (unless holdStdout).
	r, w, err := os.Pipe()
	if err != nil {
		return 0, err
	}
	cmd.Stderr = w
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		return 0, err
	}
	w.Close()
	pid := cmd.Process.Pid

	ready := make(chan error, 1)
	go func() {
		defer r.Close()
		br := bufio.NewReader(r)
		_, err := br.ReadString('\n')
		ready <- err
		// Keep draining so the sleeper never writes to a closed pipe.
		_, _ = io.Copy(io.Discard, br)
	}()
	go func() { _ = cmd.Wait() }() // reap it, so it never lingers as our zombie

	select {
	case err := <-ready:
		if err != nil {
			_ = cmd.Process.Kill()
			return 0, fmt.Errorf("sleeper pid %d did not start: %v", pid, err)
		}
	case <-time.After(spawnReadyTimeout):
		_ = cmd.Process.Kill()
		return 0, fmt.Errorf("sleeper pid %d did not report in within %v", pid, spawnReadyTimeout)
	}
	fmt.Fprintf(os.Stderr, "testmcp: spawned sleeper pid %d\n", pid)
	return pid, nil
}

// assumeURLElicitation adds url-mode elicitation to the capabilities the
// client declares in initialize (Options.AssumeURLElicitation).
func assumeURLElicitation(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if r, ok := req.(*mcp.ServerRequest[*mcp.InitializeParams]); ok && r.Params != nil {
			caps := r.Params.Capabilities
			if caps == nil {
				caps = &mcp.ClientCapabilities{}
				r.Params.Capabilities = caps
			}
			if caps.Elicitation == nil {
				caps.Elicitation = &mcp.ElicitationCapabilities{}
			}
			caps.Elicitation.URL = &mcp.URLElicitationCapabilities{}
		}
		return next(ctx, method, req)
	}
}
