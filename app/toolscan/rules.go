package toolscan

import (
	"fmt"
	"net"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A Rule is one check of the scanner. Severity is the most the rule gives;
// where a rule gives less in some context, Why says when.
type Rule struct {
	ID       string
	Severity Severity
	Why      string
	check    func(*context)
}

// Rules returns the table of rules, in the order they run.
func Rules() []Rule {
	out := slices.Clone(rules)
	for i := range out {
		out[i].check = nil
	}
	return out
}

// rules is every rule the scanner has, in one place. The text rules match
// the folded text (fold.go), so zero-width splitting, case, accents,
// full-width and look-alike letters do not hide a keyword.
var rules = []Rule{
	// Hidden and invisible characters.
	{"hidden-tags", High, "Unicode tag characters (U+E0000–E007F) render as nothing but spell ASCII text only the model reads (emoji flag sequences excepted).", checkTags},
	{"hidden-selectors", High, "runs of variation selectors can encode bytes invisibly (\"emoji smuggling\"); a single one after a symbol or ideograph is normal and not reported, one after anything else is medium.", checkSelectors},
	{"bidi-override", High, "LRO/RLO (U+202D/U+202E) show text in another order than the model reads it.", checkBidiOverride},
	{"bidi-embed", High, "bidi embeddings and isolates (U+202A–C, U+2066–9) reorder text; only right-to-left script has a reason for them (low when the field has some).", checkBidiEmbed},
	{"bidi-mark", Medium, "LRM/RLM/ALM marks in a field with no right-to-left letters serve no purpose but to hide.", checkBidiMark},
	{"zero-width", High, "zero-width characters inside a Latin word split keywords past readers and filters (high; in a name always high); elsewhere medium, and not reported where scripts and emoji need ZWJ/ZWNJ or for a BOM at the start.", checkZeroWidth},
	{"control-char", Medium, "control and format characters other than tab and newline have no place in listed text (private-use characters: low).", checkControl},
	{"name-confusable", High, "a name with non-ASCII letters that look like ASCII ones (Cyrillic 'а' in \"reаd_file\") impersonates another tool (a property or argument name: medium).", checkConfusableName},
	{"name-non-ascii", Medium, "tool, prompt and template names should be plain identifiers (letters, digits, _ - . /) so that people can tell them apart.", checkNonASCIIName},
	{"hidden-comment", Medium, "an HTML comment (<!-- … -->) shows as nothing where the description is rendered as Markdown, yet the model reads it.", checkComment},
	{"mixed-script", Medium, "a word mixing Latin with Cyrillic, Greek or Armenian letters is a homoglyph disguise; whole words of any script are fine.", checkMixedScript},

	// Text addressed to the model.
	{"override", High, "tells the model to ignore or override its other instructions, or fakes an instruction or system tag (<IMPORTANT>, <system>, \"system:\").", checkOverride},
	{"conceal", High, "tells the model to keep something from the user (\"do not tell the user\", \"the user must not know\", \"silently send\").", checkConceal},
	{"sensitive-path", High, "names a credentials file or secret store (~/.ssh, id_rsa, .env, ~/.aws, mcp.json, keychain, /etc/shadow); low when the item's own name is about it (an ssh config linter).", checkSensitivePath},
	{"secret-read", High, "orders the model to read or fetch keys, tokens, passwords or credentials; low when the item's own name is about them.", checkSecretRead},
	{"exfiltrate", High, "tells the model to put secrets, file contents or the conversation into a parameter or send them somewhere; medium for sending anything to a fixed address.", checkExfiltrate},
	{"urgent-order", High, "an urgent marker (IMPORTANT, CRITICAL, note to the AI) before an order to read or send files or secrets before using the tool; low when the order is a usage note.", checkUrgent},
	{"precondition", Medium, "\"before using this tool, read/send …\": a description that sets the model a task before the call rather than saying what the call does.", checkPrecondition},

	// Shadowing.
	{"shadow-name", High, "names a tool of another server; high with an instruction around it (always, instead, when, make sure), medium bare.", checkShadowName},
	{"shadow-instruction", High, "tells the model how to use other tools (\"when the send_email tool is used, always add bcc …\", \"change the recipient to …\"); steering the model away from a tool not of this server (\"instead of calling x\") is medium.", checkShadowInstruction},

	// URLs, paths, length.
	{"url", High, "a URL in an item not about the web is unexplained (low; plain http or a raw IP medium); one to a request-catcher or tunnel host, or carrying data placeholders, is high.", checkURL},
	{"path", Low, "an absolute file path in an item not about files is unexplained.", checkPath},
	{"long-text", Medium, "text far longer than its kind needs (a tool description 800 bytes plus 100 per parameter, a schema or argument text 300, a title 80) hides instructions in bulk: low past twice that, medium past five times.", checkLength},
}

// sentenceEnd splits folded text into sentences: an end mark followed by
// white space, or a line break (".env" and "mcp.json" stay whole).
var sentenceEnd = regexp.MustCompile(`[.!?;]+(?:\s|$)|\n`)

// sentences returns the [start, end) folded spans of the sentences of t.
func sentences(t string) [][2]int {
	var out [][2]int
	prev := 0
	for _, m := range sentenceEnd.FindAllStringIndex(t, -1) {
		out = append(out, [2]int{prev, m[1]})
		prev = m[1]
	}
	if prev < len(t) {
		out = append(out, [2]int{prev, len(t)})
	}
	return out
}

// sents returns the sentences of the folded text, split once per field.
func (c *context) sents() [][2]int {
	if c.sentences == nil {
		c.sentences = sentences(c.folded.text)
	}
	return c.sentences
}

// has reports whether the folded text contains one of needles: a cheap
// test that spares a regular expression the texts it cannot match.
func (c *context) has(needles []string) bool { return hasAny(c.folded.text, needles) }

// hasSensitive is has(sensitiveNeedles), asked by two rules, once.
func (c *context) hasSensitive() bool {
	if c.sensitive == 0 {
		c.sensitive = -1
		if c.has(sensitiveNeedles) {
			c.sensitive = 1
		}
	}
	return c.sensitive > 0
}

func hasAny(t string, needles []string) bool {
	for _, n := range needles {
		if strings.Contains(t, n) {
			return true
		}
	}
	return false
}

// The needles of the text rules: words one of which a match must hold.
var (
	ignoreNeedles       = []string{"ignore", "disregard", "forget", "override", "bypass"}
	tagNeedles          = []string{"<", "[", "system", "assistant", "instruction", "you are now"}
	concealNeedles      = []string{"user", "human", "anyone", "them", "person", "silently", "quietly", "secretly", "covertly", "discreetly", "invisibly", "behind the", "mention", "reveal", "disclose"}
	sensitiveNeedles    = []string{"ssh", "aws", "gnupg", "kube", "docker", "azure", "netrc", "npmrc", "pypirc", "credentials", "password-store", "_history", "pgpass", "cursor", "claude", "gcloud", "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", ".env", "mcp.", "secret", "/etc/", "keychain", "wallet"}
	secretNeedles       = []string{"key", "token", "password", "passphrase", "credential", "secret", "cookie", "environment variable", "env var", "seed phrase"}
	transferNeedles     = []string{"pass", "send", "includ", "forward", "upload", "post", "transmit", "attach", "append", "embed", "insert", "supply", "put", "add", "exfiltrat", "leak", "share", "copy", "paste", "encode", "cc", "mail"}
	conversationNeedles = []string{"conversation", "chat", "messages", "system prompt", "instructions", "context window", "content", "the user's"}
	urgentNeedles       = []string{"important", "critical", "urgent", "attention", "warning", "mandatory", "note"}
	beforeNeedles       = []string{"before", "prior to"}
	toolNeedles         = []string{"tool", "function"}
	copyNeedles         = []string{"cc", "copy", "recipient"}
	redirectNeedles     = []string{"recipient", "destination", "to address", "to field", "email address", "phone number", "receiver", "target number", "webhook", "endpoint"}
	insteadNeedles      = []string{"instead of"}
	urlNeedles          = []string{"://"}
	pathNeedles         = []string{"~/", "$home/", "/etc", "/home", "/users", "/root", "/var", "/tmp", "/usr", "/opt", "/private", "/proc", "/sys", "/library", "/applications", "/mnt", "/srv", "/dev", "/bin", "/sbin", "/volumes", ":\\"}
)

// A gated expression runs only on text holding one of its needles.
type gated struct {
	re      *regexp.Regexp
	needles []string
}

// sentenceAt returns the span of the sentence holding folded offset i.
func (c *context) sentenceAt(i int) (int, int) {
	for _, s := range c.sents() {
		if i >= s[0] && i < s[1] {
			return trimSpan(c.folded.text, s[0], s[1])
		}
	}
	return trimSpan(c.folded.text, 0, len(c.folded.text))
}

func trimSpan(t string, i, j int) (int, int) {
	for i < j && strings.ContainsRune(" \t\r\n", rune(t[i])) {
		i++
	}
	for j > i && strings.ContainsRune(" \t\r\n", rune(t[j-1])) {
		j--
	}
	return i, j
}

// isText reports fields of prose, which the text rules read; names, keys
// and URI templates get only the character and name rules.
func (c *context) isText() bool {
	return c.role == roleTitle || c.role == roleDescription || c.role == roleSchemaText
}

// about reports whether the item's purpose words include one of words,
// or one of them contains one (so "dotenv" is about "env").
func (c *context) about(words ...string) bool {
	for _, p := range c.purpose {
		for _, w := range words {
			if p == w || (len(w) >= 3 && strings.Contains(p, w)) {
				return true
			}
		}
	}
	return false
}

// hasRTL reports whether the field has letters of a right-to-left script.
func hasRTL(s string) bool {
	for _, r := range s {
		if r >= 0x590 && unicode.In(r, unicode.Hebrew, unicode.Arabic, unicode.Syriac, unicode.Thaana, unicode.Nko, unicode.Samaritan, unicode.Mandaic) {
			return true
		}
	}
	return false
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// runs calls fn for every maximal run of runes in s that match in, with
// the run's byte span.
func runs(s string, in func(rune) bool, fn func(start, end int)) {
	start := -1
	for i, r := range s {
		switch {
		case in(r) && start < 0:
			start = i
		case !in(r) && start >= 0:
			fn(start, i)
			start = -1
		}
	}
	if start >= 0 {
		fn(start, len(s))
	}
}

func checkTags(c *context) {
	if isASCII(c.text) {
		return
	}
	isTag := func(r rune) bool { return 0xE0000 <= r && r <= 0xE007F }
	runs(c.text, isTag, func(start, end int) {
		var hidden strings.Builder
		for _, r := range c.text[start:end] {
			if 0xE0020 <= r && r <= 0xE007E {
				hidden.WriteRune(r - 0xE0000)
			}
		}
		// A subdivision flag (🏴 + tag letters + cancel tag) is the one
		// legitimate use.
		if before, _ := utf8.DecodeLastRuneInString(c.text[:start]); before == 0x1F3F4 && strings.HasSuffix(c.text[start:end], "\U000E007F") && hidden.Len() <= 7 {
			return
		}
		c.report(High, start, end, fmt.Sprintf("%d invisible Unicode tag characters spell %q", utf8.RuneCountInString(c.text[start:end]), hidden.String()))
	})
}

func checkSelectors(c *context) {
	if isASCII(c.text) {
		return
	}
	runs(c.text, isVariationSelector, func(start, end int) {
		n := utf8.RuneCountInString(c.text[start:end])
		if n >= 2 {
			var hidden []byte
			for _, r := range c.text[start:end] {
				if r <= 0xFE0F {
					hidden = append(hidden, byte(r-0xFE00))
				} else {
					hidden = append(hidden, byte(r-0xE0100+16))
				}
			}
			c.report(High, start, end, fmt.Sprintf("%d variation selectors in a row encode the hidden bytes %q", n, hidden))
			return
		}
		base, _ := utf8.DecodeLastRuneInString(c.text[:start])
		if unicode.In(base, unicode.So, unicode.Sm, unicode.Han, unicode.Sc, unicode.Sk) || base == '#' || base == '*' || ('0' <= base && base <= '9') || base == 0x20E3 {
			return
		}
		c.report(Medium, start, end, fmt.Sprintf("a variation selector after %q, which has no variants", base))
	})
}

func checkBidiOverride(c *context) {
	if isASCII(c.text) {
		return
	}
	for i, r := range c.text {
		if r != 0x202D && r != 0x202E {
			continue
		}
		// The override lasts to its PDF, to a paragraph end or to the end.
		end := len(c.text)
		if k := strings.IndexAny(c.text[i:], "\u202C\u2069\n"); k >= 0 {
			end = i + k
			_, n := utf8.DecodeRuneInString(c.text[end:])
			end += n
		}
		raw := strings.TrimRight(c.text[i+3:end], "\u202C\u2069\n")
		inner := []rune(raw)
		shown := raw
		if r == 0x202E {
			slices.Reverse(inner)
			shown = string(inner)
		}
		name := map[rune]string{0x202D: "left-to-right override", 0x202E: "right-to-left override"}[r]
		c.report(High, i, end, fmt.Sprintf("a %s makes %q show as %q", name, raw, shown))
	}
}

func checkBidiEmbed(c *context) {
	if isASCII(c.text) {
		return
	}
	is := func(r rune) bool { return (0x202A <= r && r <= 0x202C) || (0x2066 <= r && r <= 0x2069) }
	sev := High
	why := "bidi embedding or isolate controls in text with no right-to-left letters"
	if hasRTL(c.text) {
		sev, why = Low, "bidi embedding or isolate controls (the field has right-to-left text, which may need them)"
	}
	runs(c.text, is, func(start, end int) {
		// A PDF that closes an override belongs to the override's finding.
		if prev := strings.LastIndexAny(c.text[:start], "\u202D\u202E"); prev >= 0 && !strings.ContainsAny(c.text[prev:start], "\u202C\u2069") && c.text[start:end] == "\u202C" {
			return
		}
		c.report(sev, start, end, why)
	})
}

func checkBidiMark(c *context) {
	if isASCII(c.text) || hasRTL(c.text) {
		return
	}
	runs(c.text, func(r rune) bool { return r == 0x200E || r == 0x200F || r == 0x061C }, func(start, end int) {
		c.report(Medium, start, end, "bidi marks in text with no right-to-left letters")
	})
}

func isZeroWidth(r rune) bool {
	return (0x200B <= r && r <= 0x200D) || r == 0x2060 || r == 0xFEFF || r == 0x180E
}

func checkZeroWidth(c *context) {
	if isASCII(c.text) {
		return
	}
	runs(c.text, isZeroWidth, func(start, end int) {
		if start == 0 && c.text[start:end] == "\uFEFF" {
			return // a byte order mark
		}
		n := utf8.RuneCountInString(c.text[start:end])
		before, _ := utf8.DecodeLastRuneInString(c.text[:start])
		after, _ := utf8.DecodeRuneInString(c.text[end:])
		latin := func(r rune) bool { return r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r)) }
		switch {
		case c.role == roleName || c.role == roleSchemaKey:
			c.report(High, start, end, fmt.Sprintf("%d zero-width characters inside a name", n))
		case n >= 4:
			c.report(High, start, end, fmt.Sprintf("a run of %d zero-width characters, which can encode hidden bits", n))
		case latin(before) && latin(after):
			c.report(High, start, end, fmt.Sprintf("a zero-width character splits the word %q", wordAround(c.text, start, end)))
		case (c.text[start:end] == "\u200D" || c.text[start:end] == "\u200C") && (before >= 0x80 || after >= 0x80):
			return // emoji sequences and scripts that join or break letters
		default:
			c.report(Medium, start, end, fmt.Sprintf("%d zero-width characters", n))
		}
	})
}

