package e2e

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/app/internal/testutil"
)

// topRow finds server's row in a rendered view: name, state, procs, CPU,
// RSS, calls/s, errors, p50.
func topRow(view, server string) []string {
	var last []string
	for line := range strings.SplitSeq(view, "\n") {
		f := strings.Fields(line)
		if len(f) > 5 && (f[5] == "MiB" || f[5] == "GiB") { // RSS is "12.3 MiB"
			f = append(append(f[:4:4], f[4]+" "+f[5]), f[6:]...)
		}
		if len(f) > 0 && f[0] == server {
			last = f // the last frame wins
		}
	}
	return last
}

// TestTop: `top --once` shows each server's state and usage and the calls
// of the last minute; the live view picks up a new call and a stopped
// server from the event stream.
func TestTop(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	writeConfig(t, home, "alpha", "beta")
	d := startDaemon(t, home)
	d.waitRunning(t, "alpha", "beta")

	transport := &mcp.StreamableClientTransport{Endpoint: d.info.Address + "/mcp/alpha",
		HTTPClient: &http.Client{Transport: bearerTransport(d.client.Token)}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "top-test", Version: "1"}, nil).Connect(t.Context(), transport, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	call := func(text any) {
		t.Helper()
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}})
		if ok := err == nil && !res.IsError; ok != (text != 5) {
			t.Fatalf("echo %v: %v %+v", text, err, res)
		}
	}
	call("x")
	call(5) // refused by the server: counted as an error

	// Samples come every 2 s; wait for one so CPU and RSS are known.
	var last string
	defer func() {
		if t.Failed() {
			t.Logf("last view:\n%s", last)
		}
	}()
	testutil.Eventually(t, 20*time.Second, "a sample of every server and both calls recorded", func() bool {
		_, out, _ := cli(t, home, "top", "--once")
		last = out
		a, b := topRow(out, "alpha"), topRow(out, "beta")
		return len(a) == 8 && len(b) == 8 && a[3] != "-" && b[3] != "-" && a[6] == "1"
	})
	_, out, _ := cli(t, home, "top", "--once")
	if !strings.HasSuffix(out, "\n") {
		t.Errorf("top --once does not end with a newline: %q", out[max(0, len(out)-40):])
	}
	a := topRow(out, "alpha")
	if a[1] != "running" || !regexp.MustCompile(`^\d+\.\d%$`).MatchString(a[3]) || !strings.HasSuffix(a[4], "MiB") ||
		a[5] != "0.03" || a[6] != "1" || a[7] == "-" {
		t.Errorf("alpha row %q in:\n%s", a, out)
	}
	if b := topRow(out, "beta"); b[5] != "0.00" || b[6] != "0" || b[7] != "-" {
		t.Errorf("beta row %q in:\n%s", b, out)
	}

	// The live view: a call and a stop show up without a restart of top,
	// and Ctrl-C ends it without an error.
	screen := &testutil.SyncBuffer{}
	live := exec.Command(binary, "top")
	live.Env = testEnv(t, home)
	live.Stdout, live.Stderr = screen, screen
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- live.Wait() }()
	defer live.Process.Kill()
	testutil.Eventually(t, 20*time.Second, "the first view", func() bool { return len(topRow(screen.String(), "beta")) > 1 })
	call("y")
	if _, err := d.client.Stop(t.Context(), "beta"); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 20*time.Second, "the live view updated", func() bool {
		a, b := topRow(screen.String(), "alpha"), topRow(screen.String(), "beta")
		return len(a) == 8 && a[5] == "0.05" && len(b) > 1 && b[1] == "stopped"
	})
	if err := live.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Errorf("top after Ctrl-C: %v\n%s", err, screen.String())
	}
}
