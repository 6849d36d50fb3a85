package confine

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/*.golden.sb from this run")

// sbplNode is a parsed SBPL form: an atom (symbol or number), a string, or
// a list.
type sbplNode struct {
	atom   string
	str    *string
	list   []sbplNode
	isList bool
}

// parseSBPL reads profile as Scheme data the way sandbox-exec's reader
// (TinyScheme) does: ';' comments, "..." strings with \" and \\ escapes,
// parentheses and atoms. It is the test's independent account of where
// each string starts and ends.
func parseSBPL(t *testing.T, profile string) []sbplNode {
	t.Helper()
	var stack [][]sbplNode
	var top []sbplNode
	push := func(n sbplNode) {
		if len(stack) == 0 {
			top = append(top, n)
			return
		}
		stack[len(stack)-1] = append(stack[len(stack)-1], n)
	}
	for i := 0; i < len(profile); {
		c := profile[i]
		switch {
		case c == ';':
			for i < len(profile) && profile[i] != '\n' {
				i++
			}
		case c == ' ' || c == '\n' || c == '\t':
			i++
		case c == '(':
			stack = append(stack, nil)
			i++
		case c == ')':
			if len(stack) == 0 {
				t.Fatalf("unbalanced ')' at %d", i)
			}
			l := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			push(sbplNode{list: l, isList: true})
			i++
		case c == '"':
			var b strings.Builder
			i++
			for ; ; i++ {
				if i >= len(profile) {
					t.Fatal("unterminated string")
				}
				if profile[i] == '\\' {
					i++
					if profile[i] != '"' && profile[i] != '\\' {
						t.Fatalf("escape \\%c the generator should not write", profile[i])
					}
					b.WriteByte(profile[i])
					continue
				}
				if profile[i] == '"' {
					i++
					break
				}
				b.WriteByte(profile[i])
			}
			s := b.String()
			push(sbplNode{str: &s})
		default:
			j := i
			for j < len(profile) && !strings.ContainsRune(" \n\t()\";", rune(profile[j])) {
				j++
			}
			push(sbplNode{atom: profile[i:j]})
			i = j
		}
	}
	if len(stack) != 0 {
		t.Fatalf("%d unclosed '('", len(stack))
	}
	return top
}

// shape is n with every string replaced by "S": the profile's structure.
func (n sbplNode) shape() string {
	switch {
	case n.str != nil:
		return "S"
	case !n.isList:
		return n.atom
	}
	parts := make([]string, len(n.list))
	for i, c := range n.list {
		parts[i] = c.shape()
	}
	return "(" + strings.Join(parts, " ") + ")"
}

// strings lists the strings in n in order.
func (n sbplNode) strings(out []string) []string {
	if n.str != nil {
		return append(out, *n.str)
	}
	for _, c := range n.list {
		out = c.strings(out)
	}
	return out
}

func mustProfile(t *testing.T, p *Policy) string {
	t.Helper()
	prof, err := SeatbeltProfile(p)
	if err != nil {
		t.Fatalf("SeatbeltProfile: %v", err)
	}
	return prof
}

// rulesWith returns the top-level rules that grant path, as their action
// and operations, each followed by the filter that names path.
func rulesWith(t *testing.T, profile, path string) []string {
	var out []string
	for _, n := range parseSBPL(t, profile) {
		var head []string
		for _, c := range n.list {
			switch {
			case !c.isList:
				head = append(head, c.atom)
			case slices.Contains(c.strings(nil), path):
				out = append(out, "("+strings.Join(head, " ")+" "+c.shape()+")")
			}
		}
	}
	return out
}

func TestSeatbeltProfilePolicies(t *testing.T) {
	const readRule = "(allow file-read* process-exec* file-map-executable (subpath S))"
	const writeRule = "(allow file-read* file-write* process-exec* file-map-executable (subpath S))"
	for _, tt := range []struct {
		name   string
		policy Policy
		// want and notWant are lines of the profile.
		want, notWant []string
		// rules: path -> the shapes of the rules that mention it.
		rules map[string][]string
	}{
		{
			name:    "no network refuses every socket but Unix ones and every connection",
			policy:  Policy{Read: []string{"/opt/srv"}, Write: []string{"/Users/u/granted"}},
			want:    []string{"(deny default)", "; No network: no TCP, UDP or Unix-socket connections, no listening."},
			notWant: []string{"(allow network-outbound)", "(allow network-bind network-inbound)", "(allow system-socket)"},
			rules:   map[string][]string{"/opt/srv": {readRule}, "/Users/u/granted": {writeRule}},
		},
		{
			name:    "network without denied ports allows every connection",
			policy:  Policy{Network: true},
			want:    []string{"(allow network-outbound)", "(allow network-bind network-inbound)", "(allow system-socket)"},
			notWant: []string{"; No network: no TCP, UDP or Unix-socket connections, no listening."},
		},
		{
			name:    "network still refuses Switchboard's port on any address",
			policy:  Policy{Network: true, DenyPorts: []uint16{7777}},
			want:    []string{`(allow network-outbound (require-not (remote ip "*:7777")))`},
			notWant: []string{"(allow network-outbound)"},
		},
		{
			name:    "several denied ports must all be missed, in order, once each",
			policy:  Policy{Network: true, DenyPorts: []uint16{9000, 80, 9000}},
			want:    []string{"(allow network-outbound (require-all", `  (require-not (remote ip "*:80"))`, `  (require-not (remote ip "*:9000"))))`},
			notWant: []string{"(allow network-outbound)"},
		},
		{
			name:   "read-only and read-write are separate rules; a path in both gets both",
			policy: Policy{Read: []string{"/r", "/both"}, Write: []string{"/w", "/both"}},
			rules:  map[string][]string{"/r": {readRule}, "/w": {writeRule}, "/both": {readRule, writeRule}},
		},
		{
			name:   "/etc, /tmp and /var are written as the /private paths Seatbelt sees; /etcetera is not",
			policy: Policy{Read: []string{"/etc/hosts", "/etcetera", "/var"}, Write: []string{"/tmp/x/"}},
			rules: map[string][]string{
				"/private/etc/hosts": {readRule}, "/etcetera": {readRule}, "/private/var": {readRule},
				"/private/tmp/x": {writeRule}, "/etc/hosts": nil, "/tmp/x": nil, "/private/etcetera": nil,
			},
		},
		{
			name:   "paths are cleaned and deduplicated",
			policy: Policy{Read: []string{"/a/b/../c/", "/a/c", "/a//c/."}},
			rules:  map[string][]string{"/a/c": {readRule}, "/a/b/../c/": nil},
		},
		{
			name:    "an empty policy grants no path",
			policy:  Policy{},
			notWant: []string{"; Read (and run) only.", "; Read and write."},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			prof := mustProfile(t, &tt.policy)
			lines := strings.Split(prof, "\n")
			for _, w := range tt.want {
				if !slices.Contains(lines, w) {
					t.Errorf("no line %q in\n%s", w, prof)
				}
			}
			for _, w := range tt.notWant {
				if slices.Contains(lines, w) {
					t.Errorf("line %q in\n%s", w, prof)
				}
			}
			for path, want := range tt.rules {
				if got := rulesWith(t, prof, path); !slices.Equal(got, want) {
					t.Errorf("rules with %q: got %q, want %q", path, got, want)
				}
			}
			// Whatever the policy, the defaults hold: nothing is allowed
			// wholesale but metadata.
			for _, n := range parseSBPL(t, prof) {
				if n.isList && len(n.list) == 2 && n.list[0].atom == "allow" && !n.list[1].isList {
					switch op := n.list[1].atom; op {
					case "file-read-metadata", "process-fork", "mach-host*", "ipc-posix-sem",
						"system-socket", "network-outbound":
						if op == "network-outbound" || op == "system-socket" {
							if !tt.policy.Network || (op == "network-outbound" && len(tt.policy.DenyPorts) > 0) {
								t.Errorf("unconditional %s without network or with denied ports", op)
							}
						}
					default:
						t.Errorf("unconditional (allow %s)", op)
					}
				}
			}
		})
	}
}

func TestSeatbeltProfileRefuses(t *testing.T) {
	for _, tt := range []struct {
		name string
		p    Policy
	}{
		{"a relative read path", Policy{Read: []string{"relative/dir"}}},
		{"a relative write path", Policy{Write: []string{"./x"}}},
		{"a newline", Policy{Read: []string{"/a\n(allow default)"}}},
		{"a carriage return", Policy{Write: []string{"/a\rb"}}},
		{"a NUL", Policy{Write: []string{"/a\x00b"}}},
		{"a DEL", Policy{Read: []string{"/a\x7fb"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if prof, err := SeatbeltProfile(&tt.p); err == nil {
				t.Fatalf("no error; profile:\n%s", prof)
			}
		})
	}
}

// TestSeatbeltProfileHostilePaths: a path made to end its string early and
// add rules of its own stays one string, itself, and the profile has the
// same structure as with plain paths.
func TestSeatbeltProfileHostilePaths(t *testing.T) {
	hostile := []string{
		`/Users/u/a"b`,
		`/Users/u/back\slash`,
		`/Users/u/ends-with-backslash\`,
		`/Users/u/x") (allow default) (allow file-read* (subpath "/x`,
		`/Users/u/x\") (allow default) ; `,
		`/Users/u/;comment`,
		`/Users/u/paren)(`,
		"/Users/u/caf\xc3\xa9 \xff not utf-8",
		`/Users/u/#"regex"`,
	}
	plain := make([]string, len(hostile))
	for i := range hostile {
		plain[i] = fmt.Sprintf("/Users/u/p%d", i)
	}
	for _, network := range []bool{false, true} {
		t.Run(fmt.Sprintf("network=%v", network), func(t *testing.T) {
			bad := mustProfile(t, &Policy{Read: hostile[:4], Write: hostile[4:], Network: network, DenyPorts: []uint16{7777}})
			good := mustProfile(t, &Policy{Read: plain[:4], Write: plain[4:], Network: network, DenyPorts: []uint16{7777}})
			badForms, goodForms := parseSBPL(t, bad), parseSBPL(t, good)
			shapes := func(forms []sbplNode) []string {
				out := make([]string, len(forms))
				for i, f := range forms {
					out[i] = f.shape()
				}
				return out
			}
			if b, g := shapes(badForms), shapes(goodForms); !slices.Equal(b, g) {
				t.Fatalf("hostile paths changed the profile's structure:\n%s\nwant\n%s", strings.Join(b, "\n"), strings.Join(g, "\n"))
			}
			var got []string
			for _, f := range badForms {
				got = f.strings(got)
			}
			for _, h := range hostile {
				if n := strings.Count("\x00"+strings.Join(got, "\x00")+"\x00", "\x00"+h+"\x00"); n != 1 {
					t.Errorf("path %q is %d strings of the profile, want 1", h, n)
				}
			}
		})
	}
}

// TestSeatbeltProfileGolden pins the whole profile for the two shapes the
// daemon derives on macOS: a catalog server without network with a
// granted folder (filesystem), and one with network (fetch).
func TestSeatbeltProfileGolden(t *testing.T) {
	const home = "/Users/u/Library/Application Support/Switchboard"
	for _, tt := range []struct {
		file string
		p    Policy
	}{
		{"seatbelt-filesystem.golden.sb", Policy{
			Read: append(systemRead("darwin"), home+"/servers/filesystem", "/opt/homebrew/bin", "/opt/homebrew"),
			Write: []string{home + "/servers/filesystem/data", home + "/sandbox/filesystem/tmp",
				"/Users/u/Documents/notes", "/Users/u/.npm"},
		}},
		{"seatbelt-fetch.golden.sb", Policy{
			Read:    append(systemRead("darwin"), home+"/servers/fetch", "/opt/homebrew/bin"),
			Write:   []string{home + "/servers/fetch/data", home + "/sandbox/fetch/tmp", "/Users/u/.cache/uv"},
			Network: true, DenyPorts: []uint16{7777},
		}},
	} {
		t.Run(tt.file, func(t *testing.T) {
			got := mustProfile(t, &tt.p)
			path := filepath.Join("testdata", tt.file)
			if *updateGolden {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (go test ./supervisor/confine -run Golden -update writes it)", err)
			}
			if got != string(want) {
				t.Errorf("profile differs from %s (-update rewrites it):\n%s", path, got)
			}
		})
	}
}

func TestDarwinSystemRead(t *testing.T) {
	sys := systemRead("darwin")
	for _, want := range []string{"/System", "/usr", "/private/var/db/dyld", "/private/etc/ssl"} {
		if !slices.Contains(sys, want) {
			t.Errorf("darwin system read has no %s", want)
		}
	}
	// Seatbelt sees /tmp as /private/tmp: neither may be reachable, nor the
	// user's files, nor the shared per-user temp.
	for _, p := range sys {
		for _, bad := range []string{"/Users", "/tmp", "/private/tmp", "/private/var/folders", "/Library", "/Volumes", "/private/var/root"} {
			if p == bad || strings.HasPrefix(p, bad+"/") || strings.HasPrefix(bad, p+"/") {
				t.Errorf("darwin system read %s reaches %s", p, bad)
			}
		}
	}
	if slices.Equal(sys, systemRead("linux")) {
		t.Error("darwin and linux system reads are the same")
	}
}

func TestWithResolvedLinks(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "Cellar", "node", "bin")
	if err := os.MkdirAll(real, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "bin")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "not-there")
	p := &Policy{Read: []string{link, missing}, Write: []string{real}}
	got, err := WithResolvedLinks(p)
	if err != nil {
		t.Fatal(err)
	}
	realResolved, _ := filepath.EvalSymlinks(real) // t.TempDir may be under a link itself
	if !slices.Contains(got.Read, link) || !slices.Contains(got.Read, realResolved) || !slices.Contains(got.Read, missing) {
		t.Errorf("read %q: want the link, its target %s and the missing path", got.Read, realResolved)
	}
	if len(p.Read) != 2 {
		t.Errorf("the caller's policy was changed: %q", p.Read)
	}
	// A path that cannot be resolved for another reason than not existing
	// is an error, as an unreadable path is to Landlock's rules.
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := WithResolvedLinks(&Policy{Read: []string{filepath.Join(file, "below")}}); err == nil || errors.Is(err, os.ErrNotExist) {
		t.Errorf("a path below a file: err %v, want a not-a-directory error", err)
	}
}

// TestSeatbeltLaunch is the macOS launcher's decision, run here with a
// stand-in for /usr/bin/sandbox-exec: the server runs through it with the
// profile, reported as Seatbelt; without it, unconfined with the reason.
func TestSeatbeltLaunch(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "sandbox-exec")
	if err := os.WriteFile(fake, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	granted := filepath.Join(dir, "granted")
	if err := os.Symlink(dir, granted); err != nil {
		t.Fatal(err)
	}
	p := &Policy{Read: []string{"/usr"}, Write: []string{granted}}
	st, via, err := seatbeltLaunch(p, fake)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Enforced || st.Mechanism != SeatbeltMechanism || st.Reason != "" || !strings.Contains(st.String(), "seatbelt") {
		t.Errorf("status = %+v", st)
	}
	if len(via) != 3 || via[0] != fake || via[1] != "-p" {
		t.Fatalf("command = %q; want %s -p PROFILE", via, fake)
	}
	realDir, _ := filepath.EvalSymlinks(dir)
	mapped, _ := seatbeltPaths([]string{realDir}) // /tmp/... is /private/tmp/... to Seatbelt
	rules := rulesWith(t, via[2], mapped[0])
	if !slices.Contains(rules, "(allow file-read* file-write* process-exec* file-map-executable (subpath S))") {
		t.Errorf("the granted link's target %s is not writable in the profile: %q\n%s", realDir, rules, via[2])
	}

	st, via, err = seatbeltLaunch(p, filepath.Join(dir, "missing"))
	if err != nil || st.Enforced || via != nil || !strings.Contains(st.Reason, "is not available") ||
		!strings.HasPrefix(st.String(), "not confined: ") {
		t.Errorf("without sandbox-exec: %+v %q %v; want unconfined with the reason", st, via, err)
	}
	if _, _, err := seatbeltLaunch(&Policy{Read: []string{"relative"}}, fake); err == nil {
		t.Error("a relative policy path gave no error")
	}
}
