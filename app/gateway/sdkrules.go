package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	segjson "github.com/segmentio/encoding/json"
)

// The rules the fast path shares with the go-sdk. The fast path serves
// what it takes exactly as the go-sdk path would (see fastfront.go), so
// wherever it answers by itself it repeats a rule of the SDK's; they are
// all here, and each has a test in sdkrules_internal_test.go that gives
// the same input to the SDK's own code and to the rule and compares the
// answers, so that an SDK upgrade that changes one fails there:
//
//   - the DNS-rebinding protection of the streamable handler (hostChecked);
//   - the protocol versions of the session era it accepts (sessionVersion);
//   - the refusal of a request whose id is in flight (refuseDuplicate);
//   - a tool result's content never null (normalizeToolResult);
//   - messages decoded with keys matched case-sensitively (decodeAnswer;
//     mcpscan.PlainToolResult reads keys the same way), a reply's error
//     among them (clientError);
//   - the ids of the SDK's client are numbers, which the gateway's own
//     calls on a backend connection rely on (fastIDPrefix);
//   - a response's "error": null is no error (responseError).

// clientError decodes the error of a client's reply as the go-sdk decodes
// a message's error member (case-sensitively, a code that is an integer);
// ok is false when the go-sdk would refuse the message for it.
func clientError(obj []byte) (*jsonrpc.Error, bool) {
	var e jsonrpc.Error
	if string(obj) == "null" || decodeAnswer(obj, &e) != nil {
		return nil, false
	}
	return &e, true
}

// responseError is the error member of a backend's response, as
// mcpscan.ScanResponse found it, the way the go-sdk reads it: null is no
// error (its decoder leaves the *WireError nil, so the response is its
// result, or an empty one), anything else is the error; nil when absent.
func responseError(raw []byte) []byte {
	if string(raw) == "null" {
		return nil
	}
	return raw
}

// sessionVersion reports whether v is an MCP-Protocol-Version of the
// session era that the go-sdk accepts ("" too: the session's version).
func sessionVersion(v string) bool {
	switch v {
	case "", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05":
		return true
	}
	return false
}

// hostChecked applies the go-sdk handler's DNS rebinding protection: a
// request that reached a loopback address must name a loopback host.
func hostChecked(r *http.Request) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	return !ok || local == nil || !isLoopback(local.String()) || isLoopback(r.Host)
}

// isLoopback reports whether addr (host or host:port) is a loopback host,
// as the go-sdk decides it.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = strings.Trim(addr, "[]")
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// refuseDuplicate answers a call whose id is that of a call in flight on
// its session, as the go-sdk's handler answers one: 400 with a JSON-RPC
// error.
func refuseDuplicate(w http.ResponseWriter, rawID []byte) {
	var v any // an echoable id: a string or an integer of at most 15 digits, exact as a float64
	err := json.Unmarshal(rawID, &v)
	var id jsonrpc.ID
	if err == nil {
		id, err = jsonrpc.MakeID(v)
	}
	var data []byte
	if err == nil {
		data, err = jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Error: &jsonrpc.Error{
			Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf("duplicate in-flight request ID %v", id.Raw())}})
	}
	if err != nil {
		writeJSONRPCError(w, http.StatusBadRequest, jsonrpc.CodeInvalidRequest, "duplicate in-flight request ID: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_, _ = w.Write(data)
}

// normalizeToolResult makes r's content an empty list when it has none,
// as the go-sdk server does before it writes a tools/call result: its
// JSON then has "content":[], never null.
func normalizeToolResult(r *mcp.CallToolResult) {
	if r.Content == nil {
		r.Content = []mcp.Content{}
	}
}

// decodeAnswer decodes a client's result into v as the go-sdk decodes
// messages: field names matched case-sensitively (a "Action" is not
// "action"), with the same error texts.
func decodeAnswer(data []byte, v any) error {
	d := segjson.NewDecoder(bytes.NewReader(data))
	d.DontMatchCaseInsensitiveStructFields()
	return d.Decode(v)
}

// fastIDPrefix starts the ids of the gateway's own calls on a backend
// connection; the go-sdk's ids are numbers, so the two never meet.
const fastIDPrefix = "sbf-"
