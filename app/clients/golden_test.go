package clients

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var update = flag.Bool("update", false, "rewrite the golden after-connect and after-disconnect files")

const (
	testURL    = "http://127.0.0.1:7391/mcp"
	testToken  = "sbt_0123456789abcdef"
	testBinary = "/opt/switchboard/bin/switchboard"
)

// testEnv is an environment around fresh temporary folders.
func testEnv(t *testing.T) Env {
	t.Helper()
	return Env{GOOS: "linux", Home: t.TempDir(), Workspace: t.TempDir()}
}

func testEditor(t *testing.T) *Editor {
	t.Helper()
	n := 0
	ed, err := New(Options{BackupDir: t.TempDir(), GatewayURL: testURL, Now: func() time.Time {
		n++
		return time.Date(2026, 3, 1, 12, 0, n, 0, time.UTC)
	}})
	if err != nil {
		t.Fatal(err)
	}
	return ed
}

func mustClient(t *testing.T, id string) Client {
	t.Helper()
	c, ok := Lookup(id)
	if !ok {
		t.Fatalf("no client %q", id)
	}
	return c
}

func writeConfig(t *testing.T, c Client, env Env, data []byte) string {
	t.Helper()
	path, err := c.Path(env)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func apply(t *testing.T, ed *Editor, c Client, env Env, ch Change) *Plan {
	t.Helper()
	p, err := ed.Plan(c, env, ch)
	if err != nil {
		t.Fatalf("Plan(%T): %v", ch, err)
	}
	if err := ed.Apply(p); err != nil {
		t.Fatalf("Apply(%T): %v", ch, err)
	}
	return p
}

// golden compares got with the file, or rewrites it under -update.
func golden(t *testing.T, file string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s differs (-want +got):\n%s", file, cmp.Diff(string(want), string(got)))
	}
}

// ownedBefore reports whether e, in an original file, is Switchboard's
// own: disconnect removes it, so those files do not come back byte for
// byte.
func ownedBefore(e Entry) bool { return isOwnName(e.Name) && IsSwitchboard(e, testURL) }

func without(es []Entry, drop func(Entry) bool) []Entry {
	var out []Entry
	for _, e := range es {
		if !drop(e) {
			out = append(out, e)
		}
	}
	return out
}

