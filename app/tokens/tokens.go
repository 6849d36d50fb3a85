// Package tokens keeps the bearer tokens that may call the daemon: its local
// API and its MCP endpoint.
//
// The tokens live in one JSON file in the data directory, tokens.json, mode
// 0600:
//
//	[
//	  {
//	    "id": "tok_3f9c2a7d1e5b8c04",
//	    "label": "cli",
//	    "token": "sb_q8Hn…(43 characters)",
//	    "scope": "admin",
//	    "created": "2026-01-02T15:04:05Z"
//	  },
//	  {
//	    "id": "tok_9a0b1c2d3e4f5a6b",
//	    "label": "cursor",
//	    "token": "sb_…",
//	    "scope": "client",
//	    "profile": "coding",
//	    "created": "2026-01-02T15:05:00Z"
//	  }
//	]
//
// Each MCP client whose config Switchboard writes gets a token of its own
// (labelled with the client's name), so that history can tell which client
// called and one token can be revoked alone; the CLI uses the token
// labelled "cli", the tray "tray", the desktop window "window", and the
// browser dashboard's sessions stand for the token "dashboard". A secret is
// "sb_" followed by 32 random bytes in unpadded base64url.
//
// Each token has a scope (see [Scope]): the four labels above are
// [ScopeAdmin], every other label is [ScopeClient], which reaches the MCP
// endpoints and nothing else. A client token may also be bound to a profile
// of the config (see [Store.Bind]): it then reaches that profile's endpoint,
// /mcp/p/<profile>, and no other MCP endpoint. A file written before scopes existed (version
// 1: entries without "scope") is migrated when opened: each entry gets the
// scope of its label, and the file is rewritten with them. Older builds
// ignore the field, so the migrated file still works for them.
//
// Several processes use the file: the daemon verifies requests against it
// while a CLI command may issue or revoke a token. Changes are written
// atomically (a temporary file in the same directory, fsync, rename) under
// an advisory lock on tokens.json.lock, and [Store.Verify] notices when
// another process changed the file (its size, modification time or identity
// changed) and reads it again.
//
// Secrets never reach a log: this package logs nothing, a [Token] formats
// and logs without its secret, and [Store.List] and [Store.Verify] return
// tokens with the secret blanked.
package tokens

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/switchboardhq/switchboard/app/tiers"

	"github.com/gofrs/flock"
	"github.com/switchboardhq/switchboard/app/atomicfile"
)

// FileName is the name of the token file inside the data directory.
const FileName = "tokens.json"

// Prefixes of token ids and secrets.
const (
	IDPrefix     = "tok_"
	SecretPrefix = "sb_"
)

// MaxLabelLen is the longest label Issue accepts, in bytes.
const MaxLabelLen = 100

// fileMode is the only mode the token file may have.
const fileMode fs.FileMode = 0o600

// ErrNotFound is wrapped by the error of Revoke for an unknown token id.
var ErrNotFound = errors.New("no such token")

// A Scope says what a token may reach.
type Scope string

const (
	// ScopeClient reaches the MCP endpoints (/mcp, /mcp/<server>, /sse)
	// only: it is what goes into an MCP client's config file.
	ScopeClient Scope = "client"
	// ScopeAdmin also reaches the local API, which can run programs and
	// edit files: the CLI, the tray, the window and the dashboard.
	ScopeAdmin Scope = "admin"
)

// Labels of the admin tokens: the programs that are Switchboard itself.
const (
	LabelCLI       = "cli"
	LabelTray      = "tray"
	LabelWindow    = "window"
	LabelDashboard = "dashboard"
)

// ScopeOf returns the scope a token with the given label has: ScopeAdmin
// for "cli", "tray", "window" and "dashboard", ScopeClient for any other.
func ScopeOf(label string) Scope {
	switch label {
	case LabelCLI, LabelTray, LabelWindow, LabelDashboard:
		return ScopeAdmin
	}
	return ScopeClient
}

// ErrAdminLabel is wrapped by the error of EnsureClient for a label that
// belongs to an admin token.
var ErrAdminLabel = errors.New("label is reserved for Switchboard's own programs")

