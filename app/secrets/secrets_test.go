package secrets

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/zalando/go-keyring"
	"go.uber.org/goleak"
)

const realProbeEnv = "SWITCHBOARD_SECRETS_REAL_PROBE"

func TestMain(m *testing.M) {
	// The real-keychain check runs in a child process: keyring.MockInit in
	// the other tests replaces go-keyring's provider for the whole process.
	if os.Getenv(realProbeEnv) != "" {
		os.Exit(realProbeChild())
	}
	goleak.VerifyTestMain(m)
}

func realProbeChild() int {
	s, err := Open(context.Background(), Options{Dir: os.Getenv(realProbeEnv), ProbeTimeout: 10 * time.Second})
	if err != nil {
		os.Stderr.WriteString("open: " + err.Error() + "\n")
		return 2
	}
	os.Stdout.WriteString(s.Backend() + "\n" + s.FallbackReason() + "\n")
	return 0
}

func isolate(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("HOME", dir)
	t.Setenv("SWITCHBOARD_HOME", dir)
	return dir
}

// exercise runs the same contract against any backend.
func exercise(t *testing.T, s *Store) {
	t.Helper()
	if _, err := s.Get("gh", "TOKEN"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get of a missing key: err = %v, want ErrNotFound", err)
	}
	for _, kv := range [][3]string{{"gh", "TOKEN", "t0k"}, {"gh", "OTHER", "o"}, {"slack", "TOKEN", "s"}, {"gh", "TOKEN", "t1k"}} {
		if err := s.Set(kv[0], kv[1], kv[2]); err != nil {
			t.Fatal(err)
		}
	}
	if v, err := s.Get("gh", "TOKEN"); err != nil || v != "t1k" {
		t.Fatalf("Get = %q, %v; want the replaced value t1k", v, err)
	}
	keys, err := s.Keys("gh")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"OTHER", "TOKEN"}, keys); diff != "" {
		t.Errorf("Keys (-want +got):\n%s", diff)
	}
	got, err := s.Resolve("gh", []string{"TOKEN", "OTHER"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"TOKEN": "t1k", "OTHER": "o"}, got); diff != "" {
		t.Errorf("Resolve (-want +got):\n%s", diff)
	}
	if _, err := s.Resolve("gh", []string{"TOKEN", "MISSING"}); err == nil || !strings.Contains(err.Error(), "MISSING") {
		t.Errorf("Resolve with a missing key: err = %v, want one naming MISSING", err)
	}
	args, err := s.Expand("gh", []string{"--token", Placeholder("TOKEN"), "x=" + Placeholder("OTHER") + ";", "plain"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"--token", "t1k", "x=o;", "plain"}, args); diff != "" {
		t.Errorf("Expand (-want +got):\n%s", diff)
	}
	if err := s.Delete("gh", "OTHER"); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete("gh", "OTHER"); err != nil {
		t.Errorf("deleting a missing key: %v", err)
	}
	if err := s.DeleteAll("gh"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get("gh", "TOKEN"); !errors.Is(err, ErrNotFound) {
		t.Errorf("after DeleteAll, Get: err = %v, want ErrNotFound", err)
	}
	if keys, _ := s.Keys("gh"); len(keys) != 0 {
		t.Errorf("after DeleteAll, Keys = %q", keys)
	}
	if v, err := s.Get("slack", "TOKEN"); err != nil || v != "s" {
		t.Errorf("another server's secret after DeleteAll: %q, %v", v, err)
	}
	for _, bad := range [][2]string{{"", "K"}, {"../x", "K"}, {"gh", ""}, {"gh", "a/b"}} {
		if err := s.Set(bad[0], bad[1], "v"); err == nil {
			t.Errorf("Set(%q, %q) succeeded, want an error", bad[0], bad[1])
		}
	}
}

func TestFileBackend(t *testing.T) {
	dir := isolate(t)
	s, err := Open(context.Background(), Options{Dir: dir, NoKeychain: true})
	if err != nil {
		t.Fatal(err)
	}
	if s.Backend() != BackendFile {
		t.Fatalf("Backend = %q, want file", s.Backend())
	}
	exercise(t, s)
	fi, err := os.Stat(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Errorf("mode of %s = %#o, want 0600", FileName, fi.Mode().Perm())
	}
	// A reopened store sees the same values: they are really on disk.
	s2, err := Open(context.Background(), Options{Dir: dir, NoKeychain: true})
	if err != nil {
		t.Fatal(err)
	}
	if v, err := s2.Get("slack", "TOKEN"); err != nil || v != "s" {
		t.Errorf("after reopening: %q, %v", v, err)
	}
}

