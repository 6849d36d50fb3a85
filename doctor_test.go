//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDoctor runs build/doctor.sh, the prerequisites check that `make run`
// and `make test` start with (make doctor), on machines missing things: a
// PATH of only a shell, a machine with Go and an old Node, and this one. It
// must name every missing prerequisite with its Debian package, and fail.
func TestDoctor(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	// bin makes a PATH holding the named commands of this machine and the
	// fake scripts given.
	bin := func(t *testing.T, real []string, fake map[string]string) string {
		dir := t.TempDir()
		for _, name := range real {
			p, err := exec.LookPath(name)
			if err != nil {
				t.Skipf("%s is not on this machine", name)
			}
			if err := os.Symlink(p, filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
		}
		for name, script := range fake {
			if err := os.WriteFile(filepath.Join(dir, name), []byte("#!"+sh+"\n"+script), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	for _, tt := range []struct {
		name    string
		verb    string
		real    []string
		fake    map[string]string
		want    []string
		notWant []string
	}{
		{name: "nothing at all, make test", verb: "test", real: []string{"uname"}, want: []string{
			"MISSING  go: Go 1.26 or later", "MISSING  node: Node.js 20 or later", "apt-get install npm", "apt-get install git",
			"apt-get install gcc libc6-dev", "apt-get install chromium", "apt-get install xvfb", "apt-get install xauth",
			"apt-get install dbus", "apt-get install xdotool", "apt-get install imagemagick", "apt-get install trayer",
			"libwebkit2gtk-4.1-dev", "missing; install them and run `make test` again"}},
		{name: "nothing at all, make run", verb: "run", real: []string{"uname"}, want: []string{"MISSING  go:", "MISSING  node:"},
			notWant: []string{"xvfb", "chromium", "trayer"}},
		{name: "old Go and Node 18", verb: "run", real: []string{"uname", "git", "gcc"},
			fake: map[string]string{"go": "echo go1.22.4\n", "node": "echo v18.19.0\n", "npm": "exit 0\n"},
			want: []string{"go: version 1.22.4 is too old", "node: version 18.19.0 is too old"}},
		{name: "Go 1.26 and Node 20 but no test tools", verb: "test", real: []string{"uname", "git", "gcc"},
			fake:    map[string]string{"go": "echo go1.26.8\n", "node": "echo v20.20.2\n", "npm": "exit 0\n"},
			want:    []string{"ok       go 1.26.8", "ok       node 20.20.2", "apt-get install xdotool", "apt-get install trayer"},
			notWant: []string{"MISSING  go", "MISSING  node"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(sh, "build/doctor.sh", tt.verb)
			cmd.Env = []string{"PATH=" + bin(t, tt.real, tt.fake), "CHROMIUM=" + filepath.Join(t.TempDir(), "no-chromium")}
			out, err := cmd.CombinedOutput()
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
				t.Errorf("doctor %s: %v, want exit 1\n%s", tt.verb, err, out)
			}
			for _, w := range tt.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("doctor %s does not say %q:\n%s", tt.verb, w, out)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(string(out), w) {
					t.Errorf("doctor %s says %q, which make %s does not need:\n%s", tt.verb, w, tt.verb, out)
				}
			}
		})
	}

	// make test runs it first: here, on a machine set up for make test, it
	// finds everything.
	if os.Getenv("SWITCHBOARD_REQUIRE_ALL") == "1" {
		out, err := exec.Command(sh, "build/doctor.sh", "test").CombinedOutput()
		if err != nil || !strings.Contains(string(out), "everything `make test` needs is here") {
			t.Errorf("doctor test on this machine: %v\n%s", err, out)
		}
	}
}
