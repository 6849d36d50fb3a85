package clients

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gofrs/flock"

	"github.com/switchboardhq/switchboard/app/atomicfile"
	"github.com/switchboardhq/switchboard/app/redact"
)

// ErrNoWorkspace is the path of a workspace's client (vscode-workspace)
// when no workspace folder was given: there is no file to speak of, which
// is not a file that could not be read.
var ErrNoWorkspace = errors.New("no workspace folder given")

// ErrNoFile is the error of a plan for a client that keeps no file
// Switchboard may edit (Cherry Studio): it is offered an install link
// instead (see OfferLink).
var ErrNoFile = errors.New("it keeps no configuration file Switchboard may edit; connecting it offers an install link that you confirm in the app")

// ErrChanged is returned (wrapped) by Apply when the file is no longer what
// the plan was made from: someone wrote it between Plan and Apply.
var ErrChanged = errors.New("the file changed since the plan was made; make a new plan")

// ErrConflict is returned (wrapped, in a *ConflictError) by Apply when the
// plan would replace entries Switchboard did not write and the change did
// not ask to take them over.
var ErrConflict = errors.New("the file has entries of the same name that Switchboard did not write")

// ErrReadOnly is returned (wrapped) by Plan for a file or folder that is
// read-only, unless the change is forced.
var ErrReadOnly = errors.New("read-only")

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
	// is known to be outdated by Switchboard alone.
	wrote map[string]string
}

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

// Status is what Detect found for one client.
type Status struct {
	Client    Client
	Path      string
	Installed bool    // the file exists, or a sign of the client does (see Client)
	Exists    bool    // the file exists
	Entries   []Entry // the servers the file holds
	Connected bool    // one of them is Switchboard's
	// Tokens are the bearer tokens Switchboard's entries carry (see
	// EntryToken), for the caller to check they are still in force.
	Tokens []EntryToken
	Err    error // the path could not be found or the file did not parse
}

// An EntryToken is the bearer token one of Switchboard's entries in a
// client's file carries.
type EntryToken struct {
	Entry string // the entry's name
	// Secret is the token: the Authorization header's bearer token, or the
	// bridge's SWITCHBOARD_TOKEN.
	Secret string
	// Bridge: the entry runs `switchboard connect`; Home is the data
	// directory it names (connect --home DIR), "" for the default one.
	Bridge bool
	Home   string
	// Profile is the profile whose endpoint the entry reaches (its URL's
	// /mcp/p/<profile>, the bridge's --profile), "" for another: what
	// connecting it again should keep once its token is revoked.
	Profile string
}

// entryToken returns the token e carries, if any.
func entryToken(e Entry, binary string) (EntryToken, bool) {
	t := EntryToken{Entry: e.Name}
	if isBridgeCommand(e, binary) {
		t.Bridge = true
		for i, a := range e.Args {
			if a == "--home" && i+1 < len(e.Args) {
				t.Home = e.Args[i+1]
			} else if h, ok := strings.CutPrefix(a, "--home="); ok {
				t.Home = h
			} else if a == "--profile" && i+1 < len(e.Args) {
				t.Profile = e.Args[i+1]
			} else if p, ok := strings.CutPrefix(a, "--profile="); ok {
				t.Profile = p
			}
		}
		t.Secret = e.Env[TokenEnv]
		return t, t.Secret != ""
	}
	if u, err := url.Parse(e.URL); err == nil {
		for _, endpoint := range []string{"/mcp/p/", "/sse/p/"} {
			if _, p, ok := strings.Cut(strings.TrimSuffix(u.Path, "/"), endpoint); ok && p != "" && !strings.Contains(p, "/") {
				t.Profile = p
			}
		}
	}
	for k, v := range e.Headers {
		if strings.EqualFold(k, "Authorization") {
			if scheme, secret, ok := strings.Cut(strings.TrimSpace(v), " "); ok && strings.EqualFold(scheme, "Bearer") {
				t.Secret = strings.TrimSpace(secret)
			}
		}
	}
	return t, t.Secret != ""
}