// wordAround returns the word the span [start, end) sits in, without
// the invisible characters.
func wordAround(s string, start, end int) string {
	i, j := start, end
	for i > 0 {
		r, n := utf8.DecodeLastRuneInString(s[:i])
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !invisible(r) {
			break
		}
		i -= n
	}
	for j < len(s) {
		r, n := utf8.DecodeRuneInString(s[j:])
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !invisible(r) {
			break
		}
		j += n
	}
	return strings.Map(func(r rune) rune {
		if invisible(r) {
			return -1
		}
		return r
	}, s[i:j])
}

func checkControl(c *context) {
	for i, r := range c.text {
		switch {
		case r == '\t' || r == '\n' || r == '\r':
		case r < 0x20 || r == 0x7F || (0x80 <= r && r < 0xA0):
			c.report(Medium, i, i+utf8.RuneLen(r), fmt.Sprintf("control character U+%04X", r))
		case r < 0x80:
		case isZeroWidth(r), isVariationSelector(r), 0xE0000 <= r && r <= 0xE007F,
			0x202A <= r && r <= 0x202E, 0x2066 <= r && r <= 0x2069, r == 0x200E, r == 0x200F, r == 0x061C:
			// the rules above report these
		case unicode.Is(unicode.Cf, r):
			c.report(Medium, i, i+utf8.RuneLen(r), fmt.Sprintf("invisible format character U+%04X", r))
		case unicode.Is(unicode.Co, r):
			c.report(Low, i, i+utf8.RuneLen(r), fmt.Sprintf("private-use character U+%04X, which shows differently in every font", r))
		}
	}
}

