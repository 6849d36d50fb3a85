package supervisor

import (
	"errors"
	"fmt"
	"strings"
)

var (
	// ErrUnknownServer is wrapped by errors about a server the supervisor does not run.
	ErrUnknownServer = errors.New("unknown server")
	// ErrStopped is wrapped by errors about a server or process stopped on purpose.
	ErrStopped = errors.New("stopped")
	// ErrFailing is wrapped by errors about a server that crashed too often.
	ErrFailing = errors.New("failing")
	// ErrNeedsUser, wrapped by a start error, says that trying again cannot
	// help until the user acts (a remote server that needs a sign-in): the
	// server is made failing at once instead of being retried with backoff,
	// so that calls fail at once with that error; Start tries it again.
	ErrNeedsUser = errors.New("waits for the user")
	// ErrClosed is returned once the supervisor is shutting down.
	ErrClosed = errors.New("supervisor is shut down")
	// ErrStillStopping is wrapped by Apply's error when the specs are in
	// force but a removed server's processes had not exited when its ctx
	// ended: they go on stopping.
	ErrStillStopping = errors.New("the change is in force, but a removed server is still stopping")
)

// userAction returns the error in err's chain that wraps ErrNeedsUser
// itself: the one that says what the user must do ("remote server x needs
// sign-in: run ..."), without the transports' wrapping around it. Nil when
// err does not wrap ErrNeedsUser.
func userAction(err error) error {
	for err != nil {
		switch u := err.(type) {
		case interface{ Unwrap() []error }:
			var next error
			for _, e := range u.Unwrap() {
				if e == ErrNeedsUser {
					return err
				}
				if next == nil && errors.Is(e, ErrNeedsUser) {
					next = e
				}
			}
			err = next
		case interface{ Unwrap() error }:
			if u.Unwrap() == ErrNeedsUser {
				return err
			}
			err = u.Unwrap()
		default:
			return nil
		}
	}
	return nil
}

// An ExitError reports a server process that ended without being asked to:
// every call in flight on it fails with this error at once.
type ExitError struct {
	Server string
	PID    int
	// Status is how it ended, as the OS tells it: "exit status 3", "signal: killed".
	Status string
	// Reason says what the supervisor saw, e.g. "exited unexpectedly".
	Reason string
	// Stderr holds its last lines of stderr, oldest first.
	Stderr []string
}

func (e *ExitError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "server %q (pid %d) %s", e.Server, e.PID, e.Reason)
	if e.Status != "" {
		fmt.Fprintf(&b, " (%s)", e.Status)
	}
	if len(e.Stderr) > 0 {
		fmt.Fprintf(&b, "; last stderr: %s", strings.Join(e.Stderr, " | "))
	}
	return b.String()
}

// A StartError reports a server process that could not be started or did not
// complete the initialize handshake.
type StartError struct {
	Server string
	Err    error
	Stderr []string
}

func (e *StartError) Error() string {
	msg := fmt.Sprintf("server %q failed to start: %v", e.Server, e.Err)
	if len(e.Stderr) > 0 {
		msg += "; last stderr: " + strings.Join(e.Stderr, " | ")
	}
	return msg
}

func (e *StartError) Unwrap() error { return e.Err }
