// Package confine describes what a confined server may touch (a Policy) and
// is the small launcher that enforces it: Switchboard's own binary, re-run
// between the supervisor's fork and the server's exec, restricts itself
// with Landlock and then execs the server in place (on macOS it execs
// sandbox-exec with the policy as a Seatbelt profile, which execs the
// server in place in its turn). The server keeps the
// launcher's PID, process group and stdio, so the supervisor's watchdog and
// leak-proofing see the same process as without confinement.
package confine

import (
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
)

// PolicyEnv carries the policy (JSON) from the supervisor to the launcher.
// The launcher removes it before exec, as it does StatusFDEnv and ABIEnv.
const PolicyEnv = "SWITCHBOARD_CONFINE_POLICY"

// StatusFDEnv names the file descriptor the launcher writes its Status to.
const StatusFDEnv = "SWITCHBOARD_CONFINE_STATUS_FD"

// ABIEnv, set in the daemon's environment, caps the Landlock ABI the launcher
// uses: "0" behaves as a kernel without Landlock (the server runs
// unconfined and says why), which is how tests see that path.
const ABIEnv = "SWITCHBOARD_LANDLOCK_ABI"

// A Policy is what a confined server may do. Paths are absolute; a path that
// does not exist is skipped. Everything not granted is refused.
type Policy struct {
	// Read may be read (and executed): files, or directories with all below.
	Read []string `json:"read"`
	// Write may be read, written, created and removed.
	Write []string `json:"write"`
	// Network allows TCP connect and bind. Without it every TCP connect and
	// bind is refused, Switchboard's own listener included.
	Network bool `json:"network"`
	// DenyPorts are TCP ports a server with Network may still not connect
	// to, on any address: Switchboard's own listener.
	DenyPorts []uint16 `json:"denyPorts,omitempty"`
}

// Equal reports whether p and q grant the same (nil equals nil only).
func (p *Policy) Equal(q *Policy) bool {
	if p == nil || q == nil {
		return p == q
	}
	return slices.Equal(p.Read, q.Read) && slices.Equal(p.Write, q.Write) && p.Network == q.Network &&
		slices.Equal(p.DenyPorts, q.DenyPorts)
}

// Clone returns a deep copy (nil for nil).
func (p *Policy) Clone() *Policy {
	if p == nil {
		return nil
	}
	return &Policy{Read: slices.Clone(p.Read), Write: slices.Clone(p.Write), Network: p.Network,
		DenyPorts: slices.Clone(p.DenyPorts)}
}

// Status says whether a process runs confined.
type Status struct {
	// Enforced: the policy is in force (see Missing for parts that are not).
	Enforced bool `json:"enforced"`
	// Mechanism names what enforces it: "landlock ABI 7", or on macOS
	// SeatbeltMechanism.
	Mechanism string `json:"mechanism,omitempty"`
	// Reason says why the policy is not in force (Enforced false).
	Reason string `json:"reason,omitempty"`
	// Missing lists the parts of the policy the kernel could not enforce.
	Missing []string `json:"missing,omitempty"`
}

// String is how logs say it.
func (s Status) String() string {
	switch {
	case !s.Enforced:
		return "not confined: " + s.Reason
	case len(s.Missing) > 0:
		return fmt.Sprintf("confined by %s, except: %v", s.Mechanism, s.Missing)
	default:
		return "confined by " + s.Mechanism
	}
}

// EncodePolicy is the value of PolicyEnv for p.
func EncodePolicy(p *Policy) (string, error) {
	b, err := json.Marshal(p)
	if err != nil {
		return "", fmt.Errorf("encoding the confinement policy: %w", err)
	}
	return string(b), nil
}

// SystemRead is what every confined server may read on this OS (see
// systemRead).
func SystemRead() []string { return systemRead(runtime.GOOS) }

// systemRead on Linux: the system's programs and libraries, the dynamic
// linker's cache, certificates and the name-resolution files, and /proc
// (Landlock's ptrace rules already keep a confined process from other
// processes' /proc/PID/environ and mem). The rest of /etc, /home, /root,
// /tmp, /var and /run are not in it. On macOS the same in its places:
// /System (frameworks and, from macOS 13, the dyld shared cache under
// /System/Volumes/Preboot/Cryptexes), /usr (libraries, /usr/local), /opt
// (Homebrew on Apple silicon), the older dyld cache and the time zones in
// /private/var/db, and the /private/etc files; not /Users, /Library,
// /private/tmp or /private/var/folders (the shared per-user temp).
func systemRead(goos string) []string {
	if goos == "darwin" {
		return []string{
			"/System", "/usr", "/bin", "/sbin", "/opt",
			"/private/var/db/dyld", "/private/var/db/timezone", "/private/etc/ssl",
			"/private/etc/hosts", "/private/etc/resolv.conf", "/private/var/run/resolv.conf",
			"/private/etc/services", "/private/etc/protocols", "/private/etc/passwd",
			"/private/etc/group", "/private/etc/localtime",
		}
	}
	return []string{
		"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt",
		"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/ssl", "/etc/ca-certificates",
		"/etc/pki", "/etc/resolv.conf", "/etc/hosts", "/etc/nsswitch.conf", "/etc/host.conf",
		"/etc/gai.conf", "/etc/localtime", "/etc/passwd", "/etc/group", "/etc/alternatives",
		"/proc", "/sys/devices/system/cpu", "/sys/fs/cgroup",
	}
}