// A Token is one credential that may call the daemon.
//
// Secret is the bearer secret; it is empty in tokens returned by List and
// Verify, which callers may show or record. A Token prints (fmt's %v, %+v,
// %#v, %s) and logs (slog) without its secret.
type Token struct {
	// ID names the token in lists and for Revoke: "tok_" and 16 hex digits.
	ID string `json:"id"`
	// Label says who uses the token: "cli", or an MCP client's name.
	Label string `json:"label"`
	// Secret is what a caller sends as "Authorization: Bearer <secret>".
	Secret string `json:"token,omitempty"`
	// Scope is what the token may reach; it follows from the label (see
	// ScopeOf).
	Scope Scope `json:"scope"`
	// Profile, when set, binds a client token to one profile of the
	// config: it reaches /mcp/p/<Profile> and no other MCP endpoint. Only
	// client tokens have one (see Bind).
	Profile string `json:"profile,omitempty"`
	// MaxTier, when set, caps the tiers of the tools a client token sees
	// (see app/tiers): tools above it are not listed to it and its calls
	// of them are refused. Only client tokens have one (see SetMaxTier).
	MaxTier tiers.Tier `json:"maxTier,omitempty"`
	// Created is when the token was issued (UTC, whole seconds).
	Created time.Time `json:"created"`
	// LastUsed is when Verify last accepted the token in this process (the
	// daemon), zero if it has not since the process started; List fills
	// it in. It is not saved: writing the file on every request would
	// cost more than the answer is worth.
	LastUsed time.Time `json:"-"`
}

// String describes t without its secret.
func (t Token) String() string {
	s := fmt.Sprintf("%s (%s, %s", t.ID, t.Label, t.Scope)
	if t.Profile != "" {
		s += ", profile " + t.Profile
	}
	if t.MaxTier != "" {
		s += ", max tier " + string(t.MaxTier)
	}
	return s + ")"
}

// GoString describes t without its secret, for %#v.
func (t Token) GoString() string {
	return fmt.Sprintf("tokens.Token{ID:%q, Label:%q, Scope:%q, Profile:%q, MaxTier:%q, Created:%s}", t.ID, t.Label, t.Scope, t.Profile, t.MaxTier, t.Created.Format(time.RFC3339))
}

// Format makes every fmt verb use String or GoString, so that %+v and %v of
// a struct holding a Token do not print the secret either.
func (t Token) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		fmt.Fprint(f, t.GoString())
		return
	}
	fmt.Fprint(f, t.String())
}

// LogValue logs t without its secret.
func (t Token) LogValue() slog.Value {
	attrs := []slog.Attr{slog.String("id", t.ID), slog.String("label", t.Label), slog.String("scope", string(t.Scope))}
	if t.Profile != "" {
		attrs = append(attrs, slog.String("profile", t.Profile))
	}
	if t.MaxTier != "" {
		attrs = append(attrs, slog.String("maxTier", string(t.MaxTier)))
	}
	return slog.GroupValue(attrs...)
}

// A Store is the set of tokens in one token file. It is safe for concurrent
// use, and several processes may use the same file (see the package doc).
//
// Reads (Verify, List) use the tokens last read from the file, after checking
// with one stat call (or, after WatchFile, the inotify events queued) whether
// the file changed since; changes (Issue, Ensure,
// Revoke) re-read the file under the lock first, so another process's
// change is never lost.
type Store struct {
	path string

	// mu guards the fields below and serializes changes within the process.
	mu     sync.Mutex
	tokens []Token
	hashes [][sha256.Size]byte // hashes[i] = SHA-256 of tokens[i].Secret
	// stamp identifies the file content tokens came from; nil when the file
	// did not exist.
	stamp fs.FileInfo
	// problem is why the file as stamped could not be used; the tokens read
	// before stay in force meanwhile.
	problem error
	// used is when Verify last accepted each token, by id.
	used map[string]time.Time
	// unscoped is whether the file as last read had entries without a
	// scope (a version 1 file), which Open migrates.
	unscoped bool
	// watch, once WatchFile made it, tells refreshLocked whether the file
	// may have changed, instead of a stat per check; nil: stat each time.
	watch *fileWatch
}

