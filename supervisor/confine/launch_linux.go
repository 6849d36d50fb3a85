package confine

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// devices every process may read and write (not ioctl).
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"}

// enforce restricts this process (all its threads) to p. maxABI < 0 means
// the kernel's ABI; otherwise the lower of the two. The server is then
// exec'd directly (no command to run it through).
func enforce(p *Policy, maxABI int) (Status, []string, error) {
	st, err := enforceLandlock(p, maxABI)
	return st, nil, err
}

func enforceLandlock(p *Policy, maxABI int) (Status, error) {
	abi, err := llsys.LandlockGetABIVersion()
	if err != nil {
		return Status{Reason: fmt.Sprintf("the kernel has no Landlock (%v)", err)}, nil
	}
	if maxABI >= 0 && maxABI < abi {
		abi = maxABI
	}
	if abi < 1 {
		return Status{Reason: fmt.Sprintf("Landlock is not available (ABI capped at %d by %s)", abi, ABIEnv)}, nil
	}
	// V6 adds scoping: the server cannot signal the daemon or reach its
	// abstract Unix sockets. BestEffort drops what an older kernel lacks,
	// and Missing says what that was.
	cfg := landlock.V6.BestEffort()
	var missing []string
	if abi < 3 {
		missing = append(missing, "truncate (Landlock ABI < 3)")
	}
	if abi < 4 {
		missing = append(missing, "network (Landlock ABI < 4: TCP is not restricted)")
	}
	if abi < 6 {
		missing = append(missing, "signal and abstract-socket scoping (Landlock ABI < 6)")
	}
	if p.Network {
		missing = missing[:0:0]
		if abi < 3 {
			missing = append(missing, "truncate (Landlock ABI < 3)")
		}
		if abi < 6 {
			missing = append(missing, "signal and abstract-socket scoping (Landlock ABI < 6)")
		}
	}
	rules, err := pathRules(p)
	if err != nil {
		return Status{}, err
	}
	if p.Network {
		// Two layers: paths, then scopes; then connect allowed on every
		// port but the denied ones (Landlock only grants ports).
		err = errors.Join(cfg.RestrictPaths(rules...), cfg.RestrictScoped())
		if err == nil && len(p.DenyPorts) > 0 {
			if abi < 4 {
				missing = append(missing, "denied ports (Landlock ABI < 4)")
			} else {
				err = allConnectsBut(p.DenyPorts)
			}
		}
	} else {
		err = cfg.Restrict(rules...)
	}
	if err != nil {
		return Status{}, fmt.Errorf("applying Landlock: %w", err)
	}
	if !p.Network {
		if err := refuseOtherSockets(); err != nil {
			missing = append(missing, "UDP and raw sockets ("+err.Error()+")")
		}
	}
	return Status{Enforced: true, Mechanism: fmt.Sprintf("landlock ABI %d", abi), Missing: missing}, nil
}

// allConnectsBut restricts TCP connect to every port except deny (one rule
// per allowed port; bind stays unrestricted). It adds the rules with the
// raw system calls: through go-landlock's rule values 65535 rules cost
// about 270 ms a start, this way a fraction of that.
func allConnectsBut(deny []uint16) error {
	fd, err := llsys.LandlockCreateRuleset(&llsys.RulesetAttr{HandledAccessNet: llsys.AccessNetConnectTCP}, 0)
	if err != nil {
		return fmt.Errorf("creating the port ruleset: %w", err)
	}
	defer syscall.Close(fd)
	denied := make(map[uint16]bool, len(deny))
	for _, p := range deny {
		denied[p] = true
	}
	for port := range 65536 {
		if denied[uint16(port)] {
			continue
		}
		attr := llsys.NetPortAttr{AllowedAccess: llsys.AccessNetConnectTCP, Port: uint64(port)}
		if err := llsys.LandlockAddNetPortRule(fd, &attr, 0); err != nil {
			return fmt.Errorf("allowing TCP port %d: %w", port, err)
		}
	}
	// no_new_privs is already set by the path layer.
	if err := llsys.AllThreadsLandlockRestrictSelf(fd, 0); err != nil {
		return fmt.Errorf("enforcing the port ruleset: %w", err)
	}
	return nil
}

// refuseOtherSockets loads a seccomp filter that fails with EPERM the
// sockets Landlock at ABI < 10 cannot refuse: IPv4 and IPv6 sockets other
// than TCP (UDP, ICMP, raw: their type has bit 2 set, SOCK_STREAM has not),
// packet sockets, and io_uring, whose socket operations bypass seccomp.
// Unix and netlink sockets stay allowed.
func refuseOtherSockets() error {
	const afInet, afInet6, afPacket, sockTypeBit2 = 2, 10, 17, 2
	notStream := func(domain uint64) seccomp.NameWithConditions {
		return seccomp.NameWithConditions{Name: "socket", Conditions: seccomp.ArgumentConditions{
			{Argument: 0, Operation: seccomp.Equal, Value: domain},
			{Argument: 1, Operation: seccomp.BitsSet, Value: sockTypeBit2},
		}}
	}
	filter := seccomp.Filter{
		NoNewPrivs: true,
		Flag:       seccomp.FilterFlagTSync,
		Policy: seccomp.Policy{
			DefaultAction: seccomp.ActionAllow,
			Syscalls: []seccomp.SyscallGroup{{
				Action: seccomp.ActionErrno,
				Names:  []string{"io_uring_setup"},
				NamesWithCondtions: []seccomp.NameWithConditions{
					notStream(afInet), notStream(afInet6),
					{Name: "socket", Conditions: seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.Equal, Value: afPacket}}},
				},
			}},
		},
	}
	if err := seccomp.LoadFilter(filter); err != nil {
		return fmt.Errorf("seccomp filter not loaded: %w", err)
	}
	return nil
}

// pathRules turns p into Landlock rules: a directory grants everything
// below it, a file only itself; a path that does not exist is skipped.
func pathRules(p *Policy) ([]landlock.Rule, error) {
	var rules []landlock.Rule
	add := func(paths []string, write bool) error {
		for _, path := range paths {
			fi, err := os.Stat(path)
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			if err != nil {
				return fmt.Errorf("policy path %s: %w", path, err)
			}
			switch {
			case fi.IsDir() && write:
				rules = append(rules, landlock.RWDirs(path))
			case fi.IsDir():
				rules = append(rules, landlock.RODirs(path))
			case write:
				rules = append(rules, landlock.RWFiles(path))
			default:
				rules = append(rules, landlock.ROFiles(path))
			}
		}
		return nil
	}
	if err := add(p.Read, false); err != nil {
		return nil, err
	}
	if err := add(p.Write, true); err != nil {
		return nil, err
	}
	if err := add(devices, true); err != nil {
		return nil, err
	}
	return rules, nil
}
