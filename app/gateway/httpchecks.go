package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/app/internal/mediatype"
	"github.com/switchboardhq/switchboard/internal/mcpscan"
)

// The go-sdk's streamable handler answers some malformed requests
// differently from the spec's transport rules and the official TypeScript
// SDK (400 text/plain where clients and test suites expect 406, 415 or a
// JSON-RPC error body). checkRequest answers those before the go-sdk sees
// the request:
//
//	POST whose Accept lacks application/json or text/event-stream   406
//	POST whose Content-Type is not application/json                  415
//	body over maxRequestBody (see readBody)                           413
//	body that is not JSON                                             400, -32700
//	JSON that is not a JSON-RPC 2.0 message (or batch of them)        400, -32600
//	GET or DELETE in the stateless era (MCP-Protocol-Version ≥ 2026-07-28)
//	                                                                  405, Allow: POST
//
// It returns the body it read (nil for other methods), or ok false when it
// has answered.
func checkRequest(w http.ResponseWriter, r *http.Request) (body []byte, ok bool) {
	if r.Method != http.MethodPost {
		if r.Header.Get("MCP-Protocol-Version") >= statelessVersion {
			// The stateless era has no GET stream and no session to DELETE.
			w.Header().Set("Allow", http.MethodPost)
			writeJSONRPCError(w, http.StatusMethodNotAllowed, jsonrpc.CodeInvalidRequest,
				"Method Not Allowed: protocol version "+r.Header.Get("MCP-Protocol-Version")+" serves POST only")
			return nil, false
		}
		return nil, true
	}
	if jsonOK, sseOK := accepts(r.Header.Values("Accept")); !jsonOK || !sseOK {
		writeJSONRPCError(w, http.StatusNotAcceptable, codeServerError,
			"Not Acceptable: the Accept header must list both application/json and text/event-stream")
		return nil, false
	}
	if ct := r.Header.Get("Content-Type"); !mediatype.IsJSON(ct) {
		writeJSONRPCError(w, http.StatusUnsupportedMediaType, codeServerError,
			"Unsupported Media Type: the Content-Type must be application/json")
		return nil, false
	}
	body, ok = readBody(w, r)
	if !ok {
		return nil, false
	}
	if !json.Valid(body) {
		writeJSONRPCError(w, http.StatusBadRequest, jsonrpc.CodeParseError, "Parse error: the body is not valid JSON")
		return nil, false
	}
	if why := mcpscan.JSONRPCProblem(body); why != "" {
		writeJSONRPCError(w, http.StatusBadRequest, jsonrpc.CodeInvalidRequest, "Invalid Request: "+why)
		return nil, false
	}
	return body, true
}

// maxRequestBody bounds the body of a request to an MCP endpoint, on every
// path (the fast path, the go-sdk's session, stateless and legacy SSE
// handlers, which are given the same bound): the go-sdk's default, 4 MiB.
const maxRequestBody = mcp.DefaultMaxRequestBodyBytes

// readBody reads r's body into memory, at most maxRequestBody bytes of it,
// and puts it back as r.Body for the handlers after. A larger body is
// answered 413 with a JSON-RPC error without being read: from its
// Content-Length when it declares one, else (chunked) once the read passes
// the bound, so a client cannot make the daemon hold more than the bound.
// ok is false when it has answered.
func readBody(w http.ResponseWriter, r *http.Request) (body []byte, ok bool) {
	if r.ContentLength > maxRequestBody {
		refuseTooLarge(w, r.ContentLength)
		return nil, false
	}
	var err error
	if r.ContentLength >= 0 {
		// net/http's body ends at its Content-Length, under the bound.
		body, err = readSized(r.Body, r.ContentLength)
	} else {
		body, err = io.ReadAll(http.MaxBytesReader(w, r.Body, maxRequestBody))
	}
	r.Body.Close()
	if err != nil {
		if _, tooBig := errors.AsType[*http.MaxBytesError](err); tooBig {
			refuseTooLarge(w, -1)
		} else {
			writeJSONRPCError(w, http.StatusBadRequest, jsonrpc.CodeParseError, "cannot read the request body: "+err.Error())
		}
		return nil, false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return body, true
}

// readSized reads r to its end into one buffer made for the size bytes it
// declares (one more, for the read that meets the end: reading to the end
// lets the daemon's read deadline go, see app/daemon/limits.go), instead
// of io.ReadAll's growing from 512 bytes.
func readSized(r io.Reader, size int64) ([]byte, error) {
	b := make([]byte, 0, size+1)
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
	}
}

// refuseTooLarge answers a body over maxRequestBody (of size bytes, -1
// when it has no Content-Length): 413 with a JSON-RPC error naming the
// bound. net/http closes the connection after it rather than read the
// rest of the body.
func refuseTooLarge(w http.ResponseWriter, size int64) {
	what := "the request body is larger"
	if size >= 0 {
		what = fmt.Sprintf("the request body (%d bytes) is larger", size)
	}
	writeJSONRPCError(w, http.StatusRequestEntityTooLarge, codeServerError,
		fmt.Sprintf("Request Entity Too Large: %s than the %d bytes an MCP request may have", what, maxRequestBody))
}

// codeServerError is the JSON-RPC code the TypeScript SDK uses for its
// HTTP-level refusals (406, 415, 405).
const codeServerError = -32000

// writeJSONRPCError answers with a JSON-RPC error without an id.
func writeJSONRPCError(w http.ResponseWriter, status int, code int64, message string) {
	data, _ := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		ID      any    `json:"id"`
		Error   struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", Error: struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	}{code, message}})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	w.Write(data)
}

