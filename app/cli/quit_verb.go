package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/switchboardhq/switchboard/app/daemon"
)

// quitWait bounds how long quit waits for the daemon to exit: stopping
// every server (daemon.ShutdownTimeout) after answering the calls in
// flight and closing its connections.
const quitWait = daemon.ShutdownTimeout + daemon.AnswerGrace + daemon.HTTPGrace + 5*time.Second

func quitVerb() verb {
	return verb{
		name:    "quit",
		noArgs:  true,
		summary: "stop every server and the daemon, as the tray's Quit does (also one that `connect` started in the background)",
		run: func(ctx context.Context, e *env, _ *flag.FlagSet) error {
			c, err := e.client()
			if errors.Is(err, daemon.ErrNotRunning) {
				fmt.Fprintf(e.stdout, "Switchboard is not running for %s.\n", e.home)
				return nil
			}
			if err != nil {
				return err
			}
			q, err := c.Quit(ctx)
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "Stopping every server and Switchboard (pid %d)...\n", q.PID)
			wait, cancel := context.WithTimeout(ctx, quitWait)
			defer cancel()
			if err := daemon.WaitExited(wait, q.PID); err != nil {
				return fmt.Errorf("switchboard (pid %d) has not exited after %s: %w", q.PID, quitWait, err)
			}
			fmt.Fprintln(e.stdout, "Switchboard stopped.")
			return nil
		},
	}
}
