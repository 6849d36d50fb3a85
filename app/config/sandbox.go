package config

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strconv"
)

// The global "sandboxDefault" values: whether a server the user added by
// hand (no Install record) runs confined. A catalog install is confined
// unless its own "sandbox" is false.
const (
	SandboxConfined = "confined"
	SandboxOff      = "off"
)

// Sandbox is a server's "sandbox" key. false turns confinement off for the
// server; an object (or true) confines it, adding its paths to the policy
// the daemon derives (install and data directories, a temp dir of its own,
// granted paths) and, with "network": true, allowing it TCP.
type Sandbox struct {
	// Off is "sandbox": false.
	Off bool
	// Read and Write are extra absolute paths the server may read, or read
	// and write.
	Read  []string
	Write []string
	// Network allows TCP connect and bind; nil means what the catalog entry
	// says (off for a server added by hand).
	Network *bool
}

// IsConfined reports whether server s runs confined, given the global
// sandboxDefault.
func (s Server) IsConfined(sandboxDefault string) bool {
	switch {
	case s.Sandbox != nil:
		return !s.Sandbox.Off
	case s.Install != nil:
		return true
	default:
		return sandboxDefault == SandboxConfined
	}
}

func (p *parser) sandbox(field string, off int, raw []byte) (*Sandbox, error) {
	const want = `false, or an object like {"read": ["/path"], "write": ["/path"], "network": true}`
	if isNull(raw) {
		return nil, nil
	}
	var b bool
	if json.Unmarshal(raw, &b) == nil {
		return &Sandbox{Off: !b}, nil
	}
	ms, err := p.object(field, off, raw, want)
	if err != nil {
		return nil, err
	}
	sb := &Sandbox{}
	for _, m := range ms {
		f := join(field, m.key)
		switch m.key {
		case "read":
			sb.Read, err = p.strings(f, m.valOff, m.val)
		case "write":
			sb.Write, err = p.strings(f, m.valOff, m.val)
		case "network":
			sb.Network, err = p.optionalBool(f, m.valOff, m.val)
		default:
			err = p.typeError(f, m.valOff, m.val, "one of read, write, network")
		}
		if err != nil {
			return nil, err
		}
	}
	return sb, nil
}

func (sb *Sandbox) validate(field string) *Error {
	if sb == nil {
		return nil
	}
	for key, paths := range map[string][]string{"read": sb.Read, "write": sb.Write} {
		for i, path := range paths {
			if !filepath.IsAbs(path) {
				return invalid(field+"."+key+"["+strconv.Itoa(i)+"]", "invalid path %q: use an absolute path", path)
			}
		}
	}
	return nil
}

func validateSandboxDefault(v string) *Error {
	switch v {
	case "", SandboxConfined, SandboxOff:
		return nil
	}
	return invalid("sandboxDefault", "invalid value %q: must be %q or %q", v, SandboxConfined, SandboxOff)
}

// MarshalJSON writes the key as config.json has it.
func (sb Sandbox) MarshalJSON() ([]byte, error) { return sb.appendJSON(nil), nil }

func (sb *Sandbox) appendJSON(b []byte) []byte {
	if sb.Off {
		return append(b, "false"...)
	}
	if len(sb.Read) == 0 && len(sb.Write) == 0 && sb.Network == nil {
		return append(b, "true"...)
	}
	b = append(b, '{')
	sep := ""
	if len(sb.Read) > 0 {
		b = append(b, `"read":`...)
		b = appendStrings(b, sb.Read)
		sep = ","
	}
	if len(sb.Write) > 0 {
		b = append(b, sep+`"write":`...)
		b = appendStrings(b, sb.Write)
		sep = ","
	}
	if sb.Network != nil {
		b = append(b, sep+`"network":`...)
		b = strconv.AppendBool(b, *sb.Network)
	}
	return append(b, '}')
}

func (sb *Sandbox) clone() *Sandbox {
	if sb == nil {
		return nil
	}
	out := &Sandbox{Off: sb.Off, Read: slices.Clone(sb.Read), Write: slices.Clone(sb.Write)}
	if sb.Network != nil {
		v := *sb.Network
		out.Network = &v
	}
	return out
}
