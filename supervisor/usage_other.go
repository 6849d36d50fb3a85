//go:build !linux

package supervisor

import (
	"context"

	"github.com/shirou/gopsutil/v3/process"
)

// childrenByParent maps each pid on the machine to its children's pids
// (roots, the trees sampled, are for Linux: see usage_linux.go).
func childrenByParent(ctx context.Context, _ []int32) map[int32][]int32 {
	procs, err := process.ProcessesWithContext(ctx)
	if err != nil {
		return nil
	}
	children := make(map[int32][]int32)
	for _, p := range procs {
		if ppid, err := p.PpidWithContext(ctx); err == nil {
			children[ppid] = append(children[ppid], p.Pid)
		}
	}
	return children
}

// processOf returns gopsutil's view of pid, for its figures.
func processOf(ctx context.Context, pid int32) (*process.Process, error) {
	return process.NewProcessWithContext(ctx, pid)
}
