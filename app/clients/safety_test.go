package clients

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type userEntry struct {
	name string
	v    obj
}

// userFile is client c's file holding entries, spelled as a user of the
// client would write them.
func userFile(t *testing.T, c Client, path string, entries ...userEntry) []byte {
	t.Helper()
	doc, err := openDocument(c, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := doc.upsert(e.name, e.v); err != nil {
			t.Fatal(err)
		}
	}
	return doc.bytes()
}

// withHeaders adds headers to a remote entry the way client c spells them.
func withHeaders(c Client, o obj, h obj) obj {
	switch c.Remote {
	case CodexHTTP:
		return append(o, member{"http_headers", h})
	case ContinueHTTP:
		return append(o, member{"requestOptions", obj{{"headers", h}}})
	}
	return append(o, member{"headers", h})
}

func readFile(t *testing.T, path string) ([]byte, bool) {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, false
	}
	if err != nil {
		t.Fatal(err)
	}
	return b, true
}

func entryNamed(es []Entry, name string) (Entry, bool) {
	i := slices.IndexFunc(es, func(e Entry) bool { return e.Name == name })
	if i < 0 {
		return Entry{}, false
	}
	return es[i], true
}

// A user's own entries with Switchboard's names are not Switchboard's:
// "switchboard-docs" (an https server) is never touched, and a
// "switchboard" entry that Switchboard did not write is a conflict that
// Apply refuses until the change takes it over. For every client.
func TestOwnershipConflict(t *testing.T) {
	for _, c := range Table {
		if c.Remote == DeepLink {
			continue // no file (TestOfferLink)
		}
		t.Run(c.ID, func(t *testing.T) {
			env, ed := testEnv(t), testEditor(t)
			path, _ := c.Path(env)
			docs := userEntry{"switchboard-docs", obj{{"url", "https://docs.example.com/mcp"}}}
			mine := userEntry{"switchboard", obj{{"command", "/usr/bin/other-tool"}, {"args", []string{"serve"}}}}
			original := userFile(t, c, path, docs, mine)
			writeConfig(t, c, env, original)
			before, err := Read(c, env)
			if err != nil {
				t.Fatal(err)
			}
			userDocs, _ := entryNamed(before, "switchboard-docs")

			cn := Connect{URL: testURL, Token: testToken, BinaryPath: testBinary}
			p, err := ed.Plan(c, env, cn)
			if err != nil {
				t.Fatal(err)
			}
			if want := []Conflict{{Name: "switchboard", Target: "runs /usr/bin/other-tool"}}; !cmp.Equal(p.Conflicts, want) {
				t.Errorf("conflicts %+v, want %+v", p.Conflicts, want)
			}
			if !slices.Equal(p.Kept, []string{"switchboard-docs"}) {
				t.Errorf("kept %v, want switchboard-docs", p.Kept)
			}
			if !strings.Contains(p.Diff, "other-tool") {
				t.Errorf("the diff does not show the entry it would replace:\n%s", p.Diff)
			}
			err = ed.Apply(p)
			var ce *ConflictError
			if !errors.As(err, &ce) || !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), `"switchboard"`) ||
				strings.Contains(err.Error(), "--replace") {
				t.Fatalf("Apply = %v, want a conflict naming the entry and no command-line flag", err)
			}
			if got, _ := readFile(t, path); !bytes.Equal(got, original) {
				t.Fatal("a refused plan changed the file")
			}
			// Disconnect leaves both alone: neither is Switchboard's.
			if p := apply(t, ed, c, env, Disconnect{}); p.Changed() || !slices.Equal(slices.Sorted(slices.Values(p.Kept)), []string{"switchboard", "switchboard-docs"}) {
				t.Errorf("disconnect of a file with no entry of Switchboard's: changed %v, kept %v", p.Changed(), p.Kept)
			}

			cn.TakeOver = true
			apply(t, ed, c, env, cn)
			after, err := Read(c, env)
			if err != nil {
				t.Fatal(err)
			}
			if got, ok := entryNamed(after, "switchboard-docs"); !ok || !cmp.Equal(got, userDocs) {
				t.Errorf("switchboard-docs after connect: %+v, want %+v", got, userDocs)
			}
			checkConnected(t, c, after, cn)
			apply(t, ed, c, env, Disconnect{})
			if got, _ := readFile(t, path); !bytes.Equal(got, original) {
				t.Errorf("connect (taking over) then disconnect does not give back the original:\n%s", Diff(path, original, got))
			}

			// Once another program changed the file, disconnect takes out
			// Switchboard's entry only and says what it leaves.
			apply(t, ed, c, env, cn)
			cur, _ := readFile(t, path)
			doc, err := openDocument(c, path, cur)
			if err != nil {
				t.Fatal(err)
			}
			if err := doc.upsert("added-later", obj{{"command", "later"}}); err != nil {
				t.Fatal(err)
			}
			writeConfig(t, c, env, doc.bytes())
			p = apply(t, ed, c, env, Disconnect{})
			if len(p.Notes) == 0 || !slices.Equal(p.Kept, []string{"switchboard-docs"}) {
				t.Errorf("disconnect after another edit: notes %q, kept %v", p.Notes, p.Kept)
			}
			left, err := Read(c, env)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, e := range left {
				names = append(names, e.Name)
			}
			slices.Sort(names)
			if want := []string{"added-later", "switchboard-docs"}; !slices.Equal(names, want) {
				t.Errorf("entries left %v, want %v", names, want)
			}
		})
	}
}

