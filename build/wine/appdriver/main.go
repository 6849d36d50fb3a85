// Command appdriver is the Windows side of `make test-windows-app`
// (build/wine/test-windows-app.sh): built for windows/amd64 and run under
// Wine in the lane's prefix, it does what a Windows user's programs would
// do with the installed Switchboard, and prints what it saw.
//
//	appdriver answers            poll %APPDATA%\Switchboard\daemon.json's address until the daemon answers
//	appdriver stdio FILE ENTRY   start exactly the command, args and env of mcpServers.ENTRY in FILE
//	                             (as Claude Desktop does: its own environment, no SWITCHBOARD_*), then
//	                             initialize, tools/list and tools/call over its stdio
//	appdriver http FILE ENTRY    the same over streamable HTTP to the entry's url with its headers (Cursor)
//	appdriver procs              the prefix's processes but itself (Toolhelp snapshot): "pid ppid name" per line
//	appdriver browser URL        a stand-in for the default browser: records URL in browser.log beside
//	                             this program, signs in with it and lists the servers with the cookie
//
// With SWITCHBOARD_TESTMCP set it is the project's test MCP server
// (supervisor/testmcp) instead, so the daemon under Wine can run it.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/supervisor/testmcp"
)

// protocolVersion is the version Claude Desktop and Cursor send in
// initialize today.
const protocolVersion = "2025-06-18"

