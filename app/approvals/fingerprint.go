package approvals

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/switchboardhq/switchboard/app/toolscan"
)

// A Tool is what a server lists for one tool, as far as approval goes: its
// name, title, description, input and output schemas and annotations. The
// annotations are fingerprinted with the rest: a tool that flips
// readOnlyHint or destructiveHint claims to do something else, and clients
// (and Switchboard's tiers) act on that claim.
type Tool struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	// InputSchema is the tool's JSON Schema as listed; any JSON encoding
	// of it is accepted (Canonical makes the encoding irrelevant), as of
	// OutputSchema and Annotations (the annotations object as listed).
	InputSchema  json.RawMessage `json:"inputSchema,omitempty"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Annotations  json.RawMessage `json:"annotations,omitempty"`
	// Findings are what app/toolscan found in the listed tool; they are
	// not fingerprinted (a new scanner must not unapprove anything), but
	// a High one holds the tool even where a change would not be held
	// (see Store.Review).
	Findings []toolscan.Finding `json:"-"`
}

// fingerprintScheme is the fingerprint Fingerprint computes; a Version of
// an older one (0: name, description and input schema only) is migrated
// by Store.Review when the tool still matches it under its own scheme.
const fingerprintScheme = 2

// Fingerprint returns "sha256:" and the hex SHA-256 of the canonical JSON
// of {"annotations", "description", "inputSchema", "name", "outputSchema",
// "title"}, the empty ones left out: two listings of a tool that differ
// only in key order, whitespace or the spelling of a number have the same
// fingerprint, and a tool with no title, annotations or output schema has
// the one the first scheme gave it. A schema that is not JSON is an error.
func Fingerprint(t Tool) (string, error) {
	schema, err := Canonical(t.InputSchema)
	if err != nil {
		return "", fmt.Errorf("input schema of tool %q: %w", t.Name, err)
	}
	out, err := Canonical(t.OutputSchema)
	if err != nil {
		return "", fmt.Errorf("output schema of tool %q: %w", t.Name, err)
	}
	ann, err := Canonical(t.Annotations)
	if err != nil {
		return "", fmt.Errorf("annotations of tool %q: %w", t.Name, err)
	}
	if len(schema) == 0 {
		schema = json.RawMessage("null")
	}
	// encoding/json writes struct fields in declaration order (here
	// sorted), escapes strings one way only, and copies a RawMessage.
	data, err := marshal(struct {
		Annotations  json.RawMessage `json:"annotations,omitempty"`
		Description  string          `json:"description"`
		InputSchema  json.RawMessage `json:"inputSchema"`
		Name         string          `json:"name"`
		OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
		Title        string          `json:"title,omitempty"`
	}{ann, t.Description, schema, t.Name, out, t.Title})
	if err != nil {
		return "", err
	}
	return sum(data), nil
}

// legacyFingerprint is the fingerprint of the first scheme, over the name,
// description and input schema only: what approvals files of version 1
// hold.
func legacyFingerprint(t Tool) (string, error) {
	schema, err := Canonical(t.InputSchema)
	if err != nil {
		return "", fmt.Errorf("input schema of tool %q: %w", t.Name, err)
	}
	if len(schema) == 0 {
		schema = json.RawMessage("null")
	}
	data, err := marshal(struct {
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"inputSchema"`
		Name        string          `json:"name"`
	}{t.Description, schema, t.Name})
	if err != nil {
		return "", err
	}
	return sum(data), nil
}

func sum(data []byte) string {
	h := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(h[:])
}

// Canonical returns data re-encoded in one canonical form: object keys
// sorted, no insignificant whitespace, numbers in their shortest form
// (1.0, 1e0 and 1 are all 1), strings escaped one way. Empty data (no
// schema) stays empty.
func Canonical(data json.RawMessage) (json.RawMessage, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("not JSON: more than one value")
	}
	v, err := normalizeNumbers(v)
	if err != nil {
		return nil, err
	}
	// Maps are encoded with sorted keys.
	return marshal(v)
}

// normalizeNumbers replaces every json.Number in v by its shortest
// spelling, so that 1.0 and 1 fingerprint alike.
func normalizeNumbers(v any) (any, error) {
	switch x := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil || math.IsInf(f, 0) {
			return nil, fmt.Errorf("number %s is out of range", x)
		}
		return json.Number(strconv.FormatFloat(f, 'g', -1, 64)), nil
	case map[string]any:
		for k, e := range x {
			n, err := normalizeNumbers(e)
			if err != nil {
				return nil, err
			}
			x[k] = n
		}
	case []any:
		for i, e := range x {
			n, err := normalizeNumbers(e)
			if err != nil {
				return nil, err
			}
			x[i] = n
		}
	}
	return v, nil
}

// marshal is json.Marshal without HTML escaping (which would only make
// stored schemas harder to read) and without the trailing newline.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
