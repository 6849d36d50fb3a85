// Package toolscan reads what an MCP server lists (tools, prompts,
// resource templates) for tool poisoning: hidden characters, look-alike
// names, text addressed to the model rather than describing the tool,
// instructions about other servers' tools, unexplained URLs and paths,
// and descriptions far longer than they need be. It is deterministic and
// offline: a fixed table of rules (rules.go) over the listed text, no
// model and no network. Its types are its own, so that the approvals
// package and the CLI can call it with what they hold.
package toolscan

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A Listing is what one server lists. The JSON names are the MCP wire
// names, so a tools/list (prompts/list, resources/templates/list) result
// decodes into it.
type Listing struct {
	Server    string     `json:"server"`
	Tools     []Tool     `json:"tools,omitempty"`
	Prompts   []Prompt   `json:"prompts,omitempty"`
	Templates []Template `json:"resourceTemplates,omitempty"`
}

// A Tool is one listed tool. The schemas are JSON as listed (any
// encoding; a schema that is not JSON is scanned as no schema).
type Tool struct {
	Name         string          `json:"name"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"inputSchema,omitempty"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Annotations  *Annotations    `json:"annotations,omitempty"`
}

// Annotations are a tool's hints; only the title is text, the hints are
// kept so that callers can pass what they have.
type Annotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    *bool  `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool  `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
}

// A Prompt is one listed prompt.
type Prompt struct {
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	Arguments   []PromptArgument `json:"arguments,omitempty"`
}

// A PromptArgument is one argument of a prompt.
type PromptArgument struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
}

// A Template is one listed resource template.
type Template struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	URITemplate string `json:"uriTemplate"`
	MIMEType    string `json:"mimeType,omitempty"`
}

// Severity orders findings: a high one holds a tool even on first install.
type Severity int

// The severities, in increasing order; the zero Severity is none.
const (
	Low Severity = iota + 1
	Medium
	High
)

func (s Severity) String() string {
	switch s {
	case Low:
		return "low"
	case Medium:
		return "medium"
	case High:
		return "high"
	}
	return "none"
}

// MarshalText writes the severity's name, for JSON answers.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a severity's name.
func (s *Severity) UnmarshalText(b []byte) error {
	switch string(b) {
	case "low":
		*s = Low
	case "medium":
		*s = Medium
	case "high":
		*s = High
	default:
		return fmt.Errorf("severity %q: not low, medium or high", b)
	}
	return nil
}

// A Finding is one rule's hit on one field of one listed item.
type Finding struct {
	Severity Severity `json:"severity"`
	Rule     string   `json:"rule"`
	Server   string   `json:"server,omitempty"`
	// Kind is "tool", "prompt" or "template"; Item is its name.
	Kind string `json:"kind"`
	Item string `json:"item"`
	// Field names the text: "name", "title", "description",
	// "annotations.title", "inputSchema.properties.note.description",
	// "arguments.path.description", "uriTemplate".
	Field string `json:"field"`
	// Start and End are the byte offsets of the span in the field's text;
	// Quote is that span.
	Start   int    `json:"start"`
	End     int    `json:"end"`
	Quote   string `json:"quote"`
	Message string `json:"message"`
}

// quoteLimit bounds the quote String shows; the Finding keeps all of it.
const quoteLimit = 120

// String is one line for the approval diff: severity, rule, where, the
// quoted span (escaped, so invisible characters show) and the message.
func (f Finding) String() string {
	q := f.Quote
	if len(q) > quoteLimit {
		cut := quoteLimit
		for cut > 0 && !utf8.RuneStart(q[cut]) {
			cut--
		}
		q = q[:cut] + "…"
	}
	return fmt.Sprintf("%-6s %s: %s %q %s [%d:%d] %s: %s",
		f.Severity, f.Rule, f.Kind, f.Item, f.Field, f.Start, f.End, strconv.QuoteToASCII(q), f.Message)
}

// Max returns the highest severity among findings, or 0 for none.
func Max(findings []Finding) Severity {
	var m Severity
	for _, f := range findings {
		m = max(m, f.Severity)
	}
	return m
}

// field is one piece of listed text with what the rules need to judge it.
type field struct {
	kind, item, path string
	text             string
	role             role
	// purpose is the item's name and title split into lower-case words,
	// with the server's name: what the item says it is about.
	purpose []string
	// params is how many input properties the tool has, for the length
	// budget.
	params int
}

// role says what a field is, for the rules that judge names and lengths
// differently.
type role int

const (
	roleName role = iota
	roleTitle
	roleDescription
	roleSchemaText // a description or title inside a schema, or an argument's
	roleSchemaKey  // a property name inside a schema
	roleURI
)

// Scan checks everything l lists and returns the findings ordered by item,
// field and offset. others are the tool names of the user's other
// servers as those servers list them (not prefixed by the gateway), for
// the shadowing rules; names that l itself lists are not counted as
// others. A tool with a High finding is one to hold for the user.
func Scan(l Listing, others []string) []Finding {
	s := newScanner(l, others)
	for _, t := range l.Tools {
		purpose := purposeWords(l.Server, t.Name, t.Title)
		var params int
		base := field{kind: "tool", item: t.Name, purpose: purpose}
		var schemaFields []field
		if len(t.InputSchema) > 0 {
			schemaFields, params = schemaTexts(base, "inputSchema", t.InputSchema)
		}
		base.params = params
		s.check(base.with("name", t.Name, roleName))
		s.check(base.with("title", t.Title, roleTitle))
		s.check(base.with("description", t.Description, roleDescription))
		if t.Annotations != nil {
			s.check(base.with("annotations.title", t.Annotations.Title, roleTitle))
		}
		for _, f := range schemaFields {
			s.check(f)
		}
		if len(t.OutputSchema) > 0 {
			out, _ := schemaTexts(base, "outputSchema", t.OutputSchema)
			for _, f := range out {
				s.check(f)
			}
		}
	}
	for _, p := range l.Prompts {
		base := field{kind: "prompt", item: p.Name, purpose: purposeWords(l.Server, p.Name, p.Title), params: len(p.Arguments)}
		s.check(base.with("name", p.Name, roleName))
		s.check(base.with("title", p.Title, roleTitle))
		s.check(base.with("description", p.Description, roleDescription))
		for _, a := range p.Arguments {
			s.check(base.with("arguments."+a.Name+" (name)", a.Name, roleSchemaKey))
			s.check(base.with("arguments."+a.Name+".title", a.Title, roleSchemaText))
			s.check(base.with("arguments."+a.Name+".description", a.Description, roleSchemaText))
		}
	}
	for _, t := range l.Templates {
		base := field{kind: "template", item: t.Name, purpose: purposeWords(l.Server, t.Name, t.Title)}
		s.check(base.with("name", t.Name, roleName))
		s.check(base.with("title", t.Title, roleTitle))
		s.check(base.with("description", t.Description, roleDescription))
		s.check(base.with("uriTemplate", t.URITemplate, roleURI))
	}
	return s.findings
}

func (f field) with(path, text string, r role) field {
	f.path, f.text, f.role = path, text, r
	return f
}

// scanner holds one Scan's inputs and findings.
type scanner struct {
	server string
	// others maps a folded other tool name to itself as given.
	others map[string]string
	// otherOdd is the keys of others that are not made of identifier
	// bytes alone (letters, digits, _ and -), sorted.
	otherOdd []string
	// own is the folded names and titles of what the listing itself
	// lists, which a description may name freely.
	own      map[string]bool
	findings []Finding
}

func newScanner(l Listing, others []string) *scanner {
	s := &scanner{server: l.Server, others: map[string]string{}, own: map[string]bool{}}
	for _, t := range l.Tools {
		s.own[fold(t.Name).text] = true
		if t.Title != "" {
			s.own[fold(t.Title).text] = true
		}
	}
	for _, p := range l.Prompts {
		s.own[fold(p.Name).text] = true
	}
	for _, o := range others {
		k := fold(o).text
		if k != "" && !s.own[k] {
			s.others[k] = o
		}
	}
	for k := range s.others {
		if strings.IndexFunc(k, func(r rune) bool { return r >= utf8.RuneSelf || !identByte(byte(r)) }) >= 0 {
			s.otherOdd = append(s.otherOdd, k)
		}
	}
	slices.Sort(s.otherOdd)
	return s
}

// check runs every rule on f and keeps the findings, one per rule and
// span. Text with a right-to-left override is checked a second time as
// it shows (the overridden runs reversed), so that an instruction written
// backwards to show forwards is read too; those findings name the field
// with " (as shown)" and their offsets are in the shown text.
func (s *scanner) check(f field) {
	if f.text == "" {
		return
	}
	if shown, ok := displayed(f.text); ok {
		g := f
		g.path, g.text = f.path+" (as shown)", shown
		s.checkOne(g)
	}
	if hidden, ok := tagText(f.text); ok {
		g := f
		g.path, g.text, g.role = f.path+" (hidden tag text)", hidden, roleDescription
		s.checkOne(g)
	}
	s.checkOne(f)
}

// tagText returns the ASCII that the Unicode tag characters of s spell,
// and whether s had any, so the text rules read what only the model sees.
func tagText(s string) (string, bool) {
	var b strings.Builder
	for _, r := range s {
		if 0xE0020 <= r && r <= 0xE007E {
			b.WriteRune(r - 0xE0000)
		}
	}
	return b.String(), b.Len() > 0
}

// displayed returns s with every right-to-left override run (U+202E up
// to its PDF, a paragraph end or the end) reversed and the controls
// removed, and whether s had any.
func displayed(s string) (string, bool) {
	if !strings.ContainsRune(s, 0x202E) {
		return "", false
	}
	var b strings.Builder
	for {
		i := strings.IndexRune(s, 0x202E)
		if i < 0 {
			b.WriteString(s)
			return b.String(), true
		}
		b.WriteString(s[:i])
		s = s[i+len("\u202e"):]
		end, next := len(s), len(s)
		if k := strings.IndexAny(s, "\u202c\n"); k >= 0 {
			end, next = k, k
			if s[k] != '\n' {
				next = k + len("\u202c")
			}
		}
		r := []rune(s[:end])
		slices.Reverse(r)
		b.WriteString(string(r))
		s = s[next:]
	}
}

func (s *scanner) checkOne(f field) {
	c := &context{field: f, scanner: s, folded: fold(f.text)}
	first := len(s.findings)
	for i := range rules {
		c.rule = &rules[i]
		rules[i].check(c)
	}
	added := s.findings[first:]
	slices.SortStableFunc(added, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(a.End, b.End), strings.Compare(a.Rule, b.Rule))
	})
	s.findings = append(s.findings[:first], slices.CompactFunc(added, func(a, b Finding) bool {
		return a.Rule == b.Rule && a.Start == b.Start && a.End == b.End
	})...)
}

// context is what a rule's check sees: the field, its folded text, and
// the rule it reports as.
type context struct {
	field
	*scanner
	folded folded
	rule   *Rule
	// sentences caches the folded text's sentences (see sents).
	sentences [][2]int
	// sensitive caches hasSensitive: 0 not asked yet, 1 yes, -1 no.
	sensitive int8
}

// report records a finding on the original byte span [start, end).
func (c *context) report(sev Severity, start, end int, msg string) {
	if sev == 0 {
		return
	}
	c.findings = append(c.findings, Finding{
		Severity: sev, Rule: c.rule.ID, Server: c.server,
		Kind: c.kind, Item: c.item, Field: c.path,
		Start: start, End: end, Quote: c.text[start:end], Message: msg,
	})
}

// reportFolded records a finding on the folded byte span [i, j).
func (c *context) reportFolded(sev Severity, i, j int, msg string) {
	start, end := c.folded.span(i, j)
	c.report(sev, start, end, msg)
}

// purposeWords splits the server's name and an item's name and title into
// lower-case words: "brave_web_search" and "readFile" give "brave", "web",
// "search" and "read", "file".
func purposeWords(server, name, title string) []string {
	var words []string
	for _, s := range []string{server, name, title} {
		var w []rune
		flush := func() {
			if len(w) > 0 {
				words = append(words, strings.ToLower(string(w)))
				w = w[:0]
			}
		}
		prev := rune(0)
		for _, r := range s {
			switch {
			case 'A' <= r && r <= 'Z':
				if 'a' <= prev && prev <= 'z' {
					flush()
				}
				w = append(w, r)
			case 'a' <= r && r <= 'z', '0' <= r && r <= '9':
				w = append(w, r)
			default:
				flush()
			}
			prev = r
		}
		flush()
	}
	return words
}

// schemaTexts returns the text fields of a JSON schema (descriptions,
// titles, $comments, string defaults and examples, and property names)
// in a stable order, and how many properties its top level has.
func schemaTexts(base field, root string, raw json.RawMessage) ([]field, int) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, 0
	}
	var out []field
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				p := path + "." + k
				switch x := v[k].(type) {
				case string:
					if k == "description" || k == "title" || k == "$comment" || k == "default" {
						out = append(out, base.with(p, x, roleSchemaText))
					}
				default:
					if k == "properties" {
						if props, ok := x.(map[string]any); ok {
							pk := make([]string, 0, len(props))
							for name := range props {
								pk = append(pk, name)
							}
							slices.Sort(pk)
							for _, name := range pk {
								out = append(out, base.with(p+"."+name+" (name)", name, roleSchemaKey))
								walk(p+"."+name, props[name])
							}
							continue
						}
					}
					if k == "examples" || k == "enum" {
						if list, ok := x.([]any); ok {
							for i, e := range list {
								if str, ok := e.(string); ok {
									out = append(out, base.with(p+"."+strconv.Itoa(i), str, roleSchemaText))
								}
							}
							continue
						}
					}
					walk(p, x)
				}
			}
		case []any:
			for i, e := range v {
				walk(path+"."+strconv.Itoa(i), e)
			}
		}
	}
	walk(root, v)
	params := 0
	if m, ok := v.(map[string]any); ok {
		if props, ok := m["properties"].(map[string]any); ok {
			params = len(props)
		}
	}
	return out, params
}
