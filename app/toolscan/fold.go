package toolscan

import (
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// folded is a field's text as the text rules match it: compatibility
// decomposed (NFKD, so full-width and mathematical letters become
// ASCII), combining marks dropped, look-alike letters of other scripts
// replaced by the Latin letters they imitate, lower case, and invisible
// characters removed, so that "I\u200bGNORE", "ｉｇｎｏｒｅ" and "іgnоre"
// all read "ignore". start and end give, for every byte of text, the byte
// span of the original rune it came from, so a match maps back to the
// exact span of the original.
type folded struct {
	text       string
	start, end []int32
}

// fold builds the matching form of s. It keeps ASCII as it is but for
// case, and does the costly per-rune decomposition only for other runes.
func fold(s string) folded {
	buf := make([]byte, 0, len(s))
	start := make([]int32, 0, len(s))
	end := make([]int32, 0, len(s))
	add := func(b byte, from, to int) {
		buf = append(buf, b)
		start = append(start, int32(from))
		end = append(end, int32(to))
	}
	var dec [4 * utf8.UTFMax * 4]byte
	for i := 0; i < len(s); {
		c := s[i]
		if c == 0x1b && i+1 < len(s) && s[i+1] == '[' {
			// A terminal escape ("\x1b[8m" hides text in a terminal) is
			// dropped whole, so that it does not glue to the next word.
			j := i + 2
			for j < len(s) && !(0x40 <= s[j] && s[j] <= 0x7e) {
				j++
			}
			i = min(j+1, len(s))
			continue
		}
		if c < utf8.RuneSelf {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			add(c, i, i+1)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		from, to := i, i+n
		i += n
		if invisible(r) {
			continue
		}
		if a, ok := lookalike(r); ok {
			add(a, from, to)
			continue
		}
		if a, ok := punctuation(r); ok {
			add(a, from, to)
			continue
		}
		d := norm.NFKD.AppendString(dec[:0], s[from:to])
		for j := 0; j < len(d); {
			dr, dn := utf8.DecodeRune(d[j:])
			j += dn
			if unicode.Is(unicode.Mn, dr) {
				continue
			}
			dr = unicode.ToLower(dr)
			if a, ok := lookalike(dr); ok {
				add(a, from, to)
				continue
			}
			var enc [utf8.UTFMax]byte
			k := utf8.EncodeRune(enc[:], dr)
			for _, b := range enc[:k] {
				add(b, from, to)
			}
		}
	}
	return folded{text: string(buf), start: start, end: end}
}

// span maps the byte range [i, j) of the folded text back to the original.
func (f folded) span(i, j int) (int, int) {
	if i >= j || i >= len(f.start) {
		return 0, 0
	}
	return int(f.start[i]), int(f.end[j-1])
}

// invisible reports the runes that render as nothing (or only move other
// text around) and that fold drops: format characters (zero-width, bidi
// controls, tags, soft hyphen), variation selectors and control
// characters other than tab, newline and carriage return.
func invisible(r rune) bool {
	switch {
	case r == '\t' || r == '\n' || r == '\r':
		return false
	case unicode.Is(unicode.Cf, r), unicode.Is(unicode.Cc, r):
		return true
	case isVariationSelector(r):
		return true
	}
	return false
}

func isVariationSelector(r rune) bool {
	return (0xFE00 <= r && r <= 0xFE0F) || (0xE0100 <= r && r <= 0xE01EF)
}

// lookalike maps the letters of Cyrillic, Greek, Armenian and Latin
// extensions that look like ASCII letters (the common part of Unicode's
// confusables.txt) to those letters, in both cases.
func lookalike(r rune) (byte, bool) {
	switch r {
	case 'а', 'А', 'α', 'Α', 'ɑ':
		return 'a', true
	case 'В', 'Β', 'Ь', 'ь':
		return 'b', true
	case 'с', 'С', 'ϲ', 'Ϲ':
		return 'c', true
	case 'ԁ':
		return 'd', true
	case 'е', 'Е', 'Ε', 'ё':
		return 'e', true
	case 'ɡ':
		return 'g', true
	case 'һ', 'Н', 'Η', 'հ':
		return 'h', true
	case 'і', 'І', 'ι', 'Ι', 'ı', 'ӏ', 'Ӏ':
		return 'i', true
	case 'ј', 'Ј', 'ϳ':
		return 'j', true
	case 'К', 'κ', 'Κ':
		return 'k', true
	case 'М', 'Μ':
		return 'm', true
	case 'Ν', 'ո':
		return 'n', true
	case 'о', 'О', 'ο', 'Ο', 'օ', 'Օ':
		return 'o', true
	case 'р', 'Р', 'ρ', 'Ρ':
		return 'p', true
	case 'ԛ':
		return 'q', true
	case 'ѕ', 'Ѕ':
		return 's', true
	case 'Т', 'Τ':
		return 't', true
	case 'υ', 'ս':
		return 'u', true
	case 'ν', 'ѵ':
		return 'v', true
	case 'ԝ', 'Ԝ':
		return 'w', true
	case 'х', 'Х', 'χ', 'Χ':
		return 'x', true
	case 'у', 'У', 'Υ', 'ү':
		return 'y', true
	case 'Ζ':
		return 'z', true
	}
	return 0, false
}

// punctuation maps typographic quotes, dashes and the fraction slash to
// ASCII, so "don’t" matches "don't"; NFKD leaves them alone.
func punctuation(r rune) (byte, bool) {
	switch r {
	case '‘', '’', '‚', '‛', '′':
		return '\'', true
	case '“', '”', '„', '‟', '″':
		return '"', true
	case '‐', '‑', '‒', '–', '—', '―', '−':
		return '-', true
	case '⁄', '∕':
		return '/', true
	}
	return 0, false
}
