package history

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/app/redact"
)

func TestRedactArguments(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"path":"/a","token":"abc"}`, `{"path":"/a","token":"[redacted]"}`},
		{`{"b":1,"a":2,"apiKey":3}`, `{"b":1,"a":2,"apiKey":"[redacted]"}`}, // order kept, any type replaced
		{`{"outer":{"inner":{"githubToken":"x","keep":true}}}`, `{"outer":{"inner":{"githubToken":"[redacted]","keep":true}}}`},
		{`{"headers":[{"x-api-key":"k","accept":"json"},{"Authorization":"Bearer t"}]}`,
			`{"headers":[{"x-api-key":"[redacted]","accept":"json"},{"Authorization":"[redacted]"}]}`},
		{`[{"password":"p"},{"pw":"kept"}]`, `[{"password":"[redacted]"},{"pw":"kept"}]`},
		{`{"auth":{"user":"ann","pass":"x"}}`, `{"auth":"[redacted]"}`}, // an object replaced whole
		{`{"keyboard":"qwerty","max_tokens":100,"keys":["a","b"]}`, `{"keyboard":"qwerty","max_tokens":100,"keys":["a","b"]}`},
		{`{"secret":null}`, `{"secret":"[redacted]"}`},
		{`{"n":1.50e10,"big":123456789012345678901234567890}`, `{"n":1.50e10,"big":123456789012345678901234567890}`}, // numbers as written
		{` { "a" : "x<y>&z\u0001é\ud83d\ude00" } `, `{"a":"x<y>&z\u0001é😀"}`},
		{`"just a string"`, `"just a string"`},
		{`{}`, `{}`},
		{`[]`, `[]`},
		{`not json {`, `"not json {"`}, // stored as a string
		{`{"a":1} {"b":2}`, `"{\"a\":1} {\"b\":2}"`},
	} {
		got := string(prepareArguments(json.RawMessage(tc.in), 16<<10, true))
		if got != tc.want {
			t.Errorf("prepareArguments(%s)\n got %s\nwant %s", tc.in, got, tc.want)
		}
		if !json.Valid([]byte(got)) {
			t.Errorf("prepareArguments(%s) is not JSON: %s", tc.in, got)
		}
	}
	for _, in := range []string{"", "  ", "null"} {
		if got := prepareArguments(json.RawMessage(in), 100, true); got != nil {
			t.Errorf("prepareArguments(%q) = %s, want nil", in, got)
		}
	}
}

func TestArgumentsCap(t *testing.T) {
	const limit = 1024
	big := map[string]any{"token": strings.Repeat("s", 5000), "data": strings.Repeat(`"quoted" <é> `, 500)}
	raw, _ := json.Marshal(big)
	got := prepareArguments(raw, limit, true)
	if len(got) > limit {
		t.Errorf("capped arguments are %d bytes, over %d", len(got), limit)
	}
	var marker struct {
		Truncated bool   `json:"_truncated"`
		Size      int    `json:"size"`
		Preview   string `json:"preview"`
	}
	if err := json.Unmarshal(got, &marker); err != nil {
		t.Fatalf("capped arguments are not JSON: %v\n%s", err, got)
	}
	if !marker.Truncated || marker.Size <= limit || marker.Preview == "" {
		t.Errorf("marker = %+v", marker)
	}
	if strings.Contains(string(got), "sss") {
		t.Error("secret leaked into the truncated preview")
	}
	if !strings.HasPrefix(`{"data":"\"quoted\" <é>`, marker.Preview[:10]) {
		t.Errorf("preview does not start the arguments: %q", marker.Preview[:40])
	}
	// Just under the cap: kept whole.
	small := prepareArguments(json.RawMessage(`{"a":"`+strings.Repeat("x", limit-8)+`"}`), limit, true)
	if len(small) != limit-8+8 || strings.Contains(string(small), "_truncated") {
		t.Errorf("arguments at the cap were truncated: %d bytes", len(small))
	}
}

func TestPreview(t *testing.T) {
	if got := preparePreview(json.RawMessage(`{"text":"hi","token":"t"}`), 100, true); got != `{"text":"hi","token":"[redacted]"}` {
		t.Errorf("preview = %s", got)
	}
	long := json.RawMessage(`{"text":"` + strings.Repeat("é", 3000) + `"}`)
	got := preparePreview(long, 2048, true)
	if len(got) > 2048 || !strings.HasPrefix(got, `{"text":"éé`) || !json.Valid([]byte(`"`+got[9:]+`"`)) {
		t.Errorf("preview of %d bytes: len %d, %q...", len(long), len(got), got[:20])
	}
	if got := preparePreview(nil, 10, true); got != "" {
		t.Errorf("preview of nothing = %q", got)
	}
}