// Open returns the store of the token file at path (normally
// filepath.Join(dataDir, FileName)). A missing file is an empty store; it is
// created by the first Issue. A file whose mode grants anything to the group
// or others is changed to 0600 (not on Windows, where modes do not apply); if
// that fails, Open fails. A file that is not a valid token list is an error
// naming the problem.
func Open(path string) (*Store, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("token file %s: %w", path, err)
	}
	if err := tighten(abs); err != nil {
		return nil, err
	}
	s := &Store{path: abs}
	if err := s.readLocked(); err != nil {
		return nil, err
	}
	if s.unscoped {
		// Write the scopes the entries were given. If the file cannot be
		// written now, the scopes are still in force here and the next
		// change writes them.
		_ = s.change(func(toks []Token) ([]Token, error) { return toks, nil })
	}
	return s, nil
}

// tighten makes the file at path mode 0600 if it is wider.
func tighten(path string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("token file: %w", err)
	}
	if fi.Mode().Perm()&^fileMode == 0 {
		return nil
	}
	if err := os.Chmod(path, fileMode); err != nil {
		return fmt.Errorf("token file %s has mode %#o, readable by others, and cannot be made private: %w", path, fi.Mode().Perm(), err)
	}
	return nil
}

// Path returns the absolute path of the token file.
func (s *Store) Path() string { return s.path }

// Verify reports which token has the given secret. The returned Token has
// no Secret. An empty secret matches nothing.
//
// If the file changed since it was last read (another process issued or
// revoked a token), it is read first; if it cannot be read or parsed, the
// tokens read before stay in force until it is fixed. The comparison takes
// the same time whichever token matches, if any: it compares SHA-256 hashes
// of the secrets, which have one length, with subtle.ConstantTimeCompare
// against every token.
func (s *Store) Verify(secret string) (Token, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.matchLocked(secret)
	if !ok {
		return Token{}, false
	}
	if s.used == nil {
		s.used = map[string]time.Time{}
	}
	t.LastUsed = time.Now().UTC()
	s.used[t.ID] = t.LastUsed
	return t, true
}

// Known reports whether secret is a token in force, and which, as Verify
// does, without counting it as used: it checks the token a client's
// config file carries, not a request.
func (s *Store) Known(secret string) (Token, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.matchLocked(secret)
}

// matchLocked finds the token whose secret is secret, without it, reading
// the file again first if it changed; s.mu must be held.
func (s *Store) matchLocked(secret string) (Token, bool) {
	// Hashed from a copy on the stack: []byte(secret) of a secret's
	// length would be allocated on every request.
	var buf [64]byte
	want := sha256.Sum256(append(buf[:0], secret...))
	s.refreshLocked()
	match := -1
	for i := range s.hashes {
		eq := subtle.ConstantTimeCompare(want[:], s.hashes[i][:])
		match = subtle.ConstantTimeSelect(eq, i, match)
	}
	if match < 0 || secret == "" {
		return Token{}, false
	}
	t := s.tokens[match]
	t.Secret = ""
	return t, true
}

// Lookup returns the token with the given id, without its secret. Like
// Verify, it reads the file again first if it changed, so a token revoked by
// another process is gone.
func (s *Store) Lookup(id string) (Token, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refreshLocked()
	for _, t := range s.tokens {
		if t.ID == id {
			t.Secret = ""
			return t, true
		}
	}
	return Token{}, false
}

// List returns every token, oldest first (in the order issued), without
// secrets. It reads the
// file again first if it changed, as Verify does.
func (s *Store) List() []Token {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refreshLocked()
	out := slices.Clone(s.tokens)
	for i := range out {
		out[i].Secret = ""
		out[i].LastUsed = s.used[out[i].ID]
	}
	sortTokens(out)
	return out
}

// Problem returns why the token file, as it is on disk now, could not be
// read at the last check (the tokens read before stay in force), or nil.
func (s *Store) Problem() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refreshLocked()
	return s.problem
}