// asciiTwin returns the ASCII letter a non-ASCII rune passes for, if any.
func asciiTwin(r rune) (rune, bool) {
	if a, ok := lookalike(r); ok {
		return rune(a), true
	}
	if f := fold(string(r)).text; len(f) == 1 && f[0] < utf8.RuneSelf && f[0] > ' ' {
		return rune(f[0]), true
	}
	return 0, false
}

func checkConfusableName(c *context) {
	if (c.role != roleName && c.role != roleSchemaKey) || isASCII(c.text) {
		return
	}
	var twin strings.Builder
	var odd []string
	first, last := -1, 0
	for i, r := range c.text {
		if r < utf8.RuneSelf {
			twin.WriteRune(r)
			continue
		}
		if a, ok := asciiTwin(r); ok {
			twin.WriteRune(a)
			odd = append(odd, fmt.Sprintf("%q (U+%04X)", r, r))
			if first < 0 {
				first = i
			}
			last = i + utf8.RuneLen(r)
			continue
		}
		twin.WriteRune(r)
	}
	if first < 0 {
		return
	}
	sev := High
	if c.role == roleSchemaKey {
		sev = Medium
	}
	c.report(sev, first, last, fmt.Sprintf("the name %q uses %s and reads as %q", c.text, strings.Join(odd, ", "), twin.String()))
}

