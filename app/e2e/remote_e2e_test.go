package e2e

import (
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/internal/testutil"
	"github.com/switchboardhq/switchboard/app/record"
)

// TestRemoteServerThroughTheDaemon: server-everything in its streamable
// HTTP mode on loopback, configured in config.json as the remote server
// "r", is reached through the daemon's /mcp; the call is in the history,
// the connection in the server's logs and status; a remote server whose
// URL is the daemon's own listener is refused.
func TestRemoteServerThroughTheDaemon(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node not found: install Node.js 20 (the CI installs it): %v", err)
	}
	everything := filepath.Join(tsHarness, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	if _, err := os.Stat(everything); err != nil {
		t.Fatalf("server-everything is not installed in %s: run `make node-deps`", tsHarness)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	remote := exec.Command(node, everything, "streamableHttp")
	remote.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
	if err := remote.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = remote.Wait(); close(exited) }()
	t.Cleanup(func() { _ = remote.Process.Kill(); <-exited })
	testutil.Eventually(t, 30*time.Second, "server-everything listening", func() bool {
		c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err == nil {
			c.Close()
		}
		return err == nil
	})

	home := filepath.Join(t.TempDir(), "home")
	cfg, _ := json.Marshal(map[string]any{"version": 1, "listen": "127.0.0.1:0", "servers": map[string]any{
		"r": map[string]any{"url": "http://127.0.0.1:" + strconv.Itoa(port) + "/mcp", "headers": map[string]string{"X-Team": "a"}},
	}})
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "config.json"), cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, home)

	cs, err := mcp.NewClient(&mcp.Implementation{Name: "remote-e2e", Version: "1"}, nil).Connect(t.Context(),
		&mcp.StreamableClientTransport{Endpoint: d.info.Address + "/mcp",
			HTTPClient: &http.Client{Transport: headerTransport{"Authorization": "Bearer " + d.client.Token}}},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	var got string
	testutil.Eventually(t, 60*time.Second, "r__echo through /mcp", func() bool {
		got, err = testutil.CallText(t.Context(), cs, "r__echo", map[string]any{"message": "far away"})
		return err == nil
	})
	if got != "Echo: far away" {
		t.Errorf("r__echo = %q", got)
	}

	testutil.Eventually(t, 20*time.Second, "the remote call in the history", func() bool {
		page, err := d.client.History(t.Context(), url.Values{"client": {"remote-e2e"}})
		if err != nil {
			return false
		}
		for _, c := range page.Calls {
			if c.Server == "r" && c.Name == "r__echo" && c.Outcome == record.OutcomeOK && c.Duration > 0 {
				return true
			}
		}
		return false
	})
	view, err := d.client.Server(t.Context(), "r")
	if err != nil || view.State != wire.StateRunning || len(view.Processes) != 1 || view.Processes[0].Transport != "streamable-http" ||
		view.Config.URL == "" || view.Config.Command != "" {
		t.Errorf("server view = %+v, %v; want running over streamable-http, with its url", view, err)
	}
	logs, err := d.client.Logs(t.Context(), "r", 50)
	var lines []string
	for _, l := range logs {
		lines = append(lines, l.Stream+": "+l.Text)
	}
	if err != nil || !strings.Contains(strings.Join(lines, "\n"), "remote: connected over streamable-http") {
		t.Errorf("logs = %v, %v; want the connection", lines, err)
	}

	// The CLI shows the connection where a process has its pid.
	if code, out, errOut := cli(t, home, "servers"); code != 0 || !strings.Contains(out, "streamable-http") {
		t.Errorf("switchboard servers = %d\n%s%s\nwant the remote's transport", code, out, errOut)
	}
	if code, out, errOut := cli(t, home, "logs", "r"); code != 0 || !strings.Contains(out, "[remote] connected over streamable-http") {
		t.Errorf("switchboard logs r = %d\n%s%s\nwant the connection event", code, out, errOut)
	}

	// The daemon's own address, known only once it listens (port 0).
	if _, err := d.client.AddServer(t.Context(), "self", wire.ServerConfig{URL: d.info.Address + "/mcp"}); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 20*time.Second, "the refusal of a remote that is the daemon itself", func() bool {
		evs, err := d.client.Lifecycle(t.Context(), url.Values{"limit": {"1000"}})
		if err != nil {
			return false
		}
		for _, e := range evs {
			if e.Server == "self" && strings.Contains(e.Message, "own listener") {
				return true
			}
		}
		return false
	})
	if view, err := d.client.Server(t.Context(), "self"); err != nil || view.State == wire.StateRunning {
		t.Errorf("self = %+v, %v; want it not connected", view, err)
	}
}
