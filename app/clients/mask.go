package clients

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/switchboardhq/switchboard/app/redact"
)

// Masked replaces secrets in diffs.
const Masked = "********"

// maskDiff hides the values of the entries' environment variables and
// headers whose names look secret. A value is replaced on the lines that
// also hold its name (one variable per line, or an inline table), and on
// any line when it is long enough (8 bytes) not to be an ordinary word, so
// that a short value such as "true" does not blank out unrelated lines.
func maskDiff(diff string, entries []Entry) string {
	type secret struct{ name, value string }
	var secrets []secret
	for _, e := range entries {
		// A value given after a flag whose name looks secret
		// (--api-key KEY, --token=T).
		for i, a := range e.Args {
			if flag, v, ok := strings.Cut(a, "="); ok && v != "" && strings.HasPrefix(flag, "-") && LooksSecret(flag) {
				secrets = append(secrets, secret{flag, v})
			} else if i > 0 && strings.HasPrefix(e.Args[i-1], "-") && LooksSecret(e.Args[i-1]) && !strings.HasPrefix(a, "-") {
				secrets = append(secrets, secret{e.Args[i-1], a})
			}
		}
		for _, m := range []map[string]string{e.Env, e.Headers} {
			for k, v := range m {
				if v == "" || v == Masked || !IsSecret(k, v) {
					continue
				}
				// An Authorization header keeps its scheme ("Bearer
				// ********"), as the token written in its place shows.
				if scheme, cred, ok := strings.Cut(v, " "); ok && len(cred) >= 8 && isAuthScheme(scheme) &&
					(strings.EqualFold(k, "Authorization") || strings.EqualFold(k, "Proxy-Authorization")) {
					v = cred
				}
				secrets = append(secrets, secret{k, v})
				// As JSON (and TOML) spell it, when it has characters
				// that are escaped there.
				if q, _ := json.Marshal(v); string(q[1:len(q)-1]) != v {
					secrets = append(secrets, secret{k, string(q[1 : len(q)-1])})
				}
			}
		}
	}
	if diff == "" {
		return diff
	}
	if len(secrets) == 0 {
		return redact.Values(diff)
	}
	// Longest first, so that a value containing another is masked whole.
	slices.SortFunc(secrets, func(a, b secret) int { return len(b.value) - len(a.value) })
	lines := strings.SplitAfter(diff, "\n")
	for i, l := range lines {
		for _, s := range secrets {
			if !strings.Contains(l, s.value) {
				continue
			}
			if len(s.value) >= 8 {
				l = strings.ReplaceAll(l, s.value, Masked)
			} else {
				l = maskAfterName(l, s.name, s.value)
			}
		}
		// Credential shapes anywhere (a key given as an argument).
		lines[i] = redact.Values(l)
	}
	return strings.Join(lines, "")
}

// isAuthScheme tells whether s is an HTTP authentication scheme's name
// (Bearer, Basic, Token): letters only.
func isAuthScheme(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') {
			return false
		}
	}
	return true
}

// maskAfterName masks value where it directly follows name and a separator
// in line: `"NAME": "value"`, `NAME = "value"`, `NAME: value`.
func maskAfterName(line, name, value string) string {
	var out strings.Builder
	for {
		i := strings.Index(line, name)
		if i < 0 {
			break
		}
		j := i + len(name)
		j += len(line[j:]) - len(strings.TrimLeft(line[j:], `"' `+"\t"))
		if j < len(line) && (line[j] == ':' || line[j] == '=') {
			j++
			j += len(line[j:]) - len(strings.TrimLeft(line[j:], `"' `+"\t"))
			if strings.HasPrefix(line[j:], value) {
				out.WriteString(line[:j] + Masked)
				line = line[j+len(value):]
				continue
			}
		}
		out.WriteString(line[:i+len(name)])
		line = line[i+len(name):]
	}
	return out.String() + line
}