func checkNonASCIIName(c *context) {
	if c.role != roleName || isASCII(c.text) {
		return
	}
	for _, r := range c.text {
		if r >= utf8.RuneSelf && !invisible(r) {
			if _, ok := asciiTwin(r); !ok {
				c.report(Medium, 0, len(c.text), fmt.Sprintf("the name %q is not a plain ASCII identifier", c.text))
				return
			}
		}
	}
}

var commentRe = regexp.MustCompile(`(?s)<!--.*?(?:-->|$)`)

func checkComment(c *context) {
	if !c.isText() || !strings.Contains(c.folded.text, "<!--") {
		return
	}
	c.matchAll(commentRe, Medium, "an HTML comment, invisible where the text is rendered")
}

func checkMixedScript(c *context) {
	if c.role == roleName || c.role == roleSchemaKey || isASCII(c.text) {
		return
	}
	foreign := []*unicode.RangeTable{unicode.Cyrillic, unicode.Greek, unicode.Armenian, unicode.Cherokee}
	isWord := func(r rune) bool { return unicode.IsLetter(r) || unicode.Is(unicode.Mn, r) || isZeroWidth(r) }
	runs(c.text, isWord, func(start, end int) {
		var latin, other bool
		for _, r := range c.text[start:end] {
			switch {
			case r < utf8.RuneSelf:
				latin = true
			case r == 'μ' || r == 'Ω' || r == 'π':
				// units and constants beside Latin letters ("μs", "kΩ")
			case unicode.In(r, foreign...):
				other = true
			}
		}
		if latin && other {
			c.report(Medium, start, end, fmt.Sprintf("the word %q mixes Latin with look-alike letters of another script", c.text[start:end]))
		}
	})
}

// matchAll reports every match of re in the folded text at sev.
func (c *context) matchAll(re *regexp.Regexp, sev Severity, msg string) {
	for _, m := range re.FindAllStringIndex(c.folded.text, -1) {
		c.reportFolded(sev, m[0], m[1], msg)
	}
}

