package config

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"

	"github.com/switchboardhq/switchboard/app/tiers"
)

// A Profile is a named set of servers, and optionally of tools within
// them, served on its own aggregated endpoint, /mcp/p/<name>, with the
// naming rules of /mcp. A client token bound to a profile reaches that
// endpoint only (see app/tokens), so a client that cannot take every tool
// (Cursor stops at about 40) sees just the ones it needs:
//
//	"profiles": {
//	  "coding": {
//	    "servers": ["filesystem", "git"],
//	    "tools": {"filesystem": ["read_file", "list_directory"]},
//	    "toolSearch": true
//	  }
//	}
//
// A server named in Servers that is not configured (or not enabled) is
// left out when the profile is served, with a warning, rather than making
// the file invalid: uninstalling a server does not break the profiles
// that used it.
type Profile struct {
	// Servers are the servers the profile serves, by name.
	Servers []string `json:"servers"`

	// Tools, when it has an entry for a server, limits that server's tools
	// on the profile's endpoint to the ones listed; a server without an
	// entry offers every tool it offers on /mcp (its disabledTools stay
	// hidden either way). Each key is one of Servers.
	Tools map[string][]string `json:"tools,omitempty"`

	// ToolSearch serves the profile in search mode: its endpoint lists
	// only search_tools and call_tool, which find and call the profile's
	// tools.
	ToolSearch bool `json:"toolSearch,omitempty"`

	// MaxTier caps the tiers of the tools the profile offers (see
	// app/tiers): "read" offers only read-only tools, "write" leaves out
	// the destructive ones. A tool above it is not listed, and a call of
	// it is refused. "" caps nothing.
	MaxTier tiers.Tier `json:"maxTier,omitempty"`

	// AskBeforeDestructive makes a call of a destructive tool through the
	// profile's endpoint wait for the user's yes, whatever its server's
	// own setting (see Server.AskBeforeDestructive). Off by default.
	AskBeforeDestructive bool `json:"askBeforeDestructive,omitempty"`

	// extra holds keys this package does not know, verbatim (compacted).
	extra map[string]json.RawMessage
}

// ValidProfileName reports whether name can name a profile. The rules are
// a server name's (see ValidServerName): the name is a path segment of the
// profile's endpoint, /mcp/p/<name>.
func ValidProfileName(name string) bool { return ValidServerName(name) }

func (p Profile) clone() Profile {
	out := p
	out.Servers = slices.Clone(p.Servers)
	if p.Tools != nil {
		out.Tools = make(map[string][]string, len(p.Tools))
		for k, v := range p.Tools {
			out.Tools[k] = slices.Clone(v)
		}
	}
	out.extra = cloneExtra(p.extra)
	return out
}

func cloneProfiles(m map[string]Profile) map[string]Profile {
	if m == nil {
		return nil
	}
	out := make(map[string]Profile, len(m))
	for name, p := range m {
		out[name] = p.clone()
	}
	return out
}

// validate checks one profile. The servers it names need not be
// configured (see Profile).
func (p Profile) validate(name string) *Error {
	field := "profiles." + name
	if !ValidProfileName(name) {
		return invalid(field, "invalid profile name %q: use 1 to %d letters, digits, '_', '.' or '-', starting with a letter or digit, without \"__\"", name, MaxServerNameLen)
	}
	if len(p.Servers) == 0 {
		return invalid(field+".servers", `missing: a profile needs at least one server, like "servers": ["filesystem"]`)
	}
	seen := map[string]bool{}
	for i, s := range p.Servers {
		f := field + ".servers[" + strconv.Itoa(i) + "]"
		switch {
		case !ValidServerName(s):
			return invalid(f, "invalid server name %q", s)
		case seen[s]:
			return invalid(f, "server %q is listed twice", s)
		}
		seen[s] = true
	}
	if p.MaxTier != "" {
		if _, err := tiers.Parse(string(p.MaxTier)); err != nil {
			return &Error{Field: field + ".maxTier", Err: err}
		}
	}
	for _, server := range slices.Sorted(maps.Keys(p.Tools)) {
		f := field + ".tools." + server
		if !seen[server] {
			return invalid(f, "server %q is not one of the profile's servers; add it to %s.servers or remove its tool list", server, field)
		}
		tools := p.Tools[server]
		if len(tools) == 0 {
			return invalid(f, "empty tool list: it would hide every tool of %q; list the tools to keep, or remove %q from the profile", server, server)
		}
		dup := map[string]bool{}
		for i, t := range tools {
			ft := f + "[" + strconv.Itoa(i) + "]"
			switch {
			case t == "":
				return invalid(ft, `invalid value "": a tool name cannot be empty`)
			case dup[t]:
				return invalid(ft, "tool %q is listed twice", t)
			}
			dup[t] = true
		}
	}
	return nil
}

const profileWant = `a profile object like {"servers": ["filesystem"], "tools": {"filesystem": ["read_file"]}}`

