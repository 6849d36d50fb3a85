package config

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"net/url"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/app/tiers"
)

// Limits enforced by Validate.
const (
	// MaxServerNameLen is the longest server name. Names become tool
	// prefixes ("<name>__<tool>"), and clients limit tool name length.
	MaxServerNameLen = 48

	// MaxPoolSize caps Pool.Min and Pool.Max.
	MaxPoolSize = 64
)

// Validate checks c and returns the first problem found as an *Error with
// Field set (and no File or position), or nil. Servers are checked in name
// order, so the same Config always gives the same error. The rules:
//
//   - version is CurrentVersion;
//   - listen is host:port with a numeric port and a loopback host
//     (127.0.0.1, ::1 or localhost): Switchboard never listens beyond the
//     machine. Port 0 (any free port) is allowed;
//   - a server name matches ^[A-Za-z0-9][A-Za-z0-9_.-]{0,47}$ and does not
//     contain "__" (the separator between server and tool in tool names);
//   - command is not empty or blank, unless the server is remote (has a
//     url): then see validateRemote, and a URL that reaches listen is
//     refused;
//   - env keys are not empty and contain no '=';
//   - pool mode is "", "shared" or "session"; 0 <= min <= 64;
//     0 <= max <= 64; when max is set, min <= max;
//   - timeout and pool idleTimeout are not negative;
//   - disabledTools entries are not empty;
//   - sessionTimeout is 0 (the default) or at least a minute;
//   - roots are absolute paths or file:// URIs;
//   - a profile name follows the rules of a server name; a profile lists
//     at least one server, each a valid server name, none twice (a server
//     that is not configured is allowed: see Profile); its tools are keyed
//     by servers of the profile, with non-empty lists of non-empty,
//     distinct tool names.
func (c *Config) Validate() error {
	if e := c.validate(); e != nil {
		return e
	}
	return nil
}

func (c *Config) validate() *Error {
	if c.Version != CurrentVersion {
		return invalid("version", "invalid value %d: must be %d", c.Version, CurrentVersion)
	}
	if e := validateListen(c.Listen); e != nil {
		return e
	}
	if e := validateSandboxDefault(c.SandboxDefault); e != nil {
		return e
	}
	if c.History.MaxAge.Duration < 0 {
		return invalid("history.maxAge", "invalid value %s: must not be negative", c.History.MaxAge)
	}
	if c.History.MaxBytes < 0 {
		return invalid("history.maxBytes", "invalid value %d: must not be negative", c.History.MaxBytes)
	}
	if b := c.History.MaxBytes; b > 0 && b < 1<<20 {
		return invalid("history.maxBytes", "invalid value %d: at least 1 MiB (1048576)", b)
	}
	if d := c.SessionTimeout; d.Duration != 0 && d.Duration < MinSessionTimeout {
		return invalid("sessionTimeout", "invalid value %s: at least %s (or 0 for the default, 30m)", d, MinSessionTimeout)
	}
	if d := c.AskTimeout.Duration; d != 0 && (d < MinAskTimeout || d > MaxAskTimeout) {
		return invalid("askTimeout", "invalid value %s: between %s and %s (or 0 for the default, 2m)", c.AskTimeout, MinAskTimeout, MaxAskTimeout)
	}
	prefixes := map[string]string{} // prefix on the aggregated endpoint → server
	for _, name := range slices.Sorted(maps.Keys(c.Servers)) {
		s := c.Servers[name]
		if e := s.validate(name); e != nil {
			return e
		}
		if s.PointsAt(c.Listen) {
			return errSelf("servers."+name+".url", c.Listen)
		}
		prefix, field := name, "servers."+name
		if s.Alias != "" {
			prefix, field = s.Alias, field+".alias"
		}
		if other, taken := prefixes[prefix]; taken {
			return invalid(field, "%q is already the prefix of server %q on /mcp; choose another alias", prefix, other)
		}
		prefixes[prefix] = name
	}
	for _, name := range slices.Sorted(maps.Keys(c.Profiles)) {
		if e := c.Profiles[name].validate(name); e != nil {
			return e
		}
	}
	return nil
}

func invalid(field, format string, args ...any) *Error {
	return &Error{Field: field, Err: fmt.Errorf(format, args...)}
}

func validateListen(listen string) *Error {
	if listen == "" {
		return invalid("listen", "missing: expected host:port such as %q", DefaultListen)
	}
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return &Error{Field: "listen", Err: fmt.Errorf("invalid value %q: expected host:port such as %q: %w", listen, DefaultListen, err)}
	}
	if host != "127.0.0.1" && host != "::1" && !strings.EqualFold(host, "localhost") {
		return invalid("listen", "invalid value %q: host must be 127.0.0.1, ::1 or localhost; Switchboard only listens on this machine", listen)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return invalid("listen", "invalid value %q: port must be a number from 0 to 65535", listen)
	}
	return nil
}

// ValidServerName reports whether name can name a server (or be its
// alias): it matches ^[A-Za-z0-9][A-Za-z0-9_.-]{0,47}$ and has no "__", the
// separator of tool prefixes on the aggregated endpoint.
func ValidServerName(name string) bool {
	if name == "" || len(name) > MaxServerNameLen || strings.Contains(name, "__") {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case i > 0 && (c == '_' || c == '.' || c == '-'):
		default:
			return false
		}
	}
	return true
}