var (
	ignoreRe = regexp.MustCompile(`\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+|any\s+|the\s+|your\s+|every\s+|of\s+)*(?:previous|prior|above|earlier|preceding|other|existing|original|system|safety|security|former)?\s*(?:instructions?|prompts?|directives?|guidelines|guardrails|system prompt|policies|rules you were given)\b` +
		`|\b(?:ignore|disregard|forget)\s+(?:everything|all|anything)\s+(?:above|before|prior|previous|else|you were told)\b` +
		`|\b(?:ignore|disregard)\s+(?:the\s+)?(?:user|user's|human's|human)\s+(?:request|requests|instructions?|question|wishes|choice)\b`)
	fakeTagRe = regexp.MustCompile(`</?\s*(?:important|system|instructions?|admin|secret|hidden|sys|im_start|im_end|assistant|user_instructions?)\s*>|<\|im_(?:start|end)\|>|\[/?(?:inst|system|instructions?)\]|(?:^|\n)\s*(?:system|assistant)\s*:|\bnew (?:system )?instructions?\s*:|\byou are now (?:a|an|in)\b`)

	// concealRes are the forms of "keep it from the user", each with the
	// needles one of which its match must hold.
	concealRes = []gated{
		{regexp.MustCompile(`\b(?:do not|don't|dont|never|without)\s+(?:\w+\s+)?(?:tell|telling|inform|informing|notify|notifying|mention|mentioning|alert|alerting|reveal|revealing|disclose|disclosing|let|letting|warn|warning|show|showing)\b[^.!?\n]{0,40}?\b(?:the\s+)?(?:user|human|them|anyone|the person)\b` +
			`|\b(?:do not|don't|dont|never)\s+(?:mention|reveal|disclose|say)\s+(?:that|it)\b`), []string{"do not", "don't", "dont", "never", "without"}},
		{regexp.MustCompile(`\b(?:user|human)s?\b[^.!?\n]*?\b(?:must|should|need|needs|will|may|can)\s*(?:not|never|n't)\s+(?:\w+\s+)?(?:know|see|notice|find out|learn|be told|be aware|be informed|suspect)\b`), []string{"not", "never", "n't"}},
		{regexp.MustCompile(`\b(?:hide|conceal|keep)\b[^.!?\n]{0,40}?\bfrom\s+(?:the\s+)?(?:user|human)\b` +
			`|\b(?:not|never)\s+(?:to\s+)?(?:be\s+)?(?:shown|visible|displayed|reported|mentioned)\s+to\s+the\s+user\b`), []string{"user", "human"}},
		{regexp.MustCompile(`\b(?:silently|quietly|secretly|covertly|discreetly|invisibly|behind the (?:user's )?back)\s+(?:\w+\s+)?(?:read|send|add|include|forward|copy|upload|call|run|execute|pass|append|attach|exfiltrate|collect|change|modify|redirect|replace|bcc|cc|save|store|log)\b`), []string{"silently", "quietly", "secretly", "covertly", "discreetly", "invisibly", "behind the"}},
		{regexp.MustCompile(`\b(?:mention|reveal|disclose|explain|show)\s+(?:this|these|that)\s+(?:instruction|instructions|step|steps|note|requirement|part)\b`), []string{"this", "these", "that"}},
	}

	sensitivePathRe = regexp.MustCompile(`(?:^|[^\w.])((?:~|\$home|%userprofile%|/home/[\w.-]+|/users/[\w.-]+|/root)?/?\.(?:ssh|aws|gnupg|kube|docker|azure|netrc|npmrc|pypirc|git-credentials|password-store|bash_history|zsh_history|pgpass|cursor/mcp\.json|claude\.json|config/gcloud)\b[\w./-]*` +
		`|\bid_(?:rsa|dsa|ecdsa|ed25519)(?:\.pub)?\b|\.env(?:\.[a-z]+)?\b` +
		`|\b(?:mcp|claude_desktop_config|application_default_credentials|credentials|secrets?)\.(?:json|ya?ml|toml)\b|/etc/(?:passwd|shadow|sudoers)\b` +
		`|\b(?:login\.)?keychains?\b|\bwallet\.dat\b)`)

	secretWords  = `(?:api[ _-]?keys?|access[ _-]?keys?|authentication[ _-]?tokens?|(?:access|auth|api|bearer|session|oauth|refresh|github|gitlab|slack|personal access)[ _-]?tokens?|passwords?|passphrases?|credentials|private[ _-]?keys?|ssh[ _-]?keys?|secret[ _-]?keys?|secrets|session[ _-]?cookies|cookies|environment variables|env vars|seed phrases?)`
	secretReadRe = regexp.MustCompile(`(?:^|[.!?:;\n]\s*|\b(?:first|then|also|and|please|must|should|always|you|to),?\s+)((?:read|open|cat|load|access|get|fetch|retrieve|extract|collect|dump|print|grab|copy|look up|obtain|list)\s+(?:[\w'/~.-]+\s+){0,4}?` + secretWords + `)\b`)
	secretWordRe = regexp.MustCompile(`\b` + secretWords + `\b`)

	transferRe     = regexp.MustCompile(`\b(?:pass|send|include|forward|upload|post|transmit|attach|append|embed|insert|supply|put|add|exfiltrate|leak|share|copy|paste|encode|bcc|cc|email|mail)\b`)
	destinationRe  = regexp.MustCompile(`\b(?:as|in|into|to|inside|within|via|through)\b|\b(?:parameter|argument|field|sidenote|header)\b`)
	conversationRe = regexp.MustCompile(`\b(?:conversation(?: history)?|chat history|previous messages|prior messages|all messages|message history|system prompt|your instructions|context window|(?:list of|all) (?:the user's |the |their )?(?:chats|contacts|emails|messages)|the user's (?:messages|files|data|emails|contacts|chats|documents)|contents? of (?:the |this |that |any |every |all )?(?:files?|it|them|the above))\b|\bits contents?\b|\btheir contents?\b|\bcontents? of [^.!?\n]*?(?:~/|\$home)`)
	addressRe      = regexp.MustCompile(`\bto\s+(?:https?://\S+|[\w.+-]+@[\w-]+\.[\w.]+|\+?\d[\d ()-]{7,}\d)`)

	urgentRe       = regexp.MustCompile(`(?:^|[^\w<])(?:important|critical|urgent|attention|warning|mandatory|note to (?:the )?(?:ai|assistant|model|agent|llm)|(?:ai|assistant|model|agent|llm) note)\s*[:!-]|<important>`)
	beforeToolRe   = regexp.MustCompile(`\b(?:before|prior to)\s+(?:you\s+)?(?:using|calling|invoking|running|executing|use|call|invoke|run)\s+(?:this|the|any)\s+(?:tool|function)\b`)
	actionRe       = regexp.MustCompile(`\b(?:read|open|cat|load|fetch|access|send|include|pass|retrieve|extract|upload|forward|copy|collect)\b`)
	secretThingRe  = regexp.MustCompile(`[~/\\]|\b(?:files?|contents?|config|configuration|keys?|tokens?|secrets?|credentials?|passwords?|env|environment|history|conversation|chats?|messages)\b`)
	preconditionRe = regexp.MustCompile(`\b(?:before|prior to)\s+(?:using|calling|invoking|running|executing)\s+this\s+(?:tool|function),?\s+(?:you\s+)?(?:must\s+|should\s+|need to\s+|have to\s+|first\s+|always\s+|please\s+)*(?:read|open|cat|load|fetch|access|send|include|pass|retrieve|extract|upload|forward|copy|collect)\b`)

	shadowOrderRe = regexp.MustCompile(`\b(?:always|never|must|make sure|ensure|be sure|instead|when|whenever|every time|before|after|change|replace|redirect|add|bcc|cc|forward|do not|don't|should|override|prefer)\b`)
	whenToolRe    = regexp.MustCompile(`\b(?:when|whenever|every time|each time|if|before|after)\b[^.!?\n]*?\b(?:tools?|functions?)\b[^.!?\n]*?\b(?:is|are|gets?|being)\s+(?:used|called|invoked|run|executed)\b` +
		`|\b(?:when|whenever|every time|each time|before|after)\s+(?:you\s+|the\s+(?:assistant|model|agent)\s+)?(?:use|uses|call|calls|invoke|invokes|run|runs)\s+(?:the\s+|any\s+|another\s+)?[\w-]+\s+(?:tool|function)\b`)
	bccRe      = regexp.MustCompile(`\b(?:always|must|should|make sure to|be sure to)\s+(?:also\s+)?(?:add|include|cc|bcc|send a copy|forward|copy|blind copy)\b[^.!?\n]*?\b(?:bcc|cc|copy|recipients?)\b`)
	redirectRe = regexp.MustCompile(`\b(?:change|replace|redirect|set|override|switch)\s+(?:the\s+)?(?:recipient|destination|to address|to field|email address|phone number|receiver|target number|webhook|endpoint)s?\b[^.!?\n]*?\bto\b`)
	insteadRe  = regexp.MustCompile("\\binstead of\\s+(?:using|calling)\\s+(?:the\\s+)?[`'\"]?([\\w-]+)[`'\"]?(?:\\s+tool)?")

	urlRe  = regexp.MustCompile(`\b(?:https?|ftp|wss?|file)://[^\s"'<>)\]}` + "`" + `]+`)
	pathRe = regexp.MustCompile(`(?:^|[\s"'(` + "`" + `=:,])((?:~|\$home)/[\w.\-/]+|/(?:etc|home|users|root|var|tmp|usr|opt|private|proc|sys|library|applications|mnt|srv|dev|bin|sbin|volumes)(?:/[\w.\-]*)+|[a-z]:\\[\w.\\\-]+)`)

	catcherHostRe = regexp.MustCompile(`(?:^|\.)(?:webhook\.site|requestbin\.\w+|pipedream\.net|ngrok(?:-free)?\.(?:io|app|dev)|burpcollaborator\.net|oast\.\w+|interact\.sh|pastebin\.com|transfer\.sh|hookbin\.com|beeceptor\.com|requestcatcher\.com|trycloudflare\.com|serveo\.net|localtunnel\.me|loca\.lt)$`)
	dataSlotRe    = regexp.MustCompile(`[{<$]\{?(?:content|contents|data|secret|secrets|token|key|file|conversation|history|chat|password|env|ssh)`)
)

