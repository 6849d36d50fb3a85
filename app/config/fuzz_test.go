package config

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzParse feeds arbitrary files to Parse (decoding, migration from
// version 0, validation). A file is either refused with an *Error whose
// position lies inside it, or accepted; an accepted file saves to bytes
// that parse again to the same configuration and save to the same bytes.
// Seeds are in testdata/fuzz/FuzzParse (the versioned test files and odd
// shapes).
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"version":1,"servers":{"a":{"command":"x","note":{"k":[1,2]}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Parse("config.json", data)
		if err != nil {
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("Parse error is not an *Error: %T %v", err, err)
			}
			if ce.Line > bytes.Count(data, []byte("\n"))+1 {
				t.Fatalf("error line %d is past the end of a %d-line file: %v", ce.Line, bytes.Count(data, []byte("\n"))+1, err)
			}
			_ = err.Error()
			return
		}
		if cfg.Version != CurrentVersion {
			t.Fatalf("parsed version %d, want %d", cfg.Version, CurrentVersion)
		}
		saved, err := cfg.encode()
		if err != nil {
			t.Fatalf("encode: %v", err)
		}
		again, err := Parse("config.json", saved)
		if err != nil {
			t.Fatalf("a saved config does not parse: %v\n%s", err, saved)
		}
		first, _ := cfg.MarshalJSON()
		second, _ := again.MarshalJSON()
		if !bytes.Equal(first, second) {
			t.Fatalf("the config changed through save and load\n%s\n%s", first, second)
		}
		resaved, err := again.encode()
		if err != nil || !bytes.Equal(saved, resaved) {
			t.Fatalf("saving twice gives different bytes (%v)\n%s\n%s", err, saved, resaved)
		}
		for name, s := range cfg.Servers {
			_ = s.CheckUnknown() // must not panic on any accepted entry
			_ = name
		}
	})
}
