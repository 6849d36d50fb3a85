package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/switchboardhq/switchboard/app/atomicfile"
	"github.com/switchboardhq/switchboard/supervisor"
)

// Info describes a running daemon; it is written to daemon.json (0600) in
// the data directory while the daemon runs, so that CLI verbs, the window
// and a second launch can find it.
type Info struct {
	PID     int       `json:"pid"`
	Address string    `json:"address"` // base URL, e.g. http://127.0.0.1:7391
	Home    string    `json:"home"`
	Version string    `json:"version"`
	Started time.Time `json:"started"`
}

// Alive reports whether the daemon's process still runs.
func (i Info) Alive() bool { return supervisor.ProcessAlive(i.PID) }

// APIURL is the base of the daemon's REST API.
func (i Info) APIURL() string { return i.Address + "/api/v1" }

// ErrNotRunning is returned by ReadInfo when no daemon runs for a home.
var ErrNotRunning = errors.New("switchboard is not running")

// ReadInfo returns the daemon running for home, or an error wrapping
// ErrNotRunning when there is none (no daemon.json, or its pid is gone).
func ReadInfo(home string) (Info, error) {
	path := filepath.Join(home, InfoFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Info{}, fmt.Errorf("%w for %s; start it with `switchboard serve`", ErrNotRunning, home)
	}
	if err != nil {
		return Info{}, fmt.Errorf("reading %s: %w", path, err)
	}
	var info Info
	if err := json.Unmarshal(data, &info); err != nil {
		return Info{}, fmt.Errorf("reading %s: %w", path, err)
	}
	if !supervisor.ProcessAlive(info.PID) {
		return Info{}, fmt.Errorf("%w for %s (daemon.json names pid %d, which has exited); start it with `switchboard serve`",
			ErrNotRunning, home, info.PID)
	}
	return info, nil
}

// WaitExited polls until the daemon process pid has exited (after a quit)
// or ctx ends.
func WaitExited(ctx context.Context, pid int) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for supervisor.ProcessAlive(pid) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
	return nil
}

func writeInfo(home string, info Info) error {
	data, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(home, InfoFile), append(data, '\n'), 0o600)
}
