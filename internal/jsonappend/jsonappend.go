// Package jsonappend appends values to JSON text byte for byte as
// encoding/json's Marshal writes them, for the events encoded on every
// call, where Marshal's reflection was a measurable share of the call.
package jsonappend

import (
	"encoding/json"
	"time"
)

// String appends s as a JSON string: as it is when it needs no escape
// (plain ASCII, as names and ids are), else through json.Marshal.
func String(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			v, _ := json.Marshal(s)
			return append(b, v...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// Time appends t as json.Marshal writes a time.Time: RFC 3339 with its
// nanoseconds, quoted. Marshal fails on a year outside 0 to 9999; such a
// time (which no clock gives) is appended in the same format all the same,
// so that the text stays valid JSON.
func Time(b []byte, t time.Time) []byte {
	if y := t.Year(); y < 0 || y > 9999 {
		return String(b, t.Format(time.RFC3339Nano))
	}
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}