func TestIsSecret(t *testing.T) {
	for _, tt := range []struct {
		name, value string
		want        bool
	}{
		{"X-Api-Key", "v", true},
		{"x-goog-api-key", "v", true},
		{"Ocp-Apim-Subscription-Key", "v", true},
		{"GITHUB_TOKEN", "v", true},
		{"githubToken", "v", true},
		{"OPENAI_API_KEY", "v", true},
		{"APIKey", "v", true},
		{"Authorization", "v", true},
		{"Cookie", "v", true},
		{"DB_PASSWORD", "v", true},
		{"aws-secret-access-key", "v", true},
		{"GOOGLE_APPLICATION_CREDENTIALS", "v", true},
		{"X-Auth", "v", true},
		{"KEYBOARD", "us", false},
		{"AUTHOR", "me", false},
		{"max_tokens", "100", false},
		{"LOG_LEVEL", "info", false},
		{"Accept", "text/event-stream", false},
		{"NOTE", "sk-proj-abcdefghijklmnop1234", true},
		{"NOTE", "ghp_abcdefghijklmnopqrstuvwxyz0123456789", true},
		{"NOTE", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJlLXZhbHVl", true},
		{"NOTE", "Bearer abcdefgh12345678", true},
		{"NOTE", "hello world", false},
		{"PGPASSWORD", "v", true},
		{"DATABASE_URL", "postgresql://me:hunter2@localhost/db", true},
		{"DATABASE_URL", "postgresql://localhost/db", false},
	} {
		if got := IsSecret(tt.name, tt.value); got != tt.want {
			t.Errorf("IsSecret(%q, %q) = %v, want %v", tt.name, tt.value, got, tt.want)
		}
	}
}

// Secret header values (hyphenated names included) and secret variables
// never show in a diff, for every client.
func TestSecretsMaskedInDiffs(t *testing.T) {
	secrets := []string{"ghp_abcdefghijklmnopqrstuvwxyz0123456789", "sk-proj-abcdefghijklmnop1234",
		"xak-value-1111", "goog-value-2222", "ocp-value-3333", "an-unnamed-jwt-not-here"}
	for _, c := range Table {
		if c.Remote == DeepLink {
			continue // no file (TestOfferLink)
		}
		t.Run(c.ID, func(t *testing.T) {
			env, ed := testEnv(t), testEditor(t)
			path, _ := c.Path(env)
			original := userFile(t, c, path,
				userEntry{"tools", obj{{"command", "npx"}, {"args", []string{"-y", "tools"}}, {"env", obj{
					{"GITHUB_TOKEN", secrets[0]}, {"NOTE", secrets[1]}, {"LOG_LEVEL", "info-level"}}}}},
				userEntry{"remote", withHeaders(c, obj{{"url", "https://api.example.com/mcp"}}, obj{
					{"X-Api-Key", secrets[2]}, {"x-goog-api-key", secrets[3]}, {"Ocp-Apim-Subscription-Key", secrets[4]},
					{"Accept", "text/event-stream"}})},
			)
			writeConfig(t, c, env, original)
			p, err := ed.Plan(c, env, Replace{Remove: []string{"tools", "remote"},
				Connect: Connect{URL: testURL, Token: testToken, BinaryPath: testBinary}})
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range append(secrets, testToken) {
				if strings.Contains(p.Diff, s) {
					t.Errorf("the diff shows %q:\n%s", s, p.Diff)
				}
			}
			for _, s := range []string{"info-level", "text/event-stream", Masked} {
				if !strings.Contains(p.Diff, s) {
					t.Errorf("the diff lacks %q:\n%s", s, p.Diff)
				}
			}
			// What the API lists: the entries with their secrets masked.
			es, err := Read(c, env)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range es {
				for _, m := range []map[string]string{MaskSecrets(e.Env, Masked), MaskSecrets(e.Headers, Masked)} {
					for k, v := range m {
						if slices.Contains(secrets, v) {
							t.Errorf("%s: %s=%s not masked", e.Name, k, v)
						}
					}
				}
			}
		})
	}
}

// Gemini CLI starts only the servers of mcp.allowed when that list exists,
// and never those of mcp.excluded: connect keeps both in step, disconnect
// undoes it.
func TestGeminiLists(t *testing.T) {
	tests := []struct {
		name, original, connected string
	}{
		{"allowed list",
			"{\n  \"mcp\": {\n    \"allowed\": [\"fs\"]\n  },\n  \"mcpServers\": {}\n}\n",
			"{\n  \"mcp\": {\n    \"allowed\": [\"fs\", \"switchboard\"]\n  },\n  \"mcpServers\": {\n    \"switchboard\": {\n      \"httpUrl\": \"http://127.0.0.1:7391/mcp\"\n    }\n  }\n}\n"},
		{"empty allowed list, multi-line excluded",
			"{\n  \"mcp\": {\n    \"allowed\": [],\n    \"excluded\": [\n      \"switchboard\",\n      \"other\"\n    ]\n  }\n}\n",
			"{\n  \"mcp\": {\n    \"allowed\": [\"switchboard\"],\n    \"excluded\": [\n      \"other\"\n    ]\n  },\n  \"mcpServers\": {\n    \"switchboard\": {\n      \"httpUrl\": \"http://127.0.0.1:7391/mcp\"\n    }\n  }\n}\n"},
		{"only excluded",
			"{\"mcp\": {\"excluded\": [\"a\", \"switchboard\"]}}",
			"{\"mcp\": {\"excluded\": [\"a\"]}, \"mcpServers\": {\"switchboard\": {\"httpUrl\": \"http://127.0.0.1:7391/mcp\"}}}"},
		{"neither",
			"{\n  \"mcp\": {\"serverCommand\": \"x\"}\n}\n",
			"{\n  \"mcp\": {\"serverCommand\": \"x\"},\n  \"mcpServers\": {\n    \"switchboard\": {\n      \"httpUrl\": \"http://127.0.0.1:7391/mcp\"\n    }\n  }\n}\n"},
	}
	c := mustClient(t, "gemini-cli")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, ed := testEnv(t), testEditor(t)
			path := writeConfig(t, c, env, []byte(tt.original))
			p := apply(t, ed, c, env, Connect{URL: testURL})
			if d := cmp.Diff(tt.connected, string(p.New)); d != "" {
				t.Errorf("connected (-want +got):\n%s", d)
			}
			apply(t, ed, c, env, Disconnect{})
			if got, _ := readFile(t, path); string(got) != tt.original {
				t.Errorf("after disconnect:\n%s\nwant the original:\n%s", got, tt.original)
			}

			// The same once another program changed the file in between:
			// the lists are undone one by one.
			apply(t, ed, c, env, Connect{URL: testURL})
			cur, _ := readFile(t, path)
			writeConfig(t, c, env, bytes.Replace(cur, []byte("{"), []byte("{\"theme\": \"x\", "), 1))
			apply(t, ed, c, env, Disconnect{})
			got, _ := readFile(t, path)
			var settings struct {
				MCP struct {
					Allowed, Excluded []string
				}
			}
			var want = settings
			if err := json.Unmarshal(got, &settings); err != nil {
				t.Fatalf("%v\n%s", err, got)
			}
			json.Unmarshal([]byte(tt.original), &want)
			// Put back at the end of its list, where it was before or not.
			slices.Sort(settings.MCP.Excluded)
			slices.Sort(want.MCP.Excluded)
			if !cmp.Equal(settings, want) {
				t.Errorf("lists after disconnect %+v, want %+v", settings, want)
			}
		})
	}
}

