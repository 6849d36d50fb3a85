package clients

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// A Plan is a change to one file, computed and not yet written.
type Plan struct {
	Client   Client
	Path     string
	Exists   bool   // the file existed when the plan was made
	Original []byte // its bytes then
	Hash     string // hex SHA-256 of Original
	New      []byte // the bytes Apply writes
	// Remove makes Apply delete the file instead of writing New: restoring
	// the backup of a file that did not exist, or disconnecting from a
	// file connect created.
	Remove bool
	// Diff shows the change as a unified diff. The token, and the values of
	// environment variables and headers that look secret (see IsSecret),
	// are masked in it (New holds the real ones).
	Diff string
	// Conflicts are entries of the names Switchboard writes that it did
	// not write itself: the plan replaces them, and Apply refuses unless
	// TakeOver is set.
	Conflicts []Conflict
	// TakeOver allows Apply to replace the Conflicts.
	TakeOver bool
	// Earlier are entries of the names Switchboard writes that an earlier
	// Switchboard wrote (see earlierSwitchboard): the plan replaces them
	// without asking, as Switchboard's own, and says so in Notes.
	Earlier []Conflict
	// Kept are entries with Switchboard's names that disconnect leaves in
	// place, because Switchboard did not write them.
	Kept []string
	// Notes say what the plan does not undo and why.
	Notes []string
	// Force writes a read-only file or into a read-only folder.
	Force bool

	own        *ownership // the record after Apply; nil leaves it as it is
	removeDirs []string   // folders to remove (when empty) after Remove
	// What the edit wrote and took out, for reading the result back
	// before it is written (see readBack).
	wrote   map[string]obj
	removed []string
}

// A Conflict is an entry of a name Switchboard writes ("switchboard",
// "switchboard-<server>") that Switchboard did not write.
type Conflict struct {
	Name string `json:"name"`
	// What the entry runs or points at.
	Target string `json:"target"`
}

func (c Conflict) String() string { return fmt.Sprintf("%q (%s)", c.Name, c.Target) }

// Changed reports whether applying the plan would change the file.
func (p *Plan) Changed() bool {
	if p.Remove {
		return p.Exists
	}
	if !p.Exists {
		return p.New != nil
	}
	return !bytes.Equal(p.Original, p.New)
}

