package gateway

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/internal/mcpscan"
)

// A tools/call result (and a session-era resources/read result that the
// go-sdk would pass on unchanged, mcpscan.CompleteResourceContents) is
// passed on as the bytes the server sent, not
// decoded into an mcp.CallToolResult and encoded again: with the go-sdk,
// that round trip is most of what a large result costs the gateway (every
// text parsed, unescaped, escaped and copied several times; about 7 MiB
// allocated for a 256 KiB result). The go-sdk still frames both hops:
//
//	front ──rawResults middleware: ctx gets a rawCapture──▶ callTool ──▶ cs.CallTool(ctx)
//	                                                                        │
//	backendConn.Write sees the tools/call request with ctx: id → capture ◀──┘
//	backendConn.Read sees the response with that id: the capture keeps the
//	result's bytes and the go-sdk decodes a small stand-in instead
//	                                                                        │
//	rawResults returns a rawResult, which marshals as those bytes  ◀────┘
//
// Only plain results take this path: errors (which the recorder reads) and
// input-required results (which the go-sdk acts on) are decoded as before.
// A client of the stateless era gets "resultType":"complete" added, as the
// go-sdk adds it; a stateless call whose result comes in a later round
// than the one that started it takes the first round's capture over.

// A rawCapture receives the result of one forwarded tools/call.
type rawCapture struct {
	mu        sync.Mutex
	conn      *backendConn // where the request went, to forget it
	id        jsonrpc.ID
	result    json.RawMessage // the server's result, when plain
	forwarded bool            // callTool passed the result on (no failure of its own)
}

type rawCaptureKey struct{}

func rawCaptureFrom(ctx context.Context) *rawCapture {
	rc, _ := ctx.Value(rawCaptureKey{}).(*rawCapture)
	return rc
}

// sent notes that the call went out on conn as id.
func (rc *rawCapture) sent(conn *backendConn, id jsonrpc.ID) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.conn, rc.id = conn, id
}

// take keeps result if it is plain, and returns what the go-sdk should
// decode in its place, or nil to let it decode result itself.
func (rc *rawCapture) take(result json.RawMessage) json.RawMessage {
	if !mcpscan.PlainToolResult(result) {
		return nil
	}
	rc.keep(result)
	return json.RawMessage(standInResult)
}

// keep keeps result, to be passed on as it is.
func (rc *rawCapture) keep(result json.RawMessage) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.result = result
}

// standInResult is what the go-sdk client decodes for a captured result:
// the least that is a valid CallToolResult.
const standInResult = `{"content":[]}`

// done forgets the call on its connection if no response came (the call
// was cancelled or the process died), and says whether the result is to
// be passed on raw.
func (rc *rawCapture) done(forwarded bool) {
	rc.mu.Lock()
	conn, id := rc.conn, rc.id
	rc.forwarded = forwarded
	rc.mu.Unlock()
	if conn != nil {
		conn.forget(id, rc)
	}
}

// adopt takes over what from captured, for the round of a stateless call
// that answers with a result another round's capture received.
func (rc *rawCapture) adopt(from *rawCapture) {
	from.mu.Lock()
	result, forwarded := from.result, from.forwarded
	from.mu.Unlock()
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.result, rc.forwarded = result, forwarded
}

// raw returns the captured result when it is to be passed on as is.
func (rc *rawCapture) raw() json.RawMessage {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if !rc.forwarded {
		return nil
	}
	return rc.result
}

// rawResult is a tools/call or resources/read result that marshals as
// the server's own bytes, or, when it is big, as a placeholder that the
// response writer replaces with them (see splices).
type rawResult struct {
	mcp.ResultBase
	data        json.RawMessage
	placeholder []byte // nil: data is marshaled
	// complete adds "resultType":"complete", as the go-sdk does to the
	// results it sends a client of the 2026-07-28 era (multi round-trip
	// requests), when the server's result has no resultType.
	complete bool
}

func (r *rawResult) MarshalJSON() ([]byte, error) {
	if r.placeholder != nil {
		return r.placeholder, nil
	}
	if r.complete {
		head, rest := withResultType(r.data)
		return append(head, rest...), nil
	}
	return r.data, nil
}

// withResultType splits an object's text into a new start that holds
// "resultType":"complete" and the rest of the object, to be written one
// after the other.
func withResultType(obj json.RawMessage) (head, rest []byte) {
	t := bytes.TrimLeft(obj, " \t\r\n")
	rest = t[1:] // after '{'
	head = []byte(`{"resultType":"complete"`)
	if r := bytes.TrimLeft(rest, " \t\r\n"); len(r) > 0 && r[0] != '}' {
		head = append(head, ',')
	}
	return head, rest
}

