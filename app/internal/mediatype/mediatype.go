// Package mediatype holds the one Content-Type rule the daemon's two HTTP
// front doors (the API and the MCP endpoint) share.
package mediatype

import "mime"

// IsJSON reports whether the Content-Type ct is application/json, with or
// without parameters, in any case. The plain value, as clients send it, is
// compared first: mime.ParseMediaType makes a map of parameters, and it
// ran for every call.
func IsJSON(ct string) bool {
	if ct == "application/json" {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "application/json"
}
