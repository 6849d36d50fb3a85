package supervisor

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"github.com/switchboardhq/switchboard/supervisor/confine"
)

// confine rewrites cmd to start through the confining launcher when the
// spec has a policy. It returns the read end of the launcher's status pipe,
// or, when the process will run unconfined although a policy was asked
// for, the status that says why. pipe records the ends it makes for closing.
func (pr *proc) confine(cmd *exec.Cmd, path string, pipe func() (r, w *os.File, err error)) (*os.File, *confine.Status, error) {
	pol := pr.spec.Confine
	if pol == nil {
		return nil, nil, nil
	}
	launcher := pr.pool.sup.opts.Launcher
	switch {
	case runtime.GOOS != "linux" && runtime.GOOS != "darwin":
		return nil, &confine.Status{Reason: "confinement is not built for " + runtime.GOOS + " yet"}, nil
	case len(launcher) == 0:
		return nil, &confine.Status{Reason: "the supervisor has no confining launcher"}, nil
	}
	pol = withProgram(pol, path)
	pr.policy = pol
	enc, err := confine.EncodePolicy(pol)
	if err != nil {
		return nil, nil, err
	}
	statusR, statusW, err := pipe()
	if err != nil {
		return nil, nil, err
	}
	cmd.Path = launcher[0]
	cmd.Args = append(append(append([]string{launcher[0]}, launcher[1:]...), "--", path), pr.spec.Args...)
	cmd.ExtraFiles = []*os.File{statusW} // fd 3 in the launcher
	cmd.Env = append(cmd.Env, confine.PolicyEnv+"="+enc, confine.StatusFDEnv+"=3")
	if v, ok := os.LookupEnv(confine.ABIEnv); ok {
		cmd.Env = append(cmd.Env, confine.ABIEnv+"="+v)
	}
	return statusR, nil, nil
}

// readConfineStatus reads what the launcher reported before exec. A
// launcher that exited or stalled without a report leaves a status that
// says so (its stderr, in the logs, says why).
func readConfineStatus(r *os.File, timeout time.Duration) *confine.Status {
	_ = r.SetReadDeadline(time.Now().Add(timeout))
	b, err := io.ReadAll(io.LimitReader(r, 64<<10))
	var st confine.Status
	if err == nil && len(b) > 0 {
		err = json.Unmarshal(b, &st)
	}
	switch {
	case err != nil:
		return &confine.Status{Reason: "the launcher's report was unreadable: " + err.Error()}
	case len(b) == 0:
		return &confine.Status{Reason: "the launcher stopped before confining the server (see its log)"}
	}
	return &st
}

// withProgram adds to pol what running path needs: its folder and, for a
// program in a bin folder, the prefix above it (node's lib/node_modules,
// python's lib), following symlinks (npx -> ../lib/.../npx-cli.js). A
// prefix that is the user's home or a folder right under it (~/.local) is
// left out: only the bin folder itself is added then.
func withProgram(pol *confine.Policy, path string) *confine.Policy {
	out := pol.Clone()
	home, _ := os.UserHomeDir()
	for _, p := range []string{path, realPath(path)} {
		dir := filepath.Dir(p)
		out.Read = append(out.Read, dir)
		if filepath.Base(dir) == "bin" {
			prefix := filepath.Dir(dir)
			if home == "" || (prefix != home && filepath.Dir(prefix) != home) {
				out.Read = append(out.Read, prefix)
			}
		}
	}
	slices.Sort(out.Read)
	out.Read = slices.Compact(out.Read)
	return out
}

func realPath(path string) string {
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return r
	}
	return path
}
