package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A fastStream is the SSE response of one fast call: progress
// notifications and requests to the client go on it as the call runs, then
// the response.
type fastStream struct {
	g       *Gateway
	session string

	mu      sync.Mutex
	w       *keepAliveWriter
	started bool
	ended   bool
}

type fastStreamKey struct{}

func fastStreamFrom(ctx context.Context) *fastStream {
	s, _ := ctx.Value(fastStreamKey{}).(*fastStream)
	return s
}

// writeEvent writes one SSE event of parts, as the go-sdk writes them, and
// flushes it so that the client has it at once. The call's last event
// (its response, or its error) is the exception: it is left in net/http's
// buffer, which the handler's return (right after) writes with the end of
// the response, in one write(2) instead of two; and a response that is
// the stream's only event and fits the buffer goes out with a
// Content-Length, unchunked. Once the last event is written, the stream
// takes no more.
func (s *fastStream) writeEvent(last bool, parts ...[]byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return errors.New("the call's response was written")
	}
	s.ended = last
	if !s.started {
		s.started = true
		s.w.startStream() // the headers, unless the keep-alives sent them
	}
	size := len(eventStart) + len(eventEnd)
	for _, p := range parts {
		size += len(p)
	}
	if size <= maxEventCopy {
		// One write of the whole event: each write to the response
		// writer takes its lock and the time.
		event := make([]byte, 0, size)
		event = append(event, eventStart...)
		for _, p := range parts {
			event = append(event, p...)
		}
		event = append(event, eventEnd...)
		if _, err := s.w.Write(event); err != nil {
			return err
		}
	} else {
		if _, err := s.w.Write([]byte(eventStart)); err != nil {
			return err
		}
		for _, p := range parts {
			if _, err := s.w.Write(p); err != nil {
				return err
			}
		}
		if _, err := s.w.Write([]byte(eventEnd)); err != nil {
			return err
		}
	}
	if !last {
		_ = http.NewResponseController(s.w).Flush()
	}
	return nil
}

// An SSE event of the fast path, as the go-sdk writes it: eventStart, the
// message, eventEnd.
const (
	eventStart = "event: message\ndata: "
	eventEnd   = "\n\n"
)

// maxEventCopy is the largest event write copies into one buffer; a
// bigger one (a big result) is written in its parts, not copied.
const maxEventCopy = 16 << 10

// write writes an event that is not the call's last.
func (s *fastStream) write(parts ...[]byte) error { return s.writeEvent(false, parts...) }

// response writes the call's response and ends the stream. A result under
// spliceMin is compacted, as encoding/json compacts the go-sdk's raw
// results; a bigger one is written as it is, as splices write it.
func (s *fastStream) response(id json.RawMessage, result []byte, big bool) error {
	if !big && needsCompact(result) {
		var b bytes.Buffer
		if err := json.Compact(&b, result); err == nil {
			result = b.Bytes()
		}
	}
	return s.writeEvent(true, []byte(`{"jsonrpc":"2.0","id":`), id, []byte(`,"result":`), result, []byte("}"))
}

// errorResponse writes the call's error response (an encoded message) and
// ends the stream.
func (s *fastStream) errorResponse(msg []byte) error { return s.writeEvent(true, msg) }

// needsCompact reports whether JSON text has space outside its strings.
func needsCompact(b []byte) bool {
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			return true
		case '"':
			j := i + 1
			for j < len(b) {
				k := bytes.IndexAny(b[j:], "\"\\")
				if k < 0 {
					return false
				}
				j += k
				if b[j] == '\\' {
					j += 2
					continue
				}
				break
			}
			i = j
		}
	}
	return false
}

// notify writes a notification on the stream.
func (s *fastStream) notify(method string, params any) error {
	p, err := marshalNoEscape(params)
	if err != nil {
		return err
	}
	return s.write([]byte(`{"jsonrpc":"2.0","method":"`+method+`","params":`), p, []byte("}"))
}