// Issue creates a token with the given label, saves it and returns it with
// its secret. Labels need not be unique (see Ensure). A label is 1 to
// MaxLabelLen bytes of printable text, without leading or trailing space.
// The token's scope is ScopeOf(label).
func (s *Store) Issue(label string) (Token, error) {
	if err := checkLabel(label); err != nil {
		return Token{}, err
	}
	var t Token
	err := s.change(func(toks []Token) ([]Token, error) {
		var err error
		if t, err = s.withCap(newToken(label, toks)); err != nil {
			return nil, err
		}
		return append(toks, t), nil
	})
	if err != nil {
		return Token{}, err
	}
	return t, nil
}

// EnsureClient is Ensure for a token that goes into an MCP client's config
// (or a bridge's environment): it refuses a label of an admin token, with
// an error wrapping ErrAdminLabel, so what it returns is always
// ScopeClient.
func (s *Store) EnsureClient(label string) (Token, error) {
	if ScopeOf(label) != ScopeClient {
		return Token{}, fmt.Errorf("cannot give an MCP client the token %q: %w (cli, tray, window, dashboard); choose another client name",
			label, ErrAdminLabel)
	}
	return s.Ensure(label)
}

// Ensure returns the oldest token with the given label (and the scope of
// that label), with its secret, issuing one if there is none. The daemon
// calls it at start for the "cli" token.
func (s *Store) Ensure(label string) (Token, error) {
	if err := checkLabel(label); err != nil {
		return Token{}, err
	}
	s.mu.Lock()
	s.refreshLocked()
	t, ok := oldest(s.tokens, label)
	s.mu.Unlock()
	if ok {
		return t, nil
	}

	err := s.change(func(toks []Token) ([]Token, error) {
		// Another process may have issued it meanwhile.
		if t, ok = oldest(toks, label); ok {
			return nil, nil
		}
		var err error
		if t, err = s.withCap(newToken(label, toks)); err != nil {
			return nil, err
		}
		return append(toks, t), nil
	})
	if err != nil {
		return Token{}, err
	}
	return t, nil
}

// oldest returns the oldest of toks with the given label and its scope.
func oldest(toks []Token, label string) (Token, bool) {
	var best Token
	found := false
	scope := ScopeOf(label)
	for _, t := range toks {
		if t.Label == label && t.Scope == scope && (!found || t.Created.Before(best.Created)) {
			best, found = t, true
		}
	}
	return best, found
}

// ErrNotClient is wrapped by the error of Bind for a label of an admin
// token: only MCP clients' tokens are bound to profiles.
var ErrNotClient = errors.New("only an MCP client's token can be bound to a profile")

// MaxProfileLen is the longest profile name Bind accepts, in bytes.
const MaxProfileLen = 48

// Bind binds every token with the given label to profile, or unbinds them
// when profile is "", and returns them (without secrets). A bound token
// reaches the profile's endpoint (/mcp/p/<profile>) and no other; the
// daemon checks that on each request, so the change applies from the next
// one. The label must be a client's (an admin label is an error wrapping
// ErrNotClient); a label no token has is an error wrapping ErrNotFound.
// Whether the profile exists is the caller's to check: the config may
// change after.
func (s *Store) Bind(label, profile string) ([]Token, error) {
	if ScopeOf(label) != ScopeClient {
		return nil, fmt.Errorf("token %q: %w", label, ErrNotClient)
	}
	if err := checkProfile(profile); err != nil {
		return nil, err
	}
	return s.setOn(label, func(t *Token) bool {
		changed := t.Profile != profile
		t.Profile = profile
		return changed
	})
}

// SetMaxTier caps the tiers of the tools every token with the given label
// sees at max, or lifts the cap when max is "", and returns them (without
// secrets). The daemon reads the cap on each request, so the change
// applies from the next one. The cap is remembered for the label (see
// CapsFileName): a token issued to it later has it too, until it is
// lifted. The label must be a client's (an admin label is an error
// wrapping ErrNotClient); a label no token has is an error wrapping
// ErrNotFound (lifting its remembered cap all the same).
func (s *Store) SetMaxTier(label string, max tiers.Tier) ([]Token, error) {
	if ScopeOf(label) != ScopeClient {
		return nil, fmt.Errorf("token %q: %w", label, ErrNotClient)
	}
	if max != "" {
		if _, err := tiers.Parse(string(max)); err != nil {
			return nil, fmt.Errorf("token %q: %w", label, err)
		}
	}
	// Remembered first, under the token file's lock: a token issued
	// meanwhile by another process gets it.
	err := s.change(func(toks []Token) ([]Token, error) {
		caps, err := s.readCaps()
		if err != nil {
			return nil, err
		}
		has := slices.ContainsFunc(toks, func(t Token) bool { return t.Label == label })
		switch {
		case caps[label] == max:
			return nil, nil
		case max == "":
			delete(caps, label)
		case has:
			caps[label] = max
		default:
			return nil, nil // no token: SetMaxTier reports it below
		}
		return nil, s.writeCaps(caps)
	})
	if err != nil {
		return nil, fmt.Errorf("token %q: %w", label, err)
	}
	return s.setOn(label, func(t *Token) bool {
		changed := t.MaxTier != max
		t.MaxTier = max
		return changed
	})
}

