package install

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/switchboardhq/switchboard/app/config"
	"github.com/switchboardhq/switchboard/supervisor"
)

// stopGrace is how long a verified server gets at each step of the
// shutdown (stdin closed, then SIGTERM) before the next.
const stopGrace = 2 * time.Second

// verify is the built-in VerifyFunc: start the server, initialize, list its
// tools, stop it.
func (in *Installer) verify(ctx context.Context, server string, launch config.Server, output func(string)) ([]Tool, error) {
	s, err := in.startSession(ctx, server, launch, output)
	if err != nil {
		return nil, err
	}
	defer s.close()
	var tools []Tool
	for t, err := range s.cs.Tools(ctx, nil) {
		if err != nil {
			return nil, s.explain(fmt.Errorf("tools/list: %w", err))
		}
		tools = append(tools, Tool{Name: t.Name, Title: t.Title, Description: t.Description})
	}
	return tools, nil
}

// A session is a started server with an initialized MCP client session.
// It owns the process group and ends it in close.
type session struct {
	cs         *mcp.ClientSession
	cmd        *exec.Cmd
	grp        *supervisor.ProcessGroup
	stdin      io.Closer
	exited     chan struct{}
	waitErr    error
	stderrDone chan struct{}
	stderrR    *os.File
}

// startSession starts launch in its own process group, with the SDK client
// on its pipes (the installer owns the process, as the supervisor does, so
// that a server under npx or uvx cannot outlive the check), and runs
// initialize. It gives up when ctx ends or the process exits.
func (in *Installer) startSession(ctx context.Context, server string, launch config.Server, output func(string)) (_ *session, err error) {
	var files []*os.File
	pipe := func() (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		files = append(files, r, w)
		return r, w, err
	}
	defer func() {
		if err != nil {
			for _, f := range files {
				f.Close()
			}
		}
	}()
	stdinR, stdinW, err1 := pipe()
	stdoutR, stdoutW, err2 := pipe()
	stderrR, stderrW, err3 := pipe()
	if err := errors.Join(err1, err2, err3); err != nil {
		return nil, fmt.Errorf("creating pipes: %w", err)
	}
	cmd := exec.Command(launch.Command, launch.Args...)
	cmd.Env = slices.Clone(in.env)
	for _, k := range slices.Sorted(maps.Keys(launch.Env)) {
		cmd.Env = append(cmd.Env, k+"="+launch.Env[k])
	}
	cmd.Dir = launch.Cwd
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinR, stdoutW, stderrW
	supervisor.PrepareGroup(cmd)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", launch.Command, err)
	}
	stdinR.Close()
	stdoutW.Close()
	stderrW.Close()
	s := &session{cmd: cmd, stdin: stdinW, exited: make(chan struct{}), stderrDone: make(chan struct{}), stderrR: stderrR}
	go func() {
		s.waitErr = cmd.Wait()
		close(s.exited)
	}()
	if s.grp, err = supervisor.NewProcessGroup(cmd); err != nil {
		_ = cmd.Process.Kill()
		<-s.exited
		return nil, err
	}
	go func() {
		defer close(s.stderrDone)
		readLines(stderrR, output)
	}()

	hctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-s.exited:
		case <-hctx.Done():
		}
		cancel()
	}()
	stdout := filterStdout(stdoutR, output)
	transport := &mcp.IOTransport{Reader: stdout, Writer: stdinW, MaxLineLength: -1}
	cs, err := supervisor.DefaultClient(server).Connect(hctx, transport,
		&mcp.ClientSessionOptions{ProtocolVersion: supervisor.DefaultProtocolVersion})
	if err != nil {
		err = s.explain(fmt.Errorf("initialize: %w", err))
		s.close()
		return nil, err
	}
	s.cs = cs
	return s, nil
}

// explain prefers the exit status when the server died.
func (s *session) explain(err error) error {
	select {
	case <-s.exited:
		<-s.stderrDoneOrTimeout()
		return fmt.Errorf("the server exited (%v) before answering", s.cmd.ProcessState)
	case <-time.After(200 * time.Millisecond):
		return err
	}
}

func (s *session) stderrDoneOrTimeout() <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		select {
		case <-s.stderrDone:
		case <-time.After(500 * time.Millisecond):
		}
		close(ch)
	}()
	return ch
}

// close shuts the server down the way the MCP spec asks (close stdin, wait,
// SIGTERM, wait, SIGKILL), applied to the whole group, then kills whatever
// is left in the group.
func (s *session) close() {
	if s.cs != nil {
		_ = s.cs.Close() // closes stdin and stdout through the transport
	}
	_ = s.stdin.Close()
	select {
	case <-s.exited:
	case <-time.After(stopGrace):
		_ = s.grp.Terminate()
		select {
		case <-s.exited:
		case <-time.After(stopGrace):
			_ = s.grp.Kill()
			<-s.exited
		}
	}
	_ = s.grp.Kill()
	select {
	case <-s.stderrDone:
	case <-time.After(time.Second):
		s.stderrR.Close()
		<-s.stderrDone
	}
	s.stderrR.Close()
	s.grp.Release()
}

// filterStdout passes on the JSON lines of r and sends any other line
// (a banner some servers print, against the spec) to other: the SDK would
// fail the session on it.
func filterStdout(r *os.File, other func(string)) io.ReadCloser {
	pr, pw := io.Pipe()
	go func() {
		br := bufio.NewReaderSize(r, 64<<10)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				trimmed := bytes.TrimSpace(line)
				if len(trimmed) > 0 && trimmed[0] != '{' && trimmed[0] != '[' {
					other("stdout: " + string(trimmed))
				} else if _, werr := pw.Write(line); werr != nil {
					break
				}
			}
			if err != nil {
				break
			}
		}
		pw.Close()
		r.Close()
	}()
	return pr
}
