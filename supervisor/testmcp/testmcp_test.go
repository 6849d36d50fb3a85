package testmcp_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/supervisor/testmcp"
)

func TestMain(m *testing.M) {
	testmcp.RunIfRequested()
	os.Exit(m.Run())
}

// timeout bounds every wait in these tests; generous for -race on slow machines.
const timeout = 30 * time.Second

// syncBuffer is a bytes.Buffer safe for concurrent use (a child's stderr).
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// eventually polls cond until it is true or the deadline passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// serverCmd returns a command that re-executes this test binary as the server.
func serverCmd(opts testmcp.Options, extraEnv ...string) (*exec.Cmd, *syncBuffer) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(append(os.Environ(), testmcp.Env(opts)...), extraEnv...)
	if os.Getenv("GORACE") == "" {
		// A -race binary otherwise sleeps 1s at exit.
		cmd.Env = append(cmd.Env, "GORACE=atexit_sleep_ms=0")
	}
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	return cmd, stderr
}

// connect starts the server through mcp.CommandTransport and connects a client.
func connect(t *testing.T, cmd *exec.Cmd, copts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "testmcp-test", Version: "1.0.0"}, copts)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, nil)
	if cmd.Process != nil {
		t.Cleanup(func() {
			_ = cs.Close() // closes stdin and waits for the exit, escalating if need be
			_ = cmd.Process.Kill()
		})
	}
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	return cs
}

func callTool(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	if res.IsError {
		t.Fatalf("call %s: tool error: %s", name, resultText(res))
	}
	return res
}

func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// structured decodes a result's structuredContent into v.
func structured(t *testing.T, res *mcp.CallToolResult, v any) {
	t.Helper()
	data, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("structuredContent %s: %v", data, err)
	}
}

func TestServerTools(t *testing.T) {
	dir := t.TempDir()
	cmd, stderr := serverCmd(testmcp.Options{Name: "custom-name"}, "TESTMCP_PROBE=probe-value")
	cmd.Dir = dir
	cs := connect(t, cmd, nil)

	if got := cs.InitializeResult().ServerInfo.Name; got != "custom-name" {
		t.Errorf("server name = %q, want custom-name", got)
	}
	eventually(t, "the serving line on stderr", func() bool {
		return strings.Contains(stderr.String(), fmt.Sprintf("testmcp: serving pid %d", cmd.Process.Pid))
	})

	t.Run("list", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
		}
		for _, want := range []string{"echo", "sleep", "crash", "hang", "freeze", "junk", "spawn", "pid", "stderr", "env", "cwd"} {
			if !slices.Contains(names, want) {
				t.Errorf("tool %q missing from %v", want, names)
			}
		}
	})

	t.Run("echo", func(t *testing.T) {
		res := callTool(t, cs, "echo", map[string]any{"text": "hello, world"})
		if got := resultText(res); got != "hello, world" {
			t.Errorf("text = %q", got)
		}
		var out struct{ Text string }
		structured(t, res, &out)
		if out.Text != "hello, world" {
			t.Errorf("structured text = %q", out.Text)
		}
	})

	t.Run("pid", func(t *testing.T) {
		res := callTool(t, cs, "pid", nil)
		var out struct{ Pid int }
		structured(t, res, &out)
		if out.Pid != cmd.Process.Pid {
			t.Errorf("pid = %d, want %d", out.Pid, cmd.Process.Pid)
		}
		if got := resultText(res); got != strconv.Itoa(cmd.Process.Pid) {
			t.Errorf("text = %q", got)
		}
	})

	t.Run("env", func(t *testing.T) {
		if got := resultText(callTool(t, cs, "env", map[string]any{"name": "TESTMCP_PROBE"})); got != "probe-value" {
			t.Errorf("env = %q", got)
		}
		res := callTool(t, cs, "env", map[string]any{"name": "TESTMCP_SURELY_UNSET"})
		var out struct{ Set bool }
		structured(t, res, &out)
		if out.Set {
			t.Error("unset variable reported as set")
		}
	})

	t.Run("cwd", func(t *testing.T) {
		got := resultText(callTool(t, cs, "cwd", nil))
		want, _ := filepath.EvalSymlinks(dir)
		if got, _ = filepath.EvalSymlinks(got); got != want {
			t.Errorf("cwd = %q, want %q", got, want)
		}
	})

	t.Run("stderr", func(t *testing.T) {
		if got := resultText(callTool(t, cs, "stderr", map[string]any{"lines": 2, "text": "hello stderr"})); got != "ok" {
			t.Errorf("text = %q", got)
		}
		eventually(t, "stderr lines", func() bool {
			return strings.Contains(stderr.String(), "hello stderr 1\nhello stderr 2\n")
		})
	})

	t.Run("hang", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "hang"})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("hang: err = %v, want deadline exceeded", err)
		}
		// The server is still responsive.
		ctx2, cancel2 := context.WithTimeout(context.Background(), timeout)
		defer cancel2()
		if err := cs.Ping(ctx2, nil); err != nil {
			t.Errorf("ping after hang: %v", err)
		}
	})

	t.Run("sleep", func(t *testing.T) {
		res := callTool(t, cs, "sleep", map[string]any{"ms": 20})
		if got := resultText(res); got != "slept 20 ms" {
			t.Errorf("text = %q", got)
		}
	})
}

