package supervisor

import (
	"context"
	"maps"
	"sync"
	"time"
)

// sampler measures the CPU and memory of every server's process trees.
type sampler struct {
	mu   sync.Mutex
	last map[string]map[int]*Usage // server → root pid → latest sample
	cpu  map[int]cpuMark           // root pid → CPU seconds of its tree at the last sample
}

type cpuMark struct {
	at      time.Time
	seconds float64
}

func newSampler() *sampler {
	return &sampler{last: make(map[string]map[int]*Usage), cpu: make(map[int]cpuMark)}
}

func (sm *sampler) perProcess(server string) map[int]*Usage {
	sm.mu.Lock()
	defer sm.mu.Unlock()
	return maps.Clone(sm.last[server])
}

// sample measures the trees rooted at each server's ready processes and
// returns each server's total. One pass finds every tree
// (childrenByParent), none when no server runs; the figures of the
// processes in the trees come from gopsutil (processOf).
func (sm *sampler) sample(ctx context.Context, roots map[string][]int) map[string]*Usage {
	var all []int32
	for _, pids := range roots {
		for _, pid := range pids {
			all = append(all, int32(pid))
		}
	}
	var children map[int32][]int32
	if len(all) > 0 {
		children = childrenByParent(ctx, all)
	}
	now := time.Now()
	totals := make(map[string]*Usage, len(roots))
	last := make(map[string]map[int]*Usage, len(roots))
	seen := make(map[int]bool)

	sm.mu.Lock()
	defer sm.mu.Unlock()
	for server, pids := range roots {
		total := &Usage{}
		per := make(map[int]*Usage, len(pids))
		for _, root := range pids {
			u, cpuSeconds := treeUsage(ctx, root, children)
			if prev, ok := sm.cpu[root]; ok {
				if wall := now.Sub(prev.at).Seconds(); wall > 0 {
					u.CPUPercent = max(0, (cpuSeconds-prev.seconds)/wall*100)
				}
			}
			sm.cpu[root] = cpuMark{at: now, seconds: cpuSeconds}
			seen[root] = true
			per[root] = u
			total.CPUPercent += u.CPUPercent
			total.RSSBytes += u.RSSBytes
			total.Processes += u.Processes
		}
		totals[server] = total
		last[server] = per
	}
	for pid := range sm.cpu {
		if !seen[pid] {
			delete(sm.cpu, pid)
		}
	}
	sm.last = last
	return totals
}

// treeUsage sums RSS, process count and CPU seconds over root and its
// descendants.
func treeUsage(ctx context.Context, root int, children map[int32][]int32) (*Usage, float64) {
	u := &Usage{}
	var cpuSeconds float64
	queue := []int32{int32(root)}
	for len(queue) > 0 {
		pid := queue[0]
		queue = append(queue[1:], children[pid]...)
		p, err := processOf(ctx, pid)
		if err != nil {
			continue
		}
		u.Processes++
		if mem, err := p.MemoryInfoWithContext(ctx); err == nil {
			u.RSSBytes += mem.RSS
		}
		if t, err := p.TimesWithContext(ctx); err == nil {
			cpuSeconds += t.User + t.System
		}
	}
	return u, cpuSeconds
}
