package gateway

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/switchboardhq/switchboard/internal/mcpscan"
)

// responseEnvelope finds, in a JSON-RPC message, the id and the result of a
// response without decoding the result: ok is false for anything else (a
// request, a notification, an error response, bad JSON), which is then
// decoded the usual way.
func responseEnvelope(line []byte) (id jsonrpc.ID, result json.RawMessage, ok bool) {
	r, ok := mcpscan.ScanResponse(line)
	if !ok || r.ID == nil || r.Result == nil || r.Error != nil {
		return id, nil, false
	}
	id, err := decodeID(r.ID)
	if err != nil {
		return id, nil, false
	}
	return id, r.Result, true
}

// decodeID turns an id as written into a jsonrpc.ID (a float64 or a
// string, as MakeID wants).
func decodeID(id []byte) (jsonrpc.ID, error) {
	var v any
	if err := json.Unmarshal(id, &v); err != nil {
		return jsonrpc.ID{}, err
	}
	return jsonrpc.MakeID(v)
}