func TestSleepProgress(t *testing.T) {
	var progress atomic.Int32
	cmd, _ := serverCmd(testmcp.Options{})
	cs := connect(t, cmd, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			if req.Params.ProgressToken == "tok" {
				progress.Add(1)
			}
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	params := &mcp.CallToolParams{Name: "sleep", Arguments: map[string]any{"ms": 350}}
	params.SetProgressToken("tok")
	res, err := cs.CallTool(ctx, params)
	if err != nil || res.IsError {
		t.Fatalf("sleep: %v %v", err, res)
	}
	eventually(t, "progress notifications", func() bool { return progress.Load() >= 2 })
}

func TestCrash(t *testing.T) {
	cmd, stderr := serverCmd(testmcp.Options{})
	cs := connect(t, cmd, nil)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "crash", Arguments: map[string]any{"code": 7, "stderr": "boom on stderr"}})
	if err == nil {
		t.Fatal("crash: call succeeded")
	}
	_ = cs.Close() // waits for the process
	if got := cmd.ProcessState.ExitCode(); got != 7 {
		t.Errorf("exit code = %d, want 7", got)
	}
	if !strings.Contains(stderr.String(), "boom on stderr\n") {
		t.Errorf("stderr = %q", stderr.String())
	}
}

func TestFailStart(t *testing.T) {
	cmd, stderr := serverCmd(testmcp.Options{FailStart: true})
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("run: %v, want exit status 3", err)
	}
	if !strings.Contains(stderr.String(), "failing to start") {
		t.Errorf("stderr = %q", stderr.String())
	}
}

func TestEnv(t *testing.T) {
	env := testmcp.Env(testmcp.Options{StartupJunk: true, StartDelay: 1500 * time.Millisecond, Name: "n"})
	for _, want := range []string{
		"SWITCHBOARD_TESTMCP=server",
		"SWITCHBOARD_TESTMCP_STARTUP_JUNK=1",
		"SWITCHBOARD_TESTMCP_START_DELAY=1.5s",
		"SWITCHBOARD_TESTMCP_NAME=n",
		"SWITCHBOARD_TESTMCP_IGNORE_TERM=",
	} {
		if !slices.Contains(env, want) {
			t.Errorf("Env lacks %q: %v", want, env)
		}
	}
}

// rawServer is the server run over plain pipes, speaking raw JSON-RPC lines,
// so that non-JSON output can be observed.
type rawServer struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string // stdout lines; closed at EOF
	stderr *syncBuffer
	done   chan struct{} // closed when the process has been waited for
}

func startRaw(t *testing.T, opts testmcp.Options) *rawServer {
	t.Helper()
	cmd, stderr := serverCmd(opts)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	r := &rawServer{t: t, cmd: cmd, stdin: stdin, lines: make(chan string, 1000), stderr: stderr, done: make(chan struct{})}
	go func() {
		defer close(r.lines)
		defer pr.Close()
		sc := bufio.NewScanner(pr)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			r.lines <- sc.Text()
		}
	}()
	go func() {
		_ = cmd.Wait()
		close(r.done)
	}()
	t.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Process.Kill()
		<-r.done
	})
	return r
}

func (r *rawServer) send(msg map[string]any) {
	r.t.Helper()
	msg["jsonrpc"] = "2.0"
	data, err := json.Marshal(msg)
	if err != nil {
		r.t.Fatal(err)
	}
	if _, err := r.stdin.Write(append(data, '\n')); err != nil {
		r.t.Fatalf("write: %v", err)
	}
}

// nextLine returns the next stdout line.
func (r *rawServer) nextLine() string {
	r.t.Helper()
	select {
	case line, ok := <-r.lines:
		if !ok {
			r.t.Fatal("server stdout closed")
		}
		return line
	case <-time.After(timeout):
		r.t.Fatal("timed out waiting for a stdout line")
	}
	return ""
}