func main() {
	testmcp.RunIfRequested()
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: appdriver answers | stdio FILE ENTRY | http FILE ENTRY | procs | browser URL")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var err error
	switch args := os.Args[2:]; os.Args[1] {
	case "answers":
		err = answers(ctx)
	case "stdio":
		err = need(args, 2, func() error { return stdio(ctx, args[0], args[1]) })
	case "http":
		err = need(args, 2, func() error { return httpClient(ctx, args[0], args[1]) })
	case "procs":
		err = procs(os.Stdout)
	case "browser":
		err = need(args, 1, func() error { return browser(ctx, args[0]) })
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "appdriver %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}

func need(args []string, n int, f func() error) error {
	if len(args) != n {
		return fmt.Errorf("want %d arguments, got %d", n, len(args))
	}
	return f()
}

// answers reads daemon.json and asks the daemon's API for its status
// without a token: a 401 with a Bearer challenge is the daemon answering.
func answers(ctx context.Context) error {
	file := filepath.Join(os.Getenv("APPDATA"), "Switchboard", "daemon.json")
	start := time.Now()
	var last error
	for ctx.Err() == nil {
		var info struct {
			Address string `json:"address"`
			PID     int    `json:"pid"`
		}
		data, err := os.ReadFile(file)
		if err == nil {
			err = json.Unmarshal(data, &info)
		}
		if err == nil {
			var resp *http.Response
			resp, err = http.Get(info.Address + "/api/v1/status")
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusUnauthorized && strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
					fmt.Printf("the daemon (pid %d) answers at %s, the address in %s (401 Bearer without a token), %d ms after the first look\n",
						info.PID, info.Address, file, time.Since(start).Milliseconds())
					return nil
				}
				err = fmt.Errorf("GET %s/api/v1/status: %s", info.Address, resp.Status)
			}
		}
		last = err
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("no answer from the daemon of %s: %w", file, last)
}

// entry is one mcpServers entry as Claude Desktop and Cursor read it.
type entry struct {
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
}

func readEntry(file, name string) (entry, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return entry{}, err
	}
	var doc struct {
		MCPServers map[string]entry `json:"mcpServers"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return entry{}, fmt.Errorf("%s: %w", file, err)
	}
	e, ok := doc.MCPServers[name]
	if !ok {
		return entry{}, fmt.Errorf("%s has no mcpServers.%s", file, name)
	}
	return e, nil
}

// childEnv is the environment Claude Desktop gives a server: its own
// (which has no SWITCHBOARD_* variable) plus the entry's env.
func childEnv(extra map[string]string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(strings.ToUpper(kv), "SWITCHBOARD_") {
			env = append(env, kv)
		}
	}
	for k, v := range extra {
		env = append(env, k+"="+v)
	}
	return env
}

// session is one MCP conversation, over stdio or HTTP.
type session interface {
	// call sends a request (id > 0) or a notification (id 0) and returns
	// the result of a request.
	call(ctx context.Context, id int, method string, params any) (json.RawMessage, error)
}

// converse runs initialize, tools/list and a tools/call of every echo tool
// (and of the test server's spawn tool, whose grandchild the tray's Quit
// must end too), and prints each step.
func converse(ctx context.Context, s session) error {
	t0 := time.Now()
	res, err := s.call(ctx, 1, "initialize", map[string]any{
		"protocolVersion": protocolVersion, "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "appdriver", "version": "1"},
	})
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	var init struct {
		ProtocolVersion string `json:"protocolVersion"`
		ServerInfo      struct{ Name, Version string }
	}
	_ = json.Unmarshal(res, &init)
	fmt.Printf("  initialize: %s %s, protocol %s (%d ms)\n", init.ServerInfo.Name, init.ServerInfo.Version, init.ProtocolVersion, time.Since(t0).Milliseconds())
	if _, err := s.call(ctx, 0, "notifications/initialized", map[string]any{}); err != nil {
		return fmt.Errorf("notifications/initialized: %w", err)
	}
	t0 = time.Now()
	res, err = s.call(ctx, 2, "tools/list", map[string]any{})
	if err != nil {
		return fmt.Errorf("tools/list: %w", err)
	}
	var list struct {
		Tools []struct {
			Name        string `json:"name"`
			InputSchema struct {
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"inputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(res, &list); err != nil {
		return fmt.Errorf("tools/list: %w", err)
	}
	var echoes, spawns []string
	argName := map[string]string{} // the echo tool's one argument: text (testmcp) or message (server-everything)
	for _, t := range list.Tools {
		switch {
		case strings.HasSuffix(t.Name, "echo"):
			echoes = append(echoes, t.Name)
			for p := range t.InputSchema.Properties {
				argName[t.Name] = p
			}
		case strings.HasSuffix(t.Name, "spawn"):
			spawns = append(spawns, t.Name)
		}
	}
	fmt.Printf("  tools/list: %d tools, echo tools %v (%d ms)\n", len(list.Tools), echoes, time.Since(t0).Milliseconds())
	if len(echoes) == 0 {
		return errors.New("tools/list has no echo tool")
	}
	id := 3
	for _, name := range echoes {
		t0 = time.Now()
		msg := "hello from Windows via " + name
		res, err := s.call(ctx, id, "tools/call", map[string]any{"name": name, "arguments": map[string]any{argName[name]: msg}})
		id++
		if err != nil {
			return fmt.Errorf("tools/call %s: %w", name, err)
		}
		if !bytes.Contains(res, []byte(msg)) {
			return fmt.Errorf("tools/call %s: the answer does not carry %q: %s", name, msg, res)
		}
		fmt.Printf("  tools/call %s: echoed (%d ms)\n", name, time.Since(t0).Milliseconds())
	}
	for _, name := range spawns {
		res, err := s.call(ctx, id, "tools/call", map[string]any{"name": name, "arguments": map[string]any{}})
		id++
		if err != nil {
			return fmt.Errorf("tools/call %s: %w", name, err)
		}
		fmt.Printf("  tools/call %s: %s\n", name, compact(res))
	}
	return nil
}

func compact(b []byte) string {
	var out bytes.Buffer
	if json.Compact(&out, b) != nil {
		return string(b)
	}
	return out.String()
}

// stdio starts the entry's command as Claude Desktop would and talks
// newline-delimited JSON-RPC over its stdin and stdout.
func stdio(ctx context.Context, file, name string) error {
	e, err := readEntry(file, name)
	if err != nil {
		return err
	}
	if e.Command == "" {
		return fmt.Errorf("mcpServers.%s in %s has no command", name, file)
	}
	fmt.Printf("  %s: command %q args %q env keys %v\n", name, e.Command, e.Args, keys(e.Env))
	cmd := exec.Command(e.Command, e.Args...)
	cmd.Env = childEnv(e.Env)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", e.Command, err)
	}
	s := &stdioSession{in: in, out: bufio.NewReader(out)}
	err = converse(ctx, s)
	// Claude Desktop ends a server by closing its stdin; the bridge exits.
	in.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case werr := <-done:
		if err == nil && werr != nil {
			err = fmt.Errorf("the bridge exited with %w after its stdin closed", werr)
		}
		fmt.Printf("  closed stdin: the bridge exited (%v)\n", werr)
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		err = errors.Join(err, errors.New("the bridge did not exit within 20 s of its stdin closing"))
	}
	return err
}

func keys(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

type stdioSession struct {
	in  io.Writer
	out *bufio.Reader
}

func (s *stdioSession) call(ctx context.Context, id int, method string, params any) (json.RawMessage, error) {
	msg := map[string]any{"jsonrpc": "2.0", "method": method, "params": params}
	if id > 0 {
		msg["id"] = id
	}
	line, err := json.Marshal(msg)
	if err != nil {
		return nil, err
	}
	if _, err := s.in.Write(append(line, '\n')); err != nil {
		return nil, err
	}
	if id == 0 {
		return nil, nil
	}
	type reply struct {
		line []byte
		err  error
	}
	for {
		got := make(chan reply, 1)
		go func() {
			l, err := s.out.ReadBytes('\n')
			got <- reply{l, err}
		}()
		var r reply
		select {
		case r = <-got:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if r.err != nil {
			return nil, fmt.Errorf("reading the answer: %w", r.err)
		}
		if res, ok, err := match(r.line, id); ok {
			return res, err
		}
	}
}

// match reads one JSON-RPC message: the result of request id, its error,
// or ok false for anything else (a notification, a request to the client).
func match(data []byte, id int) (json.RawMessage, bool, error) {
	var m struct {
		ID     *int            `json:"id"`
		Method string          `json:"method"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, true, fmt.Errorf("not JSON-RPC: %.200s", data)
	}
	if m.ID == nil || *m.ID != id || m.Method != "" {
		return nil, false, nil
	}
	if m.Error != nil {
		return nil, true, fmt.Errorf("error %d: %s", m.Error.Code, m.Error.Message)
	}
	return m.Result, true, nil
}

