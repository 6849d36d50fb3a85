package clients

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gofrs/flock"

	"github.com/switchboardhq/switchboard/app/atomicfile"
)

// ErrChanged is returned (wrapped) by Apply when the file is no longer what
// the plan was made from: someone wrote it between Plan and Apply.
var ErrChanged = errors.New("the file changed since the plan was made; make a new plan")

// Options configures an Editor.
type Options struct {
	// BackupDir holds backups, one folder per client:
	// <BackupDir>/<client>/<timestamp>-<basename>, and an index.json
	// recording which files were backed up. Required.
	BackupDir string
	// GatewayURL, when set, makes Detect also recognize entries that point
	// at the gateway under another name.
	GatewayURL string
	// Now is the clock for backup names; nil means time.Now.
	Now func() time.Time
}

// An Editor plans and applies changes to client configuration files. It
// holds no state besides its options; it is safe for concurrent use, and
// Apply serializes with other Editors and processes through a file lock.
type Editor struct {
	opts Options
}

// New returns an Editor.
func New(opts Options) (*Editor, error) {
	if opts.BackupDir == "" {
		return nil, errors.New("clients: Options.BackupDir is required")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Editor{opts: opts}, nil
}

// Status is what Detect found for one client.
type Status struct {
	Client    Client
	Path      string
	Installed bool    // the file exists, or a sign of the client does (see Client)
	Exists    bool    // the file exists
	Entries   []Entry // the servers the file holds
	Connected bool    // one of them is Switchboard's
	Err       error   // the path could not be found or the file did not parse
}

// Detect looks at every client of Table in env.
func (ed *Editor) Detect(env Env) []Status {
	out := make([]Status, 0, len(Table))
	for _, c := range Table {
		st := Status{Client: c}
		st.Path, st.Err = c.Path(env)
		if st.Err == nil {
			if _, err := os.Stat(st.Path); err == nil {
				st.Installed, st.Exists = true, true
			} else if c.installed != nil {
				st.Installed = c.installed(env)
			} else {
				st.Installed = isDir(filepath.Dir(st.Path))
			}
		}
		if st.Exists {
			st.Entries, st.Err = Read(c, env)
			for _, e := range st.Entries {
				if IsSwitchboard(e, ed.opts.GatewayURL) {
					st.Connected = true
				}
			}
		}
		out = append(out, st)
	}
	return out
}

// Read lists the servers in client c's file. An absent file holds none.
func Read(c Client, env Env) ([]Entry, error) {
	path, err := c.Path(env)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	doc, err := openDocument(c, path, data)
	if err != nil {
		return nil, err
	}
	return doc.entries()
}

// ReadHashed is Read, and also returns the hash of the bytes it read: the
// Hash a Plan made from the same bytes has, so that a caller can tell
// whether a later plan saw the same file.
func ReadHashed(c Client, env Env) ([]Entry, string, error) {
	path, err := c.Path(env)
	if err != nil {
		return nil, "", err
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, hashOf(nil), nil
	} else if err != nil {
		return nil, "", err
	}
	doc, err := openDocument(c, path, data)
	if err != nil {
		return nil, "", err
	}
	entries, err := doc.entries()
	return entries, hashOf(data), err
}

// A Plan is a change to one file, computed and not yet written.
type Plan struct {
	Client   Client
	Path     string
	Exists   bool   // the file existed when the plan was made
	Original []byte // its bytes then
	Hash     string // hex SHA-256 of Original
	New      []byte // the bytes Apply writes
	// Remove makes Apply delete the file instead of writing New: restoring
	// the backup of a file that did not exist (see PlanRestore).
	Remove bool
	// Diff shows the change as a unified diff. The token, and the values of
	// environment variables and headers whose names look secret (see
	// LooksSecret), are masked in it (New holds the real ones).
	Diff string
}

// Masked replaces secrets in diffs.
const Masked = "********"

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
	p := &Plan{Client: c, Path: path, Exists: exists, Original: data, Hash: hashOf(data)}
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
	var token string
	switch ch := change.(type) {
	case Connect:
		token = ch.Token
		err = connect(c, doc, ch)
	case Replace:
		token = ch.Connect.Token
		for _, name := range ch.Remove {
			if ownedName(name) {
				continue
			}
			if _, err = doc.remove(name); err != nil {
				break
			}
		}
		if err == nil {
			err = connect(c, doc, ch.Connect)
		}
	case Disconnect:
		err = disconnect(doc)
	default:
		err = fmt.Errorf("clients: unknown change %T", change)
	}
	if err != nil {
		return nil, err
	}
	p.New = doc.bytes()
	if !exists && bytes.Equal(p.New, skeleton(c.Format)) {
		// Nothing to do to an absent file (a Disconnect): leave it absent.
		p.New = nil
	}
	if err := verify(c, path, data, p.New); err != nil {
		return nil, err
	}
	p.Diff = Diff(path, data, p.New)
	if token != "" {
		p.Diff = strings.ReplaceAll(p.Diff, token, Masked)
	}
	p.Diff = maskDiff(p.Diff, shown)
	return p, nil
}

