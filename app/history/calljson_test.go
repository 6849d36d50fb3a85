package history

import (
	"encoding/json"
	"testing"
	"time"
)

// TestCallAppendJSON: the hand-made encoding of a Call is byte for byte
// what json.Marshal makes of it, for every field set and unset, texts
// that need escapes and times of every precision.
func TestCallAppendJSON(t *testing.T) {
	at := time.Date(2026, 12, 6, 22, 1, 2, 345678000, time.UTC)
	decided := at.Add(time.Second)
	full := Call{ID: 42, Start: at, Duration: 1234567 * time.Microsecond, ClientLabel: "cursor", ClientName: "Cursor",
		ClientVersion: "1.2.3", Session: "S1", Endpoint: "p/work", Server: "alpha", Method: "tools/call", Name: "alpha__echo",
		Outcome: "tool_error", Error: "it failed", ResponseSize: 77, ResponsePreview: `{"content":[]}`, PID: 4242,
		Tier: "destructive", Tool: "echo", Unknown: "tool", DecidedBy: "dashboard", DecisionAllowed: true, DecidedAt: &decided}
	denied := full
	denied.DecisionAllowed = false
	withArgs := full
	withArgs.Arguments = json.RawMessage(`{ "a" : "<b>" }`)
	for _, tt := range []struct {
		name string
		c    Call
	}{
		{"empty", Call{}},
		{"plain", Call{ID: 1, Start: at, Duration: time.Millisecond, Server: "echo", Endpoint: "echo", Method: "tools/call", Name: "echo", Outcome: "ok", ResponseSize: 10}},
		{"every field", full},
		{"denied", denied},
		{"with arguments", withArgs},
		{"negative", Call{ID: -1, Duration: -time.Second, ResponseSize: -3, PID: -1}},
		{"whole second, other zone", Call{Start: at.Truncate(time.Second).In(time.FixedZone("x", -(3*3600 + 1800)))}},
		{"escapes", Call{Name: "<b>&amp;</b>", Error: "line\nnext\ttab \"q\" \\", ClientName: "é ünï 😀 \u2028", ResponsePreview: "{\"cut", Tool: "file:///a b/<x>"}},
		{"invalid UTF-8", Call{Name: "bad\xff\xfe", Error: "\x00"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			want, err := json.Marshal(tt.c)
			if err != nil {
				t.Fatal(err)
			}
			if got := tt.c.AppendJSON([]byte("prefix")); string(got) != "prefix"+string(want) {
				t.Errorf("AppendJSON = %s\nwant        prefix%s", got, want)
			}
		})
	}
	// A time json.Marshal refuses still gives valid JSON, with the rest.
	far := Call{ID: 7, Start: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), Arguments: json.RawMessage(`{}`), Name: "far"}
	var back map[string]any
	if got := far.AppendJSON(nil); json.Unmarshal(got, &back) != nil || back["name"] != "far" {
		t.Errorf("AppendJSON of a year past 9999 = %s", got)
	}
}

// BenchmarkCallJSON: what publishing a stored call costs to encode, by
// hand and by json.Marshal.
func BenchmarkCallJSON(b *testing.B) {
	c := Call{ID: 123456, Start: time.Now(), Duration: 1500 * time.Microsecond, ClientLabel: "cli", ClientName: "bench",
		ClientVersion: "1.0", Session: "0123456789ABCDEF", Endpoint: "echo", Server: "echo", Method: "tools/call",
		Name: "echo", Outcome: "ok", ResponseSize: 64, PID: 4242, Tier: "read", Tool: "echo"}
	b.Run("AppendJSON", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = c.AppendJSON(make([]byte, 0, 512))
		}
	})
	b.Run("Marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = json.Marshal(c)
		}
	})
}
