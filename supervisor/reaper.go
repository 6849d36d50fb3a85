package supervisor

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ReaperEnv is set in the environment of the reaper process. A program whose
// supervisor uses a reaper must call RunReaperIfRequested first thing in main
// (and in TestMain), because the reaper is that same executable re-run.
const ReaperEnv = "SWITCHBOARD_REAPER"

// RunReaperIfRequested runs the reaper and exits when ReaperEnv is set, and
// returns at once otherwise.
//
// The reaper reads "+GROUP" and "-GROUP" lines from stdin, which the daemon
// holds the other end of. When stdin ends — the daemon exited or was killed,
// even by SIGKILL, since the kernel closes a dead process's pipes — it stops
// every group still recorded and exits.
func RunReaperIfRequested() {
	if os.Getenv(ReaperEnv) != "1" {
		return
	}
	ignoreHangup()
	groups := readReaperCommands(os.Stdin)
	var wg sync.WaitGroup
	for g := range groups {
		wg.Go(func() { stopOrphanGroup(g, 500*time.Millisecond) })
	}
	wg.Wait()
	os.Exit(0)
}

// readReaperCommands applies "+N"/"-N" lines until r ends and returns the
// groups still recorded.
func readReaperCommands(r io.Reader) map[int]struct{} {
	groups := make(map[int]struct{})
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if len(line) < 2 {
			continue
		}
		n, err := strconv.Atoi(line[1:])
		if err != nil || n <= 1 {
			continue
		}
		switch line[0] {
		case '+':
			groups[n] = struct{}{}
		case '-':
			delete(groups, n)
		}
	}
	return groups
}

// reaper is the daemon's end of the pipe to the reaper process.
type reaper struct {
	mu  sync.Mutex
	w   io.WriteCloser
	cmd *exec.Cmd
}

// startReaper starts argv as the reaper, in a process group of its own so that
// a Ctrl-C meant for the daemon does not take it down first.
func startReaper(argv []string) (*reaper, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(WithoutSwitchboardEnv(os.Environ()), ReaperEnv+"=1")
	prepareGroup(cmd)
	clearDeathSignal(cmd)
	w, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("starting reaper: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting reaper %s: %w", argv[0], err)
	}
	return &reaper{w: w, cmd: cmd}, nil
}

func (r *reaper) send(op byte, group int) error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	_, err := fmt.Fprintf(r.w, "%c%d\n", op, group)
	return err
}

func (r *reaper) watch(group int) error   { return r.send('+', group) }
func (r *reaper) unwatch(group int) error { return r.send('-', group) }

// close ends the reaper: with nothing left to watch it exits at once.
func (r *reaper) close() error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	err := r.w.Close()
	r.mu.Unlock()
	if werr := r.cmd.Wait(); err == nil {
		err = werr
	}
	return err
}
