package clients

import (
	"errors"
	"path/filepath"
	"sync"
	"time"
)

// Options configures an Editor.
type Options struct {
	// BackupDir holds backups, one folder per client:
	// <BackupDir>/<client>/<timestamp>-<basename>, and an index.json
	// recording which files were backed up. Required.
	BackupDir string
	// StateDir holds what Switchboard wrote into each client's file (the
	// entries and their fingerprints, the file before the first connect)
	// and the files' lock files. Empty means BackupDir/../clients.
	StateDir string
	// GatewayURL, when set, makes entries that point at the gateway
	// Switchboard's (whatever their name).
	GatewayURL string
	// BinaryPath is this switchboard binary: an entry that runs it with
	// `connect` is Switchboard's.
	BinaryPath string
	// Now is the clock for backup names; nil means time.Now.
	Now func() time.Time
}

// An Editor plans and applies changes to client configuration files. It
// is safe for concurrent use: the changes to one file are serialized in
// the process (see Do), and with other processes through a file lock.
type Editor struct {
	opts Options

	mu    sync.Mutex
	files map[string]*fileState

	// beforeCheck, when set (tests), runs just before Apply's last
	// comparison of the target: where another program's write would land.
	beforeCheck func(path string)
}

// fileState is what an Editor keeps about one client file.
type fileState struct {
	mu sync.Mutex // held while a change of the file is planned and applied
	// wrote maps the hash of the file before each of Switchboard's own
	// writes to the hash after it, so that a plan made before such a write
	// is known to be outdated by Switchboard alone. It is cleared when it
	// holds more than writeHistoryLimit.
	wrote map[string]string
}

// writeHistoryLimit bounds a file's write history (fileState.wrote). The
// history serves a plan the user was shown and has not confirmed yet,
// which only the few writes Switchboard made meanwhile outdate (two
// connects at once, a connect racing a disconnect): 64 is ample for those,
// and keeps the map of a daemon that runs for months at about 10 KiB per
// file (an entry is two 64-byte hex hashes) however often it rewrites the
// file. Clearing forgets the chains that started before it, so that a plan
// older than that is refused (ErrChanged) and planned again: never a lost
// write, only a rare second look.
const writeHistoryLimit = 64

// New returns an Editor.
func New(opts Options) (*Editor, error) {
	if opts.BackupDir == "" {
		return nil, errors.New("clients: Options.BackupDir is required")
	}
	if opts.StateDir == "" {
		opts.StateDir = filepath.Join(filepath.Dir(filepath.Clean(opts.BackupDir)), "clients")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Editor{opts: opts, files: map[string]*fileState{}}, nil
}

func (ed *Editor) file(path string) *fileState {
	ed.mu.Lock()
	defer ed.mu.Unlock()
	f, ok := ed.files[path]
	if !ok {
		f = &fileState{wrote: map[string]string{}}
		ed.files[path] = f
	}
	return f
}

// reaches reports whether Switchboard's own writes took the file from hash
// from to hash to.
func (f *fileState) reaches(from, to string) bool {
	for range len(f.wrote) + 1 {
		next, ok := f.wrote[from]
		if !ok {
			return false
		}
		if next == to {
			return true
		}
		from = next
	}
	return false
}
