package confine

// sandboxExec applies a Seatbelt profile to itself and execs a command. It
// is deprecated but present on every macOS, and, unlike sandbox_init, needs
// no cgo (the core builds with CGO_ENABLED=0).
const sandboxExec = "/usr/bin/sandbox-exec"

// enforce on macOS does not restrict the launcher: it returns the command
// that runs the server under p's Seatbelt profile (see SeatbeltProfile).
// The Status says enforced before sandbox-exec has read the profile: a
// profile it rejects makes it exit with its reason on stderr, which the
// supervisor reports as the server's start failure, so the server never
// runs unconfined on that path. maxABI (SWITCHBOARD_LANDLOCK_ABI) is a
// Linux setting and is ignored here.
//
// Cross-built and unit-tested (the profile) on Linux only: no test in this
// repository has run it on macOS.
func enforce(p *Policy, _ int) (Status, []string, error) {
	return seatbeltLaunch(p, sandboxExec)
}
