package supervisor

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/switchboardhq/switchboard/supervisor/confine"
)

// Mode says how a pool shares its processes between client sessions.
type Mode string

const (
	// ModeShared: every client session uses every process of the pool; a call
	// goes to the least-busy process.
	ModeShared Mode = "shared"
	// ModeSession: each client session leases a process of its own, which is
	// stopped when the lease is released.
	ModeSession Mode = "session"
)

// PoolSpec sizes a pool. The zero value is a lazy shared pool of one process
// that never idles out.
type PoolSpec struct {
	Mode Mode
	// Min processes are kept running while the pool is started (in session
	// mode: spares ready to be leased). 0 means start on first use.
	Min int
	// Max bounds the processes of the pool, leased or not. 0 means 1.
	Max int
	// IdleTimeout stops a process beyond Min that served nothing for this
	// long. 0 never stops idle processes.
	IdleTimeout time.Duration
}

// Spec is everything the supervisor needs to run one server. Specs are values:
// two equal specs describe the same processes, which is how Apply decides that
// a server is unchanged and keeps its processes.
type Spec struct {
	Name string
	// Command is the program of a local server; empty for a remote one.
	Command string
	Args    []string
	// Env is added to the base environment (the user's login-shell PATH and
	// the daemon's own environment); it wins over both.
	Env map[string]string
	// Dir is the working directory; empty means the daemon's.
	Dir  string
	Pool PoolSpec
	// StartTimeout bounds spawn plus the initialize handshake. 0 means
	// DefaultStartTimeout (DefaultRemoteStartTimeout for a remote server).
	StartTimeout time.Duration
	// Remote, when set, makes this a remote server reached over HTTP
	// (remote.go): it has no Command, Args, Env or Dir, and a pool of at
	// most one connection, shared.
	Remote *RemoteSpec
	// Confine, when set, is what the server may touch: each process is
	// started through Options.Launcher, which enforces it before exec
	// (see package confine). Nil runs the server unconfined.
	Confine *confine.Policy
}

// DefaultStartTimeout is generous because the first start of a server under
// npx or uvx may download packages.
const DefaultStartTimeout = 2 * time.Minute

// Validate reports the first thing about s that cannot run, naming the field.
func (s Spec) Validate() error {
	switch {
	case s.Name == "":
		return fmt.Errorf("server name is empty")
	case s.Remote != nil && (s.Command != "" || len(s.Args) > 0 || len(s.Env) > 0 || s.Dir != ""):
		return fmt.Errorf("server %q: a remote server runs no command", s.Name)
	case s.Remote != nil && s.Remote.URL == "":
		return fmt.Errorf("server %q: the remote server's URL is empty", s.Name)
	case s.Remote != nil && s.Pool.Mode == ModeSession:
		return fmt.Errorf("server %q: a remote server's pool is shared", s.Name)
	case s.Remote == nil && s.Command == "":
		return fmt.Errorf("server %q: command is empty", s.Name)
	}
	switch s.Remote.transport() {
	case RemoteAuto, RemoteStreamableHTTP, RemoteSSE:
	default:
		return fmt.Errorf("server %q: remote transport %q is not %q, %q or %q", s.Name, s.Remote.Transport, RemoteAuto, RemoteStreamableHTTP, RemoteSSE)
	}
	switch s.Pool.Mode {
	case "", ModeShared, ModeSession:
	default:
		return fmt.Errorf("server %q: pool mode %q is not %q or %q", s.Name, s.Pool.Mode, ModeShared, ModeSession)
	}
	if s.Pool.Min < 0 || s.Pool.Max < 0 {
		return fmt.Errorf("server %q: pool min and max must not be negative", s.Name)
	}
	if s.Pool.Max > 0 && s.Pool.Min > s.Pool.Max {
		return fmt.Errorf("server %q: pool min %d is above max %d", s.Name, s.Pool.Min, s.Pool.Max)
	}
	if s.Pool.IdleTimeout < 0 || s.StartTimeout < 0 {
		return fmt.Errorf("server %q: timeouts must not be negative", s.Name)
	}
	return nil
}

// withDefaults fills the zero values that mean "default", and copies the
// slices and maps so that the caller's later changes cannot reach a pool.
func (s Spec) withDefaults() Spec {
	s.Args = slices.Clone(s.Args)
	s.Env = maps.Clone(s.Env)
	s.Confine = s.Confine.Clone()
	if s.Pool.Mode == "" {
		s.Pool.Mode = ModeShared
	}
	if s.Pool.Max == 0 {
		s.Pool.Max = max(1, s.Pool.Min)
	}
	if s.StartTimeout == 0 {
		s.StartTimeout = DefaultStartTimeout
	}
	if s.Remote != nil {
		r := *s.Remote
		r.Headers = maps.Clone(r.Headers)
		r.Transport = s.Remote.transport()
		s.Remote = &r
		// One connection serves every call: HTTP requests run concurrently.
		s.Pool.Min, s.Pool.Max = min(s.Pool.Min, 1), 1
		if s.StartTimeout == DefaultStartTimeout {
			s.StartTimeout = DefaultRemoteStartTimeout
		}
	}
	return s
}

// Equal reports whether a and b describe the same processes.
func (a Spec) Equal(b Spec) bool {
	return a.Name == b.Name && a.Command == b.Command && slices.Equal(a.Args, b.Args) &&
		maps.Equal(a.Env, b.Env) && a.Dir == b.Dir && a.Pool == b.Pool && a.StartTimeout == b.StartTimeout &&
		a.Remote.equal(b.Remote) && a.Confine.Equal(b.Confine)
}

// transport is the spec's transport with "" read as RemoteAuto; nil (a
// local server) gives RemoteAuto too, so that Validate passes it.
func (r *RemoteSpec) transport() RemoteTransport {
	if r == nil || r.Transport == "" {
		return RemoteAuto
	}
	return r.Transport
}
