// Package secrets keeps the secret values that MCP servers need (API keys,
// tokens, passwords) out of config.json, logs and history.
//
// A [Store] holds values per server and key. It uses the OS keychain
// (macOS Keychain, Windows Credential Manager, the Secret Service on Linux)
// through github.com/zalando/go-keyring where one answers, and otherwise a
// secrets.json file in the data directory that only the user can read
// (mode 0600; a file with a wider mode is refused on Unix). Which one is
// used is decided once, when the store is opened, by a probe that writes,
// reads and deletes a throwaway value.
//
// Config files refer to secrets by name only. The installer stores the value
// of every secret environment variable under the variable's name and reports
// the names; the daemon calls [Store.Resolve] when it starts the server to
// get the values for its environment. A secret that must appear on the
// command line is written into config.json as a placeholder
// (see [Placeholder]) that [Store.Expand] replaces at start.
package secrets

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/app/atomicfile"
	"github.com/zalando/go-keyring"
)

const (
	// Service is the keychain service every secret is stored under; the
	// account is "<server>/<key>".
	Service = "switchboard"

	// FileName is the file backend's store in the data directory.
	FileName = "secrets.json"

	// IndexFileName lists, per server, the keys held in the keychain: a
	// keychain cannot be listed, and DeleteAll needs to know what to delete.
	// It holds names only, never values.
	IndexFileName = "secrets-index.json"

	// BackendKeychain and BackendFile are what [Store.Backend] returns.
	BackendKeychain = "keychain"
	BackendFile     = "file"

	// DefaultProbeTimeout bounds the keychain probe: a Secret Service that
	// waits for the user to unlock a collection must not stall the daemon.
	DefaultProbeTimeout = 5 * time.Second
)

// ErrNotFound is returned (wrapped) by Get for a key that has no value.
var ErrNotFound = errors.New("secret not found")

// A Keyring is the part of an OS keychain the store uses. The zero Options
// use the real one (github.com/zalando/go-keyring); tests pass their own or
// call keyring.MockInit.
type Keyring interface {
	Set(service, user, password string) error
	Get(service, user string) (string, error)
	Delete(service, user string) error
}

// osKeyring forwards to go-keyring's package functions, which pick the
// platform's keychain (or the mock after keyring.MockInit).
type osKeyring struct{}

func (osKeyring) Set(s, u, p string) error        { return keyring.Set(s, u, p) }
func (osKeyring) Get(s, u string) (string, error) { return keyring.Get(s, u) }
func (osKeyring) Delete(s, u string) error        { return keyring.Delete(s, u) }

// Options configure Open.
type Options struct {
	// Dir is the data directory (SWITCHBOARD_HOME): secrets.json and
	// secrets-index.json live there. Required.
	Dir string
	// Logger receives the backend decision (INFO) and keychain problems
	// (WARN). Nil discards.
	Logger *slog.Logger
	// Keyring is the keychain to try; nil means the OS keychain.
	Keyring Keyring
	// NoKeychain skips the keychain and uses the file backend.
	NoKeychain bool
	// ProbeTimeout bounds the keychain probe; 0 means DefaultProbeTimeout.
	ProbeTimeout time.Duration
}

// A Store holds secrets per server. It is safe for concurrent use. Keys are
// environment variable names or argument names: non-empty, without '/' or
// NUL, at most 256 bytes.
type Store struct {
	dir     string
	logger  *slog.Logger
	keyring Keyring // nil: file backend
	why     string  // why the file backend is used, for Backend's callers' logs

	mu sync.Mutex // serializes every read-modify-write of the files
}

