package confine

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
)

// RunIfRequested is the launcher: when PolicyEnv is set it confines this
// process (on macOS: has sandbox-exec confine the server), reports the Status on StatusFDEnv and execs the command after
// "--" in its argument list; it never returns then (a failure exits 126 with
// the reason on stderr, which the supervisor shows as a start error). It
// returns at once when PolicyEnv is not set. main and TestMain call it first.
func RunIfRequested() {
	raw, ok := os.LookupEnv(PolicyEnv)
	if !ok {
		return
	}
	if err := launch(raw, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "switchboard confine:", err)
		os.Exit(126)
	}
}

func launch(raw string, args []string) error {
	var p Policy
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		return fmt.Errorf("reading the policy in %s: %w", PolicyEnv, err)
	}
	if len(args) < 2 || args[0] != "--" {
		return fmt.Errorf("want -- COMMAND [ARGS...], got %q", args)
	}
	maxABI := -1
	if v := os.Getenv(ABIEnv); v != "" { // set but empty is unset, as for most variables
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return fmt.Errorf("%s=%q is not a Landlock ABI number", ABIEnv, v)
		}
		maxABI = n
	}
	statusFD := -1
	if v, ok := os.LookupEnv(StatusFDEnv); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 3 {
			return fmt.Errorf("%s=%q is not a file descriptor", StatusFDEnv, v)
		}
		statusFD = n
	}
	for _, k := range []string{PolicyEnv, StatusFDEnv, ABIEnv} {
		os.Unsetenv(k)
	}
	st, via, err := enforce(&p, maxABI)
	if err != nil {
		return err
	}
	if statusFD >= 0 {
		f := os.NewFile(uintptr(statusFD), "confine-status")
		b, _ := json.Marshal(st) // plain strings and bools: cannot fail
		_, werr := f.Write(b)
		f.Close()
		if werr != nil {
			return fmt.Errorf("reporting the confinement status: %w", werr)
		}
	}
	path, argv := args[1], args[1:]
	if len(via) > 0 {
		// macOS: sandbox-exec applies the profile and execs the server in
		// its turn, in place as well. It would read a server path that
		// looks like an option as one (the supervisor passes absolute ones).
		if strings.HasPrefix(path, "-") {
			return fmt.Errorf("server path %q starts with '-'", path)
		}
		path, argv = via[0], append(slices.Clone(via), argv...)
	}
	return execServer(path, argv)
}
