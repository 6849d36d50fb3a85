// Package redact is the one rule that decides what is secret, used by
// history, client diffs, the API and logs.
//
// It has two halves. The name rule (SecretName) says whether a field, header
// or environment variable holds a secret because of what it is called
// ("X-Api-Key", "GITHUB_TOKEN", "apiKey"). The value rule (Values,
// HasSecretValue) finds well-known credential shapes inside free text
// ("sk-…", "ghp_…", "AKIA…", JWTs, "Bearer …", PEM private keys) whatever
// the field is called, and replaces them.
package redact

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Redacted replaces a secret: the whole value of a secret field, or the
// secret part of a string.
const Redacted = "[redacted]"

// secretWords are the name parts that make a field secret.
//
// The rule: a name is split into parts at every character that is not a
// letter or digit and at camelCase boundaries ("githubToken" → github, token;
// "x-api-key" → x, api, key; "APIKey" → api, key). The name is secret when
// one part, lowercased, is one of these words, or when the whole name with
// separators removed is ("API_KEY" → apikey). Trailing digits of a part are
// ignored ("token2"). Parts must match whole, so look-alikes are kept:
// "keyboard", "monkey", "author", "tokenizer". Plurals are secret only where
// a plural still names a secret ("credentials", "secrets", "passwords",
// "cookies"): "max_tokens" and "keys" (a list of names) are common, harmless
// arguments and are kept.
var secretWords = map[string]bool{
	"token": true, "key": true, "apikey": true, "password": true, "passwords": true,
	"passwd": true, "passphrase": true, "secret": true, "secrets": true,
	"authorization": true, "auth": true, "cookie": true, "cookies": true,
	"credential": true, "credentials": true, "pat": true,
}

// secretSuffixWords are secret as the last part of a longer name only:
// "DB_PWD" is a password, "PWD" alone is the working directory.
var secretSuffixWords = map[string]bool{"pwd": true}

// secretEndings make a part secret when it ends with one, written without a
// separator: "PGPASSWORD" (libpq's, which Postgres servers take),
// "ADMINPASSWD", "APPSECRET", "NPMTOKEN". Not "key", which ends ordinary
// words ("monkey", "hotkey").
var secretEndings = []string{"password", "passwd", "passphrase", "secret", "token"}

// MaybeSecretName is a quick test that settles most names without splitting
// them: false means SecretName(name) is false. The parts of a name, joined
// and lowercased, are its letters and digits; a secret name has a secret
// word among them (secretWords, secretSuffixWords, secretEndings), so they
// contain one of the stems the switch below looks for: each word contains
// one. It allocates nothing for names up to 64 bytes, and looks at each
// byte of the joined name once, beside the stems that start with it.
func MaybeSecretName(name []byte) bool {
	var buf [64]byte
	joined := buf[:0]
	for _, c := range name {
		switch {
		case c >= utf8.RuneSelf:
			return true // left to SecretName's Unicode rules
		case 'A' <= c && c <= 'Z':
			joined = append(joined, c+'a'-'A')
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
			joined = append(joined, c)
		}
	}
	for i, c := range joined {
		rest := joined[i:]
		switch c {
		case 't':
			if hasPrefix(rest, "token") {
				return true
			}
		case 'k':
			if hasPrefix(rest, "key") {
				return true
			}
		case 'p':
			if hasPrefix(rest, "pass") || hasPrefix(rest, "pat") || hasPrefix(rest, "pwd") {
				return true
			}
		case 's':
			if hasPrefix(rest, "secret") {
				return true
			}
		case 'a':
			if hasPrefix(rest, "auth") {
				return true
			}
		case 'c':
			if hasPrefix(rest, "cookie") || hasPrefix(rest, "credential") {
				return true
			}
		}
	}
	return false
}

// hasPrefix is bytes.HasPrefix for a string prefix, without converting
// either.
func hasPrefix(b []byte, prefix string) bool {
	return len(b) >= len(prefix) && string(b[:len(prefix)]) == prefix
}

// SecretName reports whether a field, header or environment variable named
// name holds a secret (see secretWords for the rule).
func SecretName(name string) bool {
	joined := make([]byte, 0, len(name))
	secret := false
	parts, last := 0, ""
	eachPart(name, func(part string) {
		p := strings.ToLower(part)
		joined = append(joined, p...)
		if secretWords[p] || secretWords[strings.TrimRight(p, "0123456789")] {
			secret = true
		}
		for _, end := range secretEndings {
			if strings.HasSuffix(strings.TrimRight(p, "0123456789"), end) {
				secret = true
			}
		}
		parts++
		last = p
	})
	return secret || secretWords[string(joined)] || (parts > 1 && secretSuffixWords[last])
}

