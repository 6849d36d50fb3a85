package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestShapeDropsTheOtherEra checks what a session-era client gets of the
// results whose types carry the 2026-07-28 era's keys, by the one walk
// and by decoding (dropDecoded: results with an escaped key) alike.
func TestShapeDropsTheOtherEra(t *testing.T) {
	for _, c := range []struct {
		name  string
		inner mcp.Result
		drop  []string
		nulls bool
		want  string
	}{
		{"tools/list", &mcp.ListToolsResult{Tools: []*mcp.Tool{tool("a")}, NextCursor: "n"}, sessionEraDrop, false,
			`{"nextCursor":"n","tools":[{"description":"does a","inputSchema":{"properties":{"x":{"type":"string"}},"type":"object"},"name":"a"}]}`},
		{"resources/read", &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "file:///a", Text: `"ttlMs":1`}}}, sessionEraDrop, false,
			`{"contents":[{"text":"\"ttlMs\":1","uri":"file:///a"}]}`},
		{"input required", &mcp.CallToolResult{}, nil, true, `{}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := marshal(t, newShapedResult(c.inner, c.drop, c.nulls))
			data, err := json.Marshal(c.inner)
			if err != nil {
				t.Fatal(err)
			}
			decoded, err := dropDecoded(data, c.drop, c.nulls)
			if err != nil {
				t.Fatal(err)
			}
			for by, out := range map[string][]byte{"the walk": got, "decoding": decoded} {
				if !sameJSON(t, out, []byte(c.want)) {
					t.Errorf("by %s: %s, want %s", by, out, c.want)
				}
			}
		})
	}
	// A server's own bytes with an escaped key: decoded, and dropped.
	raw := &rawResult{data: json.RawMessage(`{"content":[],"result\u0054ype":"complete"}`)}
	if got := marshal(t, newShapedResult(raw, sessionEraDrop, false)); !sameJSON(t, got, []byte(`{"content":[]}`)) {
		t.Errorf("an escaped resultType: %s, want it dropped", got)
	}
}

func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	xs, _ := json.Marshal(x)
	ys, _ := json.Marshal(y)
	return string(xs) == string(ys)
}

// BenchmarkShape compares the two ways of taking the other era's keys
// out of a result, in one run: the walk (mcpscan.DropMembers) and
// decoding into a map and encoding it again (dropDecoded, what shape did
// for every result before), each after the json.Marshal both start from.
// The results: the catalog's 128 tools as a tools/list (a list's first
// marshal; later ones are kept, listcache.go) and a 256 KiB text resource
// read.
func BenchmarkShape(b *testing.B) {
	var corpus struct {
		Servers []struct {
			Tools []*mcp.Tool `json:"tools"`
		} `json:"servers"`
	}
	data, err := os.ReadFile(filepath.Join("..", "toolsearch", "testdata", "catalog-tools.json"))
	if err != nil {
		b.Fatal(err)
	}
	if err := json.Unmarshal(data, &corpus); err != nil {
		b.Fatal(err)
	}
	var tools []*mcp.Tool
	for _, s := range corpus.Servers {
		tools = append(tools, s.Tools...)
	}
	results := []struct {
		name  string
		inner mcp.Result
	}{
		{"catalog-tools-list", &mcp.ListToolsResult{Tools: tools}},
		{"resource-256KiB", &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "file:///big.txt", MIMEType: "text/plain",
			Text: strings.Repeat("the quick brown fox jumps over the lazy dog, \"quoted\"\n", 256<<10/54)}}}},
	}
	for _, r := range results {
		for _, way := range []string{"walk", "decode"} {
			b.Run(r.name+"/"+way, func(b *testing.B) {
				shaped := newShapedResult(r.inner, sessionEraDrop, false)
				b.ReportAllocs()
				for b.Loop() {
					var err error
					if way == "walk" {
						_, err = shaped.shape()
					} else {
						var data []byte
						if data, err = json.Marshal(r.inner); err == nil {
							_, err = dropDecoded(data, sessionEraDrop, false)
						}
					}
					if err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// TestBigShapedResultsAreSpliced: a session-era result of spliceMin or
// more that eraResults shapes reaches the response as its shaped bytes
// through a placeholder (one, however often it is marshaled), and a big
// raw tools/call result with a resultType loses it as a small one does,
// its first placeholder forgotten.
func TestBigShapedResultsAreSpliced(t *testing.T) {
	g := &Gateway{}
	g.splice.init()
	text := strings.Repeat("0123456789abcdef", spliceMin/16+1)
	bigRaw := json.RawMessage(`{"content":[{"type":"text","text":"` + text + `"}],"resultType":"complete"}`)
	for _, c := range []struct {
		name, method string
		res          func() mcp.Result
		req          mcp.Request
		want         string
	}{
		{"resources/read", "resources/read",
			func() mcp.Result {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "test://big", Text: text}}}
			},
			&mcp.ReadResourceRequest{Params: &mcp.ReadResourceParams{URI: "test://big"}},
			`{"contents":[{"text":"` + text + `","uri":"test://big"}]}`},
		{"a raw tools/call result with a resultType", "tools/call",
			func() mcp.Result {
				r := &rawResult{data: bigRaw}
				r.placeholder = g.splice.add(nil, r.data) // as rawResults does
				return r
			},
			&mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "big"}},
			`{"content":[{"type":"text","text":"` + text + `"}]}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			next := func(context.Context, string, mcp.Request) (mcp.Result, error) { return c.res(), nil }
			res, err := g.eraResults()(next)(t.Context(), c.method, c.req)
			if err != nil {
				t.Fatal(err)
			}
			first, second := marshal(t, res), marshal(t, res)
			if !bytes.HasPrefix(first, g.splice.prefix) || !bytes.Equal(first, second) {
				t.Fatalf("marshaled as %.80s then %.80s: want one placeholder", first, second)
			}
			if n := g.splice.count.Load(); n != 1 {
				t.Fatalf("%d results wait to be written, want 1", n)
			}
			var out bytes.Buffer
			if _, err := g.splice.write(&out, append(append([]byte(`{"jsonrpc":"2.0","id":1,"result":`), first...), '}')); err != nil {
				t.Fatal(err)
			}
			var msg struct{ Result json.RawMessage }
			if err := json.Unmarshal(out.Bytes(), &msg); err != nil {
				t.Fatalf("the response as written: %v", err)
			}
			if !sameJSON(t, msg.Result, []byte(c.want)) {
				t.Errorf("result %.200s..., want %.200s...", msg.Result, c.want)
			}
			if n := g.splice.count.Load(); n != 0 {
				t.Errorf("%d results still wait after the response", n)
			}
		})
	}
	// A small one is marshaled in place.
	next := func(context.Context, string, mcp.Request) (mcp.Result, error) {
		return &mcp.ListToolsResult{Tools: []*mcp.Tool{tool("a")}}, nil
	}
	res, err := g.eraResults()(next)(t.Context(), "tools/list", &mcp.ListToolsRequest{Params: &mcp.ListToolsParams{}})
	if err != nil {
		t.Fatal(err)
	}
	if got := marshal(t, res); bytes.HasPrefix(got, g.splice.prefix) || bytes.Contains(got, []byte("ttlMs")) {
		t.Errorf("a small list marshaled as %s", got)
	}
}