// setOn applies set to every token labelled label (set reports whether it
// changed the token), writes the file if any changed, and returns those
// tokens without their secrets, sorted. A label no token has is an error
// wrapping ErrNotFound.
func (s *Store) setOn(label string, set func(*Token) bool) ([]Token, error) {
	var touched []Token
	err := s.change(func(toks []Token) ([]Token, error) {
		n, changed := 0, false
		for i := range toks {
			if toks[i].Label != label {
				continue
			}
			n++
			changed = set(&toks[i]) || changed
			t := toks[i]
			t.Secret = ""
			touched = append(touched, t)
		}
		switch {
		case n == 0:
			return nil, fmt.Errorf("no token labelled %q: %w", label, ErrNotFound)
		case !changed:
			return nil, nil // nothing to write
		}
		return toks, nil
	})
	if err != nil {
		return nil, err
	}
	sortTokens(touched)
	return touched, nil
}

// checkProfile accepts "" and the profile names of the config: 1 to
// MaxProfileLen letters, digits, '_', '.' or '-', starting with a letter or
// digit (a path segment of /mcp/p/<profile>).
func checkProfile(profile string) error {
	if profile == "" {
		return nil
	}
	ok := len(profile) <= MaxProfileLen
	for i := 0; ok && i < len(profile); i++ {
		c := profile[i]
		ok = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || i > 0 && (c == '_' || c == '.' || c == '-')
	}
	if !ok {
		return fmt.Errorf("invalid profile name %q: use 1 to %d letters, digits, '_', '.' or '-', starting with a letter or digit", profile, MaxProfileLen)
	}
	return nil
}

// Revoke deletes the token with the given id. An unknown id is an error
// wrapping ErrNotFound.
func (s *Store) Revoke(id string) error {
	return s.change(func(toks []Token) ([]Token, error) {
		i := slices.IndexFunc(toks, func(t Token) bool { return t.ID == id })
		if i < 0 {
			return nil, fmt.Errorf("token %q: %w", id, ErrNotFound)
		}
		return slices.Delete(toks, i, i+1), nil
	})
}

// RevokeLabel deletes every token with the given label and returns them
// (without secrets). A label no token has is an error wrapping ErrNotFound.
// The daemon's next Verify of a revoked secret fails, so a client whose
// token is revoked gets 401 from its next request.
func (s *Store) RevokeLabel(label string) ([]Token, error) {
	var gone []Token
	err := s.change(func(toks []Token) ([]Token, error) {
		keep := toks[:0:0]
		for _, t := range toks {
			if t.Label == label {
				t.Secret = ""
				gone = append(gone, t)
			} else {
				keep = append(keep, t)
			}
		}
		if len(gone) == 0 {
			return nil, fmt.Errorf("no token labelled %q: %w", label, ErrNotFound)
		}
		return keep, nil
	})
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	for _, t := range gone {
		delete(s.used, t.ID)
	}
	s.mu.Unlock()
	sortTokens(gone)
	return gone, nil
}

// Reload reads the file again, whether or not it looks changed. On error the
// tokens read before stay in force.
func (s *Store) Reload() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.readLocked()
}

