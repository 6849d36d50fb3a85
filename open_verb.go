package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/pkg/browser"

	"github.com/switchboardhq/switchboard/app/api"
)

func openVerb() verb {
	var printOnly *bool
	return verb{
		name:    "open",
		noArgs:  true,
		summary: "open the dashboard in a browser (a one-time sign-in link; --print only prints it)",
		flags: func(fs *flag.FlagSet) {
			printOnly = fs.Bool("print", false, "print the link instead of opening a browser")
		},
		run: func(ctx context.Context, e *env, fs *flag.FlagSet) error {
			c, err := e.client()
			if err != nil {
				return err
			}
			lc, err := c.LoginCode(ctx)
			if err != nil {
				return err
			}
			if !*printOnly {
				if err := browser.OpenURL(lc.URL); err == nil {
					fmt.Fprintf(e.stdout, "Opened the dashboard in your browser.\n")
					return nil
				}
			}
			fmt.Fprintf(e.stdout, "Open this link within %s to sign in to the dashboard (it works once):\n%s\n",
				api.LoginCodeTTL, lc.URL)
			return nil
		},
	}
}