// spliceMin is the size from which a raw result is spliced into the
// response stream instead of being marshaled: the go-sdk marshals a result
// and then the message holding it, and encoding/json copies a raw value
// twice each time (compacting it into a buffer that grows by doubling, then
// out of it), so a 20 MB result would cost over 80 MB on its way out.
const spliceMin = 64 << 10

// spliceExpiry bounds how long a result waits to be written: a response
// the go-sdk never writes (the client went away) is forgotten after it.
const spliceExpiry = 2 * time.Minute

// splices holds the big results on their way to a client's response
// stream. The go-sdk marshals a small placeholder in their place,
// {"sbRaw":"<secret>-<n>"}, and the gateway's response writer
// (keepAliveWriter) writes the result's bytes where it sees the
// placeholder. The secret is random per gateway, and a placeholder can
// appear unescaped only where the go-sdk put it: within a server's own
// JSON text its quotes would be escaped.
type splices struct {
	prefix []byte // {"sbRaw":"<secret>-
	mu     sync.Mutex
	m      map[string]*splice // by placeholder
	n      uint64
	// count is len(m), read without the lock on every write of a response.
	count atomic.Int64
}

type splice struct {
	head  []byte // written before data, if set
	data  json.RawMessage
	timer *time.Timer
}

func (s *splices) init() {
	s.prefix = []byte(`{"sbRaw":"` + rand.Text() + "-")
	s.m = map[string]*splice{}
}

// add keeps data (to be written after head) until its placeholder is
// written, and returns the placeholder.
func (s *splices) add(head []byte, data json.RawMessage) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	ph := strconv.AppendUint(bytes.Clone(s.prefix), s.n, 10)
	ph = append(ph, `"}`...)
	key := string(ph)
	s.m[key] = &splice{head: head, data: data, timer: time.AfterFunc(spliceExpiry, func() { s.take(key) })}
	s.count.Add(1)
	return ph
}

// take returns and forgets the result of a placeholder.
func (s *splices) take(placeholder string) (*splice, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sp, ok := s.m[placeholder]
	if !ok {
		return nil, false
	}
	delete(s.m, placeholder)
	s.count.Add(-1)
	sp.timer.Stop()
	return sp, true
}

// waiting reports whether any result waits to be written.
func (s *splices) waiting() bool { return s.count.Load() > 0 }

// write writes b to w with every placeholder in it replaced by its result.
func (s *splices) write(w io.Writer, b []byte) (int, error) {
	n := 0
	for {
		i := bytes.Index(b, s.prefix)
		if i < 0 {
			break
		}
		end := bytes.Index(b[i:], []byte(`"}`))
		if end < 0 {
			break
		}
		end += i + 2
		sp, ok := s.take(string(b[i:end]))
		if !ok {
			// Not ours (or expired): written as it is.
			k, err := w.Write(b[:end])
			n += k
			if err != nil {
				return n, err
			}
			b = b[end:]
			continue
		}
		if k, err := w.Write(b[:i]); err != nil {
			return n + k, err
		}
		if len(sp.head) > 0 {
			if _, err := w.Write(sp.head); err != nil {
				return n + i, err
			}
		}
		if _, err := w.Write(sp.data); err != nil {
			return n + i, err
		}
		n += end
		b = b[end:]
	}
	k, err := w.Write(b)
	return n + k, err
}

// rawResults gives each tools/call, and each session-era resources/read,
// a rawCapture and answers with the captured bytes when the call passed a
// plain result on.
func (g *Gateway) rawResults() mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if rr, ok := req.(*mcp.ReadResourceRequest); ok && method == "resources/read" && rr.ProtocolVersion() < statelessVersion {
				rc := &rawCapture{}
				res, err := next(context.WithValue(ctx, rawCaptureKey{}, rc), method, req)
				if data := rc.raw(); err == nil && data != nil {
					return g.rawOf(data, false), nil
				}
				return res, err
			}
			if method != "tools/call" {
				return next(ctx, method, req)
			}
			ctr, ok := req.(*mcp.CallToolRequest)
			if !ok {
				return next(ctx, method, req)
			}
			rc := &rawCapture{}
			res, err := next(context.WithValue(ctx, rawCaptureKey{}, rc), method, req)
			if err != nil {
				return res, err
			}
			if data := rc.raw(); data != nil {
				return g.rawOf(data, ctr.ProtocolVersion() >= statelessVersion && !bytes.Contains(data, []byte(`"resultType"`))), nil
			}
			return res, nil
		}
	}
}

// rawOf is the result of a server's bytes, data: with "resultType":
// "complete" added when complete is set, and spliced into the response
// when big.
func (g *Gateway) rawOf(data json.RawMessage, complete bool) *rawResult {
	r := &rawResult{data: data, complete: complete}
	if len(data) >= spliceMin {
		var head []byte
		if r.complete {
			head, data = withResultType(data)
		}
		r.placeholder = g.splice.add(head, data)
	}
	return r
}
