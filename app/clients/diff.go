package clients

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Diff is a unified diff of a file's old and new content, with three lines
// of context, or "" when they are equal. nil old content is shown as
// /dev/null (a file to be created). An absolute path (a client's real
// file, what users see) is named as it is on both sides, as diff -u does;
// a relative one gets git's a/ and b/.
func Diff(path string, old, new []byte) string {
	if string(old) == string(new) && (old == nil) == (new == nil) {
		return ""
	}
	a, b := splitLines(old), splitLines(new)
	ops := diffLines(a, b)
	var out strings.Builder
	from, to := "a/"+path, "b/"+path
	if filepath.IsAbs(path) {
		from, to = path, path
	}
	if old == nil {
		from = "/dev/null"
	}
	if new == nil {
		to = "/dev/null"
	}
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", from, to)
	const context = 3
	// Group the operations into hunks: runs of changes with up to
	// 2*context equal lines between them.
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		start := max(i-context, 0)
		for start < i && ops[start].kind != ' ' {
			start++
		}
		end := i
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			j := end
			for j < len(ops) && ops[j].kind == ' ' {
				j++
			}
			if j == len(ops) || j-end > 2*context {
				end = min(end+context, len(ops))
				break
			}
			end = j
		}
		// Line numbers of the hunk's first line in a and b.
		aLine, bLine := 1, 1
		for _, op := range ops[:start] {
			if op.kind != '+' {
				aLine++
			}
			if op.kind != '-' {
				bLine++
			}
		}
		var aN, bN int
		for _, op := range ops[start:end] {
			if op.kind != '+' {
				aN++
			}
			if op.kind != '-' {
				bN++
			}
		}
		if aN == 0 {
			aLine--
		}
		if bN == 0 {
			bLine--
		}
		fmt.Fprintf(&out, "@@ -%d,%d +%d,%d @@\n", aLine, aN, bLine, bN)
		for _, op := range ops[start:end] {
			line := strings.TrimSuffix(op.line, "\r")
			out.WriteString(string(op.kind) + line + "\n")
			if op.noEOL {
				out.WriteString("\\ No newline at end of file\n")
			}
		}
		i = end
	}
	return out.String()
}

type lineOp struct {
	kind  byte // ' ', '-' or '+'
	line  string
	noEOL bool
}

type line struct {
	text  string
	noEOL bool
}

func splitLines(b []byte) []line {
	if len(b) == 0 {
		return nil
	}
	s := string(b)
	parts := strings.SplitAfter(s, "\n")
	if parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	out := make([]line, len(parts))
	for i, p := range parts {
		out[i] = line{text: strings.TrimSuffix(p, "\n"), noEOL: !strings.HasSuffix(p, "\n")}
	}
	return out
}

// diffLines is a longest-common-subsequence line diff. The common prefix
// and suffix are taken off first (edits are local, so what is left is
// small); a middle too large for the table is shown as removed and added.
func diffLines(a, b []line) []lineOp {
	var ops []lineOp
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		ops = append(ops, lineOp{' ', a[p].text, a[p].noEOL})
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	ma, mb := a[p:len(a)-s], b[p:len(b)-s]
	if len(ma)*len(mb) > 4_000_000 {
		for _, l := range ma {
			ops = append(ops, lineOp{'-', l.text, l.noEOL})
		}
		for _, l := range mb {
			ops = append(ops, lineOp{'+', l.text, l.noEOL})
		}
	} else {
		// lcs[i][j] is the length of the LCS of ma[i:] and mb[j:].
		lcs := make([][]int32, len(ma)+1)
		for i := range lcs {
			lcs[i] = make([]int32, len(mb)+1)
		}
		for i := len(ma) - 1; i >= 0; i-- {
			for j := len(mb) - 1; j >= 0; j-- {
				if ma[i] == mb[j] {
					lcs[i][j] = lcs[i+1][j+1] + 1
				} else {
					lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
				}
			}
		}
		i, j := 0, 0
		for i < len(ma) || j < len(mb) {
			switch {
			case i < len(ma) && j < len(mb) && ma[i] == mb[j]:
				ops = append(ops, lineOp{' ', ma[i].text, ma[i].noEOL})
				i++
				j++
			case i < len(ma) && (j == len(mb) || lcs[i+1][j] >= lcs[i][j+1]):
				ops = append(ops, lineOp{'-', ma[i].text, ma[i].noEOL})
				i++
			default:
				ops = append(ops, lineOp{'+', mb[j].text, mb[j].noEOL})
				j++
			}
		}
	}
	for _, l := range a[len(a)-s:] {
		ops = append(ops, lineOp{' ', l.text, l.noEOL})
	}
	return ops
}
