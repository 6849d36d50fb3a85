package tokens_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/switchboardhq/switchboard/app/tokens"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var (
	secretRE = regexp.MustCompile(`^sb_[A-Za-z0-9_-]{43}$`)
	idRE     = regexp.MustCompile(`^tok_[0-9a-f]{16}$`)
)

func tokenPath(t *testing.T) string {
	return filepath.Join(t.TempDir(), tokens.FileName)
}

func open(t *testing.T, path string) *tokens.Store {
	t.Helper()
	s, err := tokens.Open(path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s
}

func issue(t *testing.T, s *tokens.Store, label string) tokens.Token {
	t.Helper()
	tok, err := s.Issue(label)
	if err != nil {
		t.Fatalf("Issue(%q): %v", label, err)
	}
	return tok
}

const goodFile = `[
  {"id": "tok_0000000000000001", "label": "cli", "token": "sb_one", "created": "2026-01-02T15:04:05Z"},
  {"id": "tok_0000000000000002", "label": "cursor", "token": "sb_two", "created": "2026-01-03T15:04:05Z", "note": "kept?"}
]`

func TestOpen(t *testing.T) {
	tests := []struct {
		name    string
		content *string // nil: no file
		mode    fs.FileMode
		want    []string // ids
		wantErr string
	}{
		{name: "missing file", want: nil},
		{name: "empty file", content: ptr(""), want: nil},
		{name: "blank file", content: ptr(" \n"), want: nil},
		{name: "empty list", content: ptr("[]"), want: nil},
		{name: "two tokens", content: ptr(goodFile), want: []string{"tok_0000000000000001", "tok_0000000000000002"}},
		{name: "wide mode is tightened", content: ptr(goodFile), mode: 0o644, want: []string{"tok_0000000000000001", "tok_0000000000000002"}},
		{name: "not JSON", content: ptr("{oops"), wantErr: "not a JSON list of tokens"},
		{name: "an object", content: ptr(`{"id":"x"}`), wantErr: "not a JSON list of tokens"},
		{name: "no id", content: ptr(`[{"label":"x","token":"sb_x"}]`), wantErr: `entry 1 has no "id"`},
		{name: "no secret", content: ptr(`[{"id":"tok_1","label":"x"}]`), wantErr: `entry 1 (id "tok_1") has no "token"`},
		{name: "duplicate id", content: ptr(`[{"id":"tok_1","token":"a"},{"id":"tok_1","token":"b"}]`), wantErr: `entry 2: id "tok_1" appears twice`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := tokenPath(t)
			if tt.content != nil {
				mode := tt.mode
				if mode == 0 {
					mode = 0o600
				}
				if err := os.WriteFile(path, []byte(*tt.content), mode); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(path, mode); err != nil { // umask
					t.Fatal(err)
				}
			}
			s, err := tokens.Open(path)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Open error = %v, want one containing %q", err, tt.wantErr)
				}
				if !strings.Contains(err.Error(), path) {
					t.Errorf("Open error %q does not name the file", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			var ids []string
			for _, tok := range s.List() {
				ids = append(ids, tok.ID)
				if tok.Secret != "" {
					t.Errorf("List returned the secret of %s", tok.ID)
				}
			}
			if fmt.Sprint(ids) != fmt.Sprint(tt.want) {
				t.Errorf("ids = %v, want %v", ids, tt.want)
			}
			if tt.content != nil && runtime.GOOS != "windows" {
				fi, err := os.Stat(path)
				if err != nil {
					t.Fatal(err)
				}
				if got := fi.Mode().Perm(); got != 0o600 {
					t.Errorf("mode after Open = %#o, want 0600", got)
				}
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestIssue(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "dir", tokens.FileName) // created on first Issue
	s := open(t, path)
	before := time.Now().Add(-time.Second)
	a := issue(t, s, "cli")
	b := issue(t, s, "cli") // labels need not be unique

	for _, tok := range []tokens.Token{a, b} {
		if !idRE.MatchString(tok.ID) {
			t.Errorf("id %q does not match %s", tok.ID, idRE)
		}
		if !secretRE.MatchString(tok.Secret) {
			t.Errorf("secret of %s does not match %s", tok.ID, secretRE)
		}
		if tok.Created.Before(before) || tok.Created.After(time.Now()) || tok.Created.Location() != time.UTC {
			t.Errorf("created = %v, want now in UTC", tok.Created)
		}
	}
	if a.ID == b.ID || a.Secret == b.Secret {
		t.Errorf("two tokens share an id or secret: %s %s", a, b)
	}

	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Errorf("file mode = %#o, want 0600", fi.Mode().Perm())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var onDisk []map[string]any
	if err := json.Unmarshal(data, &onDisk); err != nil {
		t.Fatalf("file is not a JSON list: %v\n%s", err, data)
	}
	if len(onDisk) != 2 || onDisk[0]["token"] != a.Secret || onDisk[0]["label"] != "cli" || onDisk[0]["id"] != a.ID {
		t.Errorf("file content = %s", data)
	}
	if _, err := time.Parse(time.RFC3339, onDisk[0]["created"].(string)); err != nil {
		t.Errorf("created is not RFC 3339: %v", err)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*tmp*")); len(leftovers) > 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}

	// A new store on the same file sees both tokens.
	s2 := open(t, path)
	for _, tok := range []tokens.Token{a, b} {
		if got, ok := s2.Verify(tok.Secret); !ok || got.ID != tok.ID {
			t.Errorf("reopened store: Verify(%s) = %v, %v", tok, got, ok)
		}
	}
}

func TestIssueLabel(t *testing.T) {
	tests := []struct {
		label   string
		wantErr string
	}{
		{"cli", ""},
		{"Claude Desktop", ""},
		{"vs-code (insiders) ✓", ""},
		{"", "empty"},
		{" cli", "leading or trailing space"},
		{"cli\n", "leading or trailing space"},
		{"a\x00b", "control character"},
		{"a\tb", "control character"},
		{strings.Repeat("x", tokens.MaxLabelLen+1), "longer than"},
	}
	s := open(t, tokenPath(t))
	for _, tt := range tests {
		t.Run(tt.label, func(t *testing.T) {
			tok, err := s.Issue(tt.label)
			if tt.wantErr == "" {
				if err != nil || tok.Label != tt.label {
					t.Fatalf("Issue(%q) = %v, %v", tt.label, tok, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Issue(%q) error = %v, want one containing %q", tt.label, err, tt.wantErr)
			}
			if _, err := s.Ensure(tt.label); err == nil {
				t.Errorf("Ensure(%q) accepted the label", tt.label)
			}
		})
	}
}

func TestVerify(t *testing.T) {
	s := open(t, tokenPath(t))
	cli := issue(t, s, "cli")
	cursor := issue(t, s, "cursor")

	tests := []struct {
		name      string
		secret    string
		wantLabel string // "" = refused
	}{
		{"cli token", cli.Secret, "cli"},
		{"cursor token", cursor.Secret, "cursor"},
		{"empty", "", ""},
		{"wrong", tokens.NewSecret(), ""},
		{"prefix", cli.Secret[:len(cli.Secret)-1], ""},
		{"longer", cli.Secret + "x", ""},
		{"only the prefix", "sb_", ""},
		{"the id", cli.ID, ""},
		{"other case", strings.ToUpper(cli.Secret), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := s.Verify(tt.secret)
			if ok != (tt.wantLabel != "") || got.Label != tt.wantLabel {
				t.Fatalf("Verify = %v, %v; want label %q", got, ok, tt.wantLabel)
			}
			if got.Secret != "" {
				t.Errorf("Verify returned the secret")
			}
		})
	}
}

func TestEnsure(t *testing.T) {
	path := tokenPath(t)
	s := open(t, path)
	a, err := s.Ensure("cli")
	if err != nil {
		t.Fatal(err)
	}
	if !secretRE.MatchString(a.Secret) {
		t.Fatalf("Ensure returned no secret: %#v", a)
	}
	// Another process (a second store) gets the same token.
	b, err := open(t, path).Ensure("cli")
	if err != nil || b.ID != a.ID || b.Secret != a.Secret {
		t.Fatalf("second Ensure = %#v, %v; want %#v", b, err, a)
	}
	c, err := s.Ensure("cursor")
	if err != nil || c.ID == a.ID {
		t.Fatalf("Ensure(cursor) = %#v, %v", c, err)
	}
	if n := len(s.List()); n != 2 {
		t.Fatalf("%d tokens, want 2", n)
	}
	if err := s.Revoke(a.ID); err != nil {
		t.Fatal(err)
	}
	d, err := s.Ensure("cli")
	if err != nil || d.ID == a.ID || d.Secret == a.Secret {
		t.Fatalf("Ensure after Revoke = %#v, %v; want a new token", d, err)
	}
}

func TestEnsureOldest(t *testing.T) {
	path := tokenPath(t)
	content := `[
  {"id": "tok_b", "label": "cli", "token": "sb_newer", "created": "2026-02-01T00:00:00Z"},
  {"id": "tok_a", "label": "cli", "token": "sb_older", "created": "2026-01-01T00:00:00Z"}
]`
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	tok, err := open(t, path).Ensure("cli")
	if err != nil || tok.ID != "tok_a" || tok.Secret != "sb_older" {
		t.Fatalf("Ensure = %#v, %v; want tok_a", tok, err)
	}
}

func TestListAndRevoke(t *testing.T) {
	s := open(t, tokenPath(t))
	var issued []tokens.Token
	for _, label := range []string{"cli", "cursor", "claude-desktop"} {
		issued = append(issued, issue(t, s, label))
	}
	list := s.List()
	if len(list) != 3 {
		t.Fatalf("List = %v", list)
	}
	for _, tok := range list {
		if tok.Secret != "" {
			t.Errorf("List returned the secret of %s", tok)
		}
	}

	tests := []struct {
		name    string
		id      string
		wantErr error
		left    int
	}{
		{"known", issued[1].ID, nil, 2},
		{"again", issued[1].ID, tokens.ErrNotFound, 2},
		{"unknown", "tok_nope", tokens.ErrNotFound, 2},
		{"empty", "", tokens.ErrNotFound, 2},
		{"another", issued[0].ID, nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.Revoke(tt.id)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Revoke(%q) = %v, want %v", tt.id, err, tt.wantErr)
			}
			if tt.wantErr != nil && !strings.Contains(err.Error(), fmt.Sprintf("%q", tt.id)) {
				t.Errorf("error %q does not name the id", err)
			}
			if n := len(s.List()); n != tt.left {
				t.Errorf("%d tokens left, want %d", n, tt.left)
			}
		})
	}
	if _, ok := s.Verify(issued[1].Secret); ok {
		t.Error("a revoked token still verifies")
	}
	if _, ok := s.Verify(issued[2].Secret); !ok {
		t.Error("a kept token no longer verifies")
	}
}

// TestOtherProcess: a CLI issuing or revoking a token while the daemon runs
// is honoured by the daemon's Verify without a Reload, on the very next
// call: with a stat per check, and with the daemon's WatchFile (inotify),
// where the change must be seen as promptly.
func TestOtherProcess(t *testing.T) {
	for _, watched := range []bool{false, true} {
		t.Run(map[bool]string{false: "stat", true: "watched"}[watched], func(t *testing.T) {
			testOtherProcess(t, watched)
		})
	}
}

func testOtherProcess(t *testing.T, watched bool) {
	path := tokenPath(t)
	daemon := open(t, path)
	if watched {
		if err := daemon.WatchFile(); err != nil {
			if runtime.GOOS == "linux" {
				t.Fatalf("WatchFile: %v", err)
			}
			t.Skipf("no file watch here: %v", err)
		}
		t.Cleanup(func() { daemon.Close() })
	}
	cliTok, err := daemon.Ensure("cli")
	if err != nil {
		t.Fatal(err)
	}
	cli := open(t, path)

	tok := issue(t, cli, "cursor")
	if got, ok := daemon.Verify(tok.Secret); !ok || got.Label != "cursor" {
		t.Fatalf("daemon does not see the token the CLI issued: %v, %v", got, ok)
	}
	if err := cli.Revoke(tok.ID); err != nil {
		t.Fatal(err)
	}
	if _, ok := daemon.Verify(tok.Secret); ok {
		t.Fatal("daemon still accepts the token the CLI revoked")
	}
	// The daemon's own change keeps the CLI's: it reads the file first.
	tok2 := issue(t, cli, "zed")
	issue(t, daemon, "vscode")
	if _, ok := open(t, path).Verify(tok2.Secret); !ok {
		t.Fatal("the daemon's Issue lost the token the CLI issued")
	}

	// A broken hand edit keeps the tokens in force, is reported, and
	// blocks changes until it is fixed.
	if err := os.WriteFile(path, []byte("[{broken"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, ok := daemon.Verify(cliTok.Secret); !ok {
		t.Error("a broken file revoked the tokens in force")
	}
	if err := daemon.Problem(); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("Problem = %v, want one naming the file", err)
	}
	if _, err := daemon.Issue("x"); err == nil {
		t.Error("Issue overwrote a broken file")
	}
	if data, _ := os.ReadFile(path); string(data) != "[{broken" {
		t.Errorf("broken file was changed to %s", data)
	}
	if err := daemon.Reload(); err == nil {
		t.Error("Reload of a broken file succeeded")
	}

	// Removing the file revokes everything.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if _, ok := daemon.Verify(cliTok.Secret); ok {
		t.Error("a token verifies after the file was removed")
	}
	if err := daemon.Problem(); err != nil {
		t.Errorf("Problem after removal = %v", err)
	}

	// Made again, then edited in place (the same file, truncated and
	// rewritten, as an editor saving over it does): each is seen at once.
	again := issue(t, open(t, path), "cursor")
	if _, ok := daemon.Verify(again.Secret); !ok {
		t.Fatal("the daemon does not see the token of a file made again")
	}
	kept := issue(t, open(t, path), "zed")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var entries []map[string]any
	if err := json.Unmarshal(data, &entries); err != nil {
		t.Fatal(err)
	}
	entries = slices.DeleteFunc(entries, func(e map[string]any) bool { return e["id"] == again.ID })
	edited, err := json.Marshal(entries)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, edited, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, ok := daemon.Verify(again.Secret); ok {
		t.Error("the daemon accepts a token edited out of the file in place")
	}
	if _, ok := daemon.Verify(kept.Secret); !ok {
		t.Error("the daemon refuses a token the edit kept")
	}
}

func TestReload(t *testing.T) {
	path := tokenPath(t)
	s := open(t, path)
	if err := os.WriteFile(path, []byte(goodFile), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.Reload(); err != nil {
		t.Fatal(err)
	}
	if got, ok := s.Verify("sb_two"); !ok || got.Label != "cursor" {
		t.Fatalf("Verify after Reload = %v, %v", got, ok)
	}
}

func TestConcurrent(t *testing.T) {
	path := tokenPath(t)
	stores := []*tokens.Store{open(t, path), open(t, path)}
	const perStore = 10
	var wg sync.WaitGroup
	secrets := make(chan string, 2*perStore)
	for _, s := range stores {
		for i := range perStore {
			wg.Go(func() {
				tok, err := s.Issue(fmt.Sprintf("client-%d", i))
				if err != nil {
					t.Error(err)
					return
				}
				secrets <- tok.Secret
				if _, ok := s.Verify(tok.Secret); !ok {
					t.Errorf("own token does not verify")
				}
				s.List()
			})
		}
	}
	wg.Wait()
	close(secrets)
	fresh := open(t, path)
	if n := len(fresh.List()); n != 2*perStore {
		t.Fatalf("%d tokens in the file, want %d (a concurrent Issue was lost)", n, 2*perStore)
	}
	for secret := range secrets {
		for _, s := range stores {
			if _, ok := s.Verify(secret); !ok {
				t.Fatal("a token issued concurrently does not verify in every store")
			}
		}
	}
}

func TestNoSecretInOutput(t *testing.T) {
	s := open(t, tokenPath(t))
	tok := issue(t, s, "cli")
	var buf bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&buf, nil))
	logger.Info("issued", "token", tok)
	logger.Info("issued", slog.Any("token", tok))
	fmt.Fprintf(&buf, "%v %+v %#v %s %v", tok, tok, tok, tok, struct{ T tokens.Token }{tok})
	if strings.Contains(buf.String(), tok.Secret) {
		t.Fatalf("secret appears in output:\n%s", buf.String())
	}
	if !strings.Contains(buf.String(), tok.ID) {
		t.Fatalf("id missing from output:\n%s", buf.String())
	}
}

// TestVerifyAllocatesNothing: the daemon verifies a token on every
// request; with the file watched, a check that finds it unchanged
// allocates nothing (a stat allocated its FileInfo, the hash its copy of
// the secret).
func TestVerifyAllocatesNothing(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the file is watched on Linux only")
	}
	path := tokenPath(t)
	s := open(t, path)
	tok := issue(t, s, "cursor")
	if err := s.WatchFile(); err != nil {
		t.Fatalf("WatchFile: %v", err)
	}
	defer s.Close()
	if allocs := testing.AllocsPerRun(200, func() {
		if _, ok := s.Verify(tok.Secret); !ok {
			t.Fatal("the token does not verify")
		}
	}); allocs != 0 {
		t.Errorf("Verify allocates %.1f times per call, want 0", allocs)
	}
}
