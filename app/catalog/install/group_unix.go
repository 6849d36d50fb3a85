//go:build unix

package install

import (
	"errors"
	"os/exec"
	"syscall"
)

// setGroup makes the child lead a new process group, so that cancelling
// reaches what it starts (npm runs node, sh and install scripts; uvx runs
// python) and not only the direct child. The pattern is the supervisor's
// (supervisor/group_unix.go).
func setGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setDeathSignal(cmd.SysProcAttr)
}

// A group is the process group a child leads.
type group struct{ pgid int }

func newGroup(cmd *exec.Cmd) (*group, error) { return &group{pgid: cmd.Process.Pid}, nil }

func (g *group) terminate() error { return signalGroup(g.pgid, syscall.SIGTERM) }
func (g *group) kill() error      { return signalGroup(g.pgid, syscall.SIGKILL) }
func (g *group) release()         {}

// alive reports whether any process of the group is left.
func (g *group) alive() bool { return groupAlive(g.pgid) }

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
