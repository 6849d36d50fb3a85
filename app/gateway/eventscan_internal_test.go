package gateway

import (
	"slices"
	"strings"
	"testing"
)

// The event stream's data reaches onData whole however the stream is cut
// into reads, with each of the line endings the format allows; an event
// with a line longer than maxScannedLine is skipped, and the next is not.
func TestEventScanner(t *testing.T) {
	long := strings.Repeat("x", maxScannedLine+1)
	for _, tc := range []struct {
		name   string
		stream string
		want   []string
	}{
		{"LF", "event: message\nid: 1\ndata: {\"a\":1}\n\ndata: two\n\n", []string{`{"a":1}`, "two"}},
		{"CRLF", "data: {\"a\":1}\r\n\r\ndata:two\r\n\r\n", []string{`{"a":1}`, "two"}},
		{"CR", "data: one\r\rdata: two\r\r", []string{"one", "two"}},
		{"data lines joined", "data: a\ndata\ndata: b\n\n", []string{"a\n\nb"}},
		{"no data, comments", ": keep-alive\n\nretry: 10\n\ndata: x\n\n", []string{"x"}},
		{"unfinished event", "data: done\n\ndata: half\n", []string{"done"}},
		{"too long", "data: " + long + "\n\ndata: next\n\n", []string{"next"}},
		{"too long, any field", ": " + long + "\ndata: skipped\n\ndata: next\n\n", []string{"next"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, size := range []int{1, 2, 3, 7, len(tc.stream)} {
				var got []string
				s := eventScanner{onData: func(d []byte) { got = append(got, string(d)) }}
				for p := tc.stream; p != ""; {
					n := min(size, len(p))
					s.write([]byte(p[:n]))
					p = p[n:]
				}
				if !slices.Equal(got, tc.want) {
					t.Errorf("in reads of %d bytes: events %q, want %q", size, got, tc.want)
				}
			}
		})
	}
}