// Detect looks at every client of Table in env.
func (ed *Editor) Detect(env Env) []Status {
	out := make([]Status, 0, len(Table))
	for _, c := range Table {
		st := Status{Client: c}
		st.Path, st.Err = c.Path(env)
		if c.Remote == DeepLink {
			// The path is the app's data folder: installed or not, and
			// never connected as far as a file could tell.
			st.Installed = st.Err == nil && isDir(st.Path)
			out = append(out, st)
			continue
		}
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
			if st.Err == nil {
				rec, err := ed.loadOwnership(c, st.Path)
				if err != nil {
					rec = &ownership{}
				}
				for _, e := range st.Entries {
					if ed.owns(rec, e, ed.opts.BinaryPath) {
						st.Connected = true
						if t, ok := entryToken(e, ed.opts.BinaryPath); ok {
							st.Tokens = append(st.Tokens, t)
						}
					}
				}
			}
		}
		out = append(out, st)
	}
	return out
}

// Read lists the servers in client c's file. An absent file holds none.
func Read(c Client, env Env) ([]Entry, error) {
	entries, _, err := ReadHashed(c, env)
	return entries, err
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
	if err == nil && c.ID == "gemini-cli" {
		err = geminiDisabled(doc.(*jsonDoc), entries)
	}
	return entries, hashOf(data), err
}