// A read-only file, or a file in a read-only folder, is refused with a
// message that says so, unless the change is forced. For every client.
func TestReadOnly(t *testing.T) {
	for _, c := range Table {
		if c.Remote == DeepLink {
			continue // no file (TestOfferLink)
		}
		t.Run(c.ID, func(t *testing.T) {
			env, ed := testEnv(t), testEditor(t)
			path := writeConfig(t, c, env, userFile(t, c, "x", userEntry{"a", obj{{"command", "x"}}}))
			original, _ := readFile(t, path)
			cn := Connect{URL: testURL, Token: testToken, BinaryPath: testBinary}

			os.Chmod(path, 0o444)
			_, err := ed.Plan(c, env, cn)
			var ro *ReadOnlyError
			if !errors.As(err, &ro) || ro.Folder || !strings.Contains(err.Error(), "read-only") || strings.Contains(err.Error(), "--force") ||
				!strings.Contains(err.Error(), path) {
				t.Fatalf("Plan on a 0444 file = %v, want a read-only error naming it and no command-line flag", err)
			}
			cn.Force = true
			apply(t, ed, c, env, cn)
			if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o444 {
				t.Errorf("forced write: mode %v, want 0444 kept", fi.Mode().Perm())
			}
			if _, err := ed.Plan(c, env, Disconnect{}); !errors.As(err, &ro) {
				t.Errorf("disconnect from a 0444 file = %v, want a read-only error", err)
			}
			apply(t, ed, c, env, Disconnect{Force: true})
			if got, _ := readFile(t, path); !bytes.Equal(got, original) {
				t.Errorf("after a forced disconnect:\n%s", Diff(path, original, got))
			}

			os.Chmod(path, 0o600)
			dir := filepath.Dir(path)
			os.Chmod(dir, 0o555)
			t.Cleanup(func() { os.Chmod(dir, 0o700) })
			cn.Force = false
			if _, err := ed.Plan(c, env, cn); !errors.As(err, &ro) || !ro.Folder || !strings.Contains(err.Error(), "folder") {
				t.Fatalf("Plan in a 0555 folder = %v, want a read-only folder error", err)
			}
			if got, _ := readFile(t, path); !bytes.Equal(got, original) {
				t.Error("a refused plan changed the file")
			}
			cn.Force = true
			apply(t, ed, c, env, cn)
			if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o555 {
				t.Errorf("forced write: folder mode %v, want 0555 put back", fi.Mode().Perm())
			}
			if es, _ := Read(c, env); len(es) != 2 {
				t.Errorf("forced write into a read-only folder: entries %+v", es)
			}
		})
	}
}

