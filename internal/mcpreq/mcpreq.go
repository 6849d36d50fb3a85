// Package mcpreq reads what the gateway and the stdio bridge both read of
// a go-sdk request: its params, when it has any, and the client that sent
// it. It is a leaf: it imports only the go-sdk's mcp package and the
// standard library, so the bridge, which links of the module only the
// API's client and contract, may share it with the gateway.
package mcpreq

import (
	"reflect"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Params returns req's params, or nil when it has none. A request sent
// without params ({"method":"notifications/initialized"}, as the
// TypeScript SDK sends it) holds typed-nil params, which GetParams returns
// as a non-nil interface whose methods panic.
func Params(req mcp.Request) mcp.Params {
	p := req.GetParams()
	if p == nil || isNilPointer(p) {
		return nil
	}
	return p
}

// ClientInfo returns the name and version of the client that sent req:
// from the request's _meta (stateless calls carry it there), else from the
// session's initialize; "" when neither names it. The go-sdk's ClientInfo
// does the same, but decodes the _meta value by encoding and decoding it
// again, on every call.
func ClientInfo(req mcp.Request) (name, version string) {
	if p := Params(req); p != nil {
		switch info := p.GetMeta()[mcp.MetaKeyClientInfo].(type) {
		case map[string]any:
			name, _ = info["name"].(string)
			version, _ = info["version"].(string)
			return name, version
		case *mcp.Implementation:
			return info.Name, info.Version
		}
	}
	if sr, ok := req.(interface{ ClientInfo() *mcp.Implementation }); ok {
		if info := sr.ClientInfo(); info != nil {
			return info.Name, info.Version
		}
	}
	return "", ""
}

func isNilPointer(v any) bool {
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}