// Purpose words that explain a URL or a path in an item's text.
var (
	webWords  = []string{"url", "uri", "http", "web", "fetch", "browser", "browse", "navigate", "page", "site", "link", "search", "api", "request", "crawl", "scrape", "download", "docs", "documentation", "library", "news", "tab", "html", "image", "video", "upload", "webhook", "domain", "playwright", "puppeteer", "notion", "gitlab", "github", "slack", "maps", "place", "resource", "context7"}
	fileWords = []string{"file", "files", "dir", "directory", "directories", "folder", "path", "paths", "fs", "filesystem", "read", "write", "edit", "move", "copy", "disk", "document", "save", "load", "config", "repo", "git", "project", "workspace", "upload", "download", "image", "screenshot", "pdf", "log", "logs", "tree", "media", "zip", "gzip", "archive", "resource"}
	keyWords  = []string{"secret", "secrets", "credential", "credentials", "vault", "password", "passwords", "token", "tokens", "key", "keys", "auth", "oauth", "login", "env", "ssh", "keychain", "api"}
)

func checkOverride(c *context) {
	if !c.isText() {
		return
	}
	if c.has(ignoreNeedles) {
		c.matchAll(ignoreRe, High, "tells the model to ignore its other instructions")
	}
	if !c.has(tagNeedles) {
		return
	}
	for _, m := range fakeTagRe.FindAllStringIndex(c.folded.text, -1) {
		i, j := trimSpan(c.folded.text, m[0], m[1])
		c.reportFolded(High, i, j, "an instruction or system tag, which a tool's text has no reason to hold")
	}
}

func checkConceal(c *context) {
	if !c.isText() || !c.has(concealNeedles) {
		return
	}
	for _, g := range concealRes {
		if c.has(g.needles) {
			c.matchAll(g.re, High, "tells the model to keep something from the user")
		}
	}
}

func checkSensitivePath(c *context) {
	if c.role == roleName || c.role == roleSchemaKey || !c.hasSensitive() {
		return
	}
	for _, m := range sensitivePathRe.FindAllStringSubmatchIndex(c.folded.text, -1) {
		i, j := m[2], trimDots(c.folded.text, m[2], m[3])
		p := c.folded.text[i:j]
		core := strings.Trim(strings.TrimLeft(p, "~/$%."), ".")
		if k := strings.IndexAny(core, "/."); k > 0 {
			core = core[:k]
		}
		if c.about(core) || c.aboutContained(core) {
			c.reportFolded(Low, i, j, fmt.Sprintf("names %q, a place where secrets live, which the item's name says it is about", p))
			continue
		}
		c.reportFolded(High, i, j, fmt.Sprintf("names %q, a place where secrets live, which nothing in the item's name explains", p))
	}
}