// TestGolden runs connect, connect again, disconnect and disconnect again
// on every testdata/<client>/<case>/original (no original: an absent file)
// and compares the file after each step with the golden files (no
// after-disconnect: the file is removed). A same-named entry Switchboard
// did not write is first refused as a conflict, then taken over.
// Disconnect gives back the original bytes, or no file, unless the
// original held an entry of Switchboard's own.
func TestGolden(t *testing.T) {
	dirs, err := filepath.Glob("testdata/*/*")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, dir := range dirs {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			continue
		}
		id, kase := filepath.Base(filepath.Dir(dir)), filepath.Base(dir)
		if id == "fuzz" {
			continue // the fuzz targets' seed corpus (testdata/fuzz/FuzzX), not a client
		}
		seen[id] = true
		t.Run(id+"/"+kase, func(t *testing.T) {
			c := mustClient(t, id)
			env, ed := testEnv(t), testEditor(t)
			path, _ := c.Path(env)
			original, err := os.ReadFile(filepath.Join(dir, "original"))
			absent := os.IsNotExist(err)
			if !absent {
				if err != nil {
					t.Fatal(err)
				}
				writeConfig(t, c, env, original)
			}
			before, err := Read(c, env)
			if err != nil {
				t.Fatalf("Read(original): %v", err)
			}
			cn := Connect{URL: testURL, Token: testToken, BinaryPath: testBinary}
			if kase == "perserver" {
				cn.PerServer = []string{"github"}
			}

			first, err := ed.Plan(c, env, cn)
			if err != nil {
				t.Fatal(err)
			}
			if kase == "conflict" && (len(first.Conflicts) != 1 || first.Conflicts[0].Name != EntryName ||
				!slices.Equal(first.Kept, []string{"switchboard-docs"})) {
				t.Errorf("conflict case: conflicts %v, kept %v; want the user's switchboard entry in conflict and switchboard-docs kept",
					first.Conflicts, first.Kept)
			}
			if kase == "stale" && (len(first.Conflicts) != 0 || len(first.Earlier) != 1 || first.Earlier[0].Name != EntryName ||
				!slices.ContainsFunc(first.Notes, func(n string) bool { return strings.Contains(n, "an earlier Switchboard's") })) {
				t.Errorf("stale case: conflicts %v, earlier %v, notes %q; want the earlier Switchboard's entry replaced, and said so",
					first.Conflicts, first.Earlier, first.Notes)
			}
			if len(first.Conflicts) > 0 {
				if err := ed.Apply(first); !errors.Is(err, ErrConflict) {
					t.Fatalf("Apply with conflicts %v = %v, want ErrConflict", first.Conflicts, err)
				}
				if got, _ := os.ReadFile(path); !bytes.Equal(got, original) {
					t.Fatal("a refused plan changed the file")
				}
				cn.TakeOver = true
			}
			p := apply(t, ed, c, env, cn)
			if kase == "stale" {
				if bs, _ := ed.Backups(c.ID); len(bs) != 1 {
					t.Errorf("replacing an earlier Switchboard's entry: backups %+v, want one", bs)
				} else if saved, _ := os.ReadFile(bs[0].File); !bytes.Equal(saved, original) {
					t.Errorf("the backup is not the original")
				}
			}
			if p.Exists == absent {
				t.Errorf("plan.Exists = %v for an absent=%v file", p.Exists, absent)
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join(dir, "after-connect"), got)
			if c.Format == JSON && !json.Valid(got) {
				t.Errorf("strict JSON client: after connect the file is not strict JSON")
			}
			after, err := Read(c, env)
			if err != nil {
				t.Fatalf("Read(after connect): %v", err)
			}
			written := func(e Entry) bool {
				return e.Name == EntryName || slices.Contains(cn.PerServer, strings.TrimPrefix(e.Name, EntryName+"-"))
			}
			if d := cmp.Diff(without(before, func(e Entry) bool { return written(e) || ownedBefore(e) }), without(after, written),
				cmpopts.EquateEmpty()); d != "" {
				t.Errorf("other servers changed by connect (-before +after):\n%s", d)
			}
			checkConnected(t, c, after, cn)

			// Connect is idempotent: the same change again changes nothing.
			again, err := ed.Plan(c, env, cn)
			if err != nil {
				t.Fatal(err)
			}
			if again.Changed() || again.Diff != "" || len(again.Conflicts) > 0 {
				t.Errorf("second connect changes the file (conflicts %v):\n%s", again.Conflicts, again.Diff)
			}

			apply(t, ed, c, env, Disconnect{})
			got, err = os.ReadFile(path)
			gone := os.IsNotExist(err)
			if err != nil && !gone {
				t.Fatal(err)
			}
			goldenFile := filepath.Join(dir, "after-disconnect")
			if gone {
				if *update {
					os.Remove(goldenFile)
				} else if _, err := os.Stat(goldenFile); err == nil {
					t.Errorf("disconnect removed the file; %s expects one", goldenFile)
				}
			} else {
				golden(t, goldenFile, got)
			}
			if len(without(before, func(e Entry) bool { return !ownedBefore(e) })) == 0 {
				if absent != gone || !bytes.Equal(got, original) {
					t.Errorf("connect then disconnect does not give back the original (absent %v, gone %v):\n%s",
						absent, gone, Diff(path, original, got))
				}
			}
			left, err := Read(c, env)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(without(before, ownedBefore), left, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("after disconnect (-want +got):\n%s", d)
			}
			again, err = ed.Plan(c, env, Disconnect{})
			if err != nil {
				t.Fatal(err)
			}
			if again.Changed() {
				t.Errorf("second disconnect changes the file:\n%s", again.Diff)
			}
		})
	}
	for _, c := range Table {
		if !seen[c.ID] && c.Remote != DeepLink { // no file: TestOfferLink
			t.Errorf("no golden cases for client %s", c.ID)
		}
	}
}

// checkConnected reads back the entries connect wrote.
func checkConnected(t *testing.T, c Client, entries []Entry, cn Connect) {
	t.Helper()
	names := []string{EntryName}
	for _, s := range cn.PerServer {
		names = append(names, EntryName+"-"+s)
	}
	for i, name := range names {
		var got *Entry
		for j := range entries {
			if entries[j].Name == name {
				if got != nil {
					t.Errorf("two entries named %q", name)
				}
				got = &entries[j]
			}
		}
		if got == nil {
			t.Errorf("no entry %q after connect", name)
			continue
		}
		want := Entry{Name: name}
		if c.Remote == Bridge {
			want.Command, want.Args = cn.BinaryPath, []string{"connect"}
			if i > 0 {
				want.Args = append(want.Args, cn.PerServer[i-1])
			}
			want.Env = map[string]string{TokenEnv: cn.Token}
		} else {
			want.URL = cn.URL
			if i > 0 {
				want.URL += "/" + cn.PerServer[i-1]
			}
			want.Headers = map[string]string{"Authorization": "Bearer " + cn.Token}
		}
		if d := cmp.Diff(want, *got, cmpopts.IgnoreFields(Entry{}, "Type", "URLKey")); d != "" {
			t.Errorf("entry %q (-want +got):\n%s", name, d)
		}
	}
}
