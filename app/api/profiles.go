package api

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/switchboardhq/switchboard/app/tokens"
)

// ProfilePath is the path of profile's MCP endpoint.
func ProfilePath(profile string) string { return "/mcp/p/" + profile }

// profileOf returns the profile named by an MCP endpoint's path
// (/mcp/p/<profile>), or "" for every other endpoint.
func profileOf(path string) string {
	rest, ok := strings.CutPrefix(path, "/mcp/p/")
	if !ok {
		return ""
	}
	return strings.TrimSuffix(rest, "/")
}

// refuseOtherEndpoint answers a request of a token bound to a profile that
// asks for another MCP endpoint (/mcp, /mcp/<server>, /sse, another
// profile's) with 403 and a JSON-RPC error naming the profile, and reports
// whether it did. A token without a profile reaches every MCP endpoint,
// profiles' included: it is what a client had before profiles existed, and
// a user who points a client at /mcp/p/<profile> by hand expects it to
// work.
func refuseOtherEndpoint(w http.ResponseWriter, r *http.Request, tok tokens.Token) bool {
	if tok.Profile == "" || profileOf(r.URL.Path) == tok.Profile {
		return false
	}
	msg := "the token " + quote(tok.Label) + " is bound to profile " + quote(tok.Profile) +
		": it reaches " + ProfilePath(tok.Profile) + " only, not " + quote(r.URL.Path)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusForbidden)
	// A JSON-RPC error, which MCP clients show; without an id, since the
	// request is not read.
	_ = json.NewEncoder(w).Encode(rpcErrorResponse{JSONRPC: "2.0", Error: rpcError{Code: codeInvalidRequest, Message: msg,
		Data: map[string]string{"profile": tok.Profile, "endpoint": ProfilePath(tok.Profile)}}})
	return true
}

// rpcErrorResponse is a JSON-RPC 2.0 error response.
type rpcErrorResponse struct {
	JSONRPC string   `json:"jsonrpc"`
	ID      any      `json:"id"`
	Error   rpcError `json:"error"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

// codeInvalidRequest is JSON-RPC's "Invalid Request".
const codeInvalidRequest = -32600
