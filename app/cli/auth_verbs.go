package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/switchboardhq/switchboard/app/api/client"
	"github.com/switchboardhq/switchboard/app/api/wire"
)

// authPoll is how often `auth login` looks at the server's sign-in state.
const authPoll = 250 * time.Millisecond

// authLoginWait bounds `auth login`'s wait: a little more than the daemon's
// own sign-in timeout (remoteauth.DefaultTimeout, 5 minutes), which ends
// the sign-in first.
const authLoginWait = 5*time.Minute + 30*time.Second

func authVerb() verb {
	var asJSON *bool
	return verb{
		name:    "auth",
		args:    " login NAME | logout NAME | status",
		summary: "sign in to a remote server (OAuth) in the browser, sign out of it, or show each remote's sign-in state",
		flags: func(fs *flag.FlagSet) {
			asJSON = fs.Bool("json", false, "print JSON (status)")
		},
		run: func(ctx context.Context, e *env, fs *flag.FlagSet) error {
			if len(e.args) == 0 {
				return usageError{"expected: auth login NAME, auth logout NAME or auth status"}
			}
			action, rest := e.args[0], e.args[1:]
			switch action {
			case "login", "logout":
				if len(rest) != 1 {
					return usageError{"expected: auth " + action + " NAME"}
				}
			case "status":
				if len(rest) != 0 {
					return usageError{"expected: auth status"}
				}
			default:
				return usageError{fmt.Sprintf("unknown action %q: expected auth login NAME, auth logout NAME or auth status", action)}
			}
			c, err := e.client()
			if err != nil {
				return err
			}
			switch action {
			case "login":
				return authLogin(ctx, e, c, rest[0])
			case "logout":
				res, err := c.Logout(ctx, rest[0])
				if err != nil {
					return err
				}
				switch {
				case res.Revoked:
					fmt.Fprintf(e.stdout, "signed out of %s: its tokens are deleted and revoked\n", rest[0])
				case res.RevokeError != "":
					fmt.Fprintf(e.stdout, "signed out of %s: its tokens are deleted here; revoking them failed: %s\n", rest[0], res.RevokeError)
				default:
					fmt.Fprintf(e.stdout, "signed out of %s: its tokens are deleted\n", rest[0])
				}
				return nil
			}
			return authStatus(ctx, e, c, *asJSON)
		},
	}
}

// authLogin starts the sign-in, prints its link and waits until the server
// is signed in or the sign-in failed.
func authLogin(ctx context.Context, e *env, c *client.Client, name string) error {
	res, err := c.Login(ctx, name)
	if err != nil {
		return err
	}
	if res.SignInURL != "" {
		if res.BrowserOpened {
			fmt.Fprintf(e.stdout, "opened the sign-in of %s in your browser; if it did not appear, open:\n  %s\n", name, res.SignInURL)
		} else {
			fmt.Fprintf(e.stdout, "open this link to sign in to %s:\n  %s\n", name, res.SignInURL)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, authLoginWait)
	defer cancel()
	tick := time.NewTicker(authPoll)
	defer tick.Stop()
	st := res.Auth
	for {
		switch {
		case st.State == wire.AuthSignedIn:
			fmt.Fprintf(e.stdout, "signed in to %s\n", name)
			return nil
		case st.State == wire.AuthNeedsSignIn && st.Error != "":
			return fmt.Errorf("sign-in to %s failed: %s", name, st.Error)
		case st.State == wire.AuthNeedsSignIn:
			return fmt.Errorf("sign-in to %s stopped (%s)", name, st.Reason)
		}
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return fmt.Errorf("gave up waiting for the sign-in to %s after %s", name, authLoginWait)
			}
			return ctx.Err()
		case <-tick.C:
		}
		v, err := c.Server(ctx, name)
		if err != nil {
			return err
		}
		if v.Auth != nil {
			st = *v.Auth
		}
	}
}

// authStatus prints each remote server's sign-in state.
func authStatus(ctx context.Context, e *env, c *client.Client, asJSON bool) error {
	list, err := c.Servers(ctx)
	if err != nil {
		return err
	}
	type row struct {
		Server string           `json:"server"`
		Auth   *wire.AuthStatus `json:"auth"`
	}
	var rows []row
	for _, v := range list {
		if v.Config.URL != "" {
			rows = append(rows, row{v.Name, v.Auth})
		}
	}
	if asJSON {
		if rows == nil {
			rows = []row{}
		}
		return writeJSON(e.stdout, rows)
	}
	if len(rows) == 0 {
		fmt.Fprintln(e.stdout, "no remote servers in config.json")
		return nil
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVER\tSIGN-IN\tDETAIL")
	for _, r := range rows {
		state, detail := "-", "has not asked for a sign-in"
		if r.Auth != nil {
			state, detail = r.Auth.State, r.Auth.Reason
			if r.Auth.Error != "" {
				detail += ": " + r.Auth.Error
			}
			if r.Auth.State == wire.AuthSigningIn && r.Auth.SignInURL != "" {
				detail = "open " + r.Auth.SignInURL
			}
			if detail == "" {
				detail = "since " + r.Auth.Since.Local().Format(time.DateTime)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Server, state, detail)
	}
	return tw.Flush()
}
