package catalog

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
)

// embeddedJSON is the curated catalog. Its versions are exact and tested
// by hand; TestEmbedded validates every entry.
//
//go:embed embedded.json
var embeddedJSON []byte

// SourceEmbedded, SourceRegistry and SourceCache name where entries and
// results come from: an Entry's Source is "embedded" or "registry" (whose
// metadata it carries); a Result's Source also may be "cache" (the
// registry's answer as saved on disk).
const (
	SourceEmbedded = "embedded"
	SourceRegistry = "registry"
	SourceCache    = "cache"
)

// Status values of registry entries.
const (
	StatusActive     = "active"
	StatusDeprecated = "deprecated"
	StatusDeleted    = "deleted"
)

// Embedded returns the curated catalog, parsed and validated. Each call
// returns fresh copies, so callers may change them.
func Embedded() ([]Entry, error) {
	return parseEmbedded(embeddedJSON)
}

func parseEmbedded(data []byte) ([]Entry, error) {
	var doc struct {
		Comment string  `json:"$comment"`
		Servers []Entry `json:"servers"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	// A misspelt field in a hand-edited file would silently drop an input.
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("embedded catalog: %w", err)
	}
	seenName := map[string]bool{}
	seenShort := map[string]bool{}
	var errs []error
	for i := range doc.Servers {
		e := &doc.Servers[i]
		e.Source = SourceEmbedded
		if e.Status == "" {
			e.Status = StatusActive
		}
		if err := e.Validate(); err != nil {
			errs = append(errs, err)
		}
		if e.ShortName == "" {
			errs = append(errs, fmt.Errorf("entry %q: no shortName", e.Name))
		}
		if seenName[e.Name] {
			errs = append(errs, fmt.Errorf("entry %q: listed twice", e.Name))
		}
		if seenShort[e.ShortName] {
			errs = append(errs, fmt.Errorf("entry %q: shortName %q is used twice", e.Name, e.ShortName))
		}
		seenName[e.Name], seenShort[e.ShortName] = true, true
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("embedded catalog: %w", err)
	}
	return doc.Servers, nil
}
