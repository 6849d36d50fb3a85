package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/switchboardhq/switchboard/app/bridge"
	"github.com/switchboardhq/switchboard/app/daemon"
	"github.com/switchboardhq/switchboard/app/tokens"
)

func connectVerb() verb {
	var client, logLevel, profile *string
	return verb{
		name:    "connect",
		args:    " [SERVER]",
		summary: "bridge stdin/stdout to the daemon's MCP endpoint, for clients that launch a command (starts the daemon if needed)",
		flags: func(fs *flag.FlagSet) {
			client = fs.String("client", "bridge", "name of the client, as history shows it; its token is issued on first use")
			logLevel = fs.String("log-level", "warn", "debug, info, warn or error (logs go to stderr)")
			profile = fs.String("profile", "", "bridge to the endpoint of this profile of config.json (/mcp/p/PROFILE) instead of /mcp")
		},
		run: func(ctx context.Context, e *env, fs *flag.FlagSet) error {
			if len(e.args) > 1 {
				return usageError{fmt.Sprintf("expected at most one server name, got %d arguments", len(e.args))}
			}
			path := "/mcp"
			switch {
			case len(e.args) == 1 && *profile != "":
				return usageError{"give a server or --profile, not both"}
			case len(e.args) == 1:
				path += "/" + e.args[0]
			case *profile != "":
				path += "/p/" + *profile
			}
			logger, exe, err := loggerAndSelf(e, *logLevel, " to start the daemon")
			if err != nil {
				return err
			}
			token := os.Getenv(tokenEnv)
			locate := func(ctx context.Context) (string, string, func() bool, error) {
				info, err := daemon.Ensure(ctx, e.home, exe)
				if err != nil {
					return "", "", nil, err
				}
				if token == "" {
					store, err := tokens.Open(filepath.Join(e.home, daemon.TokensFile))
					if err != nil {
						return "", "", nil, err
					}
					tok, err := store.EnsureClient(*client)
					if errors.Is(err, tokens.ErrAdminLabel) {
						// No retry gives this label a token: the bridge says so.
						return "", "", nil, fmt.Errorf("%w: --client: %w", bridge.ErrRefused, err)
					}
					if err != nil {
						return "", "", nil, err
					}
					token = tok.Secret
				}
				return info.Address + path, token, info.Alive, nil
			}
			return bridge.Run(ctx, bridge.Options{Locate: locate, In: os.Stdin, Out: os.Stdout,
				Logger: logger, Version: e.version, Front: daemon.NewBridgeFront})
		},
	}
}

// tokenEnv gives the bridge a token instead of reading the token file, as
// client configs written by Switchboard do.
const tokenEnv = "SWITCHBOARD_TOKEN"
