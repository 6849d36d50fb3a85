package clients

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gofrs/flock"

	"github.com/switchboardhq/switchboard/app/atomicfile"
)

// A Backup is the content a file had before Switchboard first changed it.
type Backup struct {
	Client string    `json:"client"`
	Path   string    `json:"path"`           // the configuration file
	File   string    `json:"file,omitempty"` // the copy; empty when Absent
	Absent bool      `json:"absent"`         // there was no file: restoring removes it
	Time   time.Time `json:"time"`
}

// Name names the backup among its client's: the copy's file name, or, for a
// file that did not exist, its time and "-absent-" and the file's name.
func (b Backup) Name() string {
	if b.File != "" {
		return filepath.Base(b.File)
	}
	return b.Time.UTC().Format(backupTime) + "-absent-" + filepath.Base(b.Path)
}

// backupTime is the layout of the time in backup names.
const backupTime = "20060102T150405.000000000Z"

// FindBackup returns the backup of client called name (see Backup.Name).
func (ed *Editor) FindBackup(client, name string) (Backup, error) {
	bs, err := ed.Backups(client)
	if err != nil {
		return Backup{}, err
	}
	var names []string
	for _, b := range bs {
		if b.Name() == name {
			return b, nil
		}
		names = append(names, b.Name())
	}
	if len(names) == 0 {
		return Backup{}, fmt.Errorf("%s has no backups: Switchboard has not changed its file", client)
	}
	return Backup{}, fmt.Errorf("%s has no backup %q: it has %s", client, name, strings.Join(names, ", "))
}

func (ed *Editor) backupDir(client string) string { return filepath.Join(ed.opts.BackupDir, client) }

// Backups lists the backups of a client, oldest first.
func (ed *Editor) Backups(client string) ([]Backup, error) {
	data, err := os.ReadFile(filepath.Join(ed.backupDir(client), "index.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	var idx []Backup
	if err := json.Unmarshal(data, &idx); err != nil {
		return nil, fmt.Errorf("reading the backup index of %s: %w", client, err)
	}
	return idx, nil
}

// backupOnce copies a file before the first change Switchboard makes to
// it. The index records the files already backed up, so later changes
// (which only touch Switchboard's own entries) are not backed up again and
// the backup stays the user's own version.
func (ed *Editor) backupOnce(c Client, path string, data []byte, exists bool) error {
	dir := ed.backupDir(c.ID)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating the backup folder: %w", err)
	}
	lock := flock.New(filepath.Join(dir, "index.json.lock"))
	if err := lock.Lock(); err != nil {
		return fmt.Errorf("locking the backup index: %w", err)
	}
	defer lock.Unlock()
	idx, err := ed.Backups(c.ID)
	if err != nil {
		return err
	}
	for _, b := range idx {
		if b.Path == path {
			return nil
		}
	}
	now := ed.opts.Now().UTC()
	b := Backup{Client: c.ID, Path: path, Absent: !exists, Time: now}
	if exists {
		name := now.Format(backupTime) + "-" + filepath.Base(path)
		b.File = filepath.Join(dir, name)
		for i := 2; fileExists(b.File); i++ {
			b.File = filepath.Join(dir, fmt.Sprintf("%s.%d", name, i))
		}
		if err := atomicfile.Write(b.File, data, 0o600); err != nil {
			return fmt.Errorf("backing up %s: %w", path, err)
		}
	}
	idx = append(idx, b)
	out, err := json.MarshalIndent(idx, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(dir, "index.json"), append(out, '\n'), 0o600)
}

func fileExists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// PlanRestore plans putting backup b back in place of client c's file in
// env: the file gets the backup's bytes again, or is removed when the
// backup records that there was no file. Nothing is written; Apply writes
// the plan like any other, under the file's lock and only if the file is
// still what the plan was made from. The backup stays, and stays the one
// later changes do not replace.
func (ed *Editor) PlanRestore(c Client, env Env, b Backup) (*Plan, error) {
	path, err := c.Path(env)
	if err != nil {
		return nil, err
	}
	if b.Path != path || (b.Client != "" && b.Client != c.ID) {
		return nil, fmt.Errorf("the backup is of %s, not of %s", b.Path, path)
	}
	data, err := os.ReadFile(path)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	p := &Plan{Client: c, Path: path, Exists: exists, Original: data, Hash: hashOf(data)}
	if b.Absent {
		p.Remove = exists
	} else {
		if p.New, err = os.ReadFile(b.File); err != nil {
			return nil, fmt.Errorf("reading the backup of %s: %w", path, err)
		}
		if p.New == nil {
			p.New = []byte{}
		}
	}
	// Mask the secrets of both versions; either may not parse (the
	// current file may have been broken by hand), and then has none to
	// mask.
	var shown []Entry
	for _, b := range [][]byte{data, p.New} {
		if doc, err := openDocument(c, path, b); err == nil {
			if es, err := doc.entries(); err == nil {
				shown = append(shown, es...)
			}
		}
	}
	if p.Changed() {
		p.Diff = maskDiff(Diff(path, data, p.New), shown)
	}
	return p, nil
}

// Restore puts backup b back in place of client c's file in env, under the
// file's lock and atomically: PlanRestore, then Apply. A backup of an
// absent file removes the file.
func (ed *Editor) Restore(c Client, env Env, b Backup) error {
	p, err := ed.PlanRestore(c, env, b)
	if err != nil {
		return err
	}
	return ed.Apply(p)
}
