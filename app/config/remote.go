package config

import (
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"

	"golang.org/x/net/http/httpguts"
)

// ownHeaders are the headers the MCP transports set themselves: a remote
// server's headers cannot replace them.
var ownHeaders = []string{"Accept", "Content-Type", "Content-Length", "Host", "Connection",
	"Transfer-Encoding", "Last-Event-Id", "Mcp-Session-Id", "Mcp-Protocol-Version"}

// validateRemote checks the entry of a remote server (one with a URL):
//   - url is https://, or http:// to a loopback address, with a host and
//     no user name or password (a credential goes in secretHeaders);
//   - the keys of a local server (command, args, env, secretEnv, cwd,
//     pool) are not set;
//   - transport is "", "auto", "streamable-http" or "sse";
//   - header names are HTTP field names, not ones the transport sets
//     itself, and values have no line breaks; a header is not both plain
//     and secret; a secret header names a secret (1 to 256 bytes, no '/');
//   - oauth, if set, is valid (see OAuth.validate).
func (s Server) validateRemote(field string) *Error {
	if e := validateURL(field+".url", s.URL); e != nil {
		return e
	}
	for _, local := range []struct {
		key string
		set bool
	}{
		{"command", s.Command != ""}, {"args", len(s.Args) > 0}, {"env", len(s.Env) > 0},
		{"secretEnv", len(s.SecretEnv) > 0}, {"cwd", s.Cwd != ""}, {"pool", !s.Pool.IsZero()},
	} {
		if local.set {
			return invalid(field+"."+local.key, "a remote server (one with a url) takes no %s: it runs no process here", local.key)
		}
	}
	switch s.Transport {
	case "", TransportAuto, TransportStreamableHTTP, TransportSSE:
	default:
		return invalid(field+".transport", "invalid value %q: must be %q, %q or %q", s.Transport, TransportAuto, TransportStreamableHTTP, TransportSSE)
	}
	for _, name := range slices.Sorted(maps.Keys(s.Headers)) {
		if e := validateHeaderName(field+".headers", name); e != nil {
			return e
		}
		// The value is not quoted: headers often carry tokens.
		if !httpguts.ValidHeaderFieldValue(s.Headers[name]) {
			return invalid(field+".headers."+name, "invalid value: a header value cannot contain line breaks or control characters")
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.SecretHeaders)) {
		if e := validateHeaderName(field+".secretHeaders", name); e != nil {
			return e
		}
		for plain := range s.Headers {
			if strings.EqualFold(plain, name) {
				return invalid(field+".secretHeaders."+name, "%s is both in headers and in secretHeaders: keep the secret only in the secret store", name)
			}
		}
		if key := s.SecretHeaders[name]; key == "" || len(key) > 256 || strings.ContainsAny(key, "/\x00") {
			return invalid(field+".secretHeaders."+name, "invalid secret name %q: use 1 to 256 bytes without '/' or NUL", key)
		}
	}
	return s.OAuth.validate(field + ".oauth")
}

func validateHeaderName(field, name string) *Error {
	if !httpguts.ValidHeaderFieldName(name) {
		return invalid(field, "invalid header name %q", name)
	}
	canon := http.CanonicalHeaderKey(name)
	if slices.Contains(ownHeaders, canon) {
		return invalid(field, "header %q is set by the MCP transport itself", name)
	}
	return nil
}

func validateURL(field, raw string) *Error {
	u, err := url.Parse(raw)
	if err != nil {
		return invalid(field, "invalid URL %q: %v", raw, err)
	}
	switch {
	case u.Scheme != "https" && u.Scheme != "http":
		return invalid(field, "invalid URL %q: use https:// (or http:// to this machine)", raw)
	case u.Host == "" || u.Hostname() == "":
		return invalid(field, "invalid URL %q: it has no host", raw)
	case u.User != nil:
		return invalid(field, "invalid URL: it holds a user name or password; put a credential in secretHeaders instead")
	case u.Fragment != "":
		return invalid(field, "invalid URL %q: an MCP endpoint has no #fragment", raw)
	case u.Scheme == "http" && !IsLoopbackHost(u.Hostname()):
		return invalid(field, "invalid URL %q: http:// is only for this machine (127.0.0.1, ::1, localhost); use https://", raw)
	}
	return nil
}

// IsLoopbackHost reports whether host (a name or address, without port or
// brackets) is this machine: localhost, 127.0.0.0/8 or ::1.
func IsLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// PointsAt reports whether the remote server's URL would reach the
// listener at listen (host:port): a loopback URL with listen's port, when
// listen is on loopback. Switchboard must not be its own remote server
// (every call would loop back into it). Port 0 (any port) matches nothing:
// the daemon checks again with the port it got.
func (s Server) PointsAt(listen string) bool {
	if s.URL == "" {
		return false
	}
	host, port, err := net.SplitHostPort(listen)
	if err != nil || port == "0" || !IsLoopbackHost(host) {
		return false
	}
	u, err := url.Parse(s.URL)
	if err != nil || !IsLoopbackHost(u.Hostname()) {
		return false
	}
	urlPort := u.Port()
	if urlPort == "" {
		urlPort = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return urlPort == port
}

// errSelf is the refusal of a remote server that is Switchboard itself.
func errSelf(field, listen string) *Error {
	return invalid(field, "points at Switchboard's own listener (%s): a server cannot be its own remote", listen)
}

// CheckNotSelf returns the error, naming the field, for each enabled remote
// server of c whose URL reaches listen (the address the daemon actually
// listens on, which can differ from c.Listen), in name order.
func (c *Config) CheckNotSelf(listen string) map[string]error {
	var out map[string]error
	for _, name := range slices.Sorted(maps.Keys(c.Servers)) {
		if s := c.Servers[name]; s.PointsAt(listen) {
			if out == nil {
				out = map[string]error{}
			}
			out[name] = errSelf(fmt.Sprintf("servers.%s.url", name), listen)
		}
	}
	return out
}
