package history

import (
	"encoding/json"
	"strconv"

	"github.com/switchboardhq/switchboard/internal/jsonappend"
)

// AppendJSON appends c encoded as json.Marshal encodes it, without its
// reflection: the daemon publishes every stored call as an event, and
// Marshal was about 2 % of its CPU at 16 calls in flight. Calls with
// arguments (which Marshal compacts and escapes) go through Marshal; the
// calls OnCommit hands over carry none.
func (c Call) AppendJSON(b []byte) []byte {
	if len(c.Arguments) > 0 {
		v, err := json.Marshal(c)
		if err != nil { // a time Marshal refuses: the rest is encoded here
			c.Arguments = nil
			return c.AppendJSON(b)
		}
		return append(b, v...)
	}
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, c.ID, 10)
	b = append(b, `,"start":`...)
	b = jsonappend.Time(b, c.Start)
	b = append(b, `,"duration":`...)
	b = strconv.AppendInt(b, int64(c.Duration), 10)
	for _, f := range [...]struct{ key, v string }{{`,"clientLabel":`, c.ClientLabel},
		{`,"clientName":`, c.ClientName}, {`,"clientVersion":`, c.ClientVersion}, {`,"session":`, c.Session},
		{`,"endpoint":`, c.Endpoint}, {`,"server":`, c.Server}, {`,"method":`, c.Method}, {`,"name":`, c.Name},
		{`,"outcome":`, c.Outcome}} {
		b = append(b, f.key...)
		b = jsonappend.String(b, f.v)
	}
	b = appendOmitEmpty(b, `,"error":`, c.Error)
	b = append(b, `,"responseSize":`...)
	b = strconv.AppendInt(b, int64(c.ResponseSize), 10)
	b = appendOmitEmpty(b, `,"responsePreview":`, c.ResponsePreview)
	if c.PID != 0 {
		b = append(b, `,"pid":`...)
		b = strconv.AppendInt(b, int64(c.PID), 10)
	}
	b = appendOmitEmpty(b, `,"tier":`, c.Tier)
	b = appendOmitEmpty(b, `,"tool":`, c.Tool)
	b = appendOmitEmpty(b, `,"unknown":`, c.Unknown)
	b = appendOmitEmpty(b, `,"decidedBy":`, c.DecidedBy)
	if c.DecisionAllowed {
		b = append(b, `,"decisionAllowed":true`...)
	}
	if c.DecidedAt != nil {
		b = append(b, `,"decidedAt":`...)
		b = jsonappend.Time(b, *c.DecidedAt)
	}
	return append(b, '}')
}

// appendOmitEmpty appends key and s unless s is empty (omitempty).
func appendOmitEmpty(b []byte, key, s string) []byte {
	if s == "" {
		return b
	}
	return jsonappend.String(append(b, key...), s)
}