// maskDiff hides the values of the entries' environment variables and
// headers whose names look secret. A value is replaced on the lines that
// also hold its name (one variable per line, or an inline table), and on
// any line when it is long enough (8 bytes) not to be an ordinary word, so
// that a short value such as "true" does not blank out unrelated lines.
func maskDiff(diff string, entries []Entry) string {
	type secret struct{ name, value string }
	var secrets []secret
	for _, e := range entries {
		for _, m := range []map[string]string{e.Env, e.Headers} {
			for k, v := range m {
				if v == "" || v == Masked || !LooksSecret(k) {
					continue
				}
				secrets = append(secrets, secret{k, v})
				// As JSON (and TOML) spell it, when it has characters
				// that are escaped there.
				if q, _ := json.Marshal(v); string(q[1:len(q)-1]) != v {
					secrets = append(secrets, secret{k, string(q[1 : len(q)-1])})
				}
			}
		}
	}
	if diff == "" || len(secrets) == 0 {
		return diff
	}
	// Longest first, so that a value containing another is masked whole.
	slices.SortFunc(secrets, func(a, b secret) int { return len(b.value) - len(a.value) })
	lines := strings.SplitAfter(diff, "\n")
	for i, l := range lines {
		for _, s := range secrets {
			if !strings.Contains(l, s.value) {
				continue
			}
			if len(s.value) >= 8 {
				l = strings.ReplaceAll(l, s.value, Masked)
			} else {
				l = maskAfterName(l, s.name, s.value)
			}
		}
		lines[i] = l
	}
	return strings.Join(lines, "")
}

// maskAfterName masks value where it directly follows name and a separator
// in line: `"NAME": "value"`, `NAME = "value"`, `NAME: value`.
func maskAfterName(line, name, value string) string {
	var out strings.Builder
	for {
		i := strings.Index(line, name)
		if i < 0 {
			break
		}
		j := i + len(name)
		j += len(line[j:]) - len(strings.TrimLeft(line[j:], `"' `+"\t"))
		if j < len(line) && (line[j] == ':' || line[j] == '=') {
			j++
			j += len(line[j:]) - len(strings.TrimLeft(line[j:], `"' `+"\t"))
			if strings.HasPrefix(line[j:], value) {
				out.WriteString(line[:j] + Masked)
				line = line[j+len(value):]
				continue
			}
		}
		out.WriteString(line[:i+len(name)])
		line = line[i+len(name):]
	}
	return out.String() + line
}

func connect(c Client, doc document, cn Connect) error {
	if err := validateConnect(c, cn); err != nil {
		return err
	}
	want := map[string]bool{EntryName: true}
	if err := doc.upsert(EntryName, entryValue(c, cn, "")); err != nil {
		return err
	}
	for _, s := range cn.PerServer {
		want[EntryName+"-"+s] = true
		if err := doc.upsert(EntryName+"-"+s, entryValue(c, cn, s)); err != nil {
			return err
		}
	}
	entries, err := doc.entries()
	if err != nil {
		return err
	}
	for _, e := range entries {
		if ownedName(e.Name) && !want[e.Name] {
			if _, err := doc.remove(e.Name); err != nil {
				return err
			}
		}
	}
	return nil
}

func disconnect(doc document) error {
	for {
		entries, err := doc.entries()
		if err != nil {
			return err
		}
		i := slices.IndexFunc(entries, func(e Entry) bool { return ownedName(e.Name) })
		if i < 0 {
			return nil
		}
		removed, err := doc.remove(entries[i].Name)
		if err != nil {
			return err
		}
		if !removed {
			return fmt.Errorf("clients: could not remove %q", entries[i].Name)
		}
	}
}

// verify parses the planned bytes again, as a last check that Switchboard
// never writes a file the client cannot read, and that strict JSON stays
// strict.
func verify(c Client, path string, orig, b []byte) error {
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
	if c.Format == JSON && !json.Valid(bytes.TrimPrefix(b, bom)) {
		// Tolerated only when the original was not strict JSON either.
		if len(bytes.TrimSpace(orig)) == 0 || json.Valid(bytes.TrimPrefix(orig, bom)) {
			return fmt.Errorf("clients: internal error: the edited %s would not be strict JSON", path)
		}
	}
	return nil
}

// lockPath is the lock file beside path.
func lockPath(path string) string { return path + ".switchboard.lock" }

// Apply writes the plan: it locks the file, checks that the file is still
// what the plan was made from (else an error wrapping ErrChanged, and
// nothing is written), backs it up when Switchboard has not changed it
// before (see Backups), and replaces it atomically. An absent file is
// created with mode 0600, its missing folders with 0700. A plan that
// changes nothing writes nothing.
//
// The lock file "<file>.switchboard.lock" stays beside the file: removing
// it would let two writers lock different files of the same name.
func (ed *Editor) Apply(p *Plan) error {
	if !p.Changed() {
		return nil
	}
	if !p.Remove {
		if err := os.MkdirAll(filepath.Dir(p.Path), 0o700); err != nil {
			return fmt.Errorf("creating the folder of %s: %w", p.Path, err)
		}
	}
	lock := flock.New(lockPath(p.Path))
	if err := lock.Lock(); err != nil {
		return fmt.Errorf("locking %s: %w", p.Path, err)
	}
	defer lock.Unlock()

	cur, err := os.ReadFile(p.Path)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("reading %s: %w", p.Path, err)
	}
	if exists != p.Exists || hashOf(cur) != p.Hash {
		return fmt.Errorf("%s: %w", p.Path, ErrChanged)
	}
	if err := ed.backupOnce(p.Client, p.Path, cur, exists); err != nil {
		return err
	}
	if p.Remove {
		if err := os.Remove(p.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("removing %s: %w", p.Path, err)
		}
		return nil
	}
	return atomicfile.Write(p.Path, p.New, 0o600)
}

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
