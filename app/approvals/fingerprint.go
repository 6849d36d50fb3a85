package approvals

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// A Tool is what a server lists for one tool, as far as approval goes: its
// name, description and input schema. (Titles and annotations are hints
// for people and clients, not instructions to the model, and are not
// fingerprinted.)
type Tool struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// InputSchema is the tool's JSON Schema as listed; any JSON encoding
	// of it is accepted (Canonical makes the encoding irrelevant).
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`
}

// Fingerprint returns "sha256:" and the hex SHA-256 of the canonical JSON
// of {"description", "inputSchema", "name"}: two listings of a tool that
// differ only in key order, whitespace or the spelling of a number have
// the same fingerprint. A schema that is not JSON is an error.
func Fingerprint(t Tool) (string, error) {
	schema, err := Canonical(t.InputSchema)
	if err != nil {
		return "", fmt.Errorf("input schema of tool %q: %w", t.Name, err)
	}
	data, err := canonicalTool(t.Name, t.Description, schema)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// canonicalTool encodes the fingerprinted fields of a tool with its schema
// already canonical.
func canonicalTool(name, description string, schema json.RawMessage) ([]byte, error) {
	if len(schema) == 0 {
		schema = json.RawMessage("null")
	}
	// encoding/json writes struct fields in declaration order (here
	// sorted), escapes strings one way only, and copies a RawMessage.
	return marshal(struct {
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"inputSchema"`
		Name        string          `json:"name"`
	}{description, schema, name})
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
