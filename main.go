// Command switchboard runs a user's local MCP servers once, for every MCP
// client, and is the command line for the daemon that does it. The command
// line itself is app/cli; this is where the build's version comes in.
package main

import (
	"os"

	"github.com/switchboardhq/switchboard/app/cli"
	"github.com/switchboardhq/switchboard/supervisor"
	"github.com/switchboardhq/switchboard/supervisor/confine"
)

// version is set at build time (-ldflags "-X main.version=...").
var version = "dev"

func main() {
	// The supervisor's watchdog and its confining launcher are this same
	// binary, re-run.
	confine.RunIfRequested()
	supervisor.RunReaperIfRequested()
	os.Exit(cli.Run(version, os.Args[1:], os.Stdout, os.Stderr))
}
