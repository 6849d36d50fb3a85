package install

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/supervisor"
)

// tailLines is how many of the installer's last output lines an error keeps.
const tailLines = 20

// A reporter serializes progress callbacks (lines arrive from several
// goroutines), keeps the last output lines for errors, and blanks out
// secret values before anything leaves the installer.
type reporter struct {
	mu      sync.Mutex
	fn      func(Progress)
	phase   Phase
	tail    []string
	secrets []string
}

func (r *reporter) redact(s string) string {
	for _, v := range r.secrets {
		if len(v) >= 3 { // shorter values would blank out ordinary text
			s = strings.ReplaceAll(s, v, "[secret]")
		}
	}
	return s
}

func (r *reporter) addSecret(v string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.secrets = append(r.secrets, v)
}

// begin enters phase and says what happens in it.
func (r *reporter) begin(p Phase, msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.phase = p
	r.emit(Progress{Phase: p, Line: r.redact(msg), Percent: phasePercent[p]})
}

// status is a line of Switchboard's own in the current phase.
func (r *reporter) status(msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.emit(Progress{Phase: r.phase, Line: r.redact(msg), Percent: phasePercent[r.phase]})
}

// output is one line the installer (npm, uvx, docker, the server) wrote.
func (r *reporter) output(line string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	line = r.redact(line)
	r.tail = append(r.tail, line)
	if len(r.tail) > tailLines {
		r.tail = r.tail[len(r.tail)-tailLines:]
	}
	r.emit(Progress{Phase: r.phase, Line: line, Output: true, Percent: phasePercent[r.phase]})
}

func (r *reporter) finish(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := Progress{Phase: r.phase, Done: true, Percent: 100}
	if err != nil {
		p.Err = r.redact(err.Error())
		p.Percent = phasePercent[r.phase]
	}
	r.emit(p)
}

func (r *reporter) lastOutput() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.tail...)
}

func (r *reporter) currentPhase() Phase {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.phase
}

func (r *reporter) emit(p Progress) {
	if r.fn != nil {
		r.fn(p)
	}
}

var phasePercent = map[Phase]int{PhaseResolve: 0, PhaseDownload: 10, PhaseInstall: 60, PhaseVerify: 80}

// readLines calls fn with each line of rd; "\r" also ends a line (progress
// bars redraw with it). Overlong lines are cut, not buffered without bound.
func readLines(rd io.Reader, fn func(string)) {
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	sc.Split(func(data []byte, atEOF bool) (int, []byte, error) {
		for i, c := range data {
			if c == '\n' || c == '\r' {
				return i + 1, data[:i], nil
			}
		}
		if atEOF && len(data) > 0 {
			return len(data), data, nil
		}
		if len(data) >= 64<<10 {
			return len(data), data, nil
		}
		return 0, nil, nil
	})
	for sc.Scan() {
		if line := strings.TrimRight(sc.Text(), " \t"); line != "" {
			fn(line)
		}
	}
}

// run executes argv (no shell: every element is one argument) in dir with
// env, streaming its stdout and stderr lines to rep. The child leads its own
// process group; cancelling ctx kills the whole group at once (an install
// being cancelled has nothing worth a graceful stop), and once the child is
// done whatever it left in the group is killed too.
func run(ctx context.Context, rep *reporter, dir string, env []string, argv []string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("creating pipe: %w", err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = w, w
	supervisor.PrepareGroup(cmd)
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		return fmt.Errorf("starting %s: %w", argv[0], err)
	}
	w.Close()
	exited := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()
	grp, gerr := supervisor.NewProcessGroup(cmd)
	if gerr != nil {
		_ = cmd.Process.Kill()
		<-exited
		r.Close()
		return gerr
	}
	defer grp.Release()
	linesDone := make(chan struct{})
	go func() {
		defer close(linesDone)
		readLines(r, rep.output)
	}()

	var cancelled error
	select {
	case <-exited:
	case <-ctx.Done():
		cancelled = ctx.Err()
		_ = grp.Kill()
		<-exited
	}
	_ = grp.Kill() // leftovers: a script's background child
	// A descendant that left the group may hold the pipe open; do not wait
	// for it forever.
	select {
	case <-linesDone:
	case <-time.After(2 * time.Second):
		r.Close()
		<-linesDone
	}
	r.Close()
	if cancelled != nil {
		return fmt.Errorf("%s was stopped: %w", argv[0], cancelled)
	}
	if waitErr != nil {
		var ee *exec.ExitError
		if errors.As(waitErr, &ee) {
			return fmt.Errorf("%s failed (%s)", argv[0], ee.ProcessState)
		}
		return fmt.Errorf("%s: %w", argv[0], waitErr)
	}
	return nil
}
