package daemon

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

// HomeEnv names the environment variable that overrides the data directory.
const HomeEnv = "SWITCHBOARD_HOME"

// Files in the data directory.
const (
	ConfigFile  = "config.json"
	TokensFile  = "tokens.json"
	InfoFile    = "daemon.json"
	HistoryFile = "history.db"
	JournalFile = "calls.journal"
	lockFile    = "daemon.lock"
)

// ResolveHome picks the data directory: the --home flag, else
// $SWITCHBOARD_HOME, else the per-user default. The result is absolute.
func ResolveHome(flag string) (string, error) {
	dir := flag
	if dir == "" {
		dir = os.Getenv(HomeEnv)
	}
	if dir == "" {
		var err error
		if dir, err = DefaultHome(); err != nil {
			return "", err
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("data directory %s: %w", dir, err)
	}
	return abs, nil
}

// DefaultHome is the per-user data directory: $XDG_DATA_HOME/switchboard
// (~/.local/share/switchboard) on Linux, ~/Library/Application
// Support/Switchboard on macOS, %APPDATA%\Switchboard on Windows.
func DefaultHome() (string, error) {
	switch runtime.GOOS {
	case "darwin", "windows":
		dir, err := os.UserConfigDir()
		if err != nil {
			return "", fmt.Errorf("finding the data directory: %w", err)
		}
		return filepath.Join(dir, "Switchboard"), nil
	}
	if xdg := os.Getenv("XDG_DATA_HOME"); filepath.IsAbs(xdg) {
		return filepath.Join(xdg, "switchboard"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", errors.New("finding the data directory: neither $XDG_DATA_HOME nor $HOME is set; pass --home")
	}
	return filepath.Join(home, ".local", "share", "switchboard"), nil
}