func (p *parser) profiles(field string, off int, raw []byte) (map[string]Profile, error) {
	ms, err := p.object(field, off, raw, "an object mapping profile names to profiles")
	if err != nil || len(ms) == 0 {
		return nil, err
	}
	out := make(map[string]Profile, len(ms))
	for _, m := range ms {
		pr, err := p.profile(join(field, m.key), m.valOff, m.val)
		if err != nil {
			return nil, err
		}
		out[m.key] = pr
	}
	return out, nil
}

func (p *parser) profile(field string, off int, raw []byte) (Profile, error) {
	var pr Profile
	if isNull(raw) {
		return pr, p.typeError(field, off, raw, profileWant)
	}
	ms, err := p.object(field, off, raw, profileWant)
	if err != nil {
		return pr, err
	}
	for _, m := range ms {
		f := join(field, m.key)
		switch m.key {
		case "servers":
			pr.Servers, err = p.strings(f, m.valOff, m.val)
		case "tools":
			pr.Tools, err = p.profileTools(f, m.valOff, m.val)
		case "toolSearch":
			err = p.scalar(f, m.valOff, m.val, &pr.ToolSearch, "true or false")
		case "askBeforeDestructive":
			err = p.scalar(f, m.valOff, m.val, &pr.AskBeforeDestructive, "true or false")
		case "maxTier":
			if !isNull(m.val) && m.val[0] != '"' {
				err = p.typeError(f, m.valOff, m.val, `a tier: "read", "write" or "destructive"`)
				break
			}
			var s string
			err = p.scalar(f, m.valOff, m.val, &s, "a string")
			pr.MaxTier = tiers.Tier(s)
		default:
			pr.extra, err = addExtra(pr.extra, m)
		}
		if err != nil {
			return Profile{}, err
		}
	}
	return pr, nil
}

func (p *parser) profileTools(field string, off int, raw []byte) (map[string][]string, error) {
	ms, err := p.object(field, off, raw, `an object mapping server names to lists of tools, like {"filesystem": ["read_file"]}`)
	if err != nil || len(ms) == 0 {
		return nil, err
	}
	out := make(map[string][]string, len(ms))
	for _, m := range ms {
		f := join(field, m.key)
		if m.val[0] != '[' {
			return nil, p.typeError(f, m.valOff, m.val, "an array of tool names")
		}
		tools, err := p.strings(f, m.valOff, m.val)
		if err != nil {
			return nil, err
		}
		out[m.key] = tools
	}
	return out, nil
}

// MarshalJSON writes p as in the file, unknown keys included.
func (p Profile) MarshalJSON() ([]byte, error) { return p.appendJSON(nil), nil }

// UnmarshalJSON decodes a profile, keeping unknown keys; it does not
// validate.
func (p *Profile) UnmarshalJSON(data []byte) error {
	v, err := (&parser{}).profile("", 0, data)
	if err != nil {
		return err
	}
	*p = v
	return nil
}

func (p Profile) appendJSON(b []byte) []byte {
	w := objectWriter{b: append(b, '{')}
	w.key("servers")
	w.b = appendStrings(w.b, p.Servers)
	if len(p.Tools) > 0 {
		w.key("tools")
		w.b = appendObject(w.b, p.Tools, appendStrings)
	}
	if p.ToolSearch {
		w.key("toolSearch")
		w.b = append(w.b, "true"...)
	}
	if p.MaxTier != "" {
		w.key("maxTier")
		w.b = appendString(w.b, string(p.MaxTier))
	}
	if p.AskBeforeDestructive {
		w.key("askBeforeDestructive")
		w.b = append(w.b, "true"...)
	}
	w.extra(p.extra)
	return append(w.b, '}')
}

// ProfileServers returns the servers of profile name that cfg runs (they
// are configured and enabled), in the profile's order, and those it names
// that cfg does not run (missing), for a warning. ok is false when there is
// no such profile.
func (c *Config) ProfileServers(name string) (servers, missing []string, ok bool) {
	p, ok := c.Profiles[name]
	if !ok {
		return nil, nil, false
	}
	for _, s := range p.Servers {
		if sc, ok := c.Servers[s]; ok && sc.IsEnabled() {
			servers = append(servers, s)
		} else {
			missing = append(missing, s)
		}
	}
	return servers, missing, true
}

// MissingTools returns, by server, the tools profile name limits a server
// to (its "tools" entry) that the server does not offer, in the profile's
// order: a typo or a tool the server dropped, which the profile's endpoint
// silently leaves out. offered tells the tools a server lists now, and
// whether its tools are known (listed); a server whose tools are not known
// is not judged. MissingTools returns nil when nothing is missing or there
// is no such profile.
func (c *Config) MissingTools(name string, offered func(server string) (tools []string, known bool)) map[string][]string {
	p, ok := c.Profiles[name]
	if !ok {
		return nil
	}
	var out map[string][]string
	for _, server := range slices.Sorted(maps.Keys(p.Tools)) {
		has, known := offered(server)
		if !known {
			continue
		}
		for _, t := range p.Tools[server] {
			if !slices.Contains(has, t) {
				if out == nil {
					out = map[string][]string{}
				}
				out[server] = append(out[server], t)
			}
		}
	}
	return out
}