// Strict-JSON clients refuse a trailing comma or a comment with the line
// and column; JSONC clients keep them, and disconnect gives the bytes back.
func TestStrictAndJSONC(t *testing.T) {
	withComma := "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"},\n  },\n}\n"
	withComment := "{\n  // mine\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"}\n  }\n}\n"
	for _, c := range Table {
		if c.Remote == DeepLink {
			continue // no file (TestOfferLink)
		}
		if c.Format != JSON && c.Format != JSONC {
			continue
		}
		t.Run(c.ID, func(t *testing.T) {
			for _, tt := range []struct {
				data      string
				line, col int
			}{{withComma, 3, 26}, {withComment, 2, 3}} {
				data := strings.ReplaceAll(tt.data, "mcpServers", c.ServersKey[0])
				env, ed := testEnv(t), testEditor(t)
				path := writeConfig(t, c, env, []byte(data))
				p, err := ed.Plan(c, env, Connect{URL: testURL, Token: testToken, BinaryPath: testBinary})
				if c.Format == JSON {
					var pe *ParseError
					if !errors.As(err, &pe) || pe.Line != tt.line || pe.Column != tt.col || !strings.HasPrefix(err.Error(), path+":") ||
						!strings.Contains(err.Error(), "strict JSON") {
						t.Errorf("strict JSON %q: %v, want %s:%d:%d", data, err, path, tt.line, tt.col)
					}
					continue
				}
				if err != nil {
					t.Fatalf("JSONC %q: %v", data, err)
				}
				if err := ed.Apply(p); err != nil {
					t.Fatal(err)
				}
				got, _ := readFile(t, path)
				if strings.Contains(data, "// mine") && !strings.Contains(string(got), "// mine") ||
					strings.Contains(data, "},\n  },") && !strings.Contains(string(got), "},\n") {
					t.Errorf("comments or trailing commas lost:\n%s", got)
				}
				apply(t, ed, c, env, Disconnect{})
				if got, _ := readFile(t, path); string(got) != data {
					t.Errorf("after disconnect:\n%s\nwant:\n%s", got, data)
				}
			}
		})
	}
}

