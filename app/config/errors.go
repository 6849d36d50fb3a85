package config

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"
)

// An Error is a problem with a config file or a Config: bad JSON, a value of
// the wrong type, a failed validation rule, a failed migration.
//
// Its message reads like a compiler's:
//
//	config.json:3:17: servers.fs.pool.max: invalid value 100: must be at most 64
//
// with the parts that are unknown left out.
type Error struct {
	// File is the file name given to Parse, Load or Save; "" when the
	// problem is with a Config in memory (Validate).
	File string

	// Line and Column locate the problem in File, both 1-based; 0 when
	// unknown. Column counts characters (runes), not bytes; a tab is one
	// column. For a value of the wrong type they point at the value; for a
	// failed rule at the key of the field, or of the nearest enclosing
	// field present in the file.
	Line, Column int

	// Field is the path of the field, e.g. "servers.fs.pool.max",
	// "servers.fs.args[2]", "listen"; "" for a problem with the document
	// as a whole (such as a JSON syntax error).
	Field string

	// Err describes the problem.
	Err error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		if b.Len() > 0 {
			b.WriteByte(':')
		}
		b.WriteString(strconv.Itoa(e.Line))
		if e.Column > 0 {
			b.WriteByte(':')
			b.WriteString(strconv.Itoa(e.Column))
		}
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	if e.Err != nil {
		b.WriteString(e.Err.Error())
	} else {
		b.WriteString("invalid")
	}
	return b.String()
}

// Unwrap returns e.Err.
func (e *Error) Unwrap() error { return e.Err }

// ErrNewerVersion is matched (with errors.Is) by the error for a file whose
// version is newer than CurrentVersion. Such a file is never modified.
var ErrNewerVersion = errors.New("config file is newer than this Switchboard")

type newerVersionError struct {
	name    string
	version int
}

func (e *newerVersionError) Error() string {
	return fmt.Sprintf("%s is version %d, newer than this Switchboard (version %d); upgrade Switchboard",
		e.name, e.version, CurrentVersion)
}

func (e *newerVersionError) Is(target error) bool { return target == ErrNewerVersion }

func newerVersion(file string, version int) error {
	name := filepath.Base(file)
	if file == "" {
		name = "the config file"
	}
	return &newerVersionError{name: name, version: version}
}

// lineCol returns the 1-based line and column (in runes) of byte offset off
// in doc.
func lineCol(doc []byte, off int) (line, col int) {
	off = max(0, min(off, len(doc)))
	before := doc[:off]
	line = 1 + bytes.Count(before, []byte{'\n'})
	start := bytes.LastIndexByte(before, '\n') + 1
	col = 1 + utf8.RuneCount(before[start:])
	return line, col
}

// snippet returns a short rendering of a JSON value for error messages.
func snippet(raw []byte) string {
	const limit = 40
	raw = bytes.TrimSpace(raw)
	if utf8.RuneCount(raw) <= limit {
		return string(raw)
	}
	r := []rune(string(raw))
	return string(r[:limit]) + "…"
}
