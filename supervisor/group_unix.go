//go:build unix

package supervisor

import (
	"errors"
	"os/exec"
	"syscall"
	"time"
)

// prepareGroup makes the child the leader of a new process group, so that
// stopping it reaches every process it starts (npx → node, uvx → python).
func prepareGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setDeathSignal(cmd.SysProcAttr)
}

// A group is the set of processes a server runs: on Unix, the process group
// its leader created at exec.
type group struct{ pgid int }

func newGroup(cmd *exec.Cmd) (*group, error) { return &group{pgid: cmd.Process.Pid}, nil }

// id is what the registry and the reaper record.
func (g *group) id() int { return g.pgid }

func (g *group) terminate() error { return signalGroup(g.pgid, syscall.SIGTERM) }
func (g *group) kill() error      { return signalGroup(g.pgid, syscall.SIGKILL) }
func (g *group) alive() bool      { return groupAlive(g.pgid) }
func (g *group) release()         {}

// signalGroup sends sig to every process in the group led by pgid.
// A group that no longer exists is not an error.
func signalGroup(pgid int, sig syscall.Signal) error {
	if pgid <= 1 {
		return errors.New("refusing to signal process group <= 1")
	}
	err := syscall.Kill(-pgid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// stopOrphanGroup asks every process in group pgid to terminate and kills
// whatever is left after grace. The members are not our children, so there is
// no exit to wait on: the group is polled instead.
func stopOrphanGroup(pgid int, grace time.Duration) {
	_ = signalGroup(pgid, syscall.SIGTERM)
	deadline := time.Now().Add(grace)
	for groupAlive(pgid) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	_ = signalGroup(pgid, syscall.SIGKILL)
}
