package clients

import (
	"regexp"
	"strings"
	"unicode"
)

// This is the client editor's own copy of the rule for what is secret,
// kept until app/redact (the one rule shared by diffs, the API, logs and
// the history) is merged; then LooksSecret and LooksSecretValue call it.

// secretNameWords are the parts of a name that make its value secret. A
// name is split into parts at every character that is not a letter or
// digit and at camelCase boundaries ("X-Api-Key" → x, api, key;
// "githubToken" → github, token); it is secret when a part is one of these
// words, or when the whole name without separators is ("API_KEY" →
// apikey). Parts match whole, so "KEYBOARD" or "AUTHOR" are not secret.
var secretNameWords = map[string]bool{
	"token": true, "tokens": false, "key": true, "apikey": true, "password": true, "passwd": true,
	"passphrase": true, "pwd": true, "pat": true, "secret": true, "secrets": true, "authorization": true,
	"auth": true, "bearer": true, "cookie": true, "cookies": true, "credential": true,
	"credentials": true, "session": true, "sessionid": true, "privatekey": true, "accesskey": true,
}

// LooksSecret reports whether an environment variable's or a header's
// name suggests a credential: GITHUB_TOKEN, OPENAI_API_KEY, X-Api-Key,
// x-goog-api-key, Ocp-Apim-Subscription-Key, Authorization, Cookie, in any
// case and with any separator. It errs on the side of yes.
func LooksSecret(name string) bool {
	joined := ""
	secret := false
	for _, p := range nameParts(name) {
		p = strings.ToLower(p)
		joined += p
		if secretNameWords[p] || secretNameWords[strings.TrimRight(p, "0123456789")] {
			secret = true
		}
	}
	return secret || secretNameWords[joined]
}

// nameParts splits name into runs of letters and digits, split further at
// lower→Upper and at the last capital of an acronym ("APIKey" → API, Key).
func nameParts(name string) []string {
	var out []string
	rs := []rune(name)
	start := -1
	for i, r := range rs {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			if start >= 0 {
				out = append(out, string(rs[start:i]))
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
			continue
		}
		if unicode.IsUpper(r) {
			prev := rs[i-1]
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
				out = append(out, string(rs[start:i]))
				start = i
			}
		}
	}
	if start >= 0 {
		out = append(out, string(rs[start:]))
	}
	return out
}

// secretValueShapes are values that are credentials whatever they are
// called: API keys of the usual providers, GitHub and Slack tokens, JSON
// Web Tokens, bearer credentials, and Switchboard's own tokens.
var secretValueShapes = regexp.MustCompile(`(?i)^(?:bearer|basic|token)\s+\S{8,}$` +
	`|^(?:sk|pk|rk)[-_](?:[a-z]+[-_])?[A-Za-z0-9_-]{16,}$` +
	`|^(?:ghp|gho|ghu|ghs|ghr|github_pat)_[A-Za-z0-9_]{20,}$` +
	`|^glpat-[A-Za-z0-9_-]{20,}$` +
	`|^xox[abposr]-[A-Za-z0-9-]{10,}$` +
	`|^AKIA[0-9A-Z]{16}$` +
	`|^AIza[0-9A-Za-z_-]{35}$` +
	`|^eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}$` +
	`|^sb_[A-Za-z0-9_-]{16,}$`)

// LooksSecretValue reports whether a value has the shape of a credential
// (sk-…, ghp_…, a JWT, "Bearer …"), whatever its name.
func LooksSecretValue(v string) bool {
	return secretValueShapes.MatchString(strings.TrimSpace(v))
}

// IsSecret reports whether the variable or header name=value is to be
// masked: by its name or by the shape of its value.
func IsSecret(name, value string) bool {
	return LooksSecret(name) || LooksSecretValue(value)
}

// MaskSecrets returns a copy of m with the values of its secret entries
// (see IsSecret) replaced by mask.
func MaskSecrets(m map[string]string, mask string) map[string]string {
	if len(m) == 0 {
		return m
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		if v != "" && IsSecret(k, v) {
			v = mask
		}
		out[k] = v
	}
	return out
}