// TestRedactJSONChecksItsInput holds the redactor to json.Valid on the
// text it now checks itself: every kind of byte that ends valid JSON
// early, and the nesting limit.
func TestRedactJSONChecksItsInput(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	deepObject := func(n int) string {
		return strings.Repeat(`{"a":`, n-1) + "{}" + strings.Repeat("}", n-1)
	}
	for _, in := range []string{
		"", " ", "{", "}", "[", "]", "[1,]", "[,1]", "{,}", `{"a":1,}`, `{"a" 1}`, `{"a":}`, `{1:2}`,
		`{"a":1 "b":2}`, `["a" "b"]`, `{"a":1}}`, `[1]]`, `[1] x`, `1 2`, " \t\r\n1\n ", "\v1",
		"-", "01", "-01", "1.", ".5", "1e", "1e+", "1E-0", "-0", "0.0e-0", "12.34E+56", "+1", "0x1", "1_0", "NaN", "Infinity",
		"tru", "truex", "true", "false", "nul", "null", "nulll", "True",
		`"`, `"a`, `"\"`, `"\x"`, `"\u12"`, `"\u12g4"`, `"\uD83D"`, `"\u0000"`, `"\/\b\f\n\r\t\"\\"`,
		"\"a\x01b\"", "\"a\x7fb\"", "\"\xff\"", "\"é\"", `{"\u0074oken":"x"}`, `{"token":[1,}`, `{"token":"a`,
		deep(maxDepth), deep(maxDepth + 1), deepObject(maxDepth), deepObject(maxDepth + 1),
		`{"token":` + deep(maxDepth) + `}`,
	} {
		for _, values := range []bool{false, true} {
			_, ok := redactJSON([]byte(in), values)
			if want := json.Valid([]byte(in)); ok != want {
				t.Errorf("redactJSON(%.40q, values=%v): ok = %v, json.Valid = %v", in, values, ok, want)
			}
		}
	}
}

// FuzzRedactJSON checks the one-pass redactor against the plain way of
// doing the same: a token-by-token re-encoding with encoding/json's Decoder,
// which it replaced for speed.
func FuzzRedactJSON(f *testing.F) {
	for _, seed := range []string{
		`{"path":"/a","token":"abc"}`, `{"auth":{"user":"ann","pass":["x",{"y":1}]},"k":2}`,
		` { "a" : "x<y>&z\u0001é\ud83d\ude00" } `, `{"n":-1.50e+10,"t":true,"f":false,"z":null}`,
		`[{"password":"p"},{"pw":"kept"}, [ ] , { } ]`, `{"apiKey":-12 ,"b":[1, 2]}`, `{"secret":"a\"b\\c","x":"\/"}`,
		"{\"bad\":\"\xff\xfe\",\"ok\":\"é\"}", `"top"`, `12`, `{"a":1} {"b":2}`, `{"a":`, `[1,]`,
		`{"Token":{"deep":[[[{"x":"}"}]]]},"after":"kept"}`, `{"\u0074oken":"escaped key"}`,
		`{"t-o-k-e-n":1,"pass_word":2,"API_KEY":3,"Æble_Key":4,"monkey":5,"x":{"Cookie2":[]}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, values := range []bool{false, true} {
			got, ok := redactJSON(data, values)
			want, wantOK := redactJSONReference(data, values)
			if ok != wantOK || string(got) != string(want) {
				t.Errorf("redactJSON(%q, values=%v)\n got %q, %v\nwant %q, %v", data, values, got, ok, want, wantOK)
			}
		}
	})
}

func redactJSONReference(data []byte, values bool) ([]byte, bool) {
	if !json.Valid(data) { // Token alone would take "0A0" for 0
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var out []byte
	var value func() error
	value = func() error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case json.Delim:
			out = append(out, byte(t))
			for n := 0; dec.More(); n++ {
				if n > 0 {
					out = append(out, ',')
				}
				if t == '[' {
					if err := value(); err != nil {
						return err
					}
					continue
				}
				kt, err := dec.Token()
				if err != nil {
					return err
				}
				key, _ := kt.(string)
				out = append(appendString(out, key), ':')
				if redact.SecretName(key) {
					var skip json.RawMessage
					if err := dec.Decode(&skip); err != nil {
						return err
					}
					out = appendString(out, Redacted)
				} else if err := value(); err != nil {
					return err
				}
			}
			end, err := dec.Token()
			if err != nil {
				return err
			}
			out = append(out, byte(end.(json.Delim)))
		case string:
			if values {
				t = redact.Values(t)
			}
			out = appendString(out, t)
		case json.Number:
			out = append(out, t...)
		case bool:
			out = strconv.AppendBool(out, t)
		case nil:
			out = append(out, "null"...)
		}
		return nil
	}
	if err := value(); err != nil {
		return nil, false
	}
	return out, true
}

// BenchmarkRedactEchoCall is the writer's redaction of one echo call as
// make bench-serve makes them: its arguments and its response.
func BenchmarkRedactEchoCall(b *testing.B) {
	args := json.RawMessage(`{"text":"bench-hello"}`)
	resp := json.RawMessage(`{"content":[{"type":"text","text":"bench-hello"}]}`)
	b.ReportAllocs()
	for b.Loop() {
		prepareArguments(args, 16<<10, true)
		preparePreview(resp, 2048, true)
	}
}