// Connect then disconnect gives back the original bytes, or no file, for
// every client and a missing, an empty, a commented (where the format has
// comments) and a realistic file.
func TestExactInverse(t *testing.T) {
	for _, c := range Table {
		if c.Remote == DeepLink {
			continue // no file (TestOfferLink)
		}
		cases := map[string][]byte{"missing": nil, "empty": {}, "blank": []byte("\n\n")}
		switch c.Format {
		case JSON:
			cases["spaced"] = []byte("{ }")
		case JSONC:
			cases["commented"] = []byte("// Settings\n{\n  /* none yet */\n}\n")
		case TOML:
			cases["commented"] = []byte("# my codex\nmodel = \"o3\" # best\n")
		case YAML:
			cases["commented"] = []byte("# my config\nname: Local Config\nversion: 1.0.0\nschema: v1\nmcpServers: # none\n")
		}
		if b, err := os.ReadFile(filepath.Join("testdata", c.ID, "realistic", "original")); err == nil {
			cases["realistic"] = b
		}
		for kase, original := range cases {
			t.Run(c.ID+"/"+kase, func(t *testing.T) {
				env, ed := testEnv(t), testEditor(t)
				path, _ := c.Path(env)
				if original != nil {
					writeConfig(t, c, env, original)
				}
				_, err := os.Stat(filepath.Dir(path))
				dirExisted := err == nil
				apply(t, ed, c, env, Connect{URL: testURL, Token: testToken, BinaryPath: testBinary, PerServer: []string{"git"}})
				apply(t, ed, c, env, Connect{URL: testURL, Token: testToken, BinaryPath: testBinary})
				p := apply(t, ed, c, env, Disconnect{})
				got, exists := readFile(t, path)
				if exists != (original != nil) || !bytes.Equal(got, original) {
					t.Errorf("connect, connect, disconnect: exists %v, bytes %q; want %q (remove %v)", exists, got, original, p.Remove)
				}
				if !dirExisted {
					// The folders connect made for the file go with it.
					if _, err := os.Stat(filepath.Dir(path)); !os.IsNotExist(err) {
						t.Errorf("the folder connect created stays: %v", err)
					}
				}
			})
		}
	}
}