// call sends a request and returns its result, plus the non-JSON lines seen before the response.
func (r *rawServer) call(id int, method string, params any) (json.RawMessage, []string) {
	r.t.Helper()
	r.send(map[string]any{"id": id, "method": method, "params": params})
	var junk []string
	for {
		line := r.nextLine()
		var resp struct {
			ID     *int            `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal([]byte(line), &resp); err != nil {
			junk = append(junk, line)
			continue
		}
		if resp.ID == nil || *resp.ID != id || resp.Method != "" {
			continue // a notification or a request from the server
		}
		if resp.Error != nil {
			r.t.Fatalf("%s: error %s", method, resp.Error)
		}
		return resp.Result, junk
	}
}

func (r *rawServer) initialize() {
	r.t.Helper()
	res, junk := r.call(1, "initialize", map[string]any{
		"protocolVersion": "2025-06-18",
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "raw", "version": "1.0.0"},
	})
	if len(junk) > 0 {
		r.t.Fatalf("unexpected junk before initialize response: %q", junk)
	}
	if !bytes.Contains(res, []byte(`"serverInfo"`)) {
		r.t.Fatalf("initialize result: %s", res)
	}
	r.send(map[string]any{"method": "notifications/initialized", "params": map[string]any{}})
}

// waitExit waits for the process to exit and returns its exit code.
func (r *rawServer) waitExit() int {
	r.t.Helper()
	select {
	case <-r.done:
		return r.cmd.ProcessState.ExitCode()
	case <-time.After(timeout):
		r.t.Fatal("timed out waiting for the server to exit")
	}
	return -1
}

func TestJunkTool(t *testing.T) {
	r := startRaw(t, testmcp.Options{})
	r.initialize()
	res, junk := r.call(2, "tools/call", map[string]any{"name": "junk", "arguments": map[string]any{"lines": 5}})
	want := []string{"this is not json 1", "this is not json 2", "this is not json 3", "this is not json 4", "this is not json 5"}
	if !slices.Equal(junk, want) {
		t.Errorf("junk lines = %q, want %q", junk, want)
	}
	if !bytes.Contains(res, []byte(`"ok"`)) {
		t.Errorf("result = %s", res)
	}
	// The session carries on.
	res, junk = r.call(3, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "still here"}})
	if len(junk) > 0 || !bytes.Contains(res, []byte("still here")) {
		t.Errorf("echo after junk: %s %q", res, junk)
	}
}

func TestStartupJunk(t *testing.T) {
	r := startRaw(t, testmcp.Options{StartupJunk: true, StartDelay: 50 * time.Millisecond})
	for i := 1; i <= 3; i++ {
		want := fmt.Sprintf("this is not json (startup %d)", i)
		if got := r.nextLine(); got != want {
			t.Fatalf("line %d = %q, want %q", i, got, want)
		}
	}
	r.initialize()
}

func TestExitOnStdinEOF(t *testing.T) {
	r := startRaw(t, testmcp.Options{})
	r.initialize()
	// An in-flight call must not keep the server alive.
	r.send(map[string]any{"id": 2, "method": "tools/call", "params": map[string]any{"name": "hang", "arguments": map[string]any{}}})
	r.stdin.Close()
	if code := r.waitExit(); code != 0 {
		t.Errorf("exit code = %d, want 0; stderr:\n%s", code, r.stderr.String())
	}
}

func TestSpawn(t *testing.T) {
	cmd, _ := serverCmd(testmcp.Options{})
	cs := connect(t, cmd, nil)
	res := callTool(t, cs, "spawn", nil)
	var out struct{ Pid int }
	structured(t, res, &out)
	pid := out.Pid
	if pid <= 0 || pid == cmd.Process.Pid {
		t.Fatalf("spawn pid = %d (server %d)", pid, cmd.Process.Pid)
	}
	killOnCleanup(t, pid)
	if got := resultText(res); got != strconv.Itoa(pid) {
		t.Errorf("text = %q", got)
	}
	if !processAlive(pid) {
		t.Fatalf("grandchild %d is not alive", pid)
	}
	checkSameGroup(t, cmd.Process.Pid, pid)
	p, err := os.FindProcess(pid)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	// The server reaps it, so it disappears entirely.
	eventually(t, "the grandchild to die", func() bool { return !processAlive(pid) })
}

func TestSpawnHoldStdout(t *testing.T) {
	r := startRaw(t, testmcp.Options{})
	r.initialize()
	res, _ := r.call(2, "tools/call", map[string]any{"name": "spawn", "arguments": map[string]any{"holdStdout": true}})
	var out struct {
		StructuredContent struct{ Pid int } `json:"structuredContent"`
	}
	if err := json.Unmarshal(res, &out); err != nil || out.StructuredContent.Pid <= 0 {
		t.Fatalf("spawn result %s: %v", res, err)
	}
	pid := out.StructuredContent.Pid
	killOnCleanup(t, pid)

	_ = r.cmd.Process.Kill()
	r.waitExit()
	select {
	case line, ok := <-r.lines:
		if !ok {
			t.Fatal("stdout reached EOF while the grandchild holds it")
		}
		t.Fatalf("unexpected stdout line %q", line)
	default:
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	select {
	case _, ok := <-r.lines:
		if ok {
			t.Fatal("unexpected stdout line")
		}
	case <-time.After(timeout):
		t.Fatal("stdout did not reach EOF after the grandchild died")
	}
}

// killOnCleanup kills a grandchild started through the spawn tool at the end of the test.
func killOnCleanup(t *testing.T, pid int) {
	t.Cleanup(func() {
		if processAlive(pid) {
			if p, err := os.FindProcess(pid); err == nil {
				_ = p.Kill()
			}
		}
	})
}
