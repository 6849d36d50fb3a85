package clients

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/gofrs/flock"

	"github.com/switchboardhq/switchboard/app/atomicfile"
)

// ErrChanged is returned (wrapped) by Apply when the file is no longer what
// the plan was made from: someone wrote it between Plan and Apply.
var ErrChanged = errors.New("the file changed since the plan was made; make a new plan")

// ErrConflict is returned (wrapped, in a *ConflictError) by Apply when the
// plan would replace entries Switchboard did not write and the change did
// not ask to take them over.
var ErrConflict = errors.New("the file has entries of the same name that Switchboard did not write")

// A ConflictError is Apply's refusal to replace entries Switchboard did
// not write. Its message names them and says the file was left as it is;
// how to replace them anyway (Connect.TakeOver) is the caller's to word
// (the API names the command line's --replace).
type ConflictError struct {
	Path      string
	Conflicts []Conflict
}

func (e *ConflictError) Error() string {
	var names []string
	for _, c := range e.Conflicts {
		names = append(names, c.String())
	}
	return fmt.Sprintf("%s already has %s, which Switchboard did not write; it was left as it is",
		e.Path, strings.Join(names, " and "))
}

func (e *ConflictError) Unwrap() error { return ErrConflict }

// lockPath is the lock file of path: in the state folder, so that nothing
// of Switchboard's is left beside the client's file.
func (ed *Editor) lockPath(path string) string {
	h := sha256.Sum256([]byte(path))
	return filepath.Join(ed.opts.StateDir, "locks", hex.EncodeToString(h[:12])+".lock")
}

// Do plans change and applies it at once, serialized with every other
// change of the same file in this Editor: two changes of one file never
// race, and the second is planned from what the first wrote. seen, when
// not empty, is the Hash of the plan the user was shown: the change is
// refused (ErrChanged) when the file changed since, unless only
// Switchboard's own writes changed it, in which case the fresh plan is
// applied. The plan is returned also when Apply refuses it.
func (ed *Editor) Do(c Client, env Env, change Change, seen string) (*Plan, error) {
	path, err := c.Path(env)
	if err != nil {
		return nil, err
	}
	f := ed.file(path)
	f.mu.Lock()
	defer f.mu.Unlock()
	p, err := ed.Plan(c, env, change)
	if err != nil {
		return nil, err
	}
	if seen != "" && seen != p.Hash && !f.reaches(seen, p.Hash) {
		return p, fmt.Errorf("%s: %w", path, ErrChanged)
	}
	return p, ed.apply(f, p)
}

// Apply writes the plan: it locks the file, checks that the file is still
// what the plan was made from (else an error wrapping ErrChanged, and
// nothing is written), backs it up when Switchboard has not changed it
// before (see Backups), and replaces it atomically. An absent file is
// created with mode 0600, its missing folders with 0700. A plan that
// changes nothing writes nothing. A plan with Conflicts is refused (a
// *ConflictError) unless TakeOver is set.
//
// The new content is written to a temporary file first; the target is
// read and compared once more just before the temporary file is renamed
// over it, so that an edit another program made meanwhile is reported
// (ErrChanged) instead of overwritten.
func (ed *Editor) Apply(p *Plan) error {
	f := ed.file(p.Path)
	f.mu.Lock()
	defer f.mu.Unlock()
	return ed.apply(f, p)
}

func (ed *Editor) apply(f *fileState, p *Plan) error {
	if len(p.Conflicts) > 0 && !p.TakeOver {
		return &ConflictError{Path: p.Path, Conflicts: p.Conflicts}
	}
	if !p.Changed() {
		return ed.record(p)
	}
	if !p.Remove {
		if err := os.MkdirAll(filepath.Dir(p.Path), 0o700); err != nil {
			return fmt.Errorf("creating the folder of %s: %w", p.Path, err)
		}
	}
	if err := os.MkdirAll(filepath.Dir(ed.lockPath(p.Path)), 0o700); err != nil {
		return fmt.Errorf("creating the lock folder: %w", err)
	}
	lock := flock.New(ed.lockPath(p.Path))
	if err := lock.Lock(); err != nil {
		return fmt.Errorf("locking %s: %w", p.Path, err)
	}
	defer lock.Unlock()

	unchanged := func() error {
		if ed.beforeCheck != nil {
			ed.beforeCheck(p.Path)
		}
		cur, err := os.ReadFile(p.Path)
		exists := err == nil
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("reading %s: %w", p.Path, err)
		}
		if exists != p.Exists || hashOf(cur) != p.Hash {
			return fmt.Errorf("%s: %w", p.Path, ErrChanged)
		}
		return nil
	}
	if err := unchanged(); err != nil {
		return err
	}
	if err := ed.backupOnce(p.Client, p.Path, p.Original, p.Exists); err != nil {
		return err
	}
	if p.Force {
		restore, err := makeWritable(p.Path)
		if err != nil {
			return err
		}
		defer restore()
	}
	if p.Remove {
		if err := unchanged(); err != nil {
			return err
		}
		if err := os.Remove(p.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("removing %s: %w", p.Path, err)
		}
		for _, dir := range p.removeDirs {
			if os.Remove(dir) != nil {
				break // not empty: something else lives there now
			}
		}
	} else if err := atomicfile.WriteChecked(p.Path, p.New, 0o600, unchanged); err != nil {
		return err
	}
	after := hashOf(p.New)
	if len(f.wrote) > writeHistoryLimit {
		clear(f.wrote)
	}
	f.wrote[p.Hash] = after
	return ed.record(p)
}

// record saves the ownership record a plan leads to.
func (ed *Editor) record(p *Plan) error {
	if p.own == nil {
		return nil
	}
	if err := ed.saveOwnership(p.Client, p.own); err != nil {
		return fmt.Errorf("%s was written, but: %w", p.Path, err)
	}
	return nil
}