// eachPart calls f with each part of name: runs of letters and digits, split
// further at lower→Upper and at the last capital of an acronym ("APIKey").
func eachPart(name string, f func(string)) {
	rs := []rune(name)
	start := -1
	for i, r := range rs {
		alnum := unicode.IsLetter(r) || unicode.IsDigit(r)
		if !alnum {
			if start >= 0 {
				f(string(rs[start:i]))
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
				f(string(rs[start:i]))
				start = i
			}
		}
	}
	if start >= 0 {
		f(string(rs[start:]))
	}
}

// HasSecretValue reports whether s holds a well-known credential shape
// anywhere in it.
func HasSecretValue(s string) bool {
	_, _, ok := nextSecret(s, 0)
	return ok
}

// Values returns s with every well-known credential shape in it replaced by
// Redacted; the text around them is kept ("Authorization: Bearer abc.def1"
// → "Authorization: Bearer [redacted]"). s is returned as it is, without
// copying, when it holds none.
//
// The shapes: OpenAI and Anthropic keys (sk-…, sk-proj-…, sk-ant-…), GitHub
// tokens (ghp_, gho_, ghs_, ghu_, ghr_, github_pat_), Slack tokens
// (xoxb-, xoxp-, xoxa-, xoxs-), AWS access key ids (AKIA…, ASIA…), JWTs
// (eyJ….….…), the credential after "Bearer ", PEM private key blocks
// (to their END line, or to the end of s when it is cut off), and the
// password in a URL ("postgresql://me:PASSWORD@host/db").
func Values(s string) string {
	start, end, ok := nextSecret(s, 0)
	if !ok {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	from := 0
	for ok {
		b.WriteString(s[from:start])
		b.WriteString(Redacted)
		from = end
		start, end, ok = nextSecret(s, end)
	}
	b.WriteString(s[from:])
	return b.String()
}

// nextSecret finds the first credential in s at or after from: s[start:end].
func nextSecret(s string, from int) (start, end int, ok bool) {
	for i := from; i < len(s); i++ {
		c := s[i]
		// Every shape starts with one of these bytes; most text is skipped
		// by this test alone.
		switch c {
		case 's', 'g', 'x', 'A', 'e', 'B', 'b', '-':
		case ':':
			if start, end := matchURLPassword(s, i); end > 0 {
				return start, end, true
			}
			continue
		default:
			continue
		}
		if c != '-' && i > 0 && isWordByte(s[i-1]) && !afterEscape(s, i) {
			continue // inside a word: "task-force", "Basket"
		}
		if n := matchAt(s, i); n > 0 {
			if c == 'B' || c == 'b' {
				return i + n - bearerLen(s[i:i+n]), i + n, true
			}
			return i, i + n, true
		}
	}
	return 0, 0, false
}

// matchAt returns the length of the credential that starts at s[i], or 0.
func matchAt(s string, i int) int {
	rest := s[i:]
	switch rest[0] {
	case 's':
		if strings.HasPrefix(rest, "sk-") {
			return minRun(rest, 3, 20, isKeyByte)
		}
	case 'g':
		for _, p := range []string{"ghp_", "gho_", "ghs_", "ghu_", "ghr_"} {
			if strings.HasPrefix(rest, p) {
				return minRun(rest, len(p), 20, isAlnum)
			}
		}
		if strings.HasPrefix(rest, "github_pat_") {
			return minRun(rest, len("github_pat_"), 20, isWordByte)
		}
	case 'x':
		if len(rest) > 5 && strings.HasPrefix(rest, "xox") && strings.IndexByte("bpas", rest[3]) >= 0 && rest[4] == '-' {
			return minRun(rest, 5, 10, func(c byte) bool { return isAlnum(c) || c == '-' })
		}
	case 'A':
		if strings.HasPrefix(rest, "AKIA") || strings.HasPrefix(rest, "ASIA") {
			n := run(rest, 4, func(c byte) bool { return 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' })
			if n == 20 && (len(rest) == 20 || !isWordByte(rest[20])) {
				return 20
			}
		}
	case 'e':
		return matchJWT(rest)
	case 'B', 'b':
		return matchBearer(rest)
	case '-':
		return matchPEM(rest)
	}
	return 0
}

// minRun returns the length of prefix p of s followed by bytes in class, if
// at least min of them follow it, or 0.
func minRun(s string, p, min int, class func(byte) bool) int {
	n := run(s, p, class)
	if n-p < min {
		return 0
	}
	return n
}

// run returns the index of the first byte at or after i not in class.
func run(s string, i int, class func(byte) bool) int {
	for i < len(s) && class(s[i]) {
		i++
	}
	return i
}

// matchJWT matches header.payload.signature, base64url, the header a JSON
// object ("eyJ" is `{"` encoded). The signature may be empty (alg "none").
func matchJWT(s string) int {
	if !strings.HasPrefix(s, "eyJ") {
		return 0
	}
	h := run(s, 0, isB64URL)
	if h < 10 || h >= len(s) || s[h] != '.' {
		return 0
	}
	p := run(s, h+1, isB64URL)
	if p-(h+1) < 10 || p >= len(s) || s[p] != '.' {
		return 0
	}
	return run(s, p+1, isB64URL)
}

// matchBearer matches "Bearer <credential>", any case, with a credential of
// at least 8 token68 characters that is not a plain word (it has a digit or
// a symbol, or is 20 characters or more): "a bearer token" stays.
func matchBearer(s string) int {
	const word = "bearer"
	if len(s) < len(word)+1 || !strings.EqualFold(s[:len(word)], word) {
		return 0
	}
	i := len(word)
	sp := run(s, i, func(c byte) bool { return c == ' ' || c == '\t' })
	if sp == i {
		return 0
	}
	end := run(s, sp, isToken68)
	cred := s[sp:end]
	if len(cred) < 8 {
		return 0
	}
	if len(cred) < 20 && strings.IndexFunc(cred, func(r rune) bool { return !unicode.IsLetter(r) }) < 0 {
		return 0
	}
	return end
}

// bearerLen is the length of the credential at the end of a Bearer match.
func bearerLen(m string) int {
	return len(m) - run(m, len("bearer"), func(c byte) bool { return c == ' ' || c == '\t' })
}

// matchPEM matches a PEM private key block, from its BEGIN line to the end
// of its END line, or to the end of s when there is no END line.
func matchPEM(s string) int {
	const begin = "-----BEGIN "
	if !strings.HasPrefix(s, begin) {
		return 0
	}
	line := s[len(begin):]
	if nl := strings.IndexAny(line, "\r\n"); nl >= 0 {
		line = line[:nl]
	}
	// In JSON text the block is one line, its line breaks escaped: the
	// label ends at the first "-----".
	label, _, found := strings.Cut(line, "-----")
	if !found || !strings.HasSuffix(label, "PRIVATE KEY") {
		return 0
	}
	rest := len(begin) + len(label) + len("-----")
	i := strings.Index(s[rest:], "-----END ")
	if i < 0 {
		return len(s)
	}
	i += rest + len("-----END ")
	j := strings.Index(s[i:], "-----")
	if j < 0 {
		return len(s)
	}
	return i + j + len("-----")
}

// matchURLPassword matches the password of a URL's user information,
// "postgresql://me:PASSWORD@host/db", when s[i:] starts with "://" after a
// scheme: it returns where the password starts and ends, or 0, 0. A
// password already redacted is not matched again.
func matchURLPassword(s string, i int) (start, end int) {
	if !strings.HasPrefix(s[i:], "://") || i == 0 || !isAlnum(s[i-1]) {
		return 0, 0
	}
	from := i + len("://")
	at := run(s, from, func(c byte) bool { return strings.IndexByte("/?#@ \t\r\n\"'<>\\`", c) < 0 })
	if at >= len(s) || s[at] != '@' {
		return 0, 0
	}
	colon := strings.IndexByte(s[from:at], ':')
	if colon < 0 {
		return 0, 0
	}
	start = from + colon + 1
	if start == at || s[start:at] == Redacted {
		return 0, 0
	}
	return start, at
}

// afterEscape reports whether s[i] follows a JSON escape of a line break or
// tab (`\nghp_…` in JSON text not yet decoded): the escape ends a word.
func afterEscape(s string, i int) bool {
	return i >= 2 && s[i-2] == '\\' && strings.IndexByte("nrt", s[i-1]) >= 0
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

func isWordByte(c byte) bool { return isAlnum(c) || c == '_' }

func isKeyByte(c byte) bool { return isAlnum(c) || c == '_' || c == '-' }

func isB64URL(c byte) bool { return isAlnum(c) || c == '_' || c == '-' }

// isToken68 is RFC 9110's token68 alphabet, the form of Bearer credentials.
func isToken68(c byte) bool {
	return isAlnum(c) || strings.IndexByte("-._~+/=", c) >= 0
}