// change runs fn on the tokens in the file and saves what it returns, under
// the in-process mutex and the cross-process file lock. fn returning nil
// tokens and no error means "nothing to save".
func (s *Store) change(fn func([]Token) ([]Token, error)) error {
	s.mu.Lock()
	defer s.mu.Unlock()

	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return fmt.Errorf("token file: %w", err)
	}
	lock := flock.New(s.path+".lock", flock.SetPermissions(fileMode))
	if err := lock.Lock(); err != nil {
		return fmt.Errorf("locking token file: %w", err)
	}
	defer lock.Close()

	// Another process may have changed the file a moment ago, within the
	// same mtime tick; read it unconditionally now that it is locked.
	if err := s.readLocked(); err != nil {
		return fmt.Errorf("%w; fix or remove the file first", err)
	}
	next, err := fn(slices.Clone(s.tokens))
	if err != nil || next == nil {
		return err
	}
	data, err := encode(next)
	if err != nil {
		return err
	}
	if err := atomicfile.Write(s.path, data, fileMode); err != nil {
		return err
	}
	fi, err := os.Stat(s.path)
	if err != nil {
		fi = nil // the next check reads the file again
	}
	s.set(next, fi, nil)
	return nil
}

// WatchFile makes the checks of Verify, Known, Lookup, List and Problem
// learn from the kernel (inotify) whether the file changed since the last
// check rather than stat it each time: the daemon verifies a token on every
// request. A change is seen as promptly as with the stat (the next check
// after the change's system call returned; see fileWatch). On systems
// without it (or when inotify is out of instances) it returns an error and
// the store goes on with a stat per check. Close ends the watch.
func (s *Store) WatchFile() error {
	w, err := newFileWatch(s.path)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.watch != nil {
		s.watch.close()
	}
	s.watch = w
	return nil
}

// Close ends the watch WatchFile made, if any; the store then stats the
// file on every check again.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.watch == nil {
		return nil
	}
	err := s.watch.close()
	s.watch = nil
	return err
}

// refreshLocked reads the file again if it changed since it was last read.
func (s *Store) refreshLocked() {
	if s.watch != nil && !s.watch.mayHaveChanged() {
		return
	}
	fi, err := os.Stat(s.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		fi = nil
	case err != nil:
		s.problem = fmt.Errorf("token file: %w", err)
		if s.watch != nil {
			s.watch.statFailed()
		}
		return
	}
	if sameFile(s.stamp, fi) {
		return
	}
	if err := s.readLocked(); err != nil {
		// Do not try again until the file changes once more.
		s.stamp = fi
	}
}

// readLocked reads the file. On error it records and returns the problem
// and keeps the tokens in force.
func (s *Store) readLocked() error {
	fi, err := os.Stat(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		s.set(nil, nil, nil)
		return nil
	}
	var data []byte
	if err == nil {
		data, err = os.ReadFile(s.path)
	}
	if errors.Is(err, fs.ErrNotExist) { // removed between stat and read
		s.set(nil, nil, nil)
		return nil
	}
	if err != nil {
		s.problem = fmt.Errorf("token file: %w", err)
		return s.problem
	}
	toks, unscoped, err := decode(data)
	if err != nil {
		s.problem = fmt.Errorf("token file %s: %w", s.path, err)
		return s.problem
	}
	s.unscoped = unscoped
	// The stat came before the read: if the file was replaced in between,
	// the stamp is older than the content and the next check reads again.
	s.set(toks, fi, nil)
	return nil
}

func (s *Store) set(toks []Token, stamp fs.FileInfo, problem error) {
	s.tokens = toks
	s.hashes = make([][sha256.Size]byte, len(toks))
	for i, t := range toks {
		s.hashes[i] = sha256.Sum256([]byte(t.Secret))
	}
	s.stamp, s.problem = stamp, problem
}

// sameFile reports whether a and b are the same version of the file: the
// same file (rename makes a new one), size and modification time.
func sameFile(a, b fs.FileInfo) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

func checkLabel(label string) error {
	switch {
	case label == "":
		return errors.New("token label is empty")
	case len(label) > MaxLabelLen:
		return fmt.Errorf("token label is longer than %d bytes", MaxLabelLen)
	case strings.TrimSpace(label) != label:
		return fmt.Errorf("token label %q has leading or trailing space", label)
	case strings.IndexFunc(label, func(r rune) bool { return !unicode.IsPrint(r) && r != ' ' }) >= 0:
		return fmt.Errorf("token label %q has a control character", label)
	}
	return nil
}