// Open returns the store for opts.Dir, deciding the backend: the keychain
// when a probe (set, get, delete of a random value) succeeds within
// ProbeTimeout, the file otherwise.
func Open(ctx context.Context, opts Options) (*Store, error) {
	if opts.Dir == "" {
		return nil, errors.New("opening secret store: no data directory given")
	}
	if err := os.MkdirAll(opts.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("opening secret store: %w", err)
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &Store{dir: opts.Dir, logger: logger}
	if opts.NoKeychain {
		s.why = "keychain disabled"
	} else {
		kr := opts.Keyring
		if kr == nil {
			kr = osKeyring{}
		}
		timeout := opts.ProbeTimeout
		if timeout <= 0 {
			timeout = DefaultProbeTimeout
		}
		if err := probe(ctx, kr, timeout); err != nil {
			s.why = err.Error()
			logger.Info("OS keychain unavailable; secrets are kept in a 0600 file",
				"file", filepath.Join(opts.Dir, FileName), "reason", err)
		} else {
			s.keyring = kr
		}
	}
	if s.keyring == nil {
		// Refuse a world-readable file now rather than at the first start.
		if _, err := s.readFile(); err != nil {
			return nil, err
		}
	}
	logger.Info("secret store opened", "backend", s.Backend())
	return s, nil
}

// probe writes, reads back and deletes a random value. It runs in its own
// goroutine so a keychain call that blocks (a locked collection waiting for
// a prompt) cannot hold Open past the timeout; such a goroutine ends when
// the keychain finally answers.
func probe(ctx context.Context, kr Keyring, timeout time.Duration) error {
	var b [8]byte
	_, _ = rand.Read(b[:])
	account := "switchboard-probe/" + hex.EncodeToString(b[:])
	value := hex.EncodeToString(b[:])
	done := make(chan error, 1)
	go func() {
		if err := kr.Set(Service, account, value); err != nil {
			done <- fmt.Errorf("keychain probe: set: %w", err)
			return
		}
		got, err := kr.Get(Service, account)
		_ = kr.Delete(Service, account)
		switch {
		case err != nil:
			done <- fmt.Errorf("keychain probe: get: %w", err)
		case got != value:
			done <- errors.New("keychain probe: read back a different value")
		default:
			done <- nil
		}
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case err := <-done:
		return err
	case <-timer.C:
		return fmt.Errorf("keychain probe: no answer within %s", timeout)
	case <-ctx.Done():
		return fmt.Errorf("keychain probe: %w", ctx.Err())
	}
}

// Backend says where values are kept: "keychain" or "file".
func (s *Store) Backend() string {
	if s.keyring != nil {
		return BackendKeychain
	}
	return BackendFile
}

// FallbackReason says why the file backend is used ("" with the keychain).
func (s *Store) FallbackReason() string { return s.why }

var serverNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$`)

func checkNames(server, key string) error {
	if !serverNameRE.MatchString(server) {
		return fmt.Errorf("invalid server name %q", server)
	}
	return checkKey(key)
}

func checkKey(key string) error {
	if key == "" || len(key) > 256 || strings.ContainsAny(key, "/\x00") {
		return fmt.Errorf("invalid secret key %q: use 1 to 256 bytes without '/' or NUL", key)
	}
	return nil
}

func account(server, key string) string { return server + "/" + key }

// Set stores value for server's key, replacing any earlier value.
func (s *Store) Set(server, key, value string) error {
	if err := checkNames(server, key); err != nil {
		return fmt.Errorf("storing secret: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.keyring == nil {
		f, err := s.readFile()
		if err != nil {
			return err
		}
		if f.Secrets[server] == nil {
			f.Secrets[server] = map[string]string{}
		}
		f.Secrets[server][key] = value
		return s.writeFile(f)
	}
	if err := s.keyring.Set(Service, account(server, key), value); err != nil {
		return fmt.Errorf("storing secret %s of server %q in the keychain: %w", key, server, err)
	}
	idx, err := s.readIndex()
	if err != nil {
		return err
	}
	if !slices.Contains(idx[server], key) {
		idx[server] = append(idx[server], key)
		slices.Sort(idx[server])
		return s.writeIndex(idx)
	}
	return nil
}

// Get returns server's value for key, or an error wrapping ErrNotFound.
func (s *Store) Get(server, key string) (string, error) {
	if err := checkNames(server, key); err != nil {
		return "", fmt.Errorf("reading secret: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.get(server, key)
}

func (s *Store) get(server, key string) (string, error) {
	if s.keyring == nil {
		f, err := s.readFile()
		if err != nil {
			return "", err
		}
		v, ok := f.Secrets[server][key]
		if !ok {
			return "", fmt.Errorf("secret %s of server %q: %w", key, server, ErrNotFound)
		}
		return v, nil
	}
	v, err := s.keyring.Get(Service, account(server, key))
	if errors.Is(err, keyring.ErrNotFound) {
		return "", fmt.Errorf("secret %s of server %q: %w", key, server, ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("reading secret %s of server %q from the keychain: %w", key, server, err)
	}
	return v, nil
}

// Delete removes server's key. Deleting a key that has no value is not an
// error.
func (s *Store) Delete(server, key string) error {
	if err := checkNames(server, key); err != nil {
		return fmt.Errorf("deleting secret: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.delete(server, []string{key})
}

// DeleteAll removes every secret of server.
func (s *Store) DeleteAll(server string) error {
	if !serverNameRE.MatchString(server) {
		return fmt.Errorf("deleting secrets: invalid server name %q", server)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	keys, err := s.keys(server)
	if err != nil {
		return err
	}
	return s.delete(server, keys)
}

func (s *Store) delete(server string, keys []string) error {
	if s.keyring == nil {
		f, err := s.readFile()
		if err != nil {
			return err
		}
		for _, k := range keys {
			delete(f.Secrets[server], k)
		}
		if len(f.Secrets[server]) == 0 {
			delete(f.Secrets, server)
		}
		return s.writeFile(f)
	}
	var errs []error
	for _, k := range keys {
		if err := s.keyring.Delete(Service, account(server, k)); err != nil && !errors.Is(err, keyring.ErrNotFound) {
			errs = append(errs, fmt.Errorf("deleting secret %s of server %q from the keychain: %w", k, server, err))
		}
	}
	idx, err := s.readIndex()
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	idx[server] = slices.DeleteFunc(idx[server], func(k string) bool { return slices.Contains(keys, k) })
	if len(idx[server]) == 0 {
		delete(idx, server)
	}
	return errors.Join(append(errs, s.writeIndex(idx))...)
}

// Keys lists the keys server has values for, sorted.
func (s *Store) Keys(server string) ([]string, error) {
	if !serverNameRE.MatchString(server) {
		return nil, fmt.Errorf("listing secrets: invalid server name %q", server)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.keys(server)
}

func (s *Store) keys(server string) ([]string, error) {
	if s.keyring == nil {
		f, err := s.readFile()
		if err != nil {
			return nil, err
		}
		return slices.Sorted(maps.Keys(f.Secrets[server])), nil
	}
	idx, err := s.readIndex()
	if err != nil {
		return nil, err
	}
	return slices.Clone(idx[server]), nil
}

// Resolve returns the values of server's secrets named in names, keyed by
// name: what the daemon adds to a server's environment at start. A name
// without a value is an error naming it, so the server is not started with
// a missing key.
func (s *Store) Resolve(server string, names []string) (map[string]string, error) {
	out := make(map[string]string, len(names))
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range names {
		if err := checkNames(server, n); err != nil {
			return nil, fmt.Errorf("resolving secrets: %w", err)
		}
		v, err := s.get(server, n)
		if err != nil {
			return nil, fmt.Errorf("resolving secrets of server %q: %w", server, err)
		}
		out[n] = v
	}
	return out, nil
}

// placeholderRE matches what Placeholder writes.
var placeholderRE = regexp.MustCompile(`\$\{secret:([^}/\x00]+)\}`)

// Placeholder is how config.json refers to a secret inside a command-line
// argument: "${secret:KEY}". Expand replaces it.
func Placeholder(key string) string { return "${secret:" + key + "}" }

// PlaceholderKeys lists the keys referred to in args, in order, without
// duplicates.
func PlaceholderKeys(args []string) []string {
	var keys []string
	for _, a := range args {
		for _, m := range placeholderRE.FindAllStringSubmatch(a, -1) {
			if !slices.Contains(keys, m[1]) {
				keys = append(keys, m[1])
			}
		}
	}
	return keys
}

// Expand returns args with every placeholder replaced by server's value.
// A placeholder without a value is an error naming the key.
func (s *Store) Expand(server string, args []string) ([]string, error) {
	keys := PlaceholderKeys(args)
	if len(keys) == 0 {
		return slices.Clone(args), nil
	}
	vals, err := s.Resolve(server, keys)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = placeholderRE.ReplaceAllStringFunc(a, func(m string) string {
			return vals[placeholderRE.FindStringSubmatch(m)[1]]
		})
	}
	return out, nil
}

// fileData is secrets.json. Version lets a later layout migrate it.
type fileData struct {
	Version int                          `json:"version"`
	Secrets map[string]map[string]string `json:"secrets"`
}

func (s *Store) filePath() string  { return filepath.Join(s.dir, FileName) }
func (s *Store) indexPath() string { return filepath.Join(s.dir, IndexFileName) }

func (s *Store) readFile() (*fileData, error) {
	path := s.filePath()
	f := &fileData{Version: 1, Secrets: map[string]map[string]string{}}
	b, err := readPrivate(path)
	if errors.Is(err, os.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, f); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if f.Version != 1 {
		return nil, fmt.Errorf("reading %s: unsupported version %d", path, f.Version)
	}
	if f.Secrets == nil {
		f.Secrets = map[string]map[string]string{}
	}
	return f, nil
}

func (s *Store) writeFile(f *fileData) error {
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding secrets: %w", err)
	}
	return writePrivate(s.filePath(), b)
}

// index maps server → keys held in the keychain.
type index map[string][]string

func (s *Store) readIndex() (index, error) {
	idx := index{}
	b, err := readPrivate(s.indexPath())
	if errors.Is(err, os.ErrNotExist) {
		return idx, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &idx); err != nil {
		return nil, fmt.Errorf("reading %s: %w", s.indexPath(), err)
	}
	return idx, nil
}

func (s *Store) writeIndex(idx index) error {
	b, err := json.MarshalIndent(idx, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding secret index: %w", err)
	}
	return writePrivate(s.indexPath(), b)
}

// readPrivate reads a file that must be readable by the user alone.
func readPrivate(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := checkPrivate(path, fi); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return b, nil
}

// writePrivate writes atomically with mode 0600. atomicfile keeps an
// existing file's mode, and readPrivate has refused a wider one.
func writePrivate(path string, b []byte) error {
	if err := atomicfile.Write(path, b, 0o600); err != nil {
		return fmt.Errorf("saving secrets: %w", err)
	}
	return nil
}
