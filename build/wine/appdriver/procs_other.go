//go:build !windows

package main

import (
	"errors"
	"io"
)

// procs lists Windows processes; appdriver runs under Wine.
func procs(io.Writer) error { return errors.New("procs: appdriver lists Windows processes only") }