// aboutContained reports whether a purpose word contains w (a tool
// named "dotenv_check" is about ".env").
func (c *context) aboutContained(w string) bool {
	if len(w) < 3 {
		return false
	}
	for _, p := range c.purpose {
		if strings.Contains(p, w) {
			return true
		}
	}
	return false
}

func checkSecretRead(c *context) {
	if !c.isText() || !c.has(secretNeedles) {
		return
	}
	for _, m := range secretReadRe.FindAllStringSubmatchIndex(c.folded.text, -1) {
		if c.about(keyWords...) {
			c.reportFolded(Low, m[2], m[3], "asks for keys or credentials, which the item's name says it handles")
			continue
		}
		c.reportFolded(High, m[2], m[3], "orders the model to get keys, tokens or credentials")
	}
}

func checkExfiltrate(c *context) {
	if !c.isText() {
		return
	}
	t := c.folded.text
	if !c.has(transferNeedles) {
		return
	}
	// Which kinds of payload the field can hold at all, so that each
	// sentence is searched only for those.
	sensitive, conversation := c.hasSensitive(), c.has(conversationNeedles)
	secret := c.has(secretNeedles) && !c.about(keyWords...)
	address := strings.ContainsAny(t, "@0123456789") && !c.about("email", "mail", "message", "send", "sms", "whatsapp", "slack", "post", "webhook")
	if !sensitive && !conversation && !secret && !address {
		return
	}
	for _, s := range c.sents() {
		sent := t[s[0]:s[1]]
		// What would go out is rarer than a verb that sends, so it is
		// looked for first.
		what := ""
		switch {
		case sensitive && sensitivePathRe.MatchString(sent):
			what = "a secrets file"
		case conversation && conversationRe.MatchString(sent):
			what = "the conversation or file contents"
		case secret && secretWordRe.MatchString(sent):
			what = "secrets"
		}
		toAddress := what == "" && address && addressRe.MatchString(sent)
		if (what == "" && !toAddress) || !c.transfers(sent) || !destinationRe.MatchString(sent) {
			continue
		}
		i, j := trimSpan(t, s[0], s[1])
		if what != "" {
			c.reportFolded(High, i, j, "tells the model to send or pass "+what)
		} else {
			c.reportFolded(Medium, i, j, "tells the model to send something to a fixed address")
		}
	}
}

// negatedRe ends with a negation: "do not include", "never send".
var negatedRe = regexp.MustCompile(`\b(?:not|never|don't|dont|avoid|no|without)\s+(?:\w+\s+)?$`)

// transfers reports whether sent has a transfer verb that is not negated:
// "do not include API keys" warns, it does not order.
func (c *context) transfers(sent string) bool {
	for _, m := range transferRe.FindAllStringIndex(sent, -1) {
		if !negatedRe.MatchString(sent[max(0, m[0]-24):m[0]]) {
			return true
		}
	}
	return false
}

func checkUrgent(c *context) {
	if !c.isText() || !c.has(urgentNeedles) {
		return
	}
	t := c.folded.text
	for _, m := range urgentRe.FindAllStringIndex(t, -1) {
		// The order is what follows the marker, to the end of its
		// sentence (or of the next one, when the marker ends a line).
		end := len(t)
		for _, s := range sentences(t[m[1]:]) { // from the marker on
			if strings.TrimSpace(t[m[1]+s[0]:m[1]+s[1]]) != "" {
				end = m[1] + s[1]
				break
			}
		}
		order := t[m[1]:end]
		i, j := trimSpan(t, m[0], end)
		if beforeToolRe.MatchString(order) && actionRe.MatchString(order) && secretThingRe.MatchString(order) {
			c.reportFolded(High, i, j, "an urgent order to the model to read or send something before using the tool")
			continue
		}
		c.reportFolded(Low, i, j, "an urgent marker; fine for a usage note, but a description should describe")
	}
}

func checkPrecondition(c *context) {
	if !c.isText() || !c.has(beforeNeedles) {
		return
	}
	c.matchAll(preconditionRe, Medium, "sets the model a task before the call")
}

func checkShadowName(c *context) {
	if !c.isText() || len(c.others) == 0 {
		return
	}
	t := c.folded.text
	hit := func(name string, i, j int) {
		// A plain word ("query", "search") is a tool's name only when
		// the text calls it a tool.
		plain := strings.IndexFunc(name, func(r rune) bool { return !('a' <= r && r <= 'z') }) < 0
		if plain && !toolAfterRe.MatchString(t[j:]) && !toolBeforeRe.MatchString(t[:i]) {
			return
		}
		if c.inOwnName(i, j) {
			return
		}
		si, sj := c.sentenceAt(i)
		if shadowOrderRe.MatchString(t[si:sj]) {
			c.reportFolded(High, i, j, fmt.Sprintf("names %q, another server's tool, in an instruction", c.others[name]))
		} else {
			c.reportFolded(Medium, i, j, fmt.Sprintf("names %q, another server's tool", c.others[name]))
		}
	}
	// Names made of identifier bytes are looked up word by word; the few
	// others (with dots, slashes, spaces) are searched for.
	for i := 0; i < len(t); {
		if !identByte(t[i]) {
			i++
			continue
		}
		j := i
		for j < len(t) && identByte(t[j]) {
			j++
		}
		if _, ok := c.others[t[i:j]]; ok {
			hit(t[i:j], i, j)
		}
		i = j
	}
	for _, name := range c.otherOdd {
		for off := 0; ; {
			k := strings.Index(t[off:], name)
			if k < 0 {
				break
			}
			i, j := off+k, off+k+len(name)
			off = j
			if (i > 0 && identByte(t[i-1])) || (j < len(t) && identByte(t[j])) {
				continue
			}
			hit(name, i, j)
		}
	}
}

