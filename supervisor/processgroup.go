package supervisor

import "os/exec"

// A ProcessGroup holds a child process and every process it starts (its
// process group on Unix, a Job Object with KILL_ON_JOB_CLOSE on Windows), so
// that stopping it leaves nothing behind: npm runs node and install scripts,
// uvx runs python. The supervisor runs servers in one; it is exported for
// other short-lived programs the daemon runs (the installer).
type ProcessGroup struct{ g *group }

// PrepareGroup sets cmd up, before Start, to lead a new group (and, on
// Linux, to be killed if the daemon dies).
func PrepareGroup(cmd *exec.Cmd) { prepareGroup(cmd) }

// NewProcessGroup returns the group of a started cmd prepared with
// PrepareGroup. Release it when done.
func NewProcessGroup(cmd *exec.Cmd) (*ProcessGroup, error) {
	g, err := newGroup(cmd)
	if err != nil {
		return nil, err
	}
	return &ProcessGroup{g: g}, nil
}

// Terminate asks every process of the group to stop (SIGTERM; on Windows,
// where console programs get no such signal, it kills them).
func (p *ProcessGroup) Terminate() error { return p.g.terminate() }

// Kill kills every process of the group.
func (p *ProcessGroup) Kill() error { return p.g.kill() }

// Alive reports whether a process of the group is left (zombies do not
// count on Linux).
func (p *ProcessGroup) Alive() bool { return p.g.alive() }

// Release frees what the group holds (the Job Object's handle on Windows,
// which kills what is left).
func (p *ProcessGroup) Release() { p.g.release() }
