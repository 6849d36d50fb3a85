package gateway_test

// Tests through an independent client: the official TypeScript SDK, driven by
// testdata/node/client.mjs, in front of the official reference server
// (@modelcontextprotocol/server-everything) run over stdio the way
// Switchboard runs any npm server. They need Node.js 20 or later and npm on
// PATH; the first test installs testdata/node's locked packages (npm ci).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/app/gateway"
	"github.com/switchboardhq/switchboard/app/internal/testutil"
	"github.com/switchboardhq/switchboard/supervisor"
	"github.com/switchboardhq/switchboard/supervisor/testmcp"
)

// nodeEnv is the installed harness.
type nodeEnv struct {
	node       string // absolute path of node
	dir        string // absolute path of testdata/node
	everything string // server-everything's entry script (its package.json "bin")
}

var nodeSetup struct {
	once sync.Once
	env  nodeEnv
	err  error
}

// nodeHarness finds node and npm and installs testdata/node's packages once
// per test binary. A machine without Node fails the test: CI installs it.
func nodeHarness(t *testing.T) nodeEnv {
	t.Helper()
	nodeSetup.once.Do(func() {
		start := time.Now()
		nodeSetup.env, nodeSetup.err = setupNode()
		if nodeSetup.err == nil {
			t.Logf("node harness ready in %s", time.Since(start).Round(time.Millisecond))
		}
	})
	if nodeSetup.err != nil {
		t.Fatal(nodeSetup.err)
	}
	return nodeSetup.env
}

const installNode = "the gateway's TypeScript-client tests need Node.js 20 or later with npm on PATH " +
	"(Debian: apt-get install nodejs npm, or Node 20 from nodejs.org); CI installs them"

func setupNode() (nodeEnv, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return nodeEnv{}, fmt.Errorf("node not found: %s", installNode)
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return nodeEnv{}, fmt.Errorf("npm not found: %s", installNode)
	}
	if node, err = filepath.Abs(node); err != nil {
		return nodeEnv{}, err
	}
	out, err := exec.Command(node, "--version").Output()
	if err != nil {
		return nodeEnv{}, fmt.Errorf("%s --version: %v: %s", node, err, installNode)
	}
	version := strings.TrimSpace(string(out))
	major, _ := strconv.Atoi(strings.SplitN(strings.TrimPrefix(version, "v"), ".", 2)[0])
	if major < 20 {
		return nodeEnv{}, fmt.Errorf("node %s at %s is too old: %s", version, node, installNode)
	}
	dir, err := filepath.Abs(filepath.Join("testdata", "node"))
	if err != nil {
		return nodeEnv{}, err
	}
	if stale, why := nodeModulesStale(dir); stale {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "npm_config_update_notifier=false")
		cmd.WaitDelay = 10 * time.Second
		if out, err := cmd.CombinedOutput(); err != nil {
			return nodeEnv{}, fmt.Errorf("npm ci in %s (%s) failed: %v\n%s", dir, why, err, tail(out, 4000))
		}
	}
	entry, err := binOf(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-everything"), "mcp-server-everything")
	if err != nil {
		return nodeEnv{}, err
	}
	return nodeEnv{node: node, dir: dir, everything: entry}, nil
}

// nodeModulesStale reports whether npm ci must run: node_modules is missing,
// or npm's record of what it installed is older than package-lock.json.
func nodeModulesStale(dir string) (bool, string) {
	lock, err := os.Stat(filepath.Join(dir, "package-lock.json"))
	if err != nil {
		return true, "no package-lock.json"
	}
	installed, err := os.Stat(filepath.Join(dir, "node_modules", ".package-lock.json"))
	if err != nil {
		return true, "node_modules is missing"
	}
	if installed.ModTime().Before(lock.ModTime()) {
		return true, "node_modules is older than package-lock.json"
	}
	return false, ""
}

// binOf returns the absolute path of a package's bin script.
func binOf(pkgDir, name string) (string, error) {
	data, err := os.ReadFile(filepath.Join(pkgDir, "package.json"))
	if err != nil {
		return "", err
	}
	var pkg struct {
		Bin map[string]string `json:"bin"`
	}
	if err := json.Unmarshal(data, &pkg); err != nil {
		return "", fmt.Errorf("%s/package.json: %w", pkgDir, err)
	}
	rel, ok := pkg.Bin[name]
	if !ok {
		return "", fmt.Errorf("%s/package.json has no bin %q", pkgDir, name)
	}
	return filepath.Join(pkgDir, filepath.FromSlash(rel)), nil
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// everythingSpec runs server-everything in stdio mode, as a user's config
// entry {"command": "node", "args": [".../dist/index.js", "stdio"]} would.
func everythingSpec(env nodeEnv) supervisor.Spec {
	return supervisor.Spec{Name: "everything", Command: env.node, Args: []string{env.everything, "stdio"},
		Dir: env.dir, Pool: supervisor.PoolSpec{Max: 2}}
}

// alphaSpec runs the project's own test server, as newFixture does.
func alphaSpec() supervisor.Spec {
	return supervisor.Spec{Name: "alpha", Command: os.Args[0], Env: testEnv(testmcp.Options{Name: "alpha"}),
		Pool: supervisor.PoolSpec{Max: 2}}
}

// newSpecFixture is newFixture with arbitrary specs, and a bearer token that
// every request must carry when token is set (as the daemon's API would).
func newSpecFixture(t *testing.T, token string, specs []supervisor.Spec, servers ...gateway.ServerConfig) *fixture {
	t.Helper()
	return newTunedFixture(t, token, nil, specs, servers...)
}

// newTunedFixture is newSpecFixture with tune, when not nil, changing the
// supervisor's and the gateway's options before they start.
func newTunedFixture(t *testing.T, token string, tune func(*supervisor.Options, *gateway.Options),
	specs []supervisor.Spec, servers ...gateway.ServerConfig) *fixture {
	t.Helper()
	f := &fixture{rec: &recorder{}}
	// The supervisor's and the gateway's own log, shown with a failure.
	logger := testutil.Logger(t)
	supOpts := supervisor.Options{Logger: logger,
		StateDir: t.TempDir(), Env: os.Environ(), StopGrace: 500 * time.Millisecond,
		BackoffInitial: 20 * time.Millisecond, SampleInterval: -1, HealthInterval: -1,
		NewClient: func(s string) *mcp.Client { return f.gw.NewClient(s) },
		Prepare: func(ctx context.Context, s string, cs *mcp.ClientSession) error {
			return f.gw.Prepare(ctx, s, cs)
		},
		WrapTransport:  func(s string, t mcp.Transport) mcp.Transport { return f.gw.WrapTransport(s, t) },
		WrapRemoteHTTP: func(s string, rt http.RoundTripper) http.RoundTripper { return f.gw.WrapRemoteHTTP(s, rt) },
	}
	gwOpts := gateway.Options{Logger: logger, Recorder: f.rec, Version: "test",
		ClientLabel: func(context.Context) string { return "test-client" }}
	if tune != nil {
		tune(&supOpts, &gwOpts)
	}
	var err error
	f.sup, err = supervisor.New(t.Context(), supOpts)
	if err != nil {
		t.Fatal(err)
	}
	gwOpts.Backends = gateway.FromSupervisor(f.sup)
	f.gw = gateway.New(gwOpts)
	if err := f.sup.Apply(t.Context(), specs); err != nil {
		t.Fatal(err)
	}
	f.gw.Sync(servers)
	h := f.gw.Handler()
	if token != "" {
		next := h
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer "+token {
				http.Error(w, "missing or wrong bearer token", http.StatusUnauthorized)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
	srv := httptest.NewServer(h)
	f.url = srv.URL
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		f.gw.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := f.sup.Close(ctx); err != nil {
			t.Error(err)
		}
	})
	return f
}

