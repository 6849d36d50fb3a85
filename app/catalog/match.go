package catalog

import "strings"

// A matcher scores entries against a search query. Lower scores are
// better; -1 means no match.
type matcher struct {
	query string   // lowercased, trimmed
	words []string // the query's words
}

func newMatcher(query string) matcher {
	q := strings.ToLower(strings.TrimSpace(query))
	return matcher{query: q, words: strings.Fields(q)}
}

// Match ranks, best first.
const (
	matchExact       = iota // the short name, the name or its last part is the query
	matchPrefix             // the short name or the name's last part starts with it
	matchName               // the name or short name contains it
	matchTitle              // the title contains it
	matchDescription        // the description contains it
	matchWords              // every word of it is somewhere
	matchRemote             // the registry matched it by rules of its own
)

func (m matcher) score(e Entry) int {
	if m.query == "" {
		return matchExact
	}
	short := strings.ToLower(e.ShortName)
	name := strings.ToLower(e.Name)
	_, last, _ := strings.Cut(name, "/")
	title := strings.ToLower(e.Title)
	desc := strings.ToLower(e.Description)
	switch {
	case short == m.query || name == m.query || last == m.query:
		return matchExact
	case strings.HasPrefix(short, m.query) || strings.HasPrefix(last, m.query):
		return matchPrefix
	case strings.Contains(name, m.query) || strings.Contains(short, m.query):
		return matchName
	case strings.Contains(title, m.query):
		return matchTitle
	case strings.Contains(desc, m.query):
		return matchDescription
	}
	if len(m.words) > 1 {
		all := short + " " + name + " " + title + " " + desc
		for _, w := range m.words {
			if !strings.Contains(all, w) {
				return -1
			}
		}
		return matchWords
	}
	return -1
}

// scoreOrLast is score for sorting: an entry the registry returned for
// reasons the matcher does not see still ranks, last.
func (m matcher) scoreOrLast(e Entry) int {
	if s := m.score(e); s >= 0 {
		return s
	}
	return matchRemote
}
