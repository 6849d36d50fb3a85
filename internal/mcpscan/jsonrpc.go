package mcpscan

import (
	"bytes"
	"encoding/json"
	"strings"
)

// JSONRPCProblem says, for a body that json.Valid accepted: why it
// is not a JSON-RPC 2.0 message or batch, or "" when it is one. A single
// message whose top-level keys and "jsonrpc" and "method" values are plain
// (every well-formed request a client sends) is decided by scanning its
// keys (scanShape), without encoding/json's decode, which was about 3 % of
// the daemon's CPU per call; anything else (a batch, an escaped or
// non-ASCII key, a key that is one of the fields' names in another case,
// which encoding/json matches too, a value of another type) gets the full
// decode, which also words the error.
func JSONRPCProblem(body []byte) string {
	if shape, ok := scanShape(body); ok {
		return shape.problem()
	}
	return notJSONRPC(body)
}

// shapeFacts are what messageShape.problem reads of a message.
type shapeFacts struct {
	hasVersion  bool // "jsonrpc" is there, not null
	version20   bool // and is "2.0"
	hasMethod   bool // "method" is there, not null
	emptyMethod bool // and is ""
	id, result  bool // the keys are there (null counts)
	error       bool
}

func (f shapeFacts) problem() string {
	switch {
	case !f.hasVersion || !f.version20:
		return `the message lacks "jsonrpc": "2.0"`
	case f.hasMethod && f.emptyMethod:
		return "the method is empty"
	case !f.hasMethod && !(f.id && (f.result || f.error)):
		return "the message is neither a request, a notification nor a response"
	}
	return ""
}

// scanShape reads the top-level keys of body, valid JSON, when it is an
// object; ok is false when body is something else or has something the
// scan leaves to encoding/json (see JSONRPCProblem).
func scanShape(body []byte) (f shapeFacts, ok bool) {
	i := jsonSpace(body, 0)
	if i >= len(body) || body[i] != '{' {
		return f, false
	}
	i = jsonSpace(body, i+1)
	if i < len(body) && body[i] == '}' {
		return f, true
	}
	for i < len(body) {
		// A key: valid JSON puts a string here.
		end, plain := stringEnd(body, i)
		if !plain {
			return f, false
		}
		key := body[i+1 : end-1]
		i = jsonSpace(body, end)
		i = jsonSpace(body, i+1) // the colon
		if i >= len(body) {
			return f, false
		}
		switch string(key) {
		case "jsonrpc", "method":
			if body[i] != '"' {
				return f, false // null, or a type encoding/json refuses
			}
			end, plain := stringEnd(body, i)
			if !plain {
				return f, false
			}
			value := body[i+1 : end-1]
			if key[0] == 'j' {
				f.hasVersion, f.version20 = true, string(value) == "2.0"
			} else {
				f.hasMethod, f.emptyMethod = true, len(value) == 0
			}
			i = end
		case "id", "result", "error":
			switch key[0] {
			case 'i':
				f.id = true
			case 'r':
				f.result = true
			default:
				f.error = true
			}
			i = skipValue(body, i)
		default:
			if foldsToShapeKey(key) {
				return f, false
			}
			i = skipValue(body, i)
		}
		i = jsonSpace(body, i)
		if i >= len(body) {
			return f, false
		}
		if body[i] == '}' {
			return f, true
		}
		i = jsonSpace(body, i+1) // the comma
	}
	return f, false
}

// foldsToShapeKey reports whether encoding/json could match key to one of
// messageShape's fields: it matches names case-insensitively, with
// Unicode's folds (ſ is s, K is k), so a non-ASCII key is left to it too.
func foldsToShapeKey(key []byte) bool {
	for _, c := range key {
		if c >= 0x80 {
			return true
		}
	}
	for _, name := range [...]string{"jsonrpc", "method", "id", "result", "error"} {
		if len(key) == len(name) && strings.EqualFold(string(key), name) {
			return true
		}
	}
	return false
}

// stringEnd returns the index after the string of valid JSON that starts
// at b[i] (a quote), and whether it has no escape.
func stringEnd(b []byte, i int) (end int, plain bool) {
	plain = true
	for j := i + 1; j < len(b); {
		k := bytes.IndexAny(b[j:], `"\`)
		if k < 0 {
			return len(b), false
		}
		j += k
		if b[j] == '"' {
			return j + 1, plain
		}
		plain = false
		j += 2 // the backslash and the byte it escapes
	}
	return len(b), false
}

// skipValue returns the index after the value of valid JSON that starts at
// b[i], or len(b) when none ends there. It is the walk ScanResponse uses
// (scanner.value): one walk over values for both scans.
func skipValue(b []byte, i int) int {
	s := scanner{b: b, i: i}
	if !s.value() {
		return len(b)
	}
	return s.i
}

// present records that a key is there without keeping its value.
type present bool

func (p *present) UnmarshalJSON([]byte) error { *p = true; return nil }

// messageShape is what tells a JSON-RPC 2.0 message: its version, and a
// method (request, notification) or an id with a result or error (response).
type messageShape struct {
	JSONRPC *string `json:"jsonrpc"`
	Method  *string `json:"method"`
	ID      present `json:"id"`
	Result  present `json:"result"`
	Error   present `json:"error"`
}

func (m messageShape) problem() string {
	return shapeFacts{
		hasVersion: m.JSONRPC != nil, version20: m.JSONRPC != nil && *m.JSONRPC == "2.0",
		hasMethod: m.Method != nil, emptyMethod: m.Method != nil && *m.Method == "",
		id: bool(m.ID), result: bool(m.Result), error: bool(m.Error),
	}.problem()
}

// notJSONRPC says why valid JSON body is not a JSON-RPC 2.0 message or a
// batch of them, or "" when it is one.
func notJSONRPC(body []byte) string {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	switch {
	case len(trimmed) > 0 && trimmed[0] == '{':
		var m messageShape
		if err := json.Unmarshal(trimmed, &m); err != nil {
			return "the message has a field of the wrong type: " + err.Error()
		}
		return m.problem()
	case len(trimmed) > 0 && trimmed[0] == '[':
		var batch []json.RawMessage
		if err := json.Unmarshal(trimmed, &batch); err != nil {
			return "the batch is not an array of messages"
		}
		if len(batch) == 0 {
			return "the batch is empty"
		}
		for _, raw := range batch {
			if len(raw) == 0 || raw[0] != '{' {
				return "a batch element is not a JSON object"
			}
			if why := notJSONRPC(raw); why != "" {
				return "a batch element: " + why
			}
		}
		return ""
	}
	return "the body is not a JSON object"
}