func newToken(label string, existing []Token) Token {
	for {
		var id [8]byte
		rand.Read(id[:])
		t := Token{ID: IDPrefix + hex.EncodeToString(id[:]), Label: label, Secret: NewSecret(), Scope: ScopeOf(label),
			Created: time.Now().UTC().Truncate(time.Second)}
		if !slices.ContainsFunc(existing, func(o Token) bool { return o.ID == t.ID }) {
			return t
		}
	}
}

// NewSecret returns a fresh secret: "sb_" and 32 random bytes in unpadded
// base64url (43 characters).
func NewSecret() string {
	var b [32]byte
	rand.Read(b[:])
	return SecretPrefix + base64.RawURLEncoding.EncodeToString(b[:])
}

// sortTokens orders toks by creation time; tokens created in the same
// second keep their order in the file, which is the order they were issued.
func sortTokens(toks []Token) {
	slices.SortStableFunc(toks, func(a, b Token) int { return a.Created.Compare(b.Created) })
}

// decode parses the file. An empty (or blank) file is no tokens. Entries
// without a scope (version 1 of the file) get the scope of their label;
// unscoped reports whether there were any.
func decode(data []byte) (toks []Token, unscoped bool, err error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, false, nil
	}
	if err := json.Unmarshal(data, &toks); err != nil {
		return nil, false, fmt.Errorf("not a JSON list of tokens: %w", err)
	}
	seen := make(map[string]bool, len(toks))
	for i := range toks {
		t := &toks[i]
		switch {
		case t.ID == "":
			return nil, false, fmt.Errorf("entry %d has no \"id\"", i+1)
		case seen[t.ID]:
			return nil, false, fmt.Errorf("entry %d: id %q appears twice", i+1, t.ID)
		case t.Secret == "":
			return nil, false, fmt.Errorf("entry %d (id %q) has no \"token\"", i+1, t.ID)
		case t.Scope == "":
			t.Scope, unscoped = ScopeOf(t.Label), true
		case t.Scope != ScopeClient && t.Scope != ScopeAdmin:
			return nil, false, fmt.Errorf("entry %d (id %q) has scope %q: want %q or %q", i+1, t.ID, t.Scope, ScopeClient, ScopeAdmin)
		case t.Scope == ScopeAdmin && ScopeOf(t.Label) != ScopeAdmin:
			// An admin scope is only ever given to Switchboard's own
			// programs; a client label claiming one was edited in.
			return nil, false, fmt.Errorf("entry %d (id %q): label %q cannot have scope %q (only cli, tray, window and dashboard do)",
				i+1, t.ID, t.Label, ScopeAdmin)
		}
		switch {
		case t.Profile == "":
		case t.Scope != ScopeClient:
			// An admin token bound to a profile would make no sense: the
			// API is not a profile's. Refusing it keeps "profile" a
			// restriction that cannot be misread.
			return nil, false, fmt.Errorf("entry %d (id %q): label %q has scope %q and cannot be bound to a profile", i+1, t.ID, t.Label, t.Scope)
		default:
			if err := checkProfile(t.Profile); err != nil {
				return nil, false, fmt.Errorf("entry %d (id %q): %w", i+1, t.ID, err)
			}
		}
		switch {
		case t.MaxTier == "":
		case t.Scope != ScopeClient:
			// Switchboard's own programs are not MCP clients: a cap on
			// one was edited in, and would be misread as a restriction.
			return nil, false, fmt.Errorf("entry %d (id %q): label %q has scope %q and cannot have a maxTier", i+1, t.ID, t.Label, t.Scope)
		case !t.MaxTier.Valid():
			_, err := tiers.Parse(string(t.MaxTier))
			return nil, false, fmt.Errorf("entry %d (id %q): maxTier: %w", i+1, t.ID, err)
		}
		seen[t.ID] = true
	}
	return toks, unscoped, nil
}

// encode writes the tokens in the order given: new tokens are appended.
func encode(toks []Token) ([]byte, error) {
	if toks == nil {
		toks = []Token{}
	}
	data, err := json.MarshalIndent(toks, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding tokens: %w", err)
	}
	return append(data, '\n'), nil
}