// newEverythingFixture serves server-everything as "everything" next to the
// test server as "alpha", and waits until the gateway has listed both,
// including the tools server-everything adds once it knows the client's
// capabilities (its tools/list_changed makes the gateway list it again).
func newEverythingFixture(t *testing.T, env nodeEnv, token string) *fixture {
	t.Helper()
	f := newSpecFixture(t, token, []supervisor.Spec{everythingSpec(env), alphaSpec()},
		gateway.ServerConfig{Name: "everything", Roots: []string{everythingRoot}}, gateway.ServerConfig{Name: "alpha"})
	transport := &http.Transport{}
	defer transport.CloseIdleConnections()
	var rt http.RoundTripper = transport
	if token != "" {
		rt = bearerTransport{token: token, next: transport}
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "wait", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: f.url + "/mcp", HTTPClient: &http.Client{Transport: rt}}, nil)
	if err != nil {
		t.Fatalf("connect /mcp: %v", err)
	}
	defer cs.Close()
	f.waitTools(t, cs, "everything__echo", "everything__trigger-sampling-request", "everything__get-roots-list", "alpha__echo")
	return f
}

type bearerTransport struct {
	token string
	next  http.RoundTripper
}

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// everythingElicitation answers server-everything's elicitation form: its
// schema requires "name", which the harness's default answer lacks.
var everythingElicitation = map[string]any{"action": "accept", "content": map[string]any{"answer": "42", "name": "Ada"}}

// A tsScenario is client.mjs's input (see the comment at its top).
type tsScenario struct {
	Transport       string         `json:"transport"`
	URL             string         `json:"url,omitempty"`
	Token           string         `json:"token,omitempty"`
	Command         string         `json:"command,omitempty"`
	Args            []string       `json:"args,omitempty"`
	Cwd             string         `json:"cwd,omitempty"`
	ProtocolVersion string         `json:"protocolVersion,omitempty"`
	Capabilities    map[string]any `json:"capabilities,omitempty"`
	TimeoutMs       int            `json:"timeoutMs,omitempty"`
	Elicitation     map[string]any `json:"elicitation,omitempty"`
	Wire            bool           `json:"wire,omitempty"`
	NoStandaloneSSE bool           `json:"noStandaloneSSE,omitempty"`
	HeadersTimeout  int            `json:"headersTimeoutMs,omitempty"`
	Steps           []tsStep       `json:"steps"`
}

// A tsStep is one op with its fields; "id" names it in the report.
type tsStep map[string]any

type tsError struct {
	Message string          `json:"message"`
	Code    *int            `json:"code"`
	Data    json.RawMessage `json:"data"`
}

func (e *tsError) String() string {
	if e == nil {
		return "<nil>"
	}
	if e.Code != nil {
		return fmt.Sprintf("%s (code %d)", e.Message, *e.Code)
	}
	return e.Message
}

type tsStepResult struct {
	Op     string            `json:"op"`
	ID     string            `json:"id"`
	OK     bool              `json:"ok"`
	Result json.RawMessage   `json:"result"`
	Wire   []json.RawMessage `json:"wire"`
	Error  *tsError          `json:"error"`
}

type tsMessage struct {
	Method string         `json:"method"`
	Params map[string]any `json:"params"`
}