// refuseUnknownEndpoint answers a request for /mcp/<server>, /sse/<server>,
// /mcp/p/<profile> or /sse/p/<profile> when the gateway serves no such
// server or profile: 404 with a JSON-RPC error naming it, in the message
// and in data ({"server": name} or {"profile": name}; a profile's endpoint
// without a name, /mcp/p/ or /sse/p, says the name is missing, with
// {"profile": ""}), as the gateway's other HTTP-level refusals and the daemon's 403 for a profile's token are
// answered. The error carries the id of a request POSTed outside a session
// (an initialize), so that a client shows the message as the answer to its
// request (the go-sdk's client drops an error body without one); a request
// of a session gets no id, so that such a client sees the 404 of a session
// that is gone (the endpoint was removed under it) and ends it.
func refuseUnknownEndpoint(w http.ResponseWriter, r *http.Request) {
	name := serverInPath(r.URL.Path)
	msg := fmt.Sprintf("unknown server %q: it is not configured or not enabled", name)
	data := map[string]string{"server": name}
	if profile, ok := strings.CutPrefix(name, profilePrefix); ok {
		msg = fmt.Sprintf("unknown profile %q: it is not in config.json", profile)
		data = map[string]string{"profile": profile}
	} else if name+"/" == profilePrefix {
		// /mcp/p/ or /sse/p, and no server is named "p": a profile's
		// endpoint without the profile.
		transport, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		msg = fmt.Sprintf("a profile name is missing: a profile's endpoint is /%s/%s<profile>", transport, profilePrefix)
		data = map[string]string{"profile": ""}
	}
	var id any // null
	if r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") == "" {
		var req struct {
			ID     any    `json:"id"`
			Method string `json:"method"`
		}
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if json.Unmarshal(body, &req) == nil && req.Method != "" {
			switch req.ID.(type) {
			case string, float64:
				id = req.ID
			}
		}
	}
	resp, _ := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		ID      any    `json:"id"`
		Error   struct {
			Code    int64             `json:"code"`
			Message string            `json:"message"`
			Data    map[string]string `json:"data"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int64             `json:"code"`
		Message string            `json:"message"`
		Data    map[string]string `json:"data"`
	}{jsonrpc.CodeInvalidRequest, msg, data}})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusNotFound)
	w.Write(resp)
}

// accepts reports whether Accept values list JSON and an event stream
// (wildcards count), as the go-sdk reads them.
func accepts(values []string) (jsonOK, sseOK bool) {
	for _, v := range values {
		for part := range strings.SplitSeq(v, ",") {
			base, _, _ := strings.Cut(part, ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				sseOK = true
			case "*/*":
				jsonOK, sseOK = true, true
			}
		}
	}
	return jsonOK, sseOK
}

// jsonRefusals makes the go-sdk handler next answer its refusals as the
// gateway answers its own: the go-sdk writes many with http.Error, as
// text/plain (a batch in an era without batches, a method it does not
// serve, a session it does not know, a GET without a session, ...), and a
// client can read only a JSON-RPC error. A response with a status of 400
// or more and a text/plain type is held and written as a JSON-RPC error
// with the same status and the text as its message; every other response
// passes through untouched.
func jsonRefusals(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rw := &refusalWriter{ResponseWriter: w}
		next.ServeHTTP(rw, r)
		rw.finish()
	})
}

// maxRefusalText bounds the text of a refusal kept for its JSON-RPC error
// (the go-sdk's are a line).
const maxRefusalText = 4 << 10

// refusalWriter is jsonRefusals' writer.
type refusalWriter struct {
	http.ResponseWriter
	refusal int    // the status of a plain-text refusal being held, 0 for none
	text    []byte // its text
	started bool   // headers went through: nothing is held from then on
}

func (rw *refusalWriter) WriteHeader(code int) {
	if !rw.started && rw.refusal == 0 && code >= http.StatusBadRequest &&
		strings.HasPrefix(rw.Header().Get("Content-Type"), "text/plain") {
		rw.refusal = code
		return
	}
	if rw.refusal == 0 {
		rw.started = true
		rw.ResponseWriter.WriteHeader(code)
	}
}

func (rw *refusalWriter) Write(b []byte) (int, error) {
	if rw.refusal != 0 {
		rw.text = append(rw.text, b[:min(len(b), maxRefusalText-len(rw.text))]...)
		return len(b), nil
	}
	rw.started = true
	return rw.ResponseWriter.Write(b)
}

// Flush flushes a response that is not a refusal being held.
func (rw *refusalWriter) Flush() {
	if rw.refusal != 0 {
		return
	}
	if f, ok := rw.ResponseWriter.(http.Flusher); ok {
		f.Flush() // net/http's own writer: no controller to allocate
		return
	}
	_ = http.NewResponseController(rw.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the connection's other controls.
func (rw *refusalWriter) Unwrap() http.ResponseWriter { return rw.ResponseWriter }

// finish writes the refusal held, if any, as a JSON-RPC error.
func (rw *refusalWriter) finish() {
	if rw.refusal == 0 {
		return
	}
	message := strings.TrimSpace(string(rw.text))
	if message == "" {
		message = http.StatusText(rw.refusal)
	}
	rw.Header().Del("Content-Length")
	writeJSONRPCError(rw.ResponseWriter, rw.refusal, refusalCode(rw.refusal), message)
}

// codeSessionNotFound is the JSON-RPC code the TypeScript SDK gives the 404
// of a session it does not know.
const codeSessionNotFound = -32001

// refusalCode is the JSON-RPC error code of an HTTP refusal with status.
func refusalCode(status int) int64 {
	switch status {
	case http.StatusBadRequest:
		return jsonrpc.CodeInvalidRequest
	case http.StatusNotFound:
		return codeSessionNotFound
	case http.StatusInternalServerError:
		return jsonrpc.CodeInternalError
	}
	return codeServerError
}
