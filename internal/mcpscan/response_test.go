package mcpscan

import "testing"

// TestScannerStr checks scanner.str against a byte-at-a-time reference on
// every text of up to 8 bytes over quote, backslash and a letter (where
// escapes and quotes meet at every position), after a quote.
func TestScannerStr(t *testing.T) {
	reference := func(b []byte) (int, bool) {
		for i := 1; i < len(b); i++ {
			switch b[i] {
			case '\\':
				i++
			case '"':
				return i + 1, true
			}
		}
		return 0, false
	}
	alphabet := []byte{'"', '\\', 'a'}
	var walk func(text []byte)
	walk = func(text []byte) {
		b := append([]byte{'"'}, text...)
		s := scanner{b: b}
		got, ok := s.str()
		wantEnd, wantOK := reference(b)
		if ok != wantOK || (ok && (len(got) != wantEnd || s.i != wantEnd)) {
			t.Fatalf("str(%s) = %q, %v (at %d), want the first %d bytes, %v", b, got, ok, s.i, wantEnd, wantOK)
		}
		if len(text) == 8 {
			return
		}
		for _, c := range alphabet {
			walk(append(text, c))
		}
	}
	walk(nil)
}