// A tsReport is client.mjs's output.
type tsReport struct {
	HarnessError    string   `json:"harnessError"`
	Connected       bool     `json:"connected"`
	ConnectError    *tsError `json:"connectError"`
	ProtocolVersion string   `json:"protocolVersion"`
	ServerInfo      struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"serverInfo"`
	ServerCapabilities map[string]any `json:"serverCapabilities"`
	Instructions       string         `json:"instructions"`
	SessionID          string         `json:"sessionId"`
	Steps              []tsStepResult `json:"steps"`
	Notifications      []tsMessage    `json:"notifications"`
	ServerRequests     []tsMessage    `json:"serverRequests"`

	label string // for messages: transport and endpoint
}

// runTS runs client.mjs on sc and returns its report; it fails the test when
// the harness fails or cannot connect.
func runTS(t *testing.T, ctx context.Context, env nodeEnv, sc tsScenario) *tsReport {
	t.Helper()
	label := sc.Transport + " " + sc.URL
	if sc.Transport == "stdio" {
		label = "stdio " + sc.Command + " " + strings.Join(sc.Args, " ")
	}
	if sc.ProtocolVersion != "" {
		label += " (" + sc.ProtocolVersion + ")"
	}
	data, err := json.Marshal(sc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, env.node, filepath.Join(env.dir, "client.mjs"))
	cmd.Dir = env.dir
	cmd.Stdin = bytes.NewReader(data)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	err = cmd.Run()
	t.Logf("TS client, %s: %d steps in %s", label, len(sc.Steps), time.Since(start).Round(time.Millisecond))
	if err != nil {
		t.Fatalf("TS client, %s: %v\nstderr:\n%s\nstdout:\n%s", label, err, tail(stderr.Bytes(), 4000), tail(stdout.Bytes(), 4000))
	}
	r := &tsReport{label: label}
	if err := json.Unmarshal(stdout.Bytes(), r); err != nil {
		t.Fatalf("TS client, %s: report is not JSON: %v\n%s", label, err, tail(stdout.Bytes(), 4000))
	}
	if r.HarnessError != "" {
		t.Fatalf("TS client, %s: harness error: %s", label, r.HarnessError)
	}
	if !r.Connected {
		t.Fatalf("TS client, %s: could not connect: %s\nstderr:\n%s", label, r.ConnectError, tail(stderr.Bytes(), 4000))
	}
	if len(r.Steps) != len(sc.Steps) {
		t.Fatalf("TS client, %s: %d step results for %d steps", label, len(r.Steps), len(sc.Steps))
	}
	return r
}

// step returns the result of the step named id, or reports its failure.
// notifications returns the notifications the client received with method,
// in order.
func (r *tsReport) notifications(method string) []tsMessage {
	var out []tsMessage
	for _, m := range r.Notifications {
		if m.Method == method {
			out = append(out, m)
		}
	}
	return out
}

func (r *tsReport) step(t *testing.T, id string) (tsStepResult, bool) {
	t.Helper()
	for _, s := range r.Steps {
		if s.ID == id {
			if !s.OK {
				t.Errorf("TS client, %s: %s (%s) failed: %s", r.label, id, s.Op, s.Error)
				return s, false
			}
			return s, true
		}
	}
	t.Errorf("TS client, %s: no step %q in the report", r.label, id)
	return tsStepResult{}, false
}

// decode unmarshals the result of step id into v; false when the step failed.
func (r *tsReport) decode(t *testing.T, id string, v any) bool {
	t.Helper()
	s, ok := r.step(t, id)
	if !ok {
		return false
	}
	if err := json.Unmarshal(s.Result, v); err != nil {
		t.Errorf("TS client, %s: %s: result %s: %v", r.label, id, s.Result, err)
		return false
	}
	return true
}

// failed returns the error of step id, which must have failed.
func (r *tsReport) failed(t *testing.T, id string) *tsError {
	t.Helper()
	for _, s := range r.Steps {
		if s.ID == id {
			if s.OK {
				t.Errorf("TS client, %s: %s (%s) succeeded with %s, want an error", r.label, id, s.Op, s.Result)
				return nil
			}
			return s.Error
		}
	}
	t.Errorf("TS client, %s: no step %q in the report", r.label, id)
	return nil
}

// names returns the name of each item of the list result of step id under
// key: a tool's or prompt's name, a resource's URI, a template's URI template.
func (r *tsReport) names(t *testing.T, id, key string) []string {
	t.Helper()
	var res map[string]json.RawMessage
	if !r.decode(t, id, &res) {
		return nil
	}
	var items []map[string]any
	if err := json.Unmarshal(res[key], &items); err != nil {
		t.Errorf("TS client, %s: %s: %s is not a list: %v", r.label, id, key, err)
		return nil
	}
	var out []string
	field := map[string]string{"tools": "name", "prompts": "name", "resources": "uri", "resourceTemplates": "uriTemplate"}[key]
	for _, item := range items {
		s, _ := item[field].(string)
		out = append(out, s)
	}
	return out
}

type tsContent struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	MimeType string `json:"mimeType"`
	Data     string `json:"data"`
}

type tsCallResult struct {
	Content           []tsContent    `json:"content"`
	StructuredContent map[string]any `json:"structuredContent"`
	IsError           bool           `json:"isError"`
}

func (c tsCallResult) text() string {
	var b strings.Builder
	for _, x := range c.Content {
		b.WriteString(x.Text)
	}
	return b.String()
}

// callText returns the text of the tool result of step id; a tool error
// fails the test.
func (r *tsReport) callText(t *testing.T, id string) string {
	t.Helper()
	var res tsCallResult
	if !r.decode(t, id, &res) {
		return ""
	}
	if res.IsError {
		t.Errorf("TS client, %s: %s returned a tool error: %s", r.label, id, res.text())
	}
	return res.text()
}

func (r *tsReport) wantContains(t *testing.T, what, got string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("TS client, %s: %s = %q, want it to contain %q", r.label, what, got, w)
		}
	}
}

// everythingRoot is the root configured for server-everything.
const everythingRoot = "/srv/configured-root"

// wantRoots checks server-everything's get-roots-list. It asks for roots
// once per process, 350 ms after it starts, outside of any call, and keeps
// the answer: the roots configured for it (not an error, which it logs as a
// failure, as it did before). Only a call reaching a process in its first
// 350 ms asks the calling client (whose root is file:///tmp/root).
func (r *tsReport) wantRoots(t *testing.T, got string) {
	t.Helper()
	if !strings.Contains(got, "file://"+everythingRoot) && !strings.Contains(got, "file:///tmp/root") {
		t.Errorf("TS client, %s: get-roots-list = %q, want the configured root file://%s (or the client's)", r.label, got, everythingRoot)
	}
}

func (r *tsReport) wantListed(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("TS client, %s: %s %q lack %q", r.label, what, got, w)
		}
	}
}

// The items server-everything offers (see its docs/features.md) that the
// tests rely on.
const (
	featuresDoc  = "demo://resource/static/document/features.md"
	textTemplate = "demo://resource/dynamic/text/{resourceId}"
)

// everythingSteps exercises every kind of request on an endpoint that shows
// server-everything's items under prefix ("everything__" on /mcp, "" on
// /mcp/everything).
func everythingSteps(prefix string) []tsStep {
	return []tsStep{
		{"id": "ping", "op": "ping"},
		{"id": "tools", "op": "listTools", "all": true},
		{"id": "echo", "op": "callTool", "name": prefix + "echo", "args": map[string]any{"message": "hello from TS"}},
		{"id": "sum", "op": "callTool", "name": prefix + "get-sum", "args": map[string]any{"a": 2, "b": 40}},
		// The TS client validates structuredContent against the listed outputSchema.
		{"id": "structured", "op": "callTool", "name": prefix + "get-structured-content", "args": map[string]any{"location": "Chicago"}},
		{"id": "image", "op": "callTool", "name": prefix + "get-tiny-image"},
		{"id": "bad-args", "op": "callTool", "name": prefix + "get-sum", "args": map[string]any{"a": "two"}},
		{"id": "no-such-tool", "op": "callTool", "name": prefix + "no-such-tool"},
		{"id": "progress", "op": "callTool", "name": prefix + "trigger-long-running-operation",
			"args": map[string]any{"duration": 1, "steps": 3}, "progress": true},
		{"id": "prompts", "op": "listPrompts", "all": true},
		{"id": "simple-prompt", "op": "getPrompt", "name": prefix + "simple-prompt"},
		{"id": "args-prompt", "op": "getPrompt", "name": prefix + "args-prompt", "args": map[string]any{"city": "Paris", "state": "Texas"}},
		{"id": "resources", "op": "listResources", "all": true},
		{"id": "read-doc", "op": "readResource", "uri": featuresDoc},
		{"id": "templates", "op": "listResourceTemplates", "all": true},
		{"id": "read-templated", "op": "readResource", "uri": "demo://resource/dynamic/text/7"},
		{"id": "read-missing", "op": "readResource", "uri": "demo://resource/static/document/no-such.md"},
		{"id": "complete-prompt", "op": "complete", "ref": map[string]any{"type": "ref/prompt", "name": prefix + "completable-prompt"},
			"argument": map[string]any{"name": "department", "value": "E"}},
		{"id": "complete-context", "op": "complete", "ref": map[string]any{"type": "ref/prompt", "name": prefix + "completable-prompt"},
			"argument": map[string]any{"name": "name", "value": ""}, "context": map[string]any{"arguments": map[string]any{"department": "Sales"}}},
		{"id": "complete-template", "op": "complete", "ref": map[string]any{"type": "ref/resource", "uri": textTemplate},
			"argument": map[string]any{"name": "resourceId", "value": "3"}},
		{"id": "log-level", "op": "setLoggingLevel", "level": "debug"},
		{"id": "subscribe", "op": "subscribe", "uri": featuresDoc},
		{"id": "unsubscribe", "op": "unsubscribe", "uri": featuresDoc},
		// Server-to-client requests, forwarded by the gateway to this client.
		{"id": "sampling", "op": "callTool", "name": prefix + "trigger-sampling-request", "args": map[string]any{"prompt": "hello"}},
		{"id": "elicitation", "op": "callTool", "name": prefix + "trigger-elicitation-request"},
		{"id": "roots", "op": "callTool", "name": prefix + "get-roots-list"},
		{"id": "ping-again", "op": "ping"},
	}
}

// checkEverything asserts on the report of everythingSteps(prefix).
func checkEverything(t *testing.T, r *tsReport, prefix string, env nodeEnv) {
	t.Helper()
	if r.ServerInfo.Name != "switchboard" {
		t.Errorf("TS client, %s: server info %+v, want Switchboard's", r.label, r.ServerInfo)
	}
	for _, c := range []string{"tools", "prompts", "resources", "completions", "logging"} {
		if _, ok := r.ServerCapabilities[c]; !ok {
			t.Errorf("TS client, %s: server capabilities %v lack %s", r.label, r.ServerCapabilities, c)
		}
	}
	r.step(t, "ping")
	r.step(t, "ping-again")

	tools := r.names(t, "tools", "tools")
	r.wantListed(t, "tools", tools, prefix+"echo", prefix+"get-sum", prefix+"get-structured-content",
		prefix+"trigger-long-running-operation", prefix+"trigger-sampling-request", prefix+"get-roots-list")
	if n := len(tools); n != len(slices.Compact(slices.Sorted(slices.Values(tools)))) {
		t.Errorf("TS client, %s: tools/list repeats names: %q", r.label, tools)
	}

	r.wantContains(t, "echo", r.callText(t, "echo"), "Echo: hello from TS")
	r.wantContains(t, "get-sum", r.callText(t, "sum"), "42")
	var structured tsCallResult
	if r.decode(t, "structured", &structured) {
		if got := structured.StructuredContent["conditions"]; got == nil || structured.StructuredContent["temperature"] == nil {
			t.Errorf("TS client, %s: get-structured-content structuredContent = %v, want temperature and conditions", r.label, structured.StructuredContent)
		}
	}
	var image tsCallResult
	if r.decode(t, "image", &image) {
		found := false
		for _, c := range image.Content {
			found = found || (c.Type == "image" && c.MimeType == "image/png" && len(c.Data) > 100)
		}
		if !found {
			t.Errorf("TS client, %s: get-tiny-image content has no PNG image: %+v", r.label, image.Content)
		}
	}
	// Invalid arguments: the TS server answers with a tool error result.
	var bad tsCallResult
	if r.decode(t, "bad-args", &bad) && !bad.IsError {
		t.Errorf("TS client, %s: get-sum with a string argument = %+v, want a tool error", r.label, bad)
	}
	if e := r.failed(t, "no-such-tool"); e != nil && !strings.Contains(e.Message, "no-such-tool") {
		t.Errorf("TS client, %s: unknown tool error %q does not name the tool", r.label, e)
	}
	r.wantContains(t, "trigger-long-running-operation", r.callText(t, "progress"), "Long running operation completed")
	progress := r.notifications("notifications/progress")
	// All three must arrive (TestTSClientProgressBeforeResult insists); here
	// two show that progress is forwarded at all.
	if len(progress) < 2 {
		t.Errorf("TS client, %s: %d progress notifications for a 3-step operation, want 3: %+v", r.label, len(progress), progress)
	}

	prompts := r.names(t, "prompts", "prompts")
	r.wantListed(t, "prompts", prompts, prefix+"simple-prompt", prefix+"args-prompt", prefix+"completable-prompt")
	var prompt struct {
		Messages []struct {
			Role    string    `json:"role"`
			Content tsContent `json:"content"`
		} `json:"messages"`
	}
	if r.decode(t, "simple-prompt", &prompt) && (len(prompt.Messages) != 1 || prompt.Messages[0].Content.Text != "This is a simple prompt without arguments.") {
		t.Errorf("TS client, %s: simple-prompt = %+v", r.label, prompt)
	}
	if r.decode(t, "args-prompt", &prompt) && (len(prompt.Messages) != 1 || prompt.Messages[0].Content.Text != "What's weather in Paris, Texas?") {
		t.Errorf("TS client, %s: args-prompt = %+v, want the weather in Paris, Texas", r.label, prompt)
	}

	r.wantListed(t, "resources", r.names(t, "resources", "resources"), featuresDoc)
	var read struct {
		Contents []struct {
			URI      string `json:"uri"`
			MimeType string `json:"mimeType"`
			Text     string `json:"text"`
		} `json:"contents"`
	}
	if r.decode(t, "read-doc", &read) {
		want, err := os.ReadFile(filepath.Join(filepath.Dir(env.everything), "docs", "features.md"))
		if err != nil {
			t.Fatal(err)
		}
		if len(read.Contents) != 1 || read.Contents[0].Text != string(want) || read.Contents[0].URI != featuresDoc || read.Contents[0].MimeType != "text/markdown" {
			t.Errorf("TS client, %s: reading %s did not give the file as text/markdown: %d contents", r.label, featuresDoc, len(read.Contents))
		}
	}
	r.wantListed(t, "resource templates", r.names(t, "templates", "resourceTemplates"), textTemplate)
	if r.decode(t, "read-templated", &read) &&
		(len(read.Contents) != 1 || !strings.HasPrefix(read.Contents[0].Text, "Resource 7: This is a plaintext resource") ||
			read.Contents[0].URI != "demo://resource/dynamic/text/7") {
		t.Errorf("TS client, %s: reading a templated resource = %+v", r.label, read)
	}
	r.failed(t, "read-missing")

	var completion struct {
		Completion struct {
			Values []string `json:"values"`
		} `json:"completion"`
	}
	if r.decode(t, "complete-prompt", &completion) && !slices.Equal(completion.Completion.Values, []string{"Engineering"}) {
		t.Errorf("TS client, %s: completing department \"E\" = %q, want [Engineering]", r.label, completion.Completion.Values)
	}
	if r.decode(t, "complete-context", &completion) && !slices.Equal(completion.Completion.Values, []string{"David", "Eve", "Frank"}) {
		t.Errorf("TS client, %s: completing name in Sales = %q, want [David Eve Frank] (the context's arguments must reach the server)", r.label, completion.Completion.Values)
	}
	if r.decode(t, "complete-template", &completion) && !slices.Equal(completion.Completion.Values, []string{"3"}) {
		t.Errorf("TS client, %s: completing a template variable = %q, want [3]", r.label, completion.Completion.Values)
	}
	r.step(t, "log-level")
	r.step(t, "subscribe")
	r.step(t, "unsubscribe")

	r.wantContains(t, "trigger-sampling-request", r.callText(t, "sampling"), "sampled: Resource trigger-sampling-request context: hello")
	r.wantContains(t, "trigger-elicitation-request", r.callText(t, "elicitation"), "User provided the requested information", "- Name: Ada", `"answer": "42"`)
	r.wantRoots(t, r.callText(t, "roots"))
	var asked []string
	for _, q := range r.ServerRequests {
		asked = append(asked, q.Method)
	}
	r.wantListed(t, "server-to-client requests", asked, "sampling/createMessage", "elicitation/create")
}

// TestTSClientStreamable drives both streamable-HTTP endpoints with the
// TypeScript SDK's client: every request kind, on /mcp (prefixed, next to the
// Go test server) and on /mcp/everything (unprefixed), and the older protocol
// versions the TS client can ask for.
func TestTSClientStreamable(t *testing.T) {
	env := nodeHarness(t)
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	f := newEverythingFixture(t, env, "")

	t.Run("aggregated", func(t *testing.T) {
		steps := append(everythingSteps("everything__"),
			tsStep{"id": "alpha-echo", "op": "callTool", "name": "alpha__echo", "args": map[string]any{"text": "hi alpha"}},
			tsStep{"id": "alpha-env", "op": "callTool", "name": "alpha__env", "args": map[string]any{"name": "SWITCHBOARD_TESTMCP_NAME"}},
		)
		r := runTS(t, ctx, env, tsScenario{Transport: "streamable", URL: f.url + "/mcp", Elicitation: everythingElicitation, Steps: steps})
		checkEverything(t, r, "everything__", env)
		if r.SessionID == "" {
			t.Errorf("TS client, %s: no Mcp-Session-Id", r.label)
		}
		if r.ProtocolVersion != "2025-11-25" {
			t.Errorf("TS client, %s: negotiated %q, want 2025-11-25", r.label, r.ProtocolVersion)
		}
		tools := r.names(t, "tools", "tools")
		r.wantListed(t, "tools", tools, "alpha__echo", "alpha__sleep")
		for _, name := range tools {
			if !strings.HasPrefix(name, "everything__") && !strings.HasPrefix(name, "alpha__") {
				t.Errorf("TS client, %s: tool %q has no server prefix", r.label, name)
			}
		}
		var echo tsCallResult
		if r.decode(t, "alpha-echo", &echo) && (echo.text() != "hi alpha" || echo.StructuredContent["text"] != "hi alpha") {
			t.Errorf("TS client, %s: alpha__echo = %+v, want text and structured content", r.label, echo)
		}
		if got := r.callText(t, "alpha-env"); got != "alpha" {
			t.Errorf("TS client, %s: alpha__env reached %q, want the alpha server", r.label, got)
		}
		r.wantContains(t, "instructions", r.Instructions, "## everything")

		var names []string
		for _, c := range f.rec.all() {
			if c.Method == "tools/call" && c.ClientName == "switchboard-ts-harness" {
				names = append(names, c.Name+":"+c.Server+":"+c.Outcome)
			}
		}
		r.wantListed(t, "recorded calls", names, "everything__echo:everything:ok", "alpha__echo:alpha:ok")
	})

	t.Run("per-server", func(t *testing.T) {
		r := runTS(t, ctx, env, tsScenario{Transport: "streamable", URL: f.url + "/mcp/everything", Elicitation: everythingElicitation,
			Steps: slices.Concat(everythingSteps(""), cancelSteps("", 30))})
		checkEverything(t, r, "", env)
		checkCancel(t, f, r, "everything", "")
		for _, name := range r.names(t, "tools", "tools") {
			if strings.Contains(name, "__") {
				t.Errorf("TS client, %s: tool %q is prefixed on the per-server endpoint", r.label, name)
			}
		}
		want, err := os.ReadFile(filepath.Join(filepath.Dir(env.everything), "docs", "instructions.md"))
		if err != nil {
			t.Fatal(err)
		}
		if r.Instructions != string(want) {
			t.Errorf("TS client, %s: instructions are not server-everything's own (%d bytes, want %d)", r.label, len(r.Instructions), len(want))
		}
	})

	// The standalone GET stream is optional: a client may never open it, and
	// then what a server sends about a request must come on that request's
	// own POST response stream (as the go-sdk does for messages sent with the
	// request handler's context).
	t.Run("no-standalone-stream", func(t *testing.T) {
		for _, endpoint := range []struct{ path, prefix string }{{"/mcp", "everything__"}, {"/mcp/everything", ""}} {
			r := runTS(t, ctx, env, tsScenario{Transport: "streamable", URL: f.url + endpoint.path, NoStandaloneSSE: true,
				TimeoutMs: 10000, Elicitation: everythingElicitation, Steps: []tsStep{
					{"id": "progress", "op": "callTool", "name": endpoint.prefix + "trigger-long-running-operation",
						"args": map[string]any{"duration": 0.3, "steps": 3}, "progress": true},
					{"id": "sampling", "op": "callTool", "name": endpoint.prefix + "trigger-sampling-request", "args": map[string]any{"prompt": "no GET"}},
					{"id": "elicitation", "op": "callTool", "name": endpoint.prefix + "trigger-elicitation-request"},
				}})
			r.wantContains(t, "trigger-long-running-operation", r.callText(t, "progress"), "Long running operation completed")
			n := len(r.notifications("notifications/progress"))
			if n != 3 {
				t.Errorf("TS client, %s: %d progress notifications without the standalone stream, want 3 on the tools/call's own stream", r.label, n)
			}
			r.wantContains(t, "trigger-sampling-request", r.callText(t, "sampling"), "sampled: Resource trigger-sampling-request context: no GET")
			r.wantContains(t, "trigger-elicitation-request", r.callText(t, "elicitation"), "- Name: Ada")
		}
	})

	for _, version := range []string{"2025-03-26", "2025-06-18"} {
		t.Run(version, func(t *testing.T) {
			r := runTS(t, ctx, env, tsScenario{Transport: "streamable", URL: f.url + "/mcp", ProtocolVersion: version, Steps: []tsStep{
				{"id": "tools", "op": "listTools"},
				{"id": "echo", "op": "callTool", "name": "everything__echo", "args": map[string]any{"message": version}},
				{"id": "alpha-echo", "op": "callTool", "name": "alpha__echo", "args": map[string]any{"text": version}},
				{"id": "sampling", "op": "callTool", "name": "everything__trigger-sampling-request", "args": map[string]any{"prompt": version}},
				{"id": "ping", "op": "ping"},
			}})
			if r.ProtocolVersion != version {
				t.Errorf("TS client, %s: negotiated %q, want %s", r.label, r.ProtocolVersion, version)
			}
			r.wantListed(t, "tools", r.names(t, "tools", "tools"), "everything__echo", "alpha__echo")
			r.wantContains(t, "everything__echo", r.callText(t, "echo"), "Echo: "+version)
			r.wantContains(t, "alpha__echo", r.callText(t, "alpha-echo"), version)
			r.wantContains(t, "trigger-sampling-request", r.callText(t, "sampling"), "sampled: Resource trigger-sampling-request context: "+version)
			r.step(t, "ping")
		})
	}
}

// TestTSClientLegacySSE drives the legacy HTTP+SSE transport (/sse and
// /sse/everything) with the TS SDK's SSEClientTransport, behind a bearer
// token the client must send on the event stream and on every POST.
func TestTSClientLegacySSE(t *testing.T) {
	env := nodeHarness(t)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	const token = "sse-secret"
	f := newEverythingFixture(t, env, token)

	t.Run("aggregated", func(t *testing.T) {
		r := runTS(t, ctx, env, tsScenario{Transport: "sse", URL: f.url + "/sse", Token: token, Steps: []tsStep{
			{"id": "ping", "op": "ping"},
			{"id": "tools", "op": "listTools", "all": true},
			{"id": "echo", "op": "callTool", "name": "everything__echo", "args": map[string]any{"message": "over SSE"}},
			{"id": "alpha-echo", "op": "callTool", "name": "alpha__echo", "args": map[string]any{"text": "alpha over SSE"}},
			{"id": "progress", "op": "callTool", "name": "everything__trigger-long-running-operation",
				"args": map[string]any{"duration": 1, "steps": 2}, "progress": true},
			{"id": "prompt", "op": "getPrompt", "name": "everything__args-prompt", "args": map[string]any{"city": "Oslo"}},
			{"id": "read", "op": "readResource", "uri": "demo://resource/dynamic/text/2"},
			{"id": "complete", "op": "complete", "ref": map[string]any{"type": "ref/prompt", "name": "everything__completable-prompt"},
				"argument": map[string]any{"name": "department", "value": "S"}},
			{"id": "sampling", "op": "callTool", "name": "everything__trigger-sampling-request", "args": map[string]any{"prompt": "sse"}},
		}})
		if r.ServerInfo.Name != "switchboard" {
			t.Errorf("TS client, %s: server info %+v, want Switchboard's", r.label, r.ServerInfo)
		}
		r.step(t, "ping")
		r.wantListed(t, "tools", r.names(t, "tools", "tools"), "everything__echo", "alpha__echo")
		r.wantContains(t, "everything__echo", r.callText(t, "echo"), "Echo: over SSE")
		if got := r.callText(t, "alpha-echo"); got != "alpha over SSE" {
			t.Errorf("TS client, %s: alpha__echo = %q", r.label, got)
		}
		r.wantContains(t, "trigger-long-running-operation", r.callText(t, "progress"), "Long running operation completed")
		n := len(r.notifications("notifications/progress"))
		if n < 1 { // all of them: TestTSClientProgressBeforeResult
			t.Errorf("TS client, %s: %d progress notifications, want 2", r.label, n)
		}
		var prompt struct {
			Messages []struct {
				Content tsContent `json:"content"`
			} `json:"messages"`
		}
		if r.decode(t, "prompt", &prompt) && (len(prompt.Messages) != 1 || prompt.Messages[0].Content.Text != "What's weather in Oslo?") {
			t.Errorf("TS client, %s: args-prompt = %+v", r.label, prompt)
		}
		var read struct {
			Contents []struct {
				Text string `json:"text"`
			} `json:"contents"`
		}
		if r.decode(t, "read", &read) && (len(read.Contents) != 1 || !strings.HasPrefix(read.Contents[0].Text, "Resource 2:")) {
			t.Errorf("TS client, %s: templated resource = %+v", r.label, read)
		}
		var completion struct {
			Completion struct {
				Values []string `json:"values"`
			} `json:"completion"`
		}
		if r.decode(t, "complete", &completion) && !slices.Equal(completion.Completion.Values, []string{"Sales", "Support"}) {
			t.Errorf("TS client, %s: completing department \"S\" = %q, want [Sales Support]", r.label, completion.Completion.Values)
		}
		r.wantContains(t, "trigger-sampling-request", r.callText(t, "sampling"), "sampled: Resource trigger-sampling-request context: sse")
	})

	t.Run("per-server", func(t *testing.T) {
		r := runTS(t, ctx, env, tsScenario{Transport: "sse", URL: f.url + "/sse/everything", Token: token, Steps: []tsStep{
			{"id": "tools", "op": "listTools", "all": true},
			{"id": "echo", "op": "callTool", "name": "echo", "args": map[string]any{"message": "one server over SSE"}},
			{"id": "roots", "op": "callTool", "name": "get-roots-list"},
		}})
		tools := r.names(t, "tools", "tools")
		r.wantListed(t, "tools", tools, "echo", "get-sum")
		for _, name := range tools {
			if strings.Contains(name, "__") || strings.HasPrefix(name, "alpha") {
				t.Errorf("TS client, %s: /sse/everything lists %q, which is not server-everything's own", r.label, name)
			}
		}
		r.wantContains(t, "echo", r.callText(t, "echo"), "Echo: one server over SSE")
		r.wantRoots(t, r.callText(t, "roots"))
	})

	t.Run("no-token", func(t *testing.T) {
		data, _ := json.Marshal(tsScenario{Transport: "sse", URL: f.url + "/sse", Steps: []tsStep{{"op": "ping"}}})
		cmd := exec.CommandContext(ctx, env.node, filepath.Join(env.dir, "client.mjs"), string(data))
		cmd.Dir = env.dir
		cmd.WaitDelay = 5 * time.Second
		out, err := cmd.Output()
		var r tsReport
		if err != nil || json.Unmarshal(out, &r) != nil {
			t.Fatalf("TS client without a token: %v: %s", err, out)
		}
		if r.Connected || r.ConnectError == nil || !strings.Contains(r.ConnectError.Message, "401") {
			t.Errorf("TS client without a token: connected %v, error %s; want a 401 (the token check must see the harness's header)", r.Connected, r.ConnectError)
		}
	})
}

// TestTSClientProgressBeforeResult checks that every progress notification
// a server sends before its result reaches the client, as it does over stdio
// directly: ten calls of a three-step operation on each transport.
func TestTSClientProgressBeforeResult(t *testing.T) {
	env := nodeHarness(t)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	f := newEverythingFixture(t, env, "")
	var steps []tsStep
	for i := range 10 {
		steps = append(steps, tsStep{"id": strconv.Itoa(i), "op": "callTool", "name": "everything__trigger-long-running-operation",
			"args": map[string]any{"duration": 0.2, "steps": 3}, "progress": true})
	}
	for _, tc := range []struct{ transport, path string }{{"streamable", "/mcp"}, {"sse", "/sse"}} {
		t.Run(tc.transport, func(t *testing.T) {
			r := runTS(t, ctx, env, tsScenario{Transport: tc.transport, URL: f.url + tc.path, Steps: steps})
			perToken := map[string][]float64{}
			for _, n := range r.notifications("notifications/progress") {
				token := fmt.Sprint(n.Params["progressToken"])
				progress, _ := n.Params["progress"].(float64)
				perToken[token] = append(perToken[token], progress)
			}
			for _, s := range r.Steps {
				if !s.OK {
					t.Errorf("TS client, %s: call %s failed: %s", r.label, s.ID, s.Error)
				}
			}
			short := 0
			for _, got := range perToken {
				if !slices.Equal(got, []float64{1, 2, 3}) {
					short++
				}
			}
			if len(perToken) != len(steps) || short > 0 {
				t.Errorf("TS client, %s: of %d calls, %d had progress and %d of those lack some of 1, 2, 3: %v",
					r.label, len(steps), len(perToken), short, perToken)
			}
		})
	}
}

// fidelitySteps are deterministic requests whose answers must not depend on
// whether the TS client talks to server-everything directly or through
// /mcp/everything.
var fidelitySteps = []tsStep{
	{"id": "tools", "op": "listTools", "all": true},
	{"id": "prompts", "op": "listPrompts", "all": true},
	{"id": "resources", "op": "listResources", "all": true},
	{"id": "templates", "op": "listResourceTemplates", "all": true},
	{"id": "echo", "op": "callTool", "name": "echo", "args": map[string]any{"message": "same"}},
	{"id": "sum", "op": "callTool", "name": "get-sum", "args": map[string]any{"a": 1.5, "b": 2}},
	{"id": "structured", "op": "callTool", "name": "get-structured-content", "args": map[string]any{"location": "New York"}},
	{"id": "annotated", "op": "callTool", "name": "get-annotated-message", "args": map[string]any{"messageType": "success", "includeImage": true}},
	{"id": "image", "op": "callTool", "name": "get-tiny-image"},
	{"id": "links", "op": "callTool", "name": "get-resource-links", "args": map[string]any{"count": 2}},
	{"id": "bad-args", "op": "callTool", "name": "get-sum", "args": map[string]any{"a": "two"}},
	{"id": "args-prompt", "op": "getPrompt", "name": "args-prompt", "args": map[string]any{"city": "Lisbon"}},
	{"id": "read-doc", "op": "readResource", "uri": featuresDoc},
	{"id": "complete", "op": "complete", "ref": map[string]any{"type": "ref/prompt", "name": "completable-prompt"},
		"argument": map[string]any{"name": "department", "value": ""}},
}

// TestTSClientEverythingFidelity compares what the TS client gets from
// server-everything over stdio directly with what it gets through
// /mcp/everything: the raw JSON-RPC results, and what the SDK makes of them,
// one subtest per request. Lists are compared by item name, since no order is
// promised; see normalize for the differences that carry no meaning.
func TestTSClientEverythingFidelity(t *testing.T) {
	env := nodeHarness(t)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	f := newEverythingFixture(t, env, "")

	// The gateway's backend client declares sampling, elicitation (form) and
	// roots, as client.mjs does by default: server-everything offers both
	// the same tools.
	direct := runTS(t, ctx, env, tsScenario{Transport: "stdio", Command: env.node, Args: []string{env.everything, "stdio"},
		Cwd: env.dir, Wire: true, Steps: fidelitySteps})
	via := runTS(t, ctx, env, tsScenario{Transport: "streamable", URL: f.url + "/mcp/everything", Wire: true, Steps: fidelitySteps})

	for _, s := range fidelitySteps {
		id := s["id"].(string)
		t.Run(id, func(t *testing.T) {
			d, okD := direct.step(t, id)
			v, okV := via.step(t, id)
			if !okD || !okV {
				return
			}
			if len(d.Wire) != len(v.Wire) {
				t.Fatalf("%d requests directly, %d through the gateway", len(d.Wire), len(v.Wire))
			}
			for i := range d.Wire {
				dw, vw := normalize(t, d.Wire[i], v.Wire[i])
				if diff := cmp.Diff(dw, vw); diff != "" {
					t.Errorf("%s: JSON-RPC result differs (-direct +gateway):\n%s", id, diff)
				}
			}
			dr, vr := normalize(t, d.Result, v.Result)
			if diff := cmp.Diff(dr, vr); diff != "" {
				t.Errorf("%s: result as the TS SDK parsed it differs (-direct +gateway):\n%s", id, diff)
			}
		})
	}
}

// normalize decodes a direct and a gateway result for comparison. It sorts
// lists of named items by name, and removes what differs without meaning:
//   - the cache hints the go-sdk puts on every list and resources/read
//     result (ttlMs 0 and cacheScope "public", the protocol's defaults) when
//     the server sent none;
//   - false booleans the go-sdk leaves out when false ("required" of a
//     prompt argument, "hasMore" of a completion), absent meaning false;
//   - a tool's "execution": {"taskSupport": "forbidden"}, which is what an
//     absent "execution" means. The go-sdk v1.8.0 Tool has no field for
//     "execution" (tasks are an extension in 2026-07-28), so the gateway
//     cannot pass it on; the one tool of server-everything that requires a
//     task (taskSupport "required") is left out of the comparison and is a
//     known gap, reported in the gateway issue.
func normalize(t *testing.T, direct, via json.RawMessage) (any, any) {
	t.Helper()
	var d, v any
	if err := json.Unmarshal(direct, &d); err != nil {
		t.Fatalf("direct result %s: %v", direct, err)
	}
	if err := json.Unmarshal(via, &v); err != nil {
		t.Fatalf("gateway result %s: %v", via, err)
	}
	dm, _ := d.(map[string]any)
	vm, _ := v.(map[string]any)
	if dm != nil && vm != nil {
		if _, ok := dm["ttlMs"]; !ok && vm["ttlMs"] == float64(0) {
			delete(vm, "ttlMs")
		}
		if _, ok := dm["cacheScope"]; !ok && vm["cacheScope"] == "public" {
			delete(vm, "cacheScope")
		}
	}
	for _, m := range []map[string]any{dm, vm} {
		for _, key := range []string{"tools", "prompts", "resources", "resourceTemplates"} {
			if items, ok := m[key].([]any); ok {
				slices.SortFunc(items, func(a, b any) int { return strings.Compare(itemKey(a), itemKey(b)) })
			}
		}
	}
	dropFalse(d, "required", "hasMore")
	dropFalse(v, "required", "hasMore")
	for _, name := range dropTaskForbidden(d) {
		removeTool(v, name)
	}
	return d, v
}

func removeTool(v any, name string) {
	m, _ := v.(map[string]any)
	if tools, ok := m["tools"].([]any); ok {
		m["tools"] = slices.DeleteFunc(tools, func(t any) bool { return itemKey(t) == name })
	}
}

// dropTaskForbidden removes execution {"taskSupport": "forbidden"} from the
// tools of a tools/list result, and tools that require a task (see normalize)
// from both sides' lists when comparing.
func dropTaskForbidden(v any) (required []string) {
	m, _ := v.(map[string]any)
	tools, _ := m["tools"].([]any)
	kept := tools[:0]
	for _, t := range tools {
		tm, _ := t.(map[string]any)
		if ex, ok := tm["execution"].(map[string]any); ok {
			if ex["taskSupport"] == "required" {
				required = append(required, itemKey(t))
				continue
			}
			if ex["taskSupport"] == "forbidden" && len(ex) == 1 {
				delete(tm, "execution")
			}
		}
		kept = append(kept, t)
	}
	if tools != nil {
		m["tools"] = kept
	}
	return required
}

// dropFalse deletes the given keys wherever their value is false.
func dropFalse(v any, keys ...string) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if x == false && slices.Contains(keys, k) {
				delete(v, k)
				continue
			}
			dropFalse(x, keys...)
		}
	case []any:
		for _, x := range v {
			dropFalse(x, keys...)
		}
	}
}

func itemKey(v any) string {
	m, _ := v.(map[string]any)
	for _, k := range []string{"name", "uri", "uriTemplate"} {
		if s, ok := m[k].(string); ok {
			return s
		}
	}
	return ""
}