func TestFileBackendRefusesWideMode(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Unix modes only")
	}
	dir := isolate(t)
	path := filepath.Join(dir, FileName)
	if err := os.WriteFile(path, []byte(`{"version":1,"secrets":{"a":{"K":"v"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Open(context.Background(), Options{Dir: dir, NoKeychain: true})
	if err == nil || !strings.Contains(err.Error(), "wider than 0600") {
		t.Fatalf("Open with a 0644 secrets file: err = %v, want a refusal", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Open(context.Background(), Options{Dir: dir, NoKeychain: true})
	if err != nil {
		t.Fatal(err)
	}
	if v, err := s.Get("a", "K"); err != nil || v != "v" {
		t.Errorf("Get = %q, %v", v, err)
	}
}

func TestKeychainBackend(t *testing.T) {
	dir := isolate(t)
	keyring.MockInit()
	s, err := Open(context.Background(), Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if s.Backend() != BackendKeychain {
		t.Fatalf("Backend = %q (%s), want keychain", s.Backend(), s.FallbackReason())
	}
	if err := s.Set("kc", "TOKEN", "secret-in-keychain"); err != nil {
		t.Fatal(err)
	}
	// The value is in the keychain under service/account, not in any file.
	if v, err := keyring.Get(Service, "kc/TOKEN"); err != nil || v != "secret-in-keychain" {
		t.Fatalf("keychain holds %q, %v", v, err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		if strings.Contains(string(b), "secret-in-keychain") {
			t.Errorf("%s contains the secret value", e.Name())
		}
	}
	if _, err := os.Stat(filepath.Join(dir, FileName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the keychain backend created %s (err %v)", FileName, err)
	}
	exercise(t, s)
	if _, err := keyring.Get(Service, "gh/TOKEN"); !errors.Is(err, keyring.ErrNotFound) {
		t.Errorf("DeleteAll left gh/TOKEN in the keychain: %v", err)
	}
}

// A keychain that fails (locked, no Secret Service) or hangs makes the
// store fall back to the file.
func TestFallbackWhenKeychainFails(t *testing.T) {
	dir := isolate(t)
	keyring.MockInitWithError(errors.New("org.freedesktop.DBus.Error.ServiceUnknown"))
	s, err := Open(context.Background(), Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if s.Backend() != BackendFile || !strings.Contains(s.FallbackReason(), "ServiceUnknown") {
		t.Fatalf("Backend = %q, reason %q; want file with the keychain's error", s.Backend(), s.FallbackReason())
	}
	exercise(t, s)

	block := make(chan struct{})
	defer close(block)
	start := time.Now()
	s, err = Open(context.Background(), Options{Dir: dir, Keyring: hangingKeyring{block}, ProbeTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if s.Backend() != BackendFile || time.Since(start) > 5*time.Second {
		t.Errorf("with a hanging keychain: backend %q after %s", s.Backend(), time.Since(start))
	}
}

type hangingKeyring struct{ block chan struct{} }

func (h hangingKeyring) Set(string, string, string) error { <-h.block; return errors.New("late") }
func (h hangingKeyring) Get(string, string) (string, error) {
	<-h.block
	return "", errors.New("late")
}
func (h hangingKeyring) Delete(string, string) error { <-h.block; return errors.New("late") }

// TestRealProbe opens a store against this machine's real keychain in a
// child process. Where there is no Secret Service (CI, this container) it
// must fall back to the file; where there is one it must work.
func TestRealProbe(t *testing.T) {
	dir := isolate(t)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), realProbeEnv+"="+dir)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	backend := lines[0]
	t.Logf("real keychain probe: backend %q, reason %q", backend, strings.Join(lines[1:], " "))
	switch {
	case runtime.GOOS == "linux" && os.Getenv("DBUS_SESSION_BUS_ADDRESS") == "":
		if backend != BackendFile {
			t.Errorf("no session bus, yet backend = %q", backend)
		}
	default:
		if !slices.Contains([]string{BackendFile, BackendKeychain}, backend) {
			t.Errorf("backend = %q", backend)
		}
	}
}

func TestPlaceholderKeys(t *testing.T) {
	got := PlaceholderKeys([]string{"${secret:A}", "x${secret:B}y${secret:A}", "${secret:}", "$secret:C", "${secret:a/b}"})
	if diff := cmp.Diff([]string{"A", "B"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
