package autostart

import (
	"errors"
	"fmt"
	"html"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/switchboardhq/switchboard/app/atomicfile"
)

// Name names Switchboard's autostart entry: the .desktop file, the
// LaunchAgent label, the Run value.
const Name = "io.switchboard.tray"

// An Entry is the per-user entry that starts Switchboard at login: an
// XDG autostart .desktop file on Linux and BSDs, a LaunchAgent plist on
// macOS, a value under HKCU\...\Run on Windows.
type Entry interface {
	Enabled() (bool, error)
	// Enable writes the entry, which runs command (absolute program path
	// first) at login.
	Enable(command []string) error
	// Disable removes the entry; removing a missing entry is no error.
	Disable() error
	// Where names the entry for messages (a path, or a registry key).
	Where() string
}

// Env is what the entry's location depends on.
type Env struct {
	GOOS string
	// Home is the user's home directory.
	Home string
	// XDGConfigHome is $XDG_CONFIG_HOME ("" or relative: ~/.config).
	XDGConfigHome string
}

// EnvFromOS reads the environment of this process.
func EnvFromOS() (Env, error) {
	home, err := os.UserHomeDir()
	if err != nil && runtime.GOOS != "windows" {
		return Env{}, fmt.Errorf("finding the home directory for the autostart entry: %w", err)
	}
	return Env{GOOS: runtime.GOOS, Home: home, XDGConfigHome: os.Getenv("XDG_CONFIG_HOME")}, nil
}

// New returns the autostart entry for env.
func New(env Env) (Entry, error) {
	switch env.GOOS {
	case "darwin":
		if env.Home == "" {
			return nil, errors.New("autostart: no home directory")
		}
		return fileAutostart{path: filepath.Join(env.Home, "Library", "LaunchAgents", Name+".plist"),
			render: launchAgent}, nil
	case "windows":
		return newRegistryAutostart()
	default:
		dir := env.XDGConfigHome
		if !filepath.IsAbs(dir) { // the XDG spec says to ignore a relative value
			if env.Home == "" {
				return nil, errors.New("autostart: neither $XDG_CONFIG_HOME nor $HOME is set")
			}
			dir = filepath.Join(env.Home, ".config")
		}
		return fileAutostart{path: filepath.Join(dir, "autostart", Name+".desktop"), render: desktopEntry}, nil
	}
}

// fileAutostart is an entry that is one file.
type fileAutostart struct {
	path   string
	render func(command []string) ([]byte, error)
}

func (a fileAutostart) Where() string { return a.path }

func (a fileAutostart) Enabled() (bool, error) {
	_, err := os.Stat(a.path)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	}
	return false, fmt.Errorf("checking the autostart entry %s: %w", a.path, err)
}

func (a fileAutostart) Enable(command []string) error {
	if len(command) == 0 || !filepath.IsAbs(command[0]) {
		return fmt.Errorf("autostart: the command must start with an absolute program path, got %q", command)
	}
	data, err := a.render(command)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(a.path), 0o755); err != nil {
		return fmt.Errorf("writing the autostart entry: %w", err)
	}
	if err := atomicfile.Write(a.path, data, 0o644); err != nil {
		return fmt.Errorf("writing the autostart entry %s: %w", a.path, err)
	}
	return nil
}

func (a fileAutostart) Disable() error {
	if err := os.Remove(a.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing the autostart entry %s: %w", a.path, err)
	}
	return nil
}

// desktopEntry is an XDG autostart file
// (https://specifications.freedesktop.org/autostart-spec/latest/).
func desktopEntry(command []string) ([]byte, error) {
	var exec []string
	for _, arg := range command {
		if strings.ContainsAny(arg, "\n\r") {
			return nil, fmt.Errorf("autostart: argument %q has a line break", arg)
		}
		exec = append(exec, desktopQuote(arg))
	}
	return []byte("[Desktop Entry]\n" +
		"Type=Application\n" +
		"Name=Switchboard\n" +
		"Comment=Runs your local MCP servers for every MCP client\n" +
		"Exec=" + strings.Join(exec, " ") + "\n" +
		"Terminal=false\n" +
		"X-GNOME-Entry-enabled=true\n"), nil
}

// desktopQuote quotes one Exec argument as the Desktop Entry spec says:
// double quotes around arguments with reserved characters, backslash
// before " ` $ and \, and % doubled (a field code otherwise). The key's
// value is itself a string whose backslashes are escaped once more.
func desktopQuote(arg string) string {
	arg = strings.ReplaceAll(arg, "%", "%%")
	if arg != "" && !strings.ContainsAny(arg, " \t\"'\\><~|&;$*?#()`=") {
		return arg
	}
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range arg {
		switch r {
		case '"', '`', '$', '\\':
			b.WriteString(`\\`) // a backslash, escaped for the string value
			if r == '\\' {
				b.WriteString(`\\`)
				continue
			}
		}
		b.WriteRune(r)
	}
	b.WriteByte('"')
	return b.String()
}

// launchAgent is a LaunchAgent plist that runs command once at login.
func launchAgent(command []string) ([]byte, error) {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
	<key>Label</key>
	<string>` + Name + `</string>
	<key>ProgramArguments</key>
	<array>
`)
	for _, arg := range command {
		b.WriteString("\t\t<string>" + html.EscapeString(arg) + "</string>\n")
	}
	b.WriteString(`	</array>
	<key>RunAtLoad</key>
	<true/>
	<key>ProcessType</key>
	<string>Interactive</string>
</dict>
</plist>
`)
	return []byte(b.String()), nil
}
