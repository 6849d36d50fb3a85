package supervisor

import (
	"errors"
	"fmt"
	"net/url"
	"testing"
)

// signInNeeded is what the daemon's sign-in transport returns: the user's
// action, wrapping ErrNeedsUser beside its cause.
type signInNeeded struct{ msg string }

func (e signInNeeded) Error() string   { return e.msg }
func (e signInNeeded) Unwrap() []error { return []error{errors.New("no token"), ErrNeedsUser} }

func TestUserAction(t *testing.T) {
	action := signInNeeded{`remote server "r" needs sign-in (refresh refused): run "switchboard auth login r"`}
	for _, tt := range []struct {
		name string
		err  error
		want error
	}{
		{"none", errors.New("connection refused"), nil},
		{"nil", nil, nil},
		{"itself", action, action},
		{"under the transports", fmt.Errorf("calling %q: %w", "tools/call", fmt.Errorf("sending: rejected by transport: %w",
			&url.Error{Op: "Post", URL: "http://127.0.0.1:1/mcp", Err: action})), action},
		{"a plain wrap of ErrNeedsUser", fmt.Errorf("needs you: %w", ErrNeedsUser), fmt.Errorf("needs you: %w", ErrNeedsUser)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := userAction(tt.err)
			if (got == nil) != (tt.want == nil) || got != nil && got.Error() != tt.want.Error() {
				t.Errorf("userAction(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}
