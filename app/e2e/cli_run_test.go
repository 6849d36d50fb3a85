package e2e

import (
	"io"

	switchboard "github.com/switchboardhq/switchboard/app/cli"
)

// version is what the in-process command line reports; the built binary
// says "dev".
const version = "e2e"

// run is the command line in-process, as the binary's main runs it.
func run(args []string, stdout, stderr io.Writer) int {
	return switchboard.Run(version, args, stdout, stderr)
}

// The command line's exit codes.
const (
	exitOK            = switchboard.ExitOK
	exitError         = switchboard.ExitError
	exitUsage         = switchboard.ExitUsage
	exitConfigProblem = switchboard.ExitConfigProblem
)
