package daemon

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/switchboardhq/switchboard/supervisor"
)

// LogFile receives the output of a daemon started in the background.
const LogFile = "daemon.log"

// serveArgs is the command line, after the program, of a daemon for home:
// the settings that reach the daemon through the environment when it is run
// by hand (the data directory, the registry) become flags.
func serveArgs(home string) []string {
	args := []string{"serve", "--home", home}
	if u := os.Getenv(RegistryEnv); u != "" {
		args = append(args, "--registry", u)
	}
	return args
}

// Ensure returns the daemon running for home, starting `exe serve` in the
// background when none is, and waiting (within ctx) until it serves.
func Ensure(ctx context.Context, home, exe string) (Info, error) {
	if info, err := ReadInfo(home); err == nil {
		return info, nil
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		return Info{}, fmt.Errorf("creating data directory: %w", err)
	}
	logPath := filepath.Join(home, LogFile)
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return Info{}, fmt.Errorf("opening %s: %w", logPath, err)
	}
	defer log.Close()
	cmd := exec.Command(exe, serveArgs(home)...)
	// The caller may be a bridge that a client started with its token in
	// SWITCHBOARD_TOKEN: the daemon gets none of Switchboard's variables.
	// What it needs of them is passed as flags.
	cmd.Env = supervisor.WithoutSwitchboardEnv(os.Environ())
	cmd.Stdout, cmd.Stderr = log, log
	detach(cmd)
	if err := cmd.Start(); err != nil {
		return Info{}, fmt.Errorf("starting switchboard: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	for {
		if info, err := ReadInfo(home); err == nil {
			return info, nil
		}
		select {
		case <-ctx.Done():
			return Info{}, fmt.Errorf("switchboard did not start in time (see %s): %w", logPath, ctx.Err())
		case err := <-exited:
			// Another launch may have won the race for the lock.
			if info, rerr := ReadInfo(home); rerr == nil {
				return info, nil
			}
			return Info{}, fmt.Errorf("switchboard exited at start (%v); see %s", err, logPath)
		case <-tick.C:
		}
	}
}