// Two connects of one client at once, and a connect racing a disconnect,
// both made from plans the user saw before either was applied: each
// succeeds, and the file is valid and holds exactly the expected entry.
func TestConcurrentChanges(t *testing.T) {
	for _, id := range []string{"claude-code", "codex", "continue", "gemini-cli"} {
		t.Run(id, func(t *testing.T) {
			c, env, ed := mustClient(t, id), testEnv(t), testEditor(t)
			writeConfig(t, c, env, userFile(t, c, "x", userEntry{"mine", obj{{"command", "mine"}}}))
			cn := Connect{URL: testURL, Token: testToken, BinaryPath: testBinary}
			check := func(round int, connected bool) {
				t.Helper()
				es, err := Read(c, env)
				if err != nil {
					t.Fatalf("round %d: the file does not read: %v", round, err)
				}
				var names []string
				for _, e := range es {
					names = append(names, e.Name)
				}
				want := []string{"mine"}
				if connected {
					want = append(want, EntryName)
					checkConnected(t, c, es, cn)
				}
				slices.Sort(names)
				if !slices.Equal(names, want) {
					t.Fatalf("round %d: entries %v, want %v", round, names, want)
				}
			}
			for round := range 20 {
				seen, err := ed.Plan(c, env, cn)
				if err != nil {
					t.Fatal(err)
				}
				var wg sync.WaitGroup
				errs := make([]error, 2)
				for i := range 2 {
					wg.Go(func() { _, errs[i] = ed.Do(c, env, cn, seen.Hash) })
				}
				wg.Wait()
				for i, err := range errs {
					if err != nil {
						t.Fatalf("round %d: connect %d: %v", round, i, err)
					}
				}
				check(round, true)

				// A connect and a disconnect at once: whichever comes last
				// decides, and the file matches it.
				base, err := ed.Plan(c, env, Disconnect{})
				if err != nil {
					t.Fatal(err)
				}
				// Each write checks the target twice (see Apply): four
				// checks mean both wrote, the connect last.
				var checks atomic.Int32
				ed.beforeCheck = func(string) { checks.Add(1) }
				for _, ch := range []Change{cn, Disconnect{}} {
					wg.Go(func() {
						if _, err := ed.Do(c, env, ch, base.Hash); err != nil {
							t.Errorf("round %d: %T: %v", round, ch, err)
						}
					})
				}
				wg.Wait()
				ed.beforeCheck = nil
				check(round, checks.Load() == 4)
				apply(t, ed, c, env, Disconnect{})
				check(round, false)
			}
		})
	}
}