func (s Server) validate(name string) *Error {
	field := "servers." + name
	if !ValidServerName(name) {
		return invalid(field, "invalid server name %q: use 1 to %d letters, digits, '_', '.' or '-', starting with a letter or digit, without \"__\"", name, MaxServerNameLen)
	}
	if s.URL != "" {
		if e := s.validateRemote(field); e != nil {
			return e
		}
	} else {
		if strings.TrimSpace(s.Command) == "" {
			return invalid(field+".command", "missing: a server needs a command to run (or a url, for a remote server)")
		}
		for _, remote := range []struct {
			key string
			set bool
		}{{"headers", len(s.Headers) > 0}, {"secretHeaders", len(s.SecretHeaders) > 0}, {"transport", s.Transport != ""}, {"oauth", s.OAuth != nil}} {
			if remote.set {
				return invalid(field+"."+remote.key, "only a remote server (one with a url) takes %s", remote.key)
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s.Env)) {
		switch {
		case k == "":
			return invalid(field+".env", "invalid key \"\": an environment variable needs a name")
		case strings.Contains(k, "="):
			return invalid(field+".env", "invalid key %q: an environment variable name cannot contain '='", k)
		}
	}
	if e := s.Pool.validate(field + ".pool"); e != nil {
		return e
	}
	if e := validateDuration(field+".timeout", s.Timeout); e != nil {
		return e
	}
	for i, t := range s.DisabledTools {
		if t == "" {
			return &Error{Field: fmt.Sprintf("%s.disabledTools[%d]", field, i), Err: errors.New("invalid value \"\": a tool name cannot be empty")}
		}
	}
	for _, tool := range slices.Sorted(maps.Keys(s.Tiers)) {
		f := field + ".tiers." + tool
		if tool == "" {
			return invalid(f, `invalid key "": a tool name cannot be empty`)
		}
		if _, err := tiers.Parse(string(s.Tiers[tool])); err != nil {
			return &Error{Field: f, Err: err}
		}
	}
	if s.Alias != "" && !ValidServerName(s.Alias) {
		return invalid(field+".alias", "invalid alias %q: use 1 to %d letters, digits, '_', '.' or '-', starting with a letter or digit, without \"__\"", s.Alias, MaxServerNameLen)
	}
	for i, name := range s.SecretEnv {
		f := fmt.Sprintf("%s.secretEnv[%d]", field, i)
		if name == "" || strings.ContainsAny(name, "=\x00") {
			return invalid(f, "invalid environment variable name %q", name)
		}
		if _, ok := s.Env[name]; ok {
			return invalid(f, "%s is both in env and in secretEnv: keep the secret only in the secret store", name)
		}
	}
	for i, root := range s.Roots {
		if !validRoot(root) {
			return invalid(fmt.Sprintf("%s.roots[%d]", field, i), "invalid root %q: use an absolute path or a file:// URI", root)
		}
	}
	if e := s.Sandbox.validate(field + ".sandbox"); e != nil {
		return e
	}
	if in := s.Install; in != nil && (in.Entry == "" || in.Version == "") {
		return invalid(field+".install", "an install record needs its catalog entry and version")
	}
	return nil
}

func (p Pool) validate(field string) *Error {
	switch p.Mode {
	case "", PoolShared, PoolSession:
	default:
		return invalid(field+".mode", "invalid value %q: must be %q or %q", p.Mode, PoolShared, PoolSession)
	}
	switch {
	case p.Min < 0:
		return invalid(field+".min", "invalid value %d: must not be negative", p.Min)
	case p.Min > MaxPoolSize:
		return invalid(field+".min", "invalid value %d: must be at most %d", p.Min, MaxPoolSize)
	case p.Max < 0:
		return invalid(field+".max", "invalid value %d: must not be negative (0 means the default)", p.Max)
	case p.Max > MaxPoolSize:
		return invalid(field+".max", "invalid value %d: must be at most %d", p.Max, MaxPoolSize)
	case p.Max != 0 && p.Min > p.Max:
		return invalid(field+".max", "invalid value %d: must be at least min (%d)", p.Max, p.Min)
	}
	return validateDuration(field+".idleTimeout", p.IdleTimeout)
}

func validateDuration(field string, d Duration) *Error {
	if d.Duration < 0 {
		return invalid(field, "invalid value %q: must not be negative", d.String())
	}
	return nil
}

// The bounds of the ask timeout the config accepts (askTimeout).
const (
	MinAskTimeout = time.Second
	MaxAskTimeout = time.Hour
)

// MinSessionTimeout is the shortest session timeout the config accepts.
const MinSessionTimeout = time.Minute

// validRoot reports whether root is an absolute path or a file:// URI with
// an absolute path.
func validRoot(root string) bool {
	if rest, ok := strings.CutPrefix(root, "file://"); ok {
		u, err := url.Parse(root)
		return err == nil && rest != "" && strings.HasPrefix(u.Path, "/") && u.RawQuery == "" && u.Fragment == ""
	}
	return root != "" && !strings.ContainsRune(root, 0) && (filepath.IsAbs(root) || path.IsAbs(root))
}
