package supervisor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/shirou/gopsutil/v3/process"
)

// RegistryFile is the name of the pid registry in Options.StateDir.
const RegistryFile = "processes.json"

// A registryEntry identifies a process the supervisor started. The start time
// makes it safe against pid reuse: a pid whose process started at another
// time is someone else's and is never touched.
type registryEntry struct {
	PID     int    `json:"pid"`
	Group   int    `json:"group"`
	Started int64  `json:"started"` // process creation time, ms since the epoch, as the OS reports it
	Server  string `json:"server"`
}

// registry is the on-disk list of live processes, rewritten atomically on
// every change so that it survives the daemon being killed.
type registry struct {
	path    string
	mu      sync.Mutex
	entries map[int]registryEntry // by pid
}

func newRegistry(path string) *registry {
	return &registry{path: path, entries: make(map[int]registryEntry)}
}

func (r *registry) add(e registryEntry) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.entries[e.PID] = e
	return r.saveLocked()
}

func (r *registry) remove(pid int) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.entries[pid]; !ok {
		return nil
	}
	delete(r.entries, pid)
	return r.saveLocked()
}

func (r *registry) saveLocked() error {
	if r.path == "" {
		return nil
	}
	list := make([]registryEntry, 0, len(r.entries))
	for _, e := range r.entries {
		list = append(list, e)
	}
	slices.SortFunc(list, func(a, b registryEntry) int { return a.PID - b.PID })
	data, err := json.MarshalIndent(list, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(r.path, append(data, '\n'), 0o600)
}

// SweptProcess is a process left behind by an earlier daemon, found in the
// registry at start and stopped.
type SweptProcess struct {
	PID    int    `json:"pid"`
	Server string `json:"server"`
}

// sweep stops every process group recorded by an earlier daemon whose leader
// is still the process that daemon started (same pid, same start time), or
// whose leader is gone while members of its group live on. It then empties
// the registry.
func (r *registry) sweep(ctx context.Context, logger *slog.Logger) ([]SweptProcess, error) {
	data, err := os.ReadFile(r.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading process registry: %w", err)
	}
	var list []registryEntry
	if err := json.Unmarshal(data, &list); err != nil {
		logger.Warn("process registry is unreadable; starting a new one", "file", r.path, "err", err)
		list = nil
	}
	var swept []SweptProcess
	for _, e := range list {
		if !ours(ctx, e) {
			continue
		}
		logger.Warn("stopping a server process left behind by an earlier daemon",
			"server", e.Server, "pid", e.PID)
		stopOrphanGroup(e.Group, 500*time.Millisecond)
		swept = append(swept, SweptProcess{PID: e.PID, Server: e.Server})
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return swept, r.saveLocked()
}

// ours reports whether the group recorded in e still belongs to a process we
// started. Linux and macOS do not hand out a pid that is still in use as a
// process group id, so a group whose leader is gone cannot have been reused;
// a leader pid alive with another start time means the old group died and
// the number went to someone else.
func ours(ctx context.Context, e registryEntry) bool {
	p, err := process.NewProcessWithContext(ctx, int32(e.PID))
	if err != nil { // no such process: only orphans of the group can be left
		return groupAlive(e.Group)
	}
	started, err := p.CreateTimeWithContext(ctx)
	return err == nil && started == e.Started
}

// processStartTime returns what ours compares against.
func processStartTime(ctx context.Context, pid int) (int64, error) {
	p, err := process.NewProcessWithContext(ctx, int32(pid))
	if err != nil {
		return 0, err
	}
	return p.CreateTimeWithContext(ctx)
}

// writeFileAtomic writes data to a temporary file beside path, syncs it and
// renames it over path, so readers see the old or the new content, never a
// torn one.
func writeFileAtomic(path string, data []byte, mode fs.FileMode) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // no-op after a successful rename
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
