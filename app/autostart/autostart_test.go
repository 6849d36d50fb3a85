package autostart

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestAutostartFiles(t *testing.T) {
	home := t.TempDir()
	xdg := filepath.Join(t.TempDir(), "xdg")
	tests := []struct {
		name     string
		env      Env
		path     string
		contains []string
	}{
		{"linux default", Env{GOOS: "linux", Home: home},
			filepath.Join(home, ".config", "autostart", "io.switchboard.tray.desktop"),
			[]string{"[Desktop Entry]\n", "Type=Application\n", `Exec="/opt/switch\\$board/switchboard-tray" --home "/data/my \\"home\\"" 100%%` + "\n"}},
		{"linux XDG_CONFIG_HOME", Env{GOOS: "linux", Home: home, XDGConfigHome: xdg},
			filepath.Join(xdg, "autostart", "io.switchboard.tray.desktop"), []string{"Name=Switchboard\n"}},
		{"linux relative XDG_CONFIG_HOME is ignored", Env{GOOS: "linux", Home: home, XDGConfigHome: "rel"},
			filepath.Join(home, ".config", "autostart", "io.switchboard.tray.desktop"), []string{"Terminal=false\n"}},
		{"freebsd", Env{GOOS: "freebsd", Home: home},
			filepath.Join(home, ".config", "autostart", "io.switchboard.tray.desktop"), []string{"X-GNOME-Entry-enabled=true\n"}},
		{"macOS LaunchAgent", Env{GOOS: "darwin", Home: home},
			filepath.Join(home, "Library", "LaunchAgents", "io.switchboard.tray.plist"),
			[]string{"<key>Label</key>\n\t<string>io.switchboard.tray</string>", "<string>/opt/switch$board/switchboard-tray</string>",
				"<string>/data/my &#34;home&#34;</string>", "<key>RunAtLoad</key>\n\t<true/>"}},
	}
	cmd := []string{"/opt/switch$board/switchboard-tray", "--home", `/data/my "home"`, "100%"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := New(tt.env)
			if err != nil {
				t.Fatal(err)
			}
			if a.Where() != tt.path {
				t.Fatalf("Where() = %s, want %s", a.Where(), tt.path)
			}
			if on, err := a.Enabled(); on || err != nil {
				t.Fatalf("Enabled() before = %v, %v", on, err)
			}
			if err := a.Enable(cmd); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(tt.path)
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range tt.contains {
				if !strings.Contains(string(data), want) {
					t.Errorf("entry lacks %q:\n%s", want, data)
				}
			}
			if on, err := a.Enabled(); !on || err != nil {
				t.Errorf("Enabled() after Enable = %v, %v", on, err)
			}
			if err := a.Enable(cmd[:1]); err != nil { // rewriting is fine
				t.Fatal(err)
			}
			if err := a.Disable(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(tt.path); !os.IsNotExist(err) {
				t.Errorf("entry still there after Disable: %v", err)
			}
			if err := a.Disable(); err != nil {
				t.Errorf("second Disable: %v", err)
			}
			// Nothing was written outside the temp directories.
			entries, _ := os.ReadDir(filepath.Dir(tt.path))
			if len(entries) != 0 {
				t.Errorf("left behind: %v", entries)
			}
		})
	}
}

func TestAutostartBadInput(t *testing.T) {
	a, err := New(Env{GOOS: "linux", Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range [][]string{nil, {"relative/switchboard"}, {"/bin/x", "line\nbreak"}} {
		if err := a.Enable(cmd); err == nil {
			t.Errorf("Enable(%q) succeeded", cmd)
		}
	}
	if _, err := New(Env{GOOS: "linux"}); err == nil {
		t.Error("no home and no XDG_CONFIG_HOME accepted")
	}
	if runtime.GOOS != "windows" {
		if _, err := New(Env{GOOS: "windows"}); err == nil {
			t.Error("the registry entry exists off Windows")
		}
	}
}