// Another program writing the file while Apply writes: the other
// program's edit survives and Apply reports the change, whether the edit
// lands before the backup or between the temporary file and the rename.
func TestOtherWriterDuringApply(t *testing.T) {
	c, env, ed := mustClient(t, "claude-code"), testEnv(t), testEditor(t)
	path := writeConfig(t, c, env, []byte("{\n  \"mcpServers\": {}\n}\n"))
	theirs := []byte("{\n  \"numStartups\": 42,\n  \"mcpServers\": {}\n}\n")
	calls := 0
	ed.beforeCheck = func(p string) {
		calls++
		if calls == 2 { // the check just before the rename
			if err := os.WriteFile(p, theirs, 0o600); err != nil {
				t.Error(err)
			}
		}
	}
	p, err := ed.Plan(c, env, Connect{URL: testURL, Token: testToken})
	if err != nil {
		t.Fatal(err)
	}
	if err := ed.Apply(p); !errors.Is(err, ErrChanged) {
		t.Fatalf("Apply = %v, want ErrChanged", err)
	}
	if got, _ := readFile(t, path); !bytes.Equal(got, theirs) {
		t.Errorf("the other program's edit was lost: %q", got)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
	// Planned again, the change keeps their edit.
	ed.beforeCheck = nil
	p = apply(t, ed, c, env, Connect{URL: testURL, Token: testToken})
	if !bytes.Contains(p.New, []byte(`"numStartups": 42`)) {
		t.Errorf("the new plan lost their edit:\n%s", p.New)
	}
}

// A key given twice on the way to the servers, or a server given twice, is
// refused with the line of the second: the client reads one of them (a
// JavaScript client the last) while Switchboard would edit the other and
// say "connected".
func TestDuplicateKeys(t *testing.T) {
	tests := []struct {
		id, data  string
		line, col int
	}{
		{"cursor", "{\"mcpServers\": {},\n \"mcpServers\": {\"x\": {\"command\": \"y\"}}}\n", 2, 2},
		{"vscode", "{\n  // mine\n  \"servers\": {},\n  \"servers\": {\"x\": {\"command\": \"y\"},},\n}\n", 4, 3},
		{"claude-code", "{\"mcpServers\": {\n  \"switchboard\": {\"url\": \"" + testURL + "\"},\n  \"switchboard\": {\"url\": \"" + testURL + "\"}\n}}\n", 3, 3},
		{"gemini-cli", "{\"mcpServers\": {\"a\": {\"command\": \"b\"}, \"a\": {\"command\": \"c\"}}}\n", 1, 40},
		{"continue", "name: x\nversion: 1.0.0\nschema: v1\nmcpServers: []\nmcpServers:\n  - name: a\n    command: b\n", 5, 1},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			c, env, ed := mustClient(t, tt.id), testEnv(t), testEditor(t)
			path := writeConfig(t, c, env, []byte(tt.data))
			_, err := ed.Plan(c, env, Connect{URL: testURL, Token: testToken, BinaryPath: testBinary})
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Line != tt.line || pe.Column != tt.col || !strings.Contains(err.Error(), "already in this") {
				t.Errorf("Plan: %v, want %s:%d:%d: ... already in this", err, path, tt.line, tt.col)
			}
			if got, _ := readFile(t, path); string(got) != tt.data {
				t.Error("the file was changed")
			}
		})
	}
}

// Connecting again with a new token (the old one revoked) shows the
// Authorization header's old and new values masked alike: "Bearer
// ********" on both sides, not a whole value masked on one and the token
// on the other, which read as if the scheme was added.
func TestReconnectDiffMasksBothTokensAlike(t *testing.T) {
	const newToken = "sb_NEWNEWNEWNEWNEWNEWNEWNEWNEWNEWNEWNEWNEWNEW"
	for _, id := range []string{"cursor", "codex"} {
		t.Run(id, func(t *testing.T) {
			c := mustClient(t, id)
			env, ed := testEnv(t), testEditor(t)
			apply(t, ed, c, env, Connect{URL: testURL, Token: testToken})
			p, err := ed.Plan(c, env, Connect{URL: testURL, Token: newToken})
			if err != nil {
				t.Fatal(err)
			}
			var removed, added []string
			for _, l := range strings.Split(p.Diff, "\n") {
				switch {
				case strings.HasPrefix(l, "-") && !strings.HasPrefix(l, "---"):
					removed = append(removed, l[1:])
				case strings.HasPrefix(l, "+") && !strings.HasPrefix(l, "+++"):
					added = append(added, l[1:])
				}
			}
			if strings.Contains(p.Diff, testToken) || strings.Contains(p.Diff, newToken) ||
				len(removed) != 1 || len(added) != 1 || removed[0] != added[0] || !strings.Contains(added[0], "Bearer "+Masked) {
				t.Errorf("the diff of a new token, want the one header line, masked alike on both sides (Bearer %s):\n%s", Masked, p.Diff)
			}
		})
	}
}

