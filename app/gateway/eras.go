package gateway

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/internal/mcpscan"
)

// The go-sdk front serves both protocol eras with the same result types,
// and a few fields leak across: list results and resources/read always
// carry the 2026-07-28 era's ttlMs and cacheScope (their JSON tags have no
// omitempty), a backend's resultType passes through, and an input-required
// result marshals "content": null. eraResults shapes each result for the
// era of the request that asked for it.

// sessionEraDrop are the top-level keys a session-era client never gets.
var sessionEraDrop = []string{"ttlMs", "cacheScope", "resultType"}

// shapedMethods are the methods whose results eraResults looks at.
var shapedMethods = map[string]bool{
	"tools/list": true, "prompts/list": true, "resources/list": true, "resources/templates/list": true,
	"resources/read": true, "tools/call": true, "prompts/get": true, "completion/complete": true,
}

// eraResults is the outermost receiving middleware of every front. It
// keeps the front's recent session-era list bytes (listcache.go).
func (g *Gateway) eraResults() mcp.Middleware {
	lists := &listCache{}
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if d, ok := res.(*mcp.DiscoverResult); ok && err == nil && d.Capabilities != nil && statelessRequest(req) {
				d.Capabilities = statelessCapabilities(d.Capabilities)
				return res, nil
			}
			if err != nil || res == nil || !shapedMethods[method] {
				return res, err
			}
			if statelessRequest(req) {
				// An input-required result has no content: drop the nulls
				// the result types would write.
				if r, ok := res.(interface{ NeedsInput() bool }); ok && r.NeedsInput() {
					return newShapedResult(res, nil, true), nil
				}
				return res, nil
			}
			if raw, ok := res.(*rawResult); ok {
				if !bytes.Contains(raw.data, []byte(`"resultType"`)) {
					return res, nil // the common case: the server's bytes, as they are
				}
				if raw.placeholder != nil { // shaped from its bytes, and spliced again if still big
					g.splice.take(string(raw.placeholder))
					res = &rawResult{data: raw.data}
				}
			}
			shaped := newShapedResult(res, sessionEraDrop, false)
			shaped.splices = &g.splice
			if key, ok := listKeyOf(method, res); ok {
				shaped.lists, shaped.key = lists, key
			}
			return shaped, nil
		}
	}
}

// statelessCapabilities are caps, the front's (newFront), as the
// 2026-07-28 era serves them, for server/discover: without logging, since
// the era has no logging/setLevel and the gateway forwards no server's
// log messages to a stateless request, whatever its _meta logLevel.
// Resource subscriptions stay: the era's subscriptions/listen
// serves them (resourceSubscriptions, acknowledged when resources.subscribe
// is set), in place of resources/subscribe.
func statelessCapabilities(caps *mcp.ServerCapabilities) *mcp.ServerCapabilities {
	c := *caps
	//lint:ignore SA1019 the gateway relays logging between clients and servers that still use it (deprecated by SEP-2577, functional in its deprecation window)
	c.Logging = nil
	return &c
}

// statelessRequest reports whether req is of the 2026-07-28 era.
func statelessRequest(req mcp.Request) bool {
	r, ok := req.(interface{ ProtocolVersion() string })
	return ok && r.ProtocolVersion() >= statelessVersion
}

// A shapedResult marshals inner without some of its top-level keys. Its
// own _meta is inner's, so that what the go-sdk adds after the handlers
// (the server's info, in the 2026-07-28 era) is kept.
type shapedResult struct {
	mcp.ResultBase
	inner     mcp.Result
	drop      []string
	dropNulls bool // also drop keys whose value is null

	lists *listCache // set for a list result: where its bytes are kept, under key
	key   listKey

	// splices, when set, takes bytes of spliceMin or more, which the
	// go-sdk would otherwise compact twice more on their way out (see
	// splices); placeholder is what they were given.
	splices     *splices
	placeholder []byte
}

func newShapedResult(inner mcp.Result, drop []string, dropNulls bool) *shapedResult {
	r := &shapedResult{inner: inner, drop: drop, dropNulls: dropNulls}
	r.Meta = inner.GetMeta()
	return r
}

// MarshalJSON returns the result's bytes (shapedBytes), or a placeholder
// for them when they are big and r.splices is set. The go-sdk marshals a
// result once; should it marshal it again, it gets the same placeholder.
func (r *shapedResult) MarshalJSON() ([]byte, error) {
	if r.placeholder != nil {
		return r.placeholder, nil
	}
	data, err := r.shapedBytes()
	if err != nil || r.splices == nil || len(data) < spliceMin {
		return data, err
	}
	r.placeholder = r.splices.add(nil, data)
	return r.placeholder, nil
}

// shapedBytes marshals the result as shaped, or returns the bytes its
// front kept for the same list. A result with a _meta (its own, or one
// the go-sdk set after the handlers) is neither kept nor taken.
func (r *shapedResult) shapedBytes() ([]byte, error) {
	if len(r.Meta) > 0 {
		r.inner.SetMeta(r.Meta)
	}
	if r.lists == nil || len(r.Meta) > 0 {
		return r.shape()
	}
	if data := r.lists.get(r.key); data != nil {
		return data, nil
	}
	data, err := r.shape()
	if err == nil {
		r.lists.put(r.key, data)
	}
	return data, err
}

// shape marshals inner without the keys r drops.
func (r *shapedResult) shape() ([]byte, error) {
	data, err := marshalResult(r.inner)
	if err != nil {
		return nil, err
	}
	if out, ok := mcpscan.DropMembers(data, r.drop, r.dropNulls); ok {
		return out, nil
	}
	return dropDecoded(data, r.drop, r.dropNulls)
}

// marshalResult marshals res with its own MarshalJSON when it has one:
// json.Marshal would compact what that returns, one more pass over a
// result the go-sdk compacts again when it marshals the shaped one (and
// checks there that it is JSON). A spliced result skips that check: its
// bytes are the go-sdk types' own marshaling, or a server's, which big raw
// results are passed on as already.
func marshalResult(res mcp.Result) ([]byte, error) {
	if m, ok := res.(json.Marshaler); ok {
		return m.MarshalJSON()
	}
	return json.Marshal(res)
}

// dropDecoded is mcpscan.DropMembers by decoding data into a map: for a
// result with an escaped key (a server's own bytes can have one).
func dropDecoded(data []byte, drop []string, dropNulls bool) ([]byte, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		return data, nil // not an object: nothing to drop
	}
	n := len(obj)
	for _, k := range drop {
		delete(obj, k)
	}
	if dropNulls {
		for k, v := range obj {
			if string(v) == "null" {
				delete(obj, k)
			}
		}
	}
	if len(obj) == n {
		return data, nil
	}
	return json.Marshal(obj)
}