var (
	toolAfterRe  = regexp.MustCompile("^[`'\"]?\\s+(?:tool|function)\\b")
	toolBeforeRe = regexp.MustCompile("\\b(?:tool|function)\\s+[`'\"]?$")
)

// inOwnName reports whether the folded span [i, j) is part of one of the
// listing's own names or titles ("Query Documentation" holds "query").
func (c *context) inOwnName(i, j int) bool {
	t := c.folded.text
	for own := range c.own {
		for k := strings.Index(own, t[i:j]); k >= 0; {
			if s := i - k; s >= 0 && strings.HasPrefix(t[s:], own) {
				return true
			}
			n := strings.Index(own[k+1:], t[i:j])
			if n < 0 {
				break
			}
			k += 1 + n
		}
	}
	return false
}

func identByte(b byte) bool {
	return b == '_' || b == '-' || ('a' <= b && b <= 'z') || ('0' <= b && b <= '9')
}

func checkShadowInstruction(c *context) {
	if !c.isText() {
		return
	}
	t := c.folded.text
	if c.has(toolNeedles) {
		for _, m := range whenToolRe.FindAllStringIndex(t, -1) {
			if strings.Contains(t[m[0]:m[1]], "this tool") || strings.Contains(t[m[0]:m[1]], "this function") {
				continue
			}
			c.reportFolded(High, m[0], m[1], "tells the model what to do when other tools are used")
		}
	}
	if c.has(copyNeedles) {
		c.matchAll(bccRe, High, "tells the model to copy messages to someone")
	}
	if c.has(redirectNeedles) {
		c.matchAll(redirectRe, High, "tells the model to change where something goes")
	}
	if !c.has(insteadNeedles) {
		return
	}
	for _, m := range insteadRe.FindAllStringSubmatchIndex(t, -1) {
		if c.own[t[m[2]:m[3]]] {
			continue
		}
		c.reportFolded(Medium, m[0], m[1], "steers the model away from another tool")
	}
}

func checkURL(c *context) {
	if c.role == roleName || c.role == roleSchemaKey || !c.has(urlNeedles) {
		return
	}
	t := c.folded.text
	for _, m := range urlRe.FindAllStringIndex(t, -1) {
		u := strings.TrimRight(t[m[0]:m[1]], ".,;:!?")
		i, j := m[0], m[0]+len(u)
		scheme, rest, _ := strings.Cut(u, "://")
		host := rest
		if k := strings.IndexAny(host, "/?#"); k >= 0 {
			host = host[:k]
		}
		if k := strings.LastIndexByte(host, '@'); k >= 0 {
			host = host[k+1:]
		}
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		host = strings.Trim(host, "[]")
		ip := net.ParseIP(host)
		switch {
		case catcherHostRe.MatchString(host):
			c.reportFolded(High, i, j, fmt.Sprintf("a URL to %s, a request-catcher or tunnel host", host))
		case dataSlotRe.MatchString(rest):
			c.reportFolded(High, i, j, "a URL with a slot for data to be sent out")
		case scheme == "file":
			if !c.about(fileWords...) && c.role != roleURI {
				c.reportFolded(Low, i, j, "a file URL in an item not about files")
			}
		case host == "localhost" || host == "example.com" || host == "example.org" || host == "example.net" || strings.HasSuffix(host, ".example.com") || (ip != nil && ip.IsLoopback()):
		case ip != nil && !c.about(webWords...):
			c.reportFolded(Medium, i, j, "a URL to a raw IP address in an item not about the web")
		case c.about(webWords...) || c.role == roleURI:
		case scheme == "http":
			c.reportFolded(Medium, i, j, "a plain-http URL in an item not about the web")
		default:
			c.reportFolded(Low, i, j, "a URL in an item not about the web")
		}
	}
}

func checkPath(c *context) {
	if !c.isText() || !c.has(pathNeedles) || c.about(fileWords...) {
		return
	}
	t := c.folded.text
	for _, m := range pathRe.FindAllStringSubmatchIndex(t, -1) {
		j := trimDots(t, m[2], m[3])
		p := t[m[2]:j]
		if sensitivePathRe.MatchString(p) {
			continue // the sensitive-path rule reports it
		}
		c.reportFolded(Low, m[2], j, fmt.Sprintf("the path %q in an item not about files", p))
	}
}

// trimDots returns the end of t[i:j] without the full stops that end the
// sentence a path ends ("… from ~/.aws/credentials.").
func trimDots(t string, i, j int) int {
	for j > i+1 && t[j-1] == '.' {
		j--
	}
	return j
}

func checkLength(c *context) {
	budget := 0
	switch c.role {
	case roleDescription:
		budget = 800 + 100*c.params
	case roleSchemaText:
		budget = 300
	case roleTitle:
		budget = 80
	default:
		return
	}
	n := len(c.text)
	switch {
	case n > 5*budget:
		c.report(Medium, 0, n, fmt.Sprintf("%d bytes, more than five times the %d this kind of text needs", n, budget))
	case n > 2*budget:
		c.report(Low, 0, n, fmt.Sprintf("%d bytes, more than twice the %d this kind of text needs", n, budget))
	}
}
