package mcpscan

import (
	"bytes"
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"testing"
)

var sessionEraDrop = []string{"ttlMs", "cacheScope", "resultType"}

func TestDropMembers(t *testing.T) {
	for _, c := range []struct {
		obj   string
		nulls bool
		want  string // "" : not ok
	}{
		{`{"tools":[],"ttlMs":0,"cacheScope":""}`, false, `{"tools":[]}`},
		{`{"ttlMs":0,"tools":[{"name":"a","ttlMs":1}],"nextCursor":"x"}`, false, `{"tools":[{"name":"a","ttlMs":1}],"nextCursor":"x"}`},
		{`{"contents":[{"uri":"f","text":"\"ttlMs\":1,"}],"cacheScope":"private"}`, false, `{"contents":[{"uri":"f","text":"\"ttlMs\":1,"}]}`},
		{`{"content":[{"type":"text","text":"x"}]}`, false, `{"content":[{"type":"text","text":"x"}]}`},
		{` { "content" : [ ] , "resultType" : "complete" } `, false, `{"content" : [ ]}`},
		{`{"resultType":"complete"}`, false, `{}`},
		{`{}`, false, `{}`},
		{`{"content":null,"inputRequests":{"a":{}},"resultType":"input_required"}`, true, `{"inputRequests":{"a":{}}}`},
		{`{"content":null,"x":"null"}`, true, `{"x":"null"}`},
		{`{"result\u0054ype":"complete"}`, false, ""}, // an escaped key: the caller decodes
		{`{"a\"b":1,"ttlMs":2}`, false, ""},
		{`[1,2]`, false, ""},
		{`{"a":1`, false, ""},
		{`{"a":1}x`, false, ""},
		{`{"a" 1}`, false, ""},
	} {
		out, ok := DropMembers([]byte(c.obj), sessionEraDrop, c.nulls)
		if got := string(out); ok != (c.want != "") || ok && got != c.want {
			t.Errorf("DropMembers(%s, nulls %v) = %s, %v; want %q", c.obj, c.nulls, got, ok, c.want)
		}
	}
}

// TestDropMembersKeepsObj checks that an object with nothing to drop is
// returned as it is, not copied.
func TestDropMembersKeepsObj(t *testing.T) {
	obj := []byte(`{"tools":[{"name":"a"}]}`)
	out, ok := DropMembers(obj, sessionEraDrop, true)
	if !ok || &out[0] != &obj[0] || len(out) != len(obj) {
		t.Fatalf("DropMembers(%s) = %s, %v: want obj itself", obj, out, ok)
	}
}

// FuzzDropMembers checks DropMembers against decoding the object into a
// map and deleting the members: for valid JSON, what it returns decodes
// to the same members (the last of duplicate keys kept, as a decoder
// keeps it), and it declines only objects with an escape in a key.
func FuzzDropMembers(f *testing.F) {
	f.Add([]byte(`{"tools":[],"ttlMs":0,"cacheScope":""}`))
	f.Add([]byte(`{"content":null,"resultType":"input_required"}`))
	f.Add([]byte(`{"ttl\u004ds":0}`))
	f.Add([]byte(` {"a" : {"ttlMs":[1,{"b":"}"}]} ,"ttlMs":null } `))
	addSessionParts(f, "result")
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, nulls := range []bool{false, true} {
			dropMembersAsDecoded(t, data, nulls)
		}
	})
}

func dropMembersAsDecoded(t *testing.T, data []byte, nulls bool) {
	var want map[string]json.RawMessage
	if json.Unmarshal(data, &want) != nil || want == nil {
		return // not an object: what DropMembers says of it is not used
	}
	out, ok := DropMembers(data, sessionEraDrop, nulls)
	if !ok {
		if !escapedKey(data) {
			t.Fatalf("DropMembers(%s) declined an object without an escaped key", data)
		}
		return
	}
	for k, v := range want {
		if slices.Contains(sessionEraDrop, k) || nulls && string(v) == "null" {
			delete(want, k)
		}
	}
	var got map[string]json.RawMessage
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("DropMembers(%s) = %s: %v", data, out, err)
	}
	if !maps.EqualFunc(got, want, func(a, b json.RawMessage) bool { return reflect.DeepEqual(decoded(t, a), decoded(t, b)) }) {
		t.Fatalf("DropMembers(%s) = %s, want the members %v", data, out, want)
	}
}

