package cli

import (
	"context"
	"flag"
	"fmt"

	"github.com/switchboardhq/switchboard/app/api/client"
	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/internal/browser"
)

func openVerb() verb {
	var printOnly, keep *bool
	return verb{
		name:    "open",
		noArgs:  true,
		summary: "open the dashboard in a browser (a one-time sign-in link; --print only prints it)",
		flags: func(fs *flag.FlagSet) {
			printOnly = fs.Bool("print", false, "print the link instead of opening a browser")
			keep = fs.Bool("keep", false, "keep me signed in: the browser's session lasts 30 days and survives a restart of Switchboard")
		},
		run: withClient(func(ctx context.Context, e *env, c *client.Client) error {
			login := c.LoginCode
			if *keep {
				login = c.KeptLoginCode
			}
			lc, err := login(ctx)
			if err != nil {
				return err
			}
			if !*printOnly {
				err := browser.Open(ctx, lc.URL)
				if err == nil {
					fmt.Fprintf(e.stdout, "Opened the dashboard in your browser.\n")
					return nil
				}
				fmt.Fprintf(e.stderr, "No browser could be opened here (%v).\n", err)
			}
			fmt.Fprintf(e.stdout, "Open this link within %s to sign in to the dashboard (it works once):\n%s\n",
				wire.LoginCodeTTL, lc.URL)
			return nil
		}),
	}
}