// geminiDisabled marks the entries Gemini CLI does not start: those in
// mcp.excluded, and, when mcp.allowed exists, those not in it.
func geminiDisabled(d *jsonDoc, entries []Entry) error {
	allowed, hasAllowed, err := d.stringList(geminiAllowed)
	if err != nil {
		return err
	}
	excluded, _, err := d.stringList(geminiExcluded)
	if err != nil {
		return err
	}
	for i, e := range entries {
		if slices.Contains(excluded, e.Name) || hasAllowed && !slices.Contains(allowed, e.Name) {
			entries[i].Disabled = true
		}
	}
	return nil
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

// A ConflictError is Apply's refusal to replace entries Switchboard did
// not write.
type ConflictError struct {
	Path      string
	Conflicts []Conflict
}

func (e *ConflictError) Error() string {
	var names []string
	for _, c := range e.Conflicts {
		names = append(names, c.String())
	}
	return fmt.Sprintf("%s already has %s, which Switchboard did not write; "+
		"it was left as it is (rename it, or replace it: --replace on the command line)", e.Path, strings.Join(names, " and "))
}

func (e *ConflictError) Unwrap() error { return ErrConflict }

// A ReadOnlyError is a client file, or its folder, that is read-only.
type ReadOnlyError struct {
	Path   string // the file or folder
	Folder bool
	Mode   fs.FileMode
}

func (e *ReadOnlyError) Error() string {
	what := "the file"
	if e.Folder {
		what = "its folder"
	}
	return fmt.Sprintf("%s is read-only (%s has mode %04o): Switchboard does not change a file someone made read-only; "+
		"make it writable, or pass --force to change it anyway", e.Path, what, e.Mode.Perm())
}

func (e *ReadOnlyError) Unwrap() error { return ErrReadOnly }

// checkWritable refuses a read-only file, or a file in a read-only folder
// (the atomic replace renames into the folder, which would otherwise
// replace a read-only file regardless of its mode).
func checkWritable(path string, exists bool) error {
	target := path
	if resolved, err := filepath.EvalSymlinks(path); err == nil {
		target = resolved
	}
	if exists {
		if fi, err := os.Stat(target); err == nil && fi.Mode().Perm()&0o222 == 0 {
			return &ReadOnlyError{Path: path, Mode: fi.Mode()}
		}
	}
	for dir := filepath.Dir(target); ; dir = filepath.Dir(dir) {
		fi, err := os.Stat(dir)
		if err == nil {
			if fi.Mode().Perm()&0o222 == 0 {
				return &ReadOnlyError{Path: path, Folder: true, Mode: fi.Mode()}
			}
			return nil
		}
		if filepath.Dir(dir) == dir {
			return nil
		}
	}
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

// maskDiff hides the values of the entries' environment variables and
// headers whose names look secret. A value is replaced on the lines that
// also hold its name (one variable per line, or an inline table), and on
// any line when it is long enough (8 bytes) not to be an ordinary word, so
// that a short value such as "true" does not blank out unrelated lines.
func maskDiff(diff string, entries []Entry) string {
	type secret struct{ name, value string }
	var secrets []secret
	for _, e := range entries {
		// A value given after a flag whose name looks secret
		// (--api-key KEY, --token=T).
		for i, a := range e.Args {
			if flag, v, ok := strings.Cut(a, "="); ok && v != "" && strings.HasPrefix(flag, "-") && LooksSecret(flag) {
				secrets = append(secrets, secret{flag, v})
			} else if i > 0 && strings.HasPrefix(e.Args[i-1], "-") && LooksSecret(e.Args[i-1]) && !strings.HasPrefix(a, "-") {
				secrets = append(secrets, secret{e.Args[i-1], a})
			}
		}
		for _, m := range []map[string]string{e.Env, e.Headers} {
			for k, v := range m {
				if v == "" || v == Masked || !IsSecret(k, v) {
					continue
				}
				// An Authorization header keeps its scheme ("Bearer
				// ********"), as the token written in its place shows.
				if scheme, cred, ok := strings.Cut(v, " "); ok && len(cred) >= 8 && isAuthScheme(scheme) &&
					(strings.EqualFold(k, "Authorization") || strings.EqualFold(k, "Proxy-Authorization")) {
					v = cred
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
	if diff == "" {
		return diff
	}
	if len(secrets) == 0 {
		return redact.Values(diff)
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
		// Credential shapes anywhere (a key given as an argument).
		lines[i] = redact.Values(l)
	}
	return strings.Join(lines, "")
}

// isAuthScheme tells whether s is an HTTP authentication scheme's name
// (Bearer, Basic, Token): letters only.
func isAuthScheme(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') {
			return false
		}
	}
	return true
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

// listChanges are the edits connect made to Gemini CLI's mcp.allowed and
// mcp.excluded lists.
type listChanges struct {
	allowedAdded, excludedRemoved []string
}

// Gemini CLI's lists of the servers it starts: when mcp.allowed exists,
// only those; never those in mcp.excluded.
var (
	geminiAllowed  = []string{"mcp", "allowed"}
	geminiExcluded = []string{"mcp", "excluded"}
)

// connect writes Switchboard's entries and returns their names. An entry
// of one of those names that Switchboard did not write is replaced too,
// and listed in p.Conflicts for Apply to refuse unless taken over; or, when
// an earlier Switchboard wrote it, in p.Earlier, with a note. Stale
// per-server entries are removed only when Switchboard wrote them.
func connect(c Client, doc document, cn Connect, owns func(Entry) bool, p *Plan) ([]string, listChanges, error) {
	var lists listChanges
	if err := validateConnect(c, cn); err != nil {
		return nil, lists, err
	}
	entries, err := doc.entries()
	if err != nil {
		return nil, lists, err
	}
	names := []string{EntryName}
	for _, s := range cn.PerServer {
		names = append(names, EntryName+"-"+s)
	}
	for _, name := range names {
		if i := slices.IndexFunc(entries, func(e Entry) bool { return e.Name == name }); i >= 0 && !owns(entries[i]) {
			found := Conflict{Name: name, Target: targetOf(entries[i])}
			if earlierSwitchboard(entries[i]) {
				p.Earlier = append(p.Earlier, found)
				p.Notes = append(p.Notes, fmt.Sprintf("entry %s is an earlier Switchboard's (a loopback endpoint and a Switchboard token "+
					"that this data directory did not write: a reinstall, or another data directory); it is replaced, "+
					"and the file is backed up first", found))
			} else {
				p.Conflicts = append(p.Conflicts, found)
			}
		}
		server := strings.TrimPrefix(strings.TrimPrefix(name, EntryName), "-")
		v := entryValue(c, cn, server)
		if err := doc.upsert(name, v); err != nil {
			return nil, lists, err
		}
		if p.wrote == nil {
			p.wrote = map[string]obj{}
		}
		p.wrote[name] = v
	}
	for _, e := range entries {
		if !isOwnName(e.Name) || slices.Contains(names, e.Name) {
			continue
		}
		if !owns(e) {
			p.Kept = append(p.Kept, e.Name)
			continue
		}
		if _, err := doc.remove(e.Name); err != nil {
			return nil, lists, err
		}
		p.removed = append(p.removed, e.Name)
	}
	if c.ID == "gemini-cli" {
		jd := doc.(*jsonDoc)
		allowed, hasAllowed, err := jd.stringList(geminiAllowed)
		if err != nil {
			return nil, lists, err
		}
		excluded, _, err := jd.stringList(geminiExcluded)
		if err != nil {
			return nil, lists, err
		}
		for _, name := range names {
			if hasAllowed && !slices.Contains(allowed, name) {
				if err := jd.listAdd(geminiAllowed, name); err != nil {
					return nil, lists, err
				}
				lists.allowedAdded = append(lists.allowedAdded, name)
			}
			if slices.Contains(excluded, name) {
				if err := jd.listRemove(geminiExcluded, name); err != nil {
					return nil, lists, err
				}
				lists.excludedRemoved = append(lists.excludedRemoved, name)
			}
		}
	}
	return names, lists, nil
}

// undoLists takes the names connect added to Gemini CLI's mcp.allowed out
// again, and puts those it took out of mcp.excluded back.
func undoLists(c Client, doc document, rec *ownership) error {
	if c.ID != "gemini-cli" {
		return nil
	}
	jd := doc.(*jsonDoc)
	for _, name := range rec.AllowedAdded {
		if err := jd.listRemove(geminiAllowed, name); err != nil {
			return err
		}
	}
	excluded, has, err := jd.stringList(geminiExcluded)
	if err != nil || !has {
		return err
	}
	for _, name := range rec.ExcludedRemoved {
		if !slices.Contains(excluded, name) {
			if err := jd.listAdd(geminiExcluded, name); err != nil {
				return err
			}
		}
	}
	return nil
}

// targetOf says what an entry runs or points at, for a conflict message.
// Only the command or the URL's scheme, host and path: never arguments,
// queries or headers, which may hold secrets.
func targetOf(e Entry) string {
	if e.URL != "" {
		u := e.URL
		if i := strings.IndexAny(u, "?#"); i >= 0 {
			u = u[:i]
		}
		return u
	}
	if e.Command != "" {
		return "runs " + e.Command
	}
	return "no command or URL"
}

// disconnect removes Switchboard's entries; entries of its names that it
// did not write are left and listed in p.Kept.
func disconnect(doc document, owns func(Entry) bool, p *Plan) error {
	entries, err := doc.entries()
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !isOwnName(e.Name) {
			continue
		}
		if !owns(e) {
			if !slices.Contains(p.Kept, e.Name) {
				p.Kept = append(p.Kept, e.Name)
			}
			continue
		}
		removed, err := doc.remove(e.Name)
		if err != nil {
			return err
		}
		if !removed {
			return fmt.Errorf("clients: could not remove %q", e.Name)
		}
		p.removed = append(p.removed, e.Name)
	}
	return nil
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
	if len(f.wrote) > 64 {
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

// makeWritable gives the folder of path (a forced change) the owner's
// write permission, and returns what puts its mode back. The file's own
// mode is kept by the atomic replace.
func makeWritable(path string) (func(), error) {
	target := path
	if resolved, err := filepath.EvalSymlinks(path); err == nil {
		target = resolved
	}
	dir := filepath.Dir(target)
	fi, err := os.Stat(dir)
	if err != nil || fi.Mode().Perm()&0o200 != 0 {
		return func() {}, nil
	}
	if err := os.Chmod(dir, fi.Mode().Perm()|0o200); err != nil {
		return nil, fmt.Errorf("making %s writable (--force): %w", dir, err)
	}
	return func() { _ = os.Chmod(dir, fi.Mode().Perm()) }, nil
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