// TestRawResourceReads: a session-era resources/read whose result the
// go-sdk would pass on unchanged is answered with the server's bytes
// (spliced when big); one of the stateless era, or one the go-sdk would
// change (a content without its mimeType), is decoded as before.
func TestRawResourceReads(t *testing.T) {
	g := &Gateway{}
	g.splice.init()
	complete := `{"contents":[{"uri":"test://a","mimeType":"text/plain","text":"hi"}]}`
	big := `{"contents":[{"uri":"test://a","mimeType":"text/plain","text":"` + strings.Repeat("x", spliceMin) + `"}]}`
	stateless := &mcp.ReadResourceRequest{Params: &mcp.ReadResourceParams{URI: "test://a",
		Meta: mcp.Meta{mcp.MetaKeyProtocolVersion: statelessVersion}}}
	session := &mcp.ReadResourceRequest{Params: &mcp.ReadResourceParams{URI: "test://a"}}
	for _, c := range []struct {
		name   string
		req    *mcp.ReadResourceRequest
		server string
		raw    bool
	}{
		{"complete", session, complete, true},
		{"big", session, big, true},
		{"no mimeType", session, `{"contents":[{"uri":"test://a","text":"hi"}]}`, false},
		{"stateless", stateless, complete, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			// As resourceHandler does, with the backend hop's bytes.
			handler := func(ctx context.Context, _ string, _ mcp.Request) (mcp.Result, error) {
				res, err := decodeResourceResult(ctx, json.RawMessage(c.server))
				if rc := rawCaptureFrom(ctx); rc != nil {
					rc.done(err == nil)
				}
				return res, err
			}
			res, err := g.rawResults()(handler)(t.Context(), "resources/read", c.req)
			if err != nil {
				t.Fatal(err)
			}
			raw, isRaw := res.(*rawResult)
			if isRaw != c.raw {
				t.Fatalf("result %T, want raw %v", res, c.raw)
			}
			if !isRaw {
				if rr, ok := res.(*mcp.ReadResourceResult); !ok || len(rr.Contents) != 1 || rr.Contents[0].Text != "hi" {
					t.Errorf("decoded: %+v", res)
				}
				return
			}
			if string(raw.data) != c.server || (raw.placeholder != nil) != (len(c.server) >= spliceMin) {
				t.Errorf("raw %.80s (placeholder %q), want the server's bytes", raw.data, raw.placeholder)
			}
			if raw.placeholder != nil {
				g.splice.take(string(raw.placeholder))
			}
		})
	}
}
