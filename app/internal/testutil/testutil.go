// Package testutil holds the helpers the app's tests share: polling for a
// condition with a deadline, a buffer a process writes while a test reads
// it, a logger into the test's log, and the names of the tools an MCP
// session sees. Polling and the buffer are supervisor/testutil's, the one
// copy the whole module shares (the supervisor imports nothing of the app).
package testutil

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	supervisortest "github.com/switchboardhq/switchboard/supervisor/testutil"
)

// Eventually polls cond until it holds, and fails the test if it does not
// within d; what names the awaited thing in the failure.
func Eventually(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	supervisortest.Eventually(t, d, what, cond)
}

// EventuallyEvery is Eventually checking cond every interval, for
// conditions that cost something to check (one that runs a program).
func EventuallyEvery(t testing.TB, d, interval time.Duration, what string, cond func() bool) {
	t.Helper()
	supervisortest.EventuallyEvery(t, d, interval, what, cond)
}

// SyncBuffer is a bytes.Buffer safe for a writing process (a child's
// stdout or stderr, a logger) and a reading test at once.
type SyncBuffer = supervisortest.SyncBuffer

// Logger is a logger (from debug up) whose lines go to t.Log, so that a
// failing test shows what the code under test logged next to its own
// failure (go test prints t.Log only for a failed test, or with -v). Lines
// logged once the test's cleanups have run are dropped: t.Log would panic.
func Logger(t testing.TB) *slog.Logger {
	w := &testLogWriter{t: t}
	t.Cleanup(w.end)
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type testLogWriter struct {
	mu    sync.Mutex
	t     testing.TB
	ended bool
}

func (w *testLogWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.ended {
		w.t.Log(strings.TrimSuffix(string(p), "\n"))
	}
	return len(p), nil
}

func (w *testLogWriter) end() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ended = true
}

// ToolNames lists the tools cs sees, sorted, and fails the test if the
// list cannot be had.
func ToolNames(t testing.TB, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

// Text is the text of a tool's result: its text contents, joined.
func Text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// CallText calls tool name with args on cs and returns the text of its
// result; a tool error is an error with that text.
func CallText(ctx context.Context, cs *mcp.ClientSession, name string, args map[string]any) (string, error) {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return "", err
	}
	if res.IsError {
		return "", errors.New(Text(res))
	}
	return Text(res), nil
}

// ScreenshotsEnv names the directory the GUI tests leave their
// screenshots in (`make screenshots` sets it to docs/screenshots, which
// the README links). Unset, they go to a temporary directory: a test run
// leaves the working tree as it found it.
const ScreenshotsEnv = "SWITCHBOARD_SCREENSHOTS"

// ScreenshotsDir is the directory for t's screenshots: $SWITCHBOARD_SCREENSHOTS,
// else a temporary directory of t.
func ScreenshotsDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv(ScreenshotsEnv)
	if dir == "" {
		return t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}
