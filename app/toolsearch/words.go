package toolsearch

import (
	"maps"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// splitName turns an identifier into lower-case words: read_file,
// readFile, read-file and ReadFile all become "read file"; HTTPServer
// becomes "http server". Digits stay with the letters before them (s3,
// v2), so a version or a service name is one word.
func splitName(s string) string {
	return strings.Join(words(s), " ")
}

// words splits s at every rune that is neither a letter nor a digit, and
// at camelCase humps, lower-cased.
func words(s string) []string {
	var out []string
	rs := []rune(s)
	start := -1
	flush := func(end int) {
		if start >= 0 && end > start {
			out = append(out, strings.ToLower(string(rs[start:end])))
		}
		start = -1
	}
	for i, r := range rs {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush(i)
			continue
		}
		if start < 0 {
			start = i
			continue
		}
		prev := rs[i-1]
		switch {
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			// readFile: a hump
			flush(i)
			start = i
		case unicode.IsUpper(r) && unicode.IsUpper(prev) && i+1 < len(rs) && unicode.IsLower(rs[i+1]):
			// HTTPServer: the last capital starts the next word
			flush(i)
			start = i
		case unicode.IsLetter(r) && unicode.IsDigit(prev):
			// v2api: a digit ends a word
			flush(i)
			start = i
		}
	}
	flush(len(rs))
	return out
}

// minPrefixLen is the shortest word searched for as a prefix too ("screen"
// finds "screenshot"): a shorter one would match half the index, and cost
// a score for each. The table keeps prefix indexes of 3 and 4 letters,
// which makes the short prefixes (the costliest to merge) cheap.
const minPrefixLen = 3

// maxQueryTerms bounds the words of a query that are searched for (twice
// that with their related words): a pasted page of text must not become a
// query of thousands of terms.
const maxQueryTerms = 32

// stopWords are the words of a question that say nothing of a tool. They
// are left out of a query unless it has no other word.
var stopWords = map[string]bool{
	"a": true, "an": true, "the": true, "and": true, "or": true, "of": true, "to": true, "in": true,
	"on": true, "at": true, "for": true, "from": true, "by": true, "with": true, "into": true, "about": true,
	"is": true, "are": true, "be": true, "it": true, "its": true, "this": true, "that": true, "these": true,
	"i": true, "me": true, "my": true, "we": true, "our": true, "you": true, "your": true,
	"how": true, "what": true, "which": true, "can": true, "do": true, "does": true, "some": true,
	"tool": true, "tools": true, "want": true, "need": true, "please": true, "using": true,
}

// related are the words tools are usually described with for the
// everyday words a person (or a model) asks with: a query word also
// searches for these. General vocabulary of file, web and data tools, not
// any one server's.
var related = map[string][]string{
	"folder":   {"directory"},
	"folders":  {"directory"},
	"dir":      {"directory"},
	"picture":  {"image"},
	"pictures": {"image"},
	"photo":    {"image"},
	"photos":   {"image"},
	"several":  {"multiple"},
	"many":     {"multiple"},
	"remove":   {"delete"},
	"erase":    {"delete"},
	"rename":   {"move"},
	"find":     {"search"},
	"look":     {"search"},
	"lookup":   {"search"},
	"locate":   {"search"},
	"fetch":    {"get"},
	"retrieve": {"get"},
	"visit":    {"navigate"},
	"go":       {"navigate"},
	"goto":     {"navigate"},
	"open":     {"navigate", "read"},
	"website":  {"page", "url"},
	"webpage":  {"page", "url"},
	"site":     {"page", "url"},
	"link":     {"url", "relation"},
	"remember": {"memory", "observation"},
	"memorize": {"memory", "observation"},
	"recall":   {"memory", "search"},
	"fact":     {"observation"},
	"facts":    {"observation"},
	"save":     {"write", "create"},
	"store":    {"write", "create"},
	"make":     {"create"},
	"new":      {"create"},
	"change":   {"edit", "update"},
	"modify":   {"edit", "update"},
	"send":     {"post"},
	"run":      {"execute", "evaluate"},
	"execute":  {"run", "evaluate"},
	"zip":      {"compress", "gzip"},
	"shrink":   {"compress"},
}

// matchExpression turns a user's free text into an FTS5 query: each word
// (as words splits it) quoted, as a prefix, the words ORed, so that any
// of them matches and BM25 ranks tools matching more and rarer words
// first. Nothing of the user's text is FTS5 syntax: a word holds only
// letters and digits, and is quoted besides. "" means the text has no
// word to search for.
func matchExpression(text string) string {
	seen := map[string]bool{}
	var terms, stops []string
	for _, w := range words(text) {
		if seen[w] {
			continue
		}
		seen[w] = true
		if stopWords[w] || utf8.RuneCountInString(w) < 2 {
			stops = append(stops, w)
			continue
		}
		terms = append(terms, w)
	}
	if len(terms) == 0 {
		terms = stops
	}
	for _, t := range slices.Clone(terms) {
		for _, r := range related[t] {
			if !seen[r] && len(terms) < 2*maxQueryTerms {
				seen[r] = true
				terms = append(terms, r)
			}
		}
	}
	if len(terms) > maxQueryTerms {
		terms = terms[:maxQueryTerms]
	}
	quoted := make([]string, len(terms))
	for i, t := range terms {
		quoted[i] = `"` + strings.ReplaceAll(t, `"`, `""`) + `"`
		if utf8.RuneCountInString(t) >= minPrefixLen {
			quoted[i] += "*"
		}
	}
	return strings.Join(quoted, " OR ")
}

func sortedKeys(m map[string]any) []string {
	return slices.Sorted(maps.Keys(m))
}