// httpClient talks streamable HTTP to the entry's url with its headers,
// as Cursor does.
func httpClient(ctx context.Context, file, name string) error {
	e, err := readEntry(file, name)
	if err != nil {
		return err
	}
	if e.URL == "" {
		return fmt.Errorf("mcpServers.%s in %s has no url", name, file)
	}
	fmt.Printf("  %s: url %s headers %v\n", name, e.URL, keys(e.Headers))
	s := &httpSession{url: e.URL, headers: e.Headers}
	err = converse(ctx, s)
	if s.session != "" {
		req, _ := http.NewRequestWithContext(ctx, http.MethodDelete, s.url, nil)
		s.header(req)
		if resp, derr := http.DefaultClient.Do(req); derr == nil {
			resp.Body.Close()
		}
	}
	return err
}

type httpSession struct {
	url, session string
	headers      map[string]string
}

func (s *httpSession) header(req *http.Request) {
	for k, v := range s.headers {
		req.Header.Set(k, v)
	}
	if s.session != "" {
		req.Header.Set("Mcp-Session-Id", s.session)
		req.Header.Set("Mcp-Protocol-Version", protocolVersion)
	}
}

func (s *httpSession) call(ctx context.Context, id int, method string, params any) (json.RawMessage, error) {
	msg := map[string]any{"jsonrpc": "2.0", "method": method, "params": params}
	if id > 0 {
		msg["id"] = id
	}
	body, err := json.Marshal(msg)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	s.header(req)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
		s.session = sid
	}
	if id == 0 {
		if resp.StatusCode != http.StatusAccepted && resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("%s: %s", method, resp.Status)
		}
		return nil, nil
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 500))
		return nil, fmt.Errorf("%s: %s: %s", method, resp.Status, b)
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return nil, err
		}
		res, _, err := match(b, id)
		return res, err
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data:")
		if !ok {
			continue
		}
		if res, ok, err := match([]byte(strings.TrimSpace(data)), id); ok {
			return res, err
		}
	}
	return nil, fmt.Errorf("%s: the event stream ended without an answer (%v)", method, sc.Err())
}

// browser is the default browser's stand-in: it records the link, follows
// it with a cookie jar (the sign-in sets the dashboard's session cookie and
// redirects to the page) and lists the servers with that cookie alone.
func browser(ctx context.Context, link string) (err error) {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	logFile := filepath.Join(filepath.Dir(exe), "browser.log")
	f, ferr := os.OpenFile(logFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if ferr != nil {
		return ferr
	}
	defer f.Close()
	fmt.Fprintf(f, "opened %s\n", link)
	defer func() {
		if err != nil {
			fmt.Fprintf(f, "FAIL %v\n", err)
		}
	}()
	u, err := url.Parse(link)
	if err != nil {
		return err
	}
	jar, err := cookiejar.New(nil)
	if err != nil {
		return err
	}
	c := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, link, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", link, err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Request.URL.Path != "/" {
		return fmt.Errorf("GET %s ended at %s with %s", link, resp.Request.URL, resp.Status)
	}
	if len(jar.Cookies(u)) == 0 {
		return fmt.Errorf("GET %s set no session cookie", link)
	}
	api := &url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/api/v1/servers"}
	resp, err = c.Get(api.String())
	if err != nil {
		return fmt.Errorf("GET %s with the session cookie: %w", api, err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s with the session cookie: %s: %.200s", api, resp.Status, body)
	}
	var servers []struct {
		Name  string `json:"name"`
		State string `json:"state"`
	}
	if err := json.Unmarshal(body, &servers); err != nil {
		return fmt.Errorf("GET %s: %w: %.200s", api, err, body)
	}
	var names []string
	for _, s := range servers {
		names = append(names, s.Name+"="+s.State)
	}
	fmt.Fprintf(f, "ok signed in: page %d bytes at %s, cookie set, %s lists %d servers %v\n",
		len(page), resp.Request.URL.Host, api.Path, len(servers), names)
	return nil
}