// escapedKey reports whether one of obj's top-level keys holds a
// backslash.
func escapedKey(obj []byte) bool {
	var top map[string]json.RawMessage
	if json.Unmarshal(obj, &top) != nil {
		return false
	}
	s := scanner{b: obj}
	s.space()
	s.eat('{')
	for {
		s.space()
		s.eat(',')
		s.space()
		key, ok := s.str()
		if !ok {
			return false
		}
		if bytes.IndexByte(key, '\\') >= 0 {
			return true
		}
		s.space()
		s.eat(':')
		s.space()
		if !s.value() {
			return false
		}
	}
}

func decoded(t *testing.T, raw json.RawMessage) any {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("decoding %s: %v", raw, err)
	}
	return v
}

func TestCompleteResourceContents(t *testing.T) {
	for _, c := range []struct {
		result string
		want   bool
	}{
		{`{"contents":[{"uri":"file:///a","mimeType":"text/plain","text":"hi"}]}`, true},
		{` { "contents" : [ { "uri" : "a" , "mimeType" : "b" , "blob" : "AA==" } , {"uri":"c","mimeType":"d"} ] , "_meta" : {"x":[1]} } `, true},
		{`{"contents":[]}`, true},
		{`{"contents":[{"uri":"a","text":"no mimeType"}]}`, false},
		{`{"contents":[{"uri":"","mimeType":"b"}]}`, false},
		{`{"contents":[{"uri":"a","mimeType":null}]}`, false},
		{`{"contents":[{"uri":"a","mimeType":"b","text":"\"uri\":\"x\""}],"ttlMs":0}`, false},
		{`{"contents":[{"uri":"a","mimeType":"b"}],"resultType":"complete"}`, false},
		{`{"resultType":"input_required","inputRequests":{}}`, false},
		{`{"contents":[{"uri":"a","mime\u0054ype":"b"}]}`, false},
		{`{"_meta":{}}`, false},
		{`{"contents":{}}`, false},
		{`[]`, false},
	} {
		if got := CompleteResourceContents([]byte(c.result)); got != c.want {
			t.Errorf("CompleteResourceContents(%s) = %v, want %v", c.result, got, c.want)
		}
	}
}

// FuzzCompleteResourceContents checks that a result taken for complete is
// one by decoding: only contents and _meta, each content naming a
// non-empty uri and mimeType.
func FuzzCompleteResourceContents(f *testing.F) {
	f.Add([]byte(`{"contents":[{"uri":"a","mimeType":"b","text":"c"}]}`))
	f.Add([]byte(`{"contents":[{"uri":"a","mimeType":"b"}],"_meta":{"k":1}}`))
	f.Add([]byte(`{"contents":[{"uri":"a","mimeType":"b","uri":""}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) || !CompleteResourceContents(data) {
			return
		}
		var top map[string]json.RawMessage
		if err := json.Unmarshal(data, &top); err != nil {
			t.Fatalf("%s: taken for complete, not an object: %v", data, err)
		}
		for k := range top {
			if k != "contents" && k != "_meta" {
				t.Fatalf("%s: taken for complete with %q", data, k)
			}
		}
		var contents []map[string]any
		if err := json.Unmarshal(top["contents"], &contents); err != nil {
			t.Fatalf("%s: contents: %v", data, err)
		}
		for _, c := range contents {
			for _, k := range []string{"uri", "mimeType"} {
				if s, _ := c[k].(string); s == "" {
					t.Fatalf("%s: taken for complete with %s %v", data, k, c[k])
				}
			}
		}
	})
}
