package tray

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"time"
)

// Windows starts the dashboard window process (`switchboard window`) and
// closes it on Quit. A second Open starts the program again: the window
// program is single-instance, so the new process hands its --path to the
// open window, which comes to the front, and exits.
type Windows struct {
	command []string // the window program and its arguments
	log     *slog.Logger

	mu    sync.Mutex
	procs map[int]*windowProc
}

type windowProc struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// NewWindows returns a launcher of command (program first), e.g.
// {"/usr/bin/switchboard-window", "window", "--home", "/home/u/.local/share/switchboard"}.
func NewWindows(command []string, log *slog.Logger) (*Windows, error) {
	if len(command) == 0 {
		return nil, errors.New("tray: no window command")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Windows{command: command, log: log, procs: map[int]*windowProc{}}, nil
}

// Open starts the window program, showing path ("" for the start page).
func (w *Windows) Open(path string) error {
	args := append([]string(nil), w.command[1:]...)
	if path != "" {
		args = append(args, "--path", path)
	}
	cmd := exec.Command(w.command[0], args...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("opening the window (%s): %w", w.command[0], err)
	}
	p := &windowProc{cmd: cmd, done: make(chan struct{})}
	pid := cmd.Process.Pid
	w.mu.Lock()
	w.procs[pid] = p
	w.mu.Unlock()
	w.log.Info("tray: window started", "pid", pid, "path", path)
	// Waiting reaps the process: PID 1 does not, on some machines.
	go func() {
		p.err = cmd.Wait()
		w.mu.Lock()
		delete(w.procs, pid)
		w.mu.Unlock()
		close(p.done)
		w.log.Info("tray: window exited", "pid", pid, "status", p.err)
	}()
	return nil
}

// PIDs are the window processes that run now.
func (w *Windows) PIDs() []int {
	w.mu.Lock()
	defer w.mu.Unlock()
	var pids []int
	for pid := range w.procs {
		pids = append(pids, pid)
	}
	return pids
}

// Close asks every window process to end (SIGTERM: Wails closes the
// window and exits 0) and waits for them; those still running when ctx
// ends are killed.
func (w *Windows) Close(ctx context.Context) error {
	w.mu.Lock()
	procs := make([]*windowProc, 0, len(w.procs))
	for _, p := range w.procs {
		procs = append(procs, p)
	}
	w.mu.Unlock()
	for _, p := range procs {
		terminate(p.cmd.Process)
	}
	var errs []error
	for _, p := range procs {
		select {
		case <-p.done:
		case <-ctx.Done():
			p.cmd.Process.Kill()
			select {
			case <-p.done:
			case <-time.After(5 * time.Second):
				errs = append(errs, fmt.Errorf("window process %d did not exit", p.cmd.Process.Pid))
			}
		}
	}
	return errors.Join(errs...)
}
