package remoteauth_test

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// clientEnv makes the test binary the conformance suite's client command
// (see conformance_test.go) instead of running the tests.
const clientEnv = "REMOTEAUTH_CONFORMANCE_CLIENT"

func TestMain(m *testing.M) {
	if os.Getenv(clientEnv) == "1" {
		os.Exit(conformanceClientMain(os.Args[1:]))
	}
	// The tests must never read or write the user's real data.
	home, err := os.MkdirTemp("", "remoteauth-home-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("HOME", home)
	os.Setenv("SWITCHBOARD_HOME", home)
	code := m.Run()
	os.RemoveAll(home)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}