// request sends the client a request on the stream and waits for its reply
// (a POST routed by fastReply).
func (s *fastStream) request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	p, err := marshalNoEscape(params)
	if err != nil {
		return nil, err
	}
	id := "sbq-" + strconv.FormatUint(s.g.fast.nextID.Add(1), 36)
	key := fastKey{s.session, id}
	ch := make(chan fastReply, 1)
	s.g.fast.mu.Lock()
	s.g.fast.asks[key] = ch
	s.g.fast.mu.Unlock()
	defer func() {
		s.g.fast.mu.Lock()
		delete(s.g.fast.asks, key)
		s.g.fast.mu.Unlock()
	}()
	if err := s.write([]byte(`{"jsonrpc":"2.0","id":"`+id+`","method":"`+method+`","params":`), p, []byte("}")); err != nil {
		return nil, fmt.Errorf("calling %q: %w", method, err)
	}
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, fmt.Errorf("calling %q: %w", method, r.err)
		}
		return r.result, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// marshalNoEscape encodes v as the go-sdk encodes messages: without HTML
// escapes.
func marshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// deliverProgress passes a progress notification on to the caller: on the
// fast path's stream for a fast call, else through the go-sdk.
func (g *Gateway) deliverProgress(r *progressRoute, p mcp.ProgressNotificationParams) {
	if r.watch != nil {
		r.watch(p) // the CallWatcher's, whichever path the call took
	}
	s := fastStreamFrom(r.ctx)
	if s == nil {
		r.deliver(p)
		return
	}
	r.timer.Reset(r.timeout)
	p.ProgressToken = r.token
	_ = s.notify("notifications/progress", &p)
	r.count.Add(1)
	select {
	case r.delivered <- struct{}{}:
	default:
	}
}

// askFast sends a server's request to the client of a fast call, on the
// call's stream, and converts the client's answer as askCaller does, with
// what ServerSession.Elicit and CreateMessage do around the request on the
// go-sdk path (fastasks.go). caps are the client's capabilities.
func askFast[P any, R any](ctx context.Context, s *fastStream, caps *mcp.ClientCapabilities, what string, params P,
	convert func(mcp.InputResponse) (R, error)) (R, error) {
	var zero R
	var method string
	var into mcp.InputResponse
	switch what {
	case "sampling":
		//lint:ignore SA1019 the gateway relays sampling between clients and servers that still use it (deprecated by SEP-2577, functional in its deprecation window)
		method, into = "sampling/createMessage", &mcp.CreateMessageWithToolsResult{}
	case "elicitation":
		method, into = "elicitation/create", &mcp.ElicitResult{}
	case "roots":
		//lint:ignore SA1019 the gateway relays roots between clients and servers that still use it (deprecated by SEP-2577, functional in its deprecation window)
		method, into = "roots/list", &mcp.ListRootsResult{}
	default:
		return zero, fmt.Errorf("internal: cannot ask a client for %s", what)
	}
	var sent any = params
	var elicit *mcp.ElicitParams
	switch p := sent.(type) {
	case *mcp.ElicitParams:
		// As ServerSession.Elicit sends it: the mode said.
		elicit = p
		if p != nil && p.Mode == "" {
			cp := *p
			cp.Mode = "form"
			if p.URL != "" || p.ElicitationID != "" {
				cp.Mode = "url"
			}
			elicit = &cp
			sent = &cp
		}
		if err := checkElicitMode(caps, elicit); err != nil {
			return zero, err
		}
	//lint:ignore SA1019 the gateway relays sampling between clients and servers that still use it (deprecated by SEP-2577, functional in its deprecation window)
	case *mcp.CreateMessageParams:
		// As ServerSession.CreateMessage sends it: no null messages.
		if p != nil && p.Messages == nil {
			cp := *p
			//lint:ignore SA1019 the gateway relays sampling between clients and servers that still use it (deprecated by SEP-2577, functional in its deprecation window)
			cp.Messages = []*mcp.SamplingMessage{}
			sent = &cp
		}
	}
	raw, err := s.request(ctx, method, sent)
	if err != nil {
		return zero, err
	}
	if err := decodeAnswer(raw, into); err != nil {
		return zero, fmt.Errorf("calling %q: %w", method, err)
	}
	switch r := into.(type) {
	case *mcp.ElicitResult:
		if err := checkElicitAnswer(elicit, r); err != nil {
			return zero, err
		}
	//lint:ignore SA1019 the gateway relays sampling between clients and servers that still use it (deprecated by SEP-2577, functional in its deprecation window)
	case *mcp.CreateMessageWithToolsResult:
		if into, err = singleSampled(r); err != nil {
			return zero, err
		}
	}
	return convert(into)
}
