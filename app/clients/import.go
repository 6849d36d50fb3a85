package clients

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
)

// MaxServerNameLen is the longest server name Switchboard's config accepts
// (config.MaxServerNameLen); SanitizeName keeps names within it.
const MaxServerNameLen = 48

// SanitizeName turns the name a client gives a server into one that
// Switchboard's config accepts: letters, digits, '_', '.' and '-', starting
// with a letter or digit, without "__", at most MaxServerNameLen bytes.
// Other characters become '-'; an empty result is "server".
func SanitizeName(name string) string {
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '.', c == '-':
			b.WriteByte(c)
		default:
			b.WriteByte('-')
		}
	}
	s := b.String()
	for strings.Contains(s, "__") {
		s = strings.ReplaceAll(s, "__", "_")
	}
	s = strings.TrimLeft(s, "_.-")
	if len(s) > MaxServerNameLen {
		s = s[:MaxServerNameLen]
	}
	if s == "" {
		return "server"
	}
	return s
}

// An Existing server is one Switchboard already runs, as MergeImports
// compares it: Env holds every variable and Headers every header, the
// secret ones with their values read from the secret store.
type Existing struct {
	Name    string
	Command string
	Args    []string
	Env     map[string]string
	Cwd     string
	// URL, Transport and Headers are a remote server's. Transport ""
	// is TransportAuto.
	URL       string
	Transport string
	Headers   map[string]string
}

// A Merged entry is one server of a client's file and what importing it
// does to Switchboard's config.
type Merged struct {
	// Entry is the server as the client's file has it.
	Entry ImportEntry
	// Name is its name in Switchboard's config. When Same is empty, the
	// server is added under Name: the entry's name (see SanitizeName), with
	// "-2", "-3", … appended when another server holds that name.
	Name string
	// Same, when set, names the server Switchboard already has (or adds
	// for an earlier entry of the same import) with the same command,
	// arguments, environment and working folder (for a remote server: the
	// same URL, transport and headers): nothing is added, and Name equals
	// Same.
	Same string
}

// Renamed reports whether the server is added under another name than the
// one the client gave it.
func (m Merged) Renamed() bool { return m.Same == "" && m.Name != m.Entry.Name }

// MergeImports decides, for each entry in order, whether importing it adds
// a server or finds one Switchboard already has, so that importing the
// same servers from several clients runs each once. Two servers are the
// same when their command, arguments, environment (names and values) and
// working folder are equal; two remote servers, when their URL, transport
// and headers (names and values) are. The names chosen do not depend on map order:
// the same inputs always give the same names.
func MergeImports(entries []ImportEntry, existing []Existing) []Merged {
	taken := map[string]bool{}
	known := slices.Clone(existing)
	for _, e := range existing {
		taken[e.Name] = true
	}
	out := make([]Merged, 0, len(entries))
	for _, ie := range entries {
		cand := Existing{Command: ie.Command, Args: ie.Args, Cwd: ie.Cwd, Env: map[string]string{},
			URL: ie.URL, Transport: ie.Transport, Headers: map[string]string{}}
		for _, v := range ie.Env {
			cand.Env[v.Name] = v.Value
		}
		for _, h := range ie.Headers {
			cand.Headers[http.CanonicalHeaderKey(h.Name)] = h.Value
		}
		m := Merged{Entry: ie}
		if i := slices.IndexFunc(known, func(k Existing) bool { return sameServer(k, cand) }); i >= 0 {
			m.Name, m.Same = known[i].Name, known[i].Name
			out = append(out, m)
			continue
		}
		base := SanitizeName(ie.Name)
		m.Name = base
		for n := 2; taken[m.Name]; n++ {
			suffix := fmt.Sprintf("-%d", n)
			m.Name = base[:min(len(base), MaxServerNameLen-len(suffix))] + suffix
		}
		taken[m.Name] = true
		cand.Name = m.Name
		known = append(known, cand)
		out = append(out, m)
	}
	return out
}

func sameServer(a, b Existing) bool {
	if a.URL != "" || b.URL != "" {
		return a.URL == b.URL && transportOrAuto(a.Transport) == transportOrAuto(b.Transport) &&
			maps.Equal(canonicalHeaders(a.Headers), canonicalHeaders(b.Headers))
	}
	return a.Command == b.Command && slices.Equal(a.Args, b.Args) && a.Cwd == b.Cwd &&
		maps.Equal(nilIfEmpty(a.Env), nilIfEmpty(b.Env))
}

func transportOrAuto(t string) string {
	if t == "" {
		return TransportAuto
	}
	return t
}

// canonicalHeaders is h with canonical names (header names are not case
// sensitive), nil when empty.
func canonicalHeaders(h map[string]string) map[string]string {
	if len(h) == 0 {
		return nil
	}
	out := make(map[string]string, len(h))
	for k, v := range h {
		out[http.CanonicalHeaderKey(k)] = v
	}
	return out
}

func nilIfEmpty(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}