// TestEarlierSwitchboardEntry: a "switchboard" entry that this data
// directory did not write is replaced without --replace only when it is
// Switchboard's in every detail (plain http on loopback, a gateway
// endpoint, a Switchboard token and nothing else); a look-alike that
// differs in one stays a conflict, which Apply refuses and leaves as it is.
func TestEarlierSwitchboardEntry(t *testing.T) {
	const secret = "sb_q8HnT3vYwZb1Lx0cR9mKp2sDfGhJkL4nQ7uVxYzA5eE"
	bearer := `{"Authorization": "Bearer ` + secret + `"}`
	tests := []struct {
		name, entry string
		earlier     bool
	}{
		{"another port", `{"type": "http", "url": "http://127.0.0.1:52117/mcp", "headers": ` + bearer + `}`, true},
		{"localhost, a profile", `{"type": "http", "url": "http://localhost:7391/mcp/p/coding", "headers": ` + bearer + `}`, true},
		{"::1, a server", `{"type": "http", "url": "http://[::1]:7391/mcp/github/", "headers": ` + bearer + `}`, true},
		{"127.0.0.2", `{"type": "http", "url": "http://127.0.0.2:7391/mcp", "headers": ` + bearer + `}`, true},
		{"another host", `{"type": "http", "url": "http://192.168.1.20:7391/mcp", "headers": ` + bearer + `}`, false},
		{"a name that resolves anywhere", `{"type": "http", "url": "http://localhost.example.com:7391/mcp", "headers": ` + bearer + `}`, false},
		{"https", `{"type": "http", "url": "https://127.0.0.1:7391/mcp", "headers": ` + bearer + `}`, false},
		{"another path", `{"type": "http", "url": "http://127.0.0.1:7391/api/mcp", "headers": ` + bearer + `}`, false},
		{"deeper path", `{"type": "http", "url": "http://127.0.0.1:52117/mcp/a/b", "headers": ` + bearer + `}`, false},
		{"a query", `{"type": "http", "url": "http://127.0.0.1:52117/mcp?x=1", "headers": ` + bearer + `}`, false},
		{"no token", `{"type": "http", "url": "http://127.0.0.1:52117/mcp"}`, false},
		{"another kind of token", `{"type": "http", "url": "http://127.0.0.1:52117/mcp", "headers": {"Authorization": "Bearer ghp_abcdef"}}`, false},
		{"sb_ but not our shape", `{"type": "http", "url": "http://127.0.0.1:52117/mcp", "headers": {"Authorization": "Bearer sb_short"}}`, false},
		{"a header more", `{"type": "http", "url": "http://127.0.0.1:52117/mcp", "headers": {"Authorization": "Bearer ` + secret + `", "X-Tenant": "a"}}`, false},
		{"a stdio server", `{"command": "other-tool", "args": ["connect"], "env": {"SWITCHBOARD_TOKEN": "` + secret + `"}}`, false},
	}
	c := mustClient(t, "claude-code")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, ed := testEnv(t), testEditor(t)
			original := []byte(`{"mcpServers": {"switchboard": ` + tt.entry + `}}` + "\n")
			path := writeConfig(t, c, env, original)
			p, err := ed.Plan(c, env, Connect{URL: testURL, Token: testToken})
			if err != nil {
				t.Fatal(err)
			}
			if tt.earlier {
				if len(p.Conflicts) != 0 || len(p.Earlier) != 1 || len(p.Notes) != 1 || !strings.Contains(p.Notes[0], "earlier Switchboard's") {
					t.Fatalf("conflicts %v, earlier %v, notes %q; want it replaced as an earlier Switchboard's", p.Conflicts, p.Earlier, p.Notes)
				}
				if err := ed.Apply(p); err != nil {
					t.Fatalf("Apply: %v", err)
				}
				if bs, _ := ed.Backups(c.ID); len(bs) != 1 {
					t.Errorf("backups %+v, want one", bs)
				}
				return
			}
			if len(p.Conflicts) != 1 || len(p.Earlier) != 0 {
				t.Fatalf("conflicts %v, earlier %v; want a conflict", p.Conflicts, p.Earlier)
			}
			if err := ed.Apply(p); !errors.Is(err, ErrConflict) {
				t.Fatalf("Apply = %v, want ErrConflict", err)
			}
			if got, _ := os.ReadFile(path); !bytes.Equal(got, original) {
				t.Errorf("a refused plan changed the file")
			}
		})
	}
}
