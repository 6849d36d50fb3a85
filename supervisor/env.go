package supervisor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
)

// LoginShellPATH returns the PATH the user's login shell sets up. Apps started
// from a desktop session do not inherit it, so without it npx from nvm, volta
// or Homebrew is not found. It returns "" when there is no login shell to ask
// (Windows, or a shell that fails or takes longer than the context allows).
func LoginShellPATH(ctx context.Context) string {
	if runtime.GOOS == "windows" {
		return ""
	}
	shell := os.Getenv("SHELL")
	if shell == "" {
		shell = "/bin/sh"
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	// The markers fence PATH off from whatever the profile prints.
	const marker = "__SWITCHBOARD_PATH__"
	cmd := exec.CommandContext(ctx, shell, "-l", "-c", `printf '%s%s%s' "`+marker+`" "$PATH" "`+marker+`"`)
	cmd.Stdin = nil
	cmd.Env = append(os.Environ(), "TERM=dumb")
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	_, rest, ok := bytes.Cut(out, []byte(marker))
	if !ok {
		return ""
	}
	path, _, ok := bytes.Cut(rest, []byte(marker))
	if !ok {
		return ""
	}
	return string(path)
}

// MergePATH puts the directories of first before those of second, without
// duplicates, so the login shell's choices win and nothing the daemon could
// already find is lost.
func MergePATH(first, second string) string {
	var dirs []string
	for _, d := range slices.Concat(filepath.SplitList(first), filepath.SplitList(second)) {
		if d != "" && !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	return strings.Join(dirs, string(filepath.ListSeparator))
}

// switchboardEnvPrefix starts the names of Switchboard's own variables.
const switchboardEnvPrefix = "SWITCHBOARD_"

// WithoutSwitchboardEnv returns env without Switchboard's own variables
// (SWITCHBOARD_TOKEN, SWITCHBOARD_HOME, ...): a server process, or a daemon
// started by a bridge, must not see the token a client gave the bridge,
// nor be pointed at a data directory by inheritance. The result is a new
// slice; env is not changed.
func WithoutSwitchboardEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(envKey(k), switchboardEnvPrefix) {
			out = append(out, kv)
		}
	}
	return out
}

// buildEnv returns base with the entries of extra set (extra wins).
func buildEnv(base []string, extra map[string]string) []string {
	env := make([]string, 0, len(base)+len(extra))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if _, override := extra[envKey(k)]; !override {
			env = append(env, kv)
		}
	}
	for k, v := range extra {
		env = append(env, k+"="+v)
	}
	return env
}

// envKey normalizes a variable name for comparison (Windows ignores case).
func envKey(k string) string {
	if runtime.GOOS == "windows" {
		return strings.ToUpper(k)
	}
	return k
}

// lookupEnv finds key in env (last one wins, as exec does).
func lookupEnv(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		k, v, _ := strings.Cut(env[i], "=")
		if envKey(k) == envKey(key) {
			return v
		}
	}
	return ""
}

// ErrCommandNotFound is wrapped by the error for a command that is not found.
var ErrCommandNotFound = errors.New("command not found")

// lookPath resolves command the way the child's environment would: a name
// without a separator is searched in env's PATH (not the daemon's), relative
// paths are taken relative to dir.
func lookPath(command string, env []string, dir string) (string, error) {
	if strings.ContainsRune(command, '/') || strings.ContainsRune(command, filepath.Separator) {
		path := command
		if !filepath.IsAbs(path) && dir != "" {
			path = filepath.Join(dir, path)
		}
		if err := executable(path); err != nil {
			return "", fmt.Errorf("%w: %s (%v)", ErrCommandNotFound, command, err)
		}
		return path, nil
	}
	pathList := lookupEnv(env, "PATH")
	var exts []string
	if runtime.GOOS == "windows" {
		exts = []string{""}
		for _, e := range filepath.SplitList(lookupEnv(env, "PATHEXT")) {
			exts = append(exts, strings.ToLower(e))
		}
		if len(exts) == 1 {
			exts = append(exts, ".com", ".exe", ".bat", ".cmd")
		}
	} else {
		exts = []string{""}
	}
	for _, d := range filepath.SplitList(pathList) {
		if d == "" {
			continue
		}
		for _, ext := range exts {
			path := filepath.Join(d, command+ext)
			if executable(path) == nil {
				return path, nil
			}
		}
	}
	return "", fmt.Errorf("%w: %s (searched PATH: %s)", ErrCommandNotFound, command, pathList)
}

func executable(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return fmt.Errorf("%s is a directory", path)
	}
	if runtime.GOOS != "windows" && fi.Mode()&0o111 == 0 {
		return fs.ErrPermission
	}
	return nil
}