func hashOf(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// changeFlags are the options every change has.
func changeFlags(ch Change) (binary string, force, takeOver bool) {
	switch ch := ch.(type) {
	case Connect:
		return ch.BinaryPath, ch.Force, ch.TakeOver
	case Replace:
		return ch.Connect.BinaryPath, ch.Connect.Force, ch.Connect.TakeOver
	case Disconnect:
		return "", ch.Force, false
	}
	return "", false, false
}

// Plan computes change for client c's file in env. Nothing is written.
// An absent file is planned as created with the shape the client expects.
func (ed *Editor) Plan(c Client, env Env, change Change) (*Plan, error) {
	path, err := c.Path(env)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(path)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	binary, force, takeOver := changeFlags(change)
	if binary == "" {
		binary = ed.opts.BinaryPath
	}
	p := &Plan{Client: c, Path: path, Exists: exists, Original: data, Hash: hashOf(data), Force: force, TakeOver: takeOver}
	if !force {
		if err := checkWritable(path, exists); err != nil {
			return nil, err
		}
	}
	doc, err := openDocument(c, path, data)
	if err != nil {
		return nil, err
	}
	// The entries as they were, for masking their secrets in the diff:
	// a removed entry, or one shown as context, must not show its keys.
	shown, err := doc.entries()
	if err != nil {
		return nil, err
	}
	rec, err := ed.loadOwnership(c, path)
	if err != nil {
		return nil, err
	}
	owns := func(e Entry) bool { return ed.owns(rec, e, binary) }
	// base is what the result is compared with to tell "nothing left":
	// the bytes the edit started from.
	base, baseExists := data, exists
	var token string
	var written []string
	var lists listChanges
	switch ch := change.(type) {
	case Connect:
		token = ch.Token
		written, lists, err = connect(c, doc, ch, owns, p)
	case Replace:
		token = ch.Connect.Token
		for _, name := range ch.Remove {
			if isOwnName(name) {
				continue
			}
			if _, err = doc.remove(name); err != nil {
				break
			}
			p.removed = append(p.removed, name)
		}
		if err == nil {
			written, lists, err = connect(c, doc, ch.Connect, owns, p)
		}
	case Disconnect:
		if len(rec.Entries) > 0 && rec.HaveBefore && rec.After == p.Hash {
			// Nothing but Switchboard changed the file since it first
			// connected the client: start again from the file as it was
			// then, taking out only what was Switchboard's already.
			base, baseExists = rec.Before, !rec.BeforeAbsent
			if !baseExists {
				base = nil
				p.removeDirs = rec.CreatedDirs
			}
			if doc, err = openDocument(c, path, base); err == nil {
				shownBefore, _ := doc.entries()
				shown = append(shown, shownBefore...)
				err = disconnect(doc, owns, p)
			}
		} else {
			err = disconnect(doc, owns, p)
			if err == nil {
				err = undoLists(c, doc, rec)
			}
			if err == nil && len(rec.Entries) > 0 && rec.After != p.Hash {
				p.Notes = append(p.Notes, "the file changed since Switchboard wrote it: only Switchboard's entries are "+
					"taken out; what else connect added (an empty servers object, the file itself) stays")
			}
		}
	default:
		err = fmt.Errorf("clients: unknown change %T", change)
	}
	if err != nil {
		return nil, err
	}
	p.New = doc.bytes()
	if len(bytes.TrimSpace(bytes.TrimPrefix(base, bom))) == 0 && bytes.Equal(p.New, skeleton(c)) {
		// Nothing was added to an empty or absent file: leave it as it was.
		p.New = base
		if !baseExists {
			p.New = nil
			p.Remove = exists
		} else if p.New == nil {
			p.New = []byte{}
		}
	}
	if err := verify(c, path, p.New); err != nil {
		return nil, err
	}
	if err := readBack(c, path, p.New, p.wrote, p.removed); err != nil {
		return nil, err
	}
	if written != nil {
		fresh := len(rec.Entries) == 0 || !slices.ContainsFunc(shown, func(e Entry) bool { return isOwnName(e.Name) && owns(e) })
		p.own = nextOwnership(c, path, rec, p, written, lists, fresh)
		if p.own == nil {
			return nil, fmt.Errorf("clients: internal error: the edited %s lost Switchboard's entry", path)
		}
	} else if _, ok := change.(Disconnect); ok {
		p.own = &ownership{Client: c.ID, Path: path, Entries: map[string]string{}}
	}
	p.Diff = Diff(path, data, p.New)
	if p.Remove {
		p.Diff = Diff(path, data, nil)
	}
	if token != "" {
		p.Diff = strings.ReplaceAll(p.Diff, token, Masked)
	}
	p.Diff = maskDiff(p.Diff, shown)
	return p, nil
}

// nextOwnership is the record after applying p, a connect that wrote the
// entries named written; nil when one of them cannot be read back.
//
// fresh says that the file holds no entry of Switchboard's now: what it
// holds is what disconnect is to give back.
func nextOwnership(c Client, path string, rec *ownership, p *Plan, written []string, lists listChanges, fresh bool) *ownership {
	doc, err := openDocument(c, path, p.New)
	if err != nil {
		return nil
	}
	entries, err := doc.entries()
	if err != nil {
		return nil
	}
	next := &ownership{Client: c.ID, Path: path, Entries: map[string]string{}, After: hashOf(p.New)}
	for _, name := range written {
		i := slices.IndexFunc(entries, func(e Entry) bool { return e.Name == name })
		if i < 0 {
			return nil
		}
		next.Entries[name] = fingerprint(entries[i])
	}
	switch {
	case fresh:
		// The first connect: what was there before is what disconnect
		// gives back.
		next.HaveBefore, next.Before, next.BeforeAbsent = true, p.Original, !p.Exists
		if !p.Exists {
			next.CreatedDirs = missingDirs(path)
		}
	case rec.HaveBefore && rec.After == p.Hash:
		next.HaveBefore, next.Before, next.BeforeAbsent = true, rec.Before, rec.BeforeAbsent
		next.CreatedDirs = rec.CreatedDirs
	}
	next.AllowedAdded = union(rec.AllowedAdded, lists.allowedAdded)
	next.ExcludedRemoved = union(rec.ExcludedRemoved, lists.excludedRemoved)
	return next
}

// missingDirs lists the folders above path that do not exist, deepest
// first: the ones creating path creates.
func missingDirs(path string) []string {
	var out []string
	for dir := filepath.Dir(path); ; dir = filepath.Dir(dir) {
		if _, err := os.Lstat(dir); err == nil || filepath.Dir(dir) == dir {
			return out
		}
		out = append(out, dir)
	}
}

func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// verify parses the planned bytes again, as a last check that Switchboard
// never writes a file the client cannot read, and that strict JSON stays
// strict.
func verify(c Client, path string, b []byte) error {
	if b == nil {
		return nil
	}
	doc, err := openDocument(c, path, b)
	if err == nil {
		_, err = doc.entries()
	}
	if err != nil {
		return fmt.Errorf("clients: internal error: the edited %s would not parse: %w", path, err)
	}
	return nil
}
